"""The LLM engine: model, speculative decoding and deterministic settings."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator

from edge_agent.config.base import Section


class SpeculativeConfig(Section):
    # On: the shipped EAGLE 3.1 head makes whole reports 2.17x as fast on 2 cores at int8 (2.26x at float32, where
    # the output is byte-identical; BENCHMARKS.md, "Report workload speed"); false runs the target alone.
    enabled: bool = True
    method: Literal["eagle3"] = "eagle3"
    # Directory of an EAGLE-3 / 3.1 draft head in vLLM's llama_eagle3 format (config.json carries fc_norm/norm_output);
    # None → <state_dir>/models/eagle31-default, where `edge-agent model prepare` puts the shipped head.
    draft: Path | None = None
    # 4: the depth the report benchmarks measure the shipped head at (k = 3..5 within a few % of each other).
    num_speculative_tokens: int = Field(4, ge=1, le=16)


class LlmConfig(Section):
    enabled: bool = Field(True, description="False: no engine is loaded (ingest only); report requests are refused")
    backend: Literal["vllm", "remote"] = "vllm"
    # Directory written by `edge-agent model prepare`; None → <state_dir>/models/default.
    model_dir: Path | None = None
    remote_url: str | None = Field(None, description="OpenAI-compatible vLLM server, backend = remote")
    remote_model: str | None = None
    remote_api_key: SecretStr | None = None
    # auto: CUDA when torch sees a GPU (then vLLM's batch-invariant mode is on), else the CPU build.
    device: Literal["auto", "cpu", "cuda"] = "auto"
    # The CPU engine's precision. int8: the linear layers' weights and activations in int8 (W8A8), the rest
    # bfloat16, from an int8 copy of the model the engine makes in the state directory (edge_agent.llm.quantize).
    # On the report bench's 36 requests it writes reports 2.23x as fast as float32 with the shipped head, and as
    # many sections itself (BENCHMARKS.md, "Report workload speed"). Every precision gives the same bytes for the
    # same request and settings; only float32 also keeps the output with the draft identical to the output without
    # it (at int8 the draft changed 19 of 36 reports, bfloat16 6), so a plant that needs that sets float32.
    dtype: Literal["auto", "float32", "bfloat16", "float16", "int8"] = "int8"
    max_model_len: int = Field(4096, ge=128)
    seed: int = 0
    cpu_threads: int | None = Field(None, ge=1, description="OMP threads on a CPU box; None → all cores")
    cpu_kvcache_gib: int = Field(1, ge=1)
    # Compiled (torch.compile) by default: decodes faster, and alone meets 1.5x llama.cpp on a 2-core box
    # (BENCHMARKS.md, "CPU engines"). At float32 its tokens are eager's; at int8 they differ (14 of 16 general
    # prompts on 2 cores), so the fingerprint names the mode. Its kernels are cached in compile_cache_dir, so only
    # the first start of a model/draft/build pays the full compile (106 s on 2 cores); a restart takes 40 s against
    # eager's 18 s. A CPU box needs a C++ compiler (g++) for it; true skips it.
    enforce_eager: bool = False
    # torch.compile's kernel cache (TORCHINDUCTOR_CACHE_DIR); None → <state_dir>/compile-cache.
    compile_cache_dir: Path | None = None
    # One generation at a time keeps a CPU box's cores on one report and makes per-request figures exact;
    # a GPU server may batch (batch-invariant mode keeps the bytes the same).
    max_concurrent: int = Field(1, ge=1)
    start_timeout_s: float = Field(300.0, gt=0)
    request_timeout_s: float = Field(600.0, gt=0)
    # The engine process sends a heartbeat every 2 s from a thread of its own. None for this long: it is stopped
    # (SIGSTOP) or gone, so it is killed and restarted and /readyz shows the engine not ready meanwhile. 10 s is five
    # missed heartbeats (a loaded box delays a thread by well under a second) and keeps /readyz within 30 s of a hang.
    heartbeat_timeout_s: float = Field(10.0, gt=0)
    # ...and its serve loop not going round for this long (one engine step wedged) is treated the same. 300 s: the
    # longest step measured (a 4096-token prefill on 2 cores) takes ~40 s.
    stall_timeout_s: float = Field(300.0, gt=0)
    speculative: SpeculativeConfig = Field(default_factory=SpeculativeConfig)

    @model_validator(mode="after")
    def _int8_on_cpu(self) -> LlmConfig:
        if self.device == "cuda" and self.dtype == "int8":
            raise ValueError('llm.dtype = "int8" is for CPU engines: on a GPU set llm.dtype = "float32" or "bfloat16"')
        return self

    @model_validator(mode="after")
    def _draft_for_own_model(self) -> LlmConfig:
        # The shipped head fits only the default model: a plant's own model names its own head (or none).
        if self.backend == "vllm" and self.model_dir is not None and self.speculative.enabled:
            if self.speculative.draft is None:
                raise ValueError(
                    "llm.model_dir is set, so llm.speculative.draft must name that model's EAGLE-3 head "
                    "(`edge-agent draft import`), or set llm.speculative.enabled = false"
                )
        return self
