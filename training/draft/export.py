"""Write a draft head as a directory vLLM loads with `method="eagle3"`: config.json, model.safetensors, manifest.json.

Format (vLLM `model_executor/models/llama_eagle3.py`): `architectures: ["LlamaForCausalLMEagle3"]`, a one-layer Llama
config with `draft_vocab_size`, `target_hidden_size`, `fc_norm`, `norm_output` and the captured target layers in
`eagle_config.eagle_aux_hidden_state_layer_ids`; weights `midlayer.*`, `fc.weight`, `fc_norm.{i}.weight`,
`norm.weight`, `lm_head.weight`, `d2t` (target_id - draft_id), `t2d` (bool over the target vocabulary). No
`embed_tokens`: vLLM then shares the target's embeddings, which the head was trained against (frozen).

`manifest.json` is the engine's manifest (kind "draft"): the sha256 of every file plus how the head was trained
(data hash, seed, steps, code version), so a report's fingerprint names exactly which head drafted it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field
from safetensors.torch import save_file

import edge_agent
from training.draft.model import DraftConfig, Eagle3Draft

ARCHITECTURE = "LlamaForCausalLMEagle3"
WEIGHTS_NAME = "model.safetensors"
_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


class ExportError(Exception):
    """A draft head could not be exported."""


class TrainingRecord(BaseModel):
    """How a head came to be; goes into the manifest's `source`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str = Field(description="target model name or manifest sha256")
    data_sha256: str | None = None
    seed: int = 0
    steps: int = 0
    variant: str = "eagle3.1"
    extra: dict[str, Any] = Field(default_factory=dict)


def code_version() -> str:
    """Package version plus the git commit of the working tree (with `-dirty` when it has local changes)."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "training/draft"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return edge_agent.__version__
    return f"{edge_agent.__version__}+g{commit}{'-dirty' if dirty else ''}"


def vllm_config_dict(config: DraftConfig, dtype: str) -> dict[str, Any]:
    """config.json for vLLM: a one-layer Llama whose extra keys switch on the EAGLE-3 / 3.1 parts."""
    return {
        "architectures": [ARCHITECTURE],
        "model_type": "llama",
        "hidden_size": config.hidden_size,
        "intermediate_size": config.intermediate_size,
        "num_attention_heads": config.num_attention_heads,
        "num_key_value_heads": config.num_key_value_heads,
        "head_dim": config.head_dim,
        "num_hidden_layers": 1,
        "hidden_act": "silu",
        "rms_norm_eps": config.rms_norm_eps,
        "rope_theta": config.rope_theta,
        "rope_parameters": {"rope_type": "default", "rope_theta": config.rope_theta},
        "max_position_embeddings": config.max_position_embeddings,
        "vocab_size": config.vocab_size,
        "draft_vocab_size": config.draft_vocab_size,
        "target_hidden_size": config.target_hidden_size,
        "target_num_hidden_layers": config.target_num_layers,
        "tie_word_embeddings": False,
        "attention_bias": False,
        "mlp_bias": False,
        "torch_dtype": dtype,
        "fc_norm": config.fc_norm,
        "norm_output": config.norm_output,
        "eagle_config": {
            "use_aux_hidden_state": True,
            "eagle_aux_hidden_state_layer_ids": list(config.aux_layer_ids),
        },
    }


def export_state_dict(model: Eagle3Draft, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """The checkpoint tensors under vLLM's names; floats cast to `dtype`, d2t int64, t2d bool."""
    tensors: dict[str, torch.Tensor] = {}
    for name, tensor in model.state_dict().items():
        if name.startswith("embed_tokens."):
            continue  # shared with the target at load time
        if name in ("d2t", "t2d"):
            tensors[name] = tensor.detach().cpu().contiguous()
        else:
            tensors[name] = tensor.detach().to("cpu", dtype).contiguous()
    return tensors


def export_draft(
    model: Eagle3Draft,
    out_dir: Path | str,
    *,
    record: TrainingRecord | None = None,
    dtype: str = "bfloat16",
    name: str = "eagle3-draft",
) -> Path:
    """Write `model` to `out_dir` in vLLM's llama_eagle3 format with a manifest; returns the directory."""
    from edge_agent.llm.manifest import write_manifest  # the engine's manifest format, checked before loading

    if dtype not in _DTYPES:
        raise ExportError(f"dtype {dtype!r} not one of {sorted(_DTYPES)}")
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for stale in out.iterdir():
            if stale.is_file() and stale.name in ("config.json", WEIGHTS_NAME, "manifest.json", "vocab.json"):
                stale.unlink()
        config_json = vllm_config_dict(model.config, dtype)
        (out / "config.json").write_text(json.dumps(config_json, indent=2, sort_keys=True) + "\n")
        save_file(export_state_dict(model, _DTYPES[dtype]), str(out / WEIGHTS_NAME), metadata={"format": "pt"})
    except OSError as exc:
        raise ExportError(f"cannot write draft head to {out}: {exc}") from exc
    record = record or TrainingRecord(target="unknown", variant=_variant(model.config))
    source = record.model_dump(mode="json") | {
        "code_version": code_version(),
        "draft": model.config.model_dump(mode="json"),
    }
    write_manifest(
        out,
        kind="draft",
        name=name,
        source=source,
        converter={"edge_agent": edge_agent.__version__, "torch": torch.__version__.split("+")[0]},
    )
    return out


def _variant(config: DraftConfig) -> str:
    return "eagle3.1" if (config.fc_norm or config.norm_output) else "eagle3"


def load_exported(directory: Path | str, embed_tokens: torch.Tensor | None = None) -> Eagle3Draft:
    """Read an exported head back into an `Eagle3Draft` (float32); `embed_tokens` [vocab, hidden] from the target."""
    from safetensors.torch import load_file

    directory = Path(directory)
    raw = json.loads((directory / "config.json").read_text())
    if raw.get("architectures") != [ARCHITECTURE]:
        raise ExportError(f"{directory}: architectures {raw.get('architectures')} is not [{ARCHITECTURE!r}]")
    config = DraftConfig(
        hidden_size=raw["hidden_size"],
        intermediate_size=raw["intermediate_size"],
        num_attention_heads=raw["num_attention_heads"],
        num_key_value_heads=raw["num_key_value_heads"],
        rms_norm_eps=raw["rms_norm_eps"],
        rope_theta=raw["rope_theta"],
        max_position_embeddings=raw["max_position_embeddings"],
        vocab_size=raw["vocab_size"],
        draft_vocab_size=raw["draft_vocab_size"],
        target_hidden_size=raw["target_hidden_size"],
        target_num_layers=raw["target_num_hidden_layers"],
        aux_layer_ids=tuple(raw["eagle_config"]["eagle_aux_hidden_state_layer_ids"]),
        fc_norm=raw["fc_norm"],
        norm_output=raw["norm_output"],
    )
    model = Eagle3Draft(config)
    tensors = {
        k: v.float() if v.is_floating_point() else v for k, v in load_file(str(directory / WEIGHTS_NAME)).items()
    }
    if embed_tokens is not None:
        tensors["embed_tokens.weight"] = embed_tokens.float()
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    missing = [m for m in missing if not (embed_tokens is None and m == "embed_tokens.weight")]
    if missing or unexpected:
        raise ExportError(f"{directory}: missing tensors {missing}, unexpected {unexpected}")
    return model
