"""LoRA for the report narrator, in plain torch: low-rank adapters on a Llama's attention and MLP projections,
their files, and the deterministic merge `edge-agent model prepare` applies.

An adapted projection computes `W x + (alpha / rank) · B (A x)` with A [rank, in] and B [out, rank]; B starts at
zero, so an attached model is the base model until it trains. Tensor names in the adapter file are the attached
model's own: `model.layers.{i}.self_attn.q_proj.lora_A`, `….lora_B`, and so on.

The adapter directory holds `adapter_model.safetensors`, `adapter_config.json` (the `LoraConfig` plus how it was
trained) and the engine's `manifest.json` (kind "adapter"), which `load_adapter` checks before reading anything.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

if TYPE_CHECKING:
    from transformers import PreTrainedModel

WEIGHTS_NAME = "adapter_model.safetensors"
CONFIG_NAME = "adapter_config.json"
FORMAT_VERSION = 1

Target = Literal["q", "k", "v", "o", "gate", "up", "down"]
# Short target names → the projection's path inside `model.layers.{i}` of a transformers Llama.
MODULES: dict[str, str] = {
    "q": "self_attn.q_proj",
    "k": "self_attn.k_proj",
    "v": "self_attn.v_proj",
    "o": "self_attn.o_proj",
    "gate": "mlp.gate_proj",
    "up": "mlp.up_proj",
    "down": "mlp.down_proj",
}
_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


class AdapterError(ValueError):
    """An adapter's config or files are invalid, or do not fit the model they are applied to."""


class LoraConfig(BaseModel):
    """`[lora]` of configs/narrator.toml: which projections of which layers get an adapter of what rank."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rank: int = Field(16, ge=1, le=1024)
    alpha: float = Field(32.0, gt=0, allow_inf_nan=False)
    targets: tuple[Target, ...] = ("q", "k", "v", "o", "gate", "up", "down")
    # "all", or explicit layer indices (e.g. the last 12 of 30: backward then stops at the first adapted layer).
    layers: Literal["all"] | tuple[int, ...] = "all"

    @field_validator("targets")
    @classmethod
    def _targets_unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("targets must name at least one projection")
        if len(set(value)) != len(value):
            raise ValueError(f"targets {list(value)} repeat a projection")
        return value

    @field_validator("layers")
    @classmethod
    def _layers_valid(cls, value: str | tuple[int, ...]) -> str | tuple[int, ...]:
        if isinstance(value, str):
            return value
        if not value:
            raise ValueError('layers must name at least one layer (or be "all")')
        if any(i < 0 for i in value):
            raise ValueError(f"layers {list(value)} has a negative index")
        if len(set(value)) != len(value):
            raise ValueError(f"layers {list(value)} repeats a layer")
        return tuple(sorted(value))

    @property
    def scale(self) -> float:
        return self.alpha / self.rank

    def layer_ids(self, num_layers: int) -> list[int]:
        """The adapted layers of a model with `num_layers`; AdapterError when one is beyond it."""
        if self.layers == "all":
            return list(range(num_layers))
        beyond = [i for i in self.layers if i >= num_layers]
        if beyond:
            raise AdapterError(f"layers {beyond} are beyond the model's {num_layers} layers")
        return list(self.layers)

    def module_names(self, num_layers: int) -> list[str]:
        """`model.layers.{i}.self_attn.q_proj`-style paths of every adapted projection, in a fixed order."""
        return [f"model.layers.{i}.{MODULES[t]}" for i in self.layer_ids(num_layers) for t in self.targets]


class LoraLinear(torch.nn.Module):
    """A frozen `nn.Linear` plus its low-rank update; `lora_A`/`lora_B` are the only trainable tensors."""

    def __init__(self, base: torch.nn.Linear, rank: int, scale: float, generator: torch.Generator) -> None:
        super().__init__()
        self.base = base
        self.scale = scale
        dtype, device = base.weight.dtype, base.weight.device
        self.lora_A = torch.nn.Parameter(torch.empty(rank, base.in_features, dtype=dtype, device=device))
        self.lora_B = torch.nn.Parameter(torch.zeros(base.out_features, rank, dtype=dtype, device=device))
        # Kaiming-uniform A (what nn.Linear and peft use) from a dedicated generator: the adapter's start does not
        # depend on whatever else consumed the global RNG before.
        bound = 1.0 / math.sqrt(base.in_features)
        with torch.no_grad():
            init = torch.rand(rank, base.in_features, generator=generator, dtype=torch.float32) * 2 - 1
            self.lora_A.copy_(init * bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # [..., in] → [..., rank] → [..., out]
        return self.base(x) + self.scale * ((x @ self.lora_A.T) @ self.lora_B.T)


def attach(model: PreTrainedModel, cfg: LoraConfig, seed: int = 0) -> list[str]:
    """Replace every adapted projection of a transformers Llama by a `LoraLinear` (in place); freeze the rest.

    Returns the adapted module paths. B is zero, so the model's outputs are unchanged until it trains.
    """
    generator = torch.Generator().manual_seed(seed)
    names = cfg.module_names(int(model.config.num_hidden_layers))
    model.requires_grad_(False)
    for name in names:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        base = getattr(parent, child)
        if not isinstance(base, torch.nn.Linear):
            raise AdapterError(f"{name} is a {type(base).__name__}, not an nn.Linear (already attached?)")
        setattr(parent, child, LoraLinear(base, cfg.rank, cfg.scale, generator))
    return names


def lora_parameters(model: torch.nn.Module) -> list[torch.nn.Parameter]:
    """The trainable LoRA tensors of an attached model, in state-dict order."""
    return [p for n, p in model.named_parameters() if n.endswith((".lora_A", ".lora_B"))]


def adapter_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The LoRA tensors of an attached model under their file names, detached copies on the CPU."""
    return {
        n: t.detach().to("cpu", copy=True).contiguous()
        for n, t in model.state_dict().items()
        if n.endswith((".lora_A", ".lora_B"))
    }


