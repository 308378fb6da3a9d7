"""`edge-agent draft import`: a published EAGLE-3 head → a draft directory with our manifest, checked against the
target model before vLLM ever sees it.

Two layouts are read, exactly as vLLM reads them (`transformers_utils/configs/speculators/algos.py`,
`model_executor/models/llama_eagle3.py`, the runner's `_get_eagle3_aux_layers_from_config`):

- **llama_eagle3**: a one-layer Llama `config.json` (`architectures: ["LlamaForCausalLMEagle3"]` or
  `["Eagle3LlamaForCausalLM"]`) with `draft_vocab_size`, `target_hidden_size`, `eagle_config` (aux layer ids,
  `norm_before_fc`) and the 3.1 switches `fc_norm` / `norm_output` at the top level. Our own exporter writes this.
- **speculators**: `speculators_model_type: "eagle3"`, the layer's Llama config under `transformer_layer_config`,
  the EAGLE fields at the top level, `speculators_config` naming the verifier. `norm_before_residual` defaults to
  true here (false in the other layout): the same weights compute differently, so the switch is recorded.

The head's files are copied byte for byte (their published hashes stay valid) beside a manifest of kind "draft"
whose `source` names the layout, the variant and every switch; the engine's fingerprint carries the manifest's
sha256 and the variant, so a report names exactly which head drafted it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import edge_agent
from edge_agent.llm.importer import (
    ImportResult,
    ModelImportError,
    TensorInfo,
    copy_tree_hashed,
    install_atomically,
    read_json,
    read_weights,
    refuse_pickles,
    source_files,
    text_config,
)
from edge_agent.llm.manifest import Manifest, manifest_sha256, verify, write_manifest

log = structlog.get_logger(__name__).bind(component="draft")

Layout = Literal["llama_eagle3", "speculators"]
LLAMA_EAGLE3_ARCHITECTURES = ("LlamaForCausalLMEagle3", "Eagle3LlamaForCausalLM")


class HeadImportError(ModelImportError):
    """A draft head cannot be imported: unknown layout, broken files, pickled weights."""


class HeadMismatch(HeadImportError):
    """The head does not fit the target model; the message names both values of every mismatch."""

    def __init__(self, head: Path, target: Path, problems: list[str]) -> None:
        self.problems = problems
        listing = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"draft head {head} does not fit target {target} ({len(problems)} problem(s)):\n{listing}")


class Switches(BaseModel):
    """The EAGLE-3 / 3.1 variant switches vLLM reads from the head's config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fc_norm: bool  # EAGLE 3.1: one RMSNorm per captured target state before fc
    norm_output: bool  # EAGLE 3.1: the post-norm state is fed to the next draft step
    norm_before_residual: bool  # the residual is the normed hidden state (speculators' default)
    norm_before_fc: bool  # one RMSNorm over all captured states before fc

    @property
    def variant(self) -> str:
        return "eagle3.1" if (self.fc_norm or self.norm_output) else "eagle3"


class HeadSpec(BaseModel):
    """A head's config.json, resolved the way vLLM resolves it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layout: Layout
    hidden_size: int = Field(strict=True, gt=0)
    intermediate_size: int | None
    target_hidden_size: int = Field(strict=True, gt=0)
    vocab_size: int = Field(strict=True, gt=0)
    draft_vocab_size: int = Field(strict=True, gt=0)
    # How many captured states the head's fc expects (vLLM: num_aux_hidden_states, len(eagle_config ids), else 3).
    num_aux: int = Field(gt=0)
    # The target layers vLLM captures for it; None: vLLM's default for the target, (2, N // 2, N - 3).
    aux_layer_ids: tuple[int, ...] | None
    switches: Switches
    verifier: str | None = None


class TargetShape(BaseModel):
    """What a head must agree with, from the target model's verified directory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hidden_size: int
    vocab_size: int
    num_hidden_layers: int
    manifest_sha256: str


