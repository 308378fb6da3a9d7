"""The generation fingerprint: everything that decides a completion's bytes, and nothing that doesn't.

Same fingerprint + same messages → same token ids. Process ids, load times and paths are left out on purpose, so
the same request on a restarted engine (or another host with the same build and model) has the same fingerprint.
"""

from __future__ import annotations

from typing import Any

from edge_agent.llm.types import GenerationParams

# Keys of the engine's ready info that identify the numerics (the rest — pid, load time — do not).
_ENGINE_KEYS = (
    "vllm",
    "vllm_dist",
    "torch",
    "transformers",
    "python",
    "device",
    "dtype",
    "precision",
    "threads",
    "max_model_len",
    "enforce_eager",
    "max_num_seqs",
    "cpu_capability",
    "cpu_model",
    "gpu",
    "cuda",
)


def engine_fingerprint(
    info: dict[str, Any],
    numerics_env: dict[str, str],
    model: dict[str, Any],
    draft: dict[str, Any] | None,
) -> dict[str, Any]:
    """The request-independent part: engine build, device, numerics env, model and draft identities."""
    fingerprint: dict[str, Any] = {"engine": "vllm"}
    fingerprint.update({key: info[key] for key in _ENGINE_KEYS if key in info})
    fingerprint["numerics_env"] = dict(sorted(numerics_env.items()))
    fingerprint["model"] = model
    if draft is not None:
        loaded = info.get("draft", {})
        fingerprint["draft"] = draft | {
            "method": loaded.get("method"),
            "num_speculative_tokens": loaded.get("num_speculative_tokens"),
            "fc_norm": loaded.get("fc_norm"),
            "norm_output": loaded.get("norm_output"),
        }
    else:
        fingerprint["draft"] = None
    return fingerprint


def request_fingerprint(base: dict[str, Any], params: GenerationParams) -> dict[str, Any]:
    return base | {"sampling": params.model_dump(mode="json")}