def expected_names(cfg: LoraConfig, num_layers: int) -> list[str]:
    return [f"{m}.{ab}" for m in cfg.module_names(num_layers) for ab in ("lora_A", "lora_B")]


def save_adapter(
    directory: Path | str,
    state: dict[str, torch.Tensor],
    cfg: LoraConfig,
    meta: dict[str, Any],
    *,
    dtype: str = "float32",
    name: str | None = None,
) -> Path:
    """Write the adapter directory (weights in `dtype`, config with `meta`, manifest), replacing it atomically.

    `meta` must say `num_layers` (the base model's, to check names against) and may carry anything JSON (the
    recipe, corpus hash, steps); it goes into adapter_config.json and the manifest's source.
    """
    from safetensors.torch import save_file

    from edge_agent.directories import build_directory
    from edge_agent.llm.manifest import write_manifest

    if dtype not in _DTYPES:
        raise AdapterError(f"dtype {dtype!r} is not one of {sorted(_DTYPES)}")
    out = Path(directory)
    if not isinstance(meta.get("num_layers"), int):
        raise AdapterError("meta must say num_layers, the base model's layer count")
    _check_tensors(state, cfg, meta["num_layers"], where="state")
    config = {"format": FORMAT_VERSION, "lora": cfg.model_dump(mode="json"), "dtype": dtype, "meta": meta}

    def build(tmp: Path) -> None:
        tensors = {n: t.detach().to("cpu", _DTYPES[dtype]).contiguous() for n, t in sorted(state.items())}
        save_file(tensors, str(tmp / WEIGHTS_NAME), metadata={"format": "pt"})
        (tmp / CONFIG_NAME).write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")
        write_manifest(
            tmp,
            kind="adapter",
            name=name or out.name,
            source={"format": FORMAT_VERSION, "lora": cfg.model_dump(mode="json"), **meta},
            converter={"torch": torch.__version__.split("+")[0]},
        )

    build_directory(out, build)
    return out


@dataclass(frozen=True)
class Adapter:
    """A loaded adapter: its config, tensors (as stored), the base model's layer count, and its files' hashes."""

    config: LoraConfig
    tensors: dict[str, torch.Tensor]
    num_layers: int
    name: str
    files: dict[str, str]  # relative path → sha256, from the verified manifest
    meta: dict[str, Any]

    def info(self) -> dict[str, Any]:
        """What a merged model's manifest records about this adapter."""
        return {"name": self.name, "version": FORMAT_VERSION, "sha256": dict(self.files)}