class VocabMap(BaseModel):
    """d2t / t2d of a head, when its weights hold them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    draft_to_target: list[int] | None  # arange(draft_vocab) + d2t: the target id of each draft id
    t2d: list[bool] | None


def _int(raw: dict[str, Any], key: str, where: str) -> int:
    value = raw.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise HeadImportError(f"{where}: {key} is {value!r}, not a positive integer")
    return value


def _ids(value: Any, where: str) -> tuple[int, ...] | None:
    if value is None or value == []:
        return None
    if not (isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in value)):
        raise HeadImportError(f"{where}: eagle_aux_hidden_state_layer_ids is {value!r}, not a list of integers")
    return tuple(value)


def parse_head_config(raw: dict[str, Any], where: str = "config.json") -> HeadSpec:
    """Resolve a head's config.json in either layout; HeadImportError when it is neither or a value is wrong."""
    try:
        if raw.get("speculators_config") is not None:
            return _parse_speculators(raw, where)
        architectures = raw.get("architectures")
        if isinstance(architectures, list) and any(a in LLAMA_EAGLE3_ARCHITECTURES for a in architectures):
            return _parse_llama_eagle3(raw, where)
    except ValidationError as exc:
        raise HeadImportError(f"{where}: {exc}") from exc
    raise HeadImportError(
        f"{where}: not an EAGLE-3 head: architectures {architectures!r} is none of "
        f"{list(LLAMA_EAGLE3_ARCHITECTURES)} and there is no speculators_config"
    )


def _num_aux(layer: dict[str, Any], eagle_ids: tuple[int, ...] | None) -> int:
    explicit = layer.get("num_aux_hidden_states")
    if isinstance(explicit, int) and explicit > 0:
        return explicit
    return len(eagle_ids) if eagle_ids else 3


def _parse_llama_eagle3(raw: dict[str, Any], where: str) -> HeadSpec:
    eagle = raw.get("eagle_config") or {}
    if not isinstance(eagle, dict):
        raise HeadImportError(f"{where}: eagle_config is {eagle!r}, not an object")
    if eagle.get("use_aux_hidden_state", True) is not True:
        raise HeadImportError(f"{where}: eagle_config.use_aux_hidden_state is false: an EAGLE-1/2 head, not EAGLE-3")
    eagle_ids = _ids(eagle.get("eagle_aux_hidden_state_layer_ids"), where)
    hidden = _int(raw, "hidden_size", where)
    vocab = _int(raw, "vocab_size", where)
    return HeadSpec(
        layout="llama_eagle3",
        hidden_size=hidden,
        intermediate_size=raw.get("intermediate_size"),
        target_hidden_size=raw.get("target_hidden_size") or hidden,
        vocab_size=vocab,
        draft_vocab_size=raw.get("draft_vocab_size") or vocab,
        num_aux=_num_aux(raw, eagle_ids),
        # The runner reads the top-level key first (EAGLEConfig copies it there), then eagle_config's.
        aux_layer_ids=_ids(raw.get("eagle_aux_hidden_state_layer_ids"), where) or eagle_ids,
        switches=Switches(
            fc_norm=bool(raw.get("fc_norm", False)),
            norm_output=bool(raw.get("norm_output", False)),
            norm_before_residual=bool(raw.get("norm_before_residual", False)),
            norm_before_fc=bool(eagle.get("norm_before_fc", raw.get("norm_before_fc", False))),
        ),
    )


