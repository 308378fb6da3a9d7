"""LoRA for training the report narrator, in plain torch: low-rank adapters attached to a Llama's attention and MLP
projections, their trainable tensors, and writing the adapter directory that `edge-agent model prepare` loads and
merges (its format: edge_agent/llm/adapter.py).

B starts at zero, so an attached model is the base model until it trains.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from edge_agent.llm.adapter import CONFIG_NAME, FORMAT_VERSION, WEIGHTS_NAME, AdapterError, LoraConfig, check_tensors

if TYPE_CHECKING:
    from transformers import PreTrainedModel

_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


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

    from edge_agent.base.directories import build_directory
    from edge_agent.llm.manifest import write_manifest

    if dtype not in _DTYPES:
        raise AdapterError(f"dtype {dtype!r} is not one of {sorted(_DTYPES)}")
    out = Path(directory)
    if not isinstance(meta.get("num_layers"), int):
        raise AdapterError("meta must say num_layers, the base model's layer count")
    check_tensors(state, cfg, meta["num_layers"], where="state")
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