def load_adapter(directory: Path | str) -> Adapter:
    """Read and check an adapter directory: manifest hashes, config, and exactly the expected tensors with
    consistent shapes. AdapterError names the first thing wrong."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    from edge_agent.llm.manifest import verify
    from edge_agent.llm.types import ModelVerificationError

    directory = Path(directory)
    try:
        manifest = verify(directory)
    except ModelVerificationError as exc:
        raise AdapterError(f"adapter {directory}: {exc}") from exc
    if manifest.kind != "adapter":
        raise AdapterError(f"{directory}: manifest kind {manifest.kind!r} is not 'adapter'")
    try:
        raw = json.loads((directory / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise AdapterError(f"{directory / CONFIG_NAME}: not readable JSON: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("format") != FORMAT_VERSION:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise AdapterError(f"{directory / CONFIG_NAME}: format {found!r} is not {FORMAT_VERSION}")
    meta = raw.get("meta")
    if not isinstance(meta, dict) or not isinstance(meta.get("num_layers"), int) or meta["num_layers"] < 1:
        raise AdapterError(f"{directory / CONFIG_NAME}: meta.num_layers must be a positive integer")
    try:
        cfg = LoraConfig.model_validate(raw.get("lora"))
    except ValidationError as exc:
        raise AdapterError(f"{directory / CONFIG_NAME}: invalid lora config: {exc}") from exc
    try:
        tensors = load_file(str(directory / WEIGHTS_NAME))
    except (OSError, SafetensorError) as exc:
        raise AdapterError(f"{directory / WEIGHTS_NAME}: not a readable safetensors file: {exc}") from exc
    _check_tensors(tensors, cfg, meta["num_layers"], where=str(directory / WEIGHTS_NAME))
    files = {rel: entry.sha256 for rel, entry in manifest.files.items()}
    return Adapter(cfg, tensors, meta["num_layers"], manifest.name, files, meta)


def _check_tensors(tensors: dict[str, torch.Tensor], cfg: LoraConfig, num_layers: int, *, where: str) -> None:
    """Exactly the names `cfg` implies; A [rank, in] and B [out, rank], floating point and finite."""
    expected = expected_names(cfg, num_layers)
    missing = sorted(set(expected) - tensors.keys())
    unexpected = sorted(tensors.keys() - set(expected))
    if missing or unexpected:
        raise AdapterError(
            f"{where}: tensors do not match the config: missing {missing[:4]}, unexpected {unexpected[:4]}"
        )
    for module in cfg.module_names(num_layers):
        a, b = tensors[f"{module}.lora_A"], tensors[f"{module}.lora_B"]
        if a.dim() != 2 or b.dim() != 2 or a.shape[0] != cfg.rank or b.shape[1] != cfg.rank:
            raise AdapterError(
                f"{where}: {module} has lora_A {list(a.shape)} and lora_B {list(b.shape)}; rank {cfg.rank} needs "
                f"[{cfg.rank}, in] and [out, {cfg.rank}]"
            )
        for label, t in (("lora_A", a), ("lora_B", b)):
            if not t.is_floating_point() or not bool(torch.isfinite(t).all()):
                raise AdapterError(f"{where}: {module}.{label} is not finite floating point ({t.dtype})")


def merge_into(
    state_dict: dict[str, torch.Tensor], adapter: dict[str, torch.Tensor], cfg: LoraConfig
) -> dict[str, torch.Tensor]:
    """A new state dict with `W + (alpha/rank) · B @ A` for every adapted projection (the others shared).

    Deterministic on any machine: the product is accumulated in float64 as `rank` outer products in a fixed order
    (element-wise multiplies and adds, no BLAS reduction whose order could depend on threads), then added to W in
    float64 and rounded once to W's dtype.
    """
    num_layers = 1 + max(int(k.split(".")[2]) for k in state_dict if k.startswith("model.layers."))
    _check_tensors(adapter, cfg, num_layers, where="adapter")
    merged = dict(state_dict)
    for module in cfg.module_names(num_layers):
        key = f"{module}.weight"
        if key not in state_dict:
            raise AdapterError(f"the model has no {key}")
        weight = state_dict[key]
        a = adapter[f"{module}.lora_A"].to(torch.float64)  # [rank, in]
        b = adapter[f"{module}.lora_B"].to(torch.float64)  # [out, rank]
        if (b.shape[0], a.shape[1]) != tuple(weight.shape):
            raise AdapterError(f"{module}: adapter is [{b.shape[0]}, {a.shape[1]}], the weight {list(weight.shape)}")
        delta = torch.zeros(weight.shape, dtype=torch.float64)  # [out, in]
        for r in range(cfg.rank):
            delta += torch.outer(b[:, r], a[r])
        merged[key] = (weight.to(torch.float64) + cfg.scale * delta).to(weight.dtype)
    return merged
