"""The narrator's LoRA adapter as `edge-agent model prepare` applies it: the adapter directory's format, loading and
checking it, and the deterministic merge into the base weights. (Attaching and training adapters, and writing the
directory, are the trainer's: training/narrator/lora.py.)

An adapted projection computes `W x + (alpha / rank) · B (A x)` with A [rank, in] and B [out, rank]. Tensor names in
the adapter file are the attached model's own: `model.layers.{i}.self_attn.q_proj.lora_A`, `….lora_B`, and so on.

The adapter directory holds `adapter_model.safetensors`, `adapter_config.json` (the `LoraConfig` plus how it was
trained) and the engine's `manifest.json` (kind "adapter"), which `load_adapter` checks before reading anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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


def expected_names(cfg: LoraConfig, num_layers: int) -> list[str]:
    return [f"{m}.{ab}" for m in cfg.module_names(num_layers) for ab in ("lora_A", "lora_B")]


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
    check_tensors(tensors, cfg, meta["num_layers"], where=str(directory / WEIGHTS_NAME))
    files = {rel: entry.sha256 for rel, entry in manifest.files.items()}
    return Adapter(cfg, tensors, meta["num_layers"], manifest.name, files, meta)


def check_tensors(tensors: dict[str, torch.Tensor], cfg: LoraConfig, num_layers: int, *, where: str) -> None:
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
    check_tensors(adapter, cfg, num_layers, where="adapter")
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