def _parse_speculators(raw: dict[str, Any], where: str) -> HeadSpec:
    kind = raw.get("speculators_model_type")
    if kind != "eagle3":
        raise HeadImportError(f"{where}: speculators_model_type {kind!r}: only eagle3 heads are imported")
    layer = raw.get("transformer_layer_config")
    if not isinstance(layer, dict):
        raise HeadImportError(f"{where}: speculators layout without a transformer_layer_config object")
    model_type = layer.get("model_type", "llama")
    if model_type != "llama":
        raise HeadImportError(f"{where}: transformer_layer_config.model_type {model_type!r}: only llama heads")
    spec = raw["speculators_config"]
    try:
        verifier = spec["verifier"]["name_or_path"]
        spec["proposal_methods"][0]["speculative_tokens"]
    except (KeyError, IndexError, TypeError) as exc:
        raise HeadImportError(
            f"{where}: speculators_config needs proposal_methods[0].speculative_tokens and verifier.name_or_path"
        ) from exc
    layer_eagle = layer.get("eagle_config") or {}
    eagle_ids = (
        _ids(layer_eagle.get("eagle_aux_hidden_state_layer_ids"), where) if isinstance(layer_eagle, dict) else None
    )
    hidden = _int(layer, "hidden_size", where + " transformer_layer_config")
    vocab = _int(layer, "vocab_size", where + " transformer_layer_config")
    return HeadSpec(
        layout="speculators",
        hidden_size=hidden,
        intermediate_size=layer.get("intermediate_size"),
        target_hidden_size=raw.get("target_hidden_size") or hidden,
        vocab_size=vocab,
        draft_vocab_size=raw.get("draft_vocab_size") or vocab,
        # vLLM's draft counts its fc inputs from the layer config only; the target captures the top-level ids.
        num_aux=_num_aux(layer, eagle_ids),
        aux_layer_ids=_ids(raw.get("eagle_aux_hidden_state_layer_ids"), where),
        switches=Switches(
            fc_norm=bool(raw.get("fc_norm", False)),
            norm_output=bool(raw.get("norm_output", False)),
            norm_before_residual=bool(raw.get("norm_before_residual", True)),
            norm_before_fc=bool(raw.get("norm_before_fc", False)),
        ),
        verifier=str(verifier),
    )


def target_shape(model_dir: Path) -> TargetShape:
    """The target's sizes from its verified directory (ModelVerificationError if it does not match its manifest)."""
    verify(model_dir)
    config = text_config(read_json(model_dir / "config.json"))
    where = f"{model_dir}/config.json"
    return TargetShape(
        hidden_size=_int(config, "hidden_size", where),
        vocab_size=_int(config, "vocab_size", where),
        num_hidden_layers=_int(config, "num_hidden_layers", where),
        manifest_sha256=manifest_sha256(model_dir),
    )


def resolved_aux_layers(spec: HeadSpec, target: TargetShape) -> tuple[int, ...]:
    """The target layers vLLM will capture for this head: its own ids, else vLLM's default rule."""
    if spec.aux_layer_ids is not None:
        return spec.aux_layer_ids
    n = target.num_hidden_layers
    return (2, n // 2, n - 3)


def check_target(spec: HeadSpec, target: TargetShape) -> list[str]:
    """Every way the head's config disagrees with the target, each naming both values."""
    problems: list[str] = []
    if spec.target_hidden_size != target.hidden_size:
        problems.append(
            f"hidden size: the head's target_hidden_size is {spec.target_hidden_size}, "
            f"the target's hidden_size is {target.hidden_size}"
        )
    if spec.vocab_size != target.vocab_size:
        problems.append(f"vocab size: the head's vocab_size is {spec.vocab_size}, the target's is {target.vocab_size}")
    if spec.draft_vocab_size > spec.vocab_size:
        problems.append(
            f"draft vocab size: the head's draft_vocab_size {spec.draft_vocab_size}"
            f" exceeds its vocab_size {spec.vocab_size}"
        )
    ids = resolved_aux_layers(spec, target)
    source = "the head's" if spec.aux_layer_ids is not None else "vLLM's default"
    n = target.num_hidden_layers
    if len(ids) != spec.num_aux:
        problems.append(
            f"auxiliary layers: {source} layer ids {list(ids)} give {len(ids)} states,"
            f" the head's fc takes {spec.num_aux}"
        )
    if len(set(ids)) != len(ids):
        problems.append(f"auxiliary layers: {source} layer ids {list(ids)} repeat a layer (vLLM captures it once)")
    outside = [i for i in ids if not 0 <= i <= n]
    if outside:
        problems.append(f"auxiliary layers: {source} layer ids {outside} are outside the target's layers 0..{n}")
    return problems


def check_tensors(spec: HeadSpec, tensors: dict[str, TensorInfo], target: TargetShape) -> list[str]:
    """Every tensor whose presence or shape disagrees with the head's config or the target."""
    problems: list[str] = []
    h, th, n = spec.hidden_size, spec.target_hidden_size, spec.num_aux

    def shape_of(name: str, want: tuple[int, ...], why: str) -> None:
        info = tensors.get(name)
        if info is None:
            problems.append(f"{name}: missing ({why})")
        elif info.shape != want:
            problems.append(f"{name}: shape {list(info.shape)}, {why} gives {list(want)}")

    prefix = "midlayer." if any(k.startswith("midlayer.") for k in tensors) else "layers.0."
    shape_of("fc.weight", (h, n * th), f"hidden_size {h} × {n} states of target_hidden_size {th}")
    q = tensors.get(prefix + "self_attn.q_proj.weight")
    if q is None:
        problems.append(f"{prefix}self_attn.q_proj.weight: missing (the decoder layer)")
    elif q.shape[-1] != 2 * h:
        problems.append(f"{prefix}self_attn.q_proj.weight: input width {q.shape[-1]}, 2 × hidden_size {h} is {2 * h}")
    shape_of("norm.weight", (h,), f"hidden_size {h}")
    for norm in ("input_layernorm", "hidden_norm", "post_attention_layernorm"):
        shape_of(f"{prefix}{norm}.weight", (h,), f"hidden_size {h}")
    fc_norms = sorted(k for k in tensors if k.startswith("fc_norm."))
    if spec.switches.fc_norm:
        for i in range(n):
            shape_of(f"fc_norm.{i}.weight", (th,), f"fc_norm on, target_hidden_size {th}")
    elif fc_norms:
        problems.append(f"fc_norm: the config has it off but the weights hold {fc_norms}")
    if spec.switches.norm_before_fc:
        shape_of("input_norm.weight", (n * th,), f"norm_before_fc on, {n} × target_hidden_size {th}")
    elif "input_norm.weight" in tensors:
        problems.append("input_norm.weight: the config has norm_before_fc off but the weights hold it")
    if "lm_head.weight" in tensors:
        shape_of(
            "lm_head.weight", (spec.draft_vocab_size, h), f"draft_vocab_size {spec.draft_vocab_size} × hidden_size {h}"
        )
    elif (spec.draft_vocab_size, h) != (target.vocab_size, target.hidden_size):
        problems.append(
            f"lm_head.weight: missing, so vLLM would use the target's [{target.vocab_size}, {target.hidden_size}], "
            f"but the head drafts [{spec.draft_vocab_size}, {h}]"
        )
    if "embed_tokens.weight" in tensors:
        shape_of("embed_tokens.weight", (spec.vocab_size, h), f"vocab_size {spec.vocab_size} × hidden_size {h}")
    elif h != target.hidden_size:
        problems.append(
            f"embed_tokens.weight: missing, so the head shares the target's embeddings, but its hidden_size is {h} "
            f"and the target's is {target.hidden_size}"
        )
    if "d2t" in tensors:
        shape_of("d2t", (spec.draft_vocab_size,), f"draft_vocab_size {spec.draft_vocab_size}")
    elif spec.draft_vocab_size != spec.vocab_size:
        problems.append(
            f"d2t: missing while draft_vocab_size {spec.draft_vocab_size} != vocab_size {spec.vocab_size} "
            "(vLLM would map draft id i to target id i)"
        )
    if "t2d" in tensors:
        shape_of("t2d", (spec.vocab_size,), f"vocab_size {spec.vocab_size}")
    return problems


def check_vocab_map(vocab: VocabMap, spec: HeadSpec) -> list[str]:
    """d2t must map each draft id to a distinct target id inside the vocabulary; t2d must mark exactly those."""
    problems: list[str] = []
    ids = vocab.draft_to_target
    if ids is not None:
        outside = [t for t in ids if not 0 <= t < spec.vocab_size]
        if outside:
            problems.append(f"d2t: maps draft ids to target ids {outside[:5]} outside 0..{spec.vocab_size - 1}")
        elif len(set(ids)) != len(ids):
            problems.append(f"d2t: maps {len(ids)} draft ids to only {len(set(ids))} distinct target ids")
    if vocab.t2d is not None:
        marked = sum(vocab.t2d)
        if marked != spec.draft_vocab_size:
            problems.append(f"t2d: marks {marked} target ids, draft_vocab_size is {spec.draft_vocab_size}")
        elif ids is not None and not problems and not all(vocab.t2d[t] for t in ids):
            problems.append("t2d: does not mark the target ids d2t maps to")
    return problems


def read_vocab_map(directory: Path, tensors: dict[str, TensorInfo]) -> VocabMap:
    """d2t / t2d values (only these two tensors are read, through safetensors: no pickle)."""
    from safetensors import safe_open

    def load(name: str) -> list[Any] | None:
        info = tensors.get(name)
        if info is None:
            return None
        with safe_open(str(directory / info.file), framework="numpy") as fh:
            return fh.get_tensor(name).reshape(-1).tolist()

    d2t, t2d = load("d2t"), load("t2d")
    ids = [i + int(offset) for i, offset in enumerate(d2t)] if d2t is not None else None
    return VocabMap(draft_to_target=ids, t2d=[bool(v) for v in t2d] if t2d is not None else None)


def inspect_head(source: Path, target: TargetShape) -> tuple[HeadSpec, list[str]]:
    """The head's resolved config and every problem it has against `target` (empty: it fits)."""
    spec = parse_head_config(read_json(source / "config.json"), f"{source}/config.json")
    problems = check_target(spec, target)
    tensors = read_weights(source)
    problems += check_tensors(spec, tensors, target)
    shapes_ok = not any(p.startswith(("d2t", "t2d")) for p in problems)
    if shapes_ok:
        problems += check_vocab_map(read_vocab_map(source, tensors), spec)
    return spec, problems


def import_head(
    source: Path | str,
    model_dir: Path | str,
    out: Path | str,
    *,
    name: str | None = None,
    show_progress: bool = True,
) -> ImportResult:
    """Check a published head against the target in `model_dir`, then copy it into `out` with a draft manifest.

    HeadMismatch lists every disagreement with the target; HeadImportError (or PickleRefused) when the head itself
    cannot be read. Nothing is written unless every check passes.
    """
    source, model_dir, out = Path(source), Path(model_dir), Path(out)
    started = time.monotonic()
    if not source.is_dir():
        raise HeadImportError(f"{source}: not a directory")
    refuse_pickles(source)
    target = target_shape(model_dir)
    spec, problems = inspect_head(source, target)
    if problems:
        raise HeadMismatch(source, model_dir, problems)
    names = source_files(source)

    def build(tmp: Path) -> Manifest:
        files = copy_tree_hashed(source, tmp, names, show_progress=show_progress)
        origin = {
            "origin": "imported",
            "layout": spec.layout,
            "variant": spec.switches.variant,
            "switches": spec.switches.model_dump(),
            "aux_layer_ids": list(resolved_aux_layers(spec, target)),
            "draft_vocab_size": spec.draft_vocab_size,
            "target": "manifest-sha256:" + target.manifest_sha256,
            "verifier": spec.verifier,
        }
        return write_manifest(
            tmp,
            kind="draft",
            name=name or source.resolve().name,
            source=origin,
            converter={"edge_agent": edge_agent.__version__},
            files=files,
        )

    install_atomically(out, build)
    manifest = verify(out)
    seconds = time.monotonic() - started
    log.info(
        "draft.imported",
        directory=str(out),
        layout=spec.layout,
        variant=spec.switches.variant,
        seconds=round(seconds, 2),
    )
    return ImportResult(out, manifest, seconds)
