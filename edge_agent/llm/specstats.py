"""Per-request speculative-decoding figures from vLLM's acceptance histogram.

vLLM (`per_request_spec_decode_metrics="summary"`) counts, for one request, how many verify steps accepted exactly
j draft tokens: `histogram[j]`, j = 0..k. Everything else follows from it:

    histogram = [2, 1, 0, 1], k = 3      # 4 steps: two accepted 0, one accepted 1, one accepted 3
    accepted  = 0*2 + 1*1 + 2*0 + 3*1 = 4
    per_position[i] = steps that accepted more than i tokens / steps = [2/4, 1/4, 1/4]
    mean_acceptance_length = 1 + 4/4 = 2.0   # the target's own (bonus) token counts too
"""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.llm.types import SpecStats


def spec_stats(histogram: Sequence[int], num_draft_tokens: int, num_speculative_tokens: int) -> SpecStats:
    if len(histogram) != num_speculative_tokens + 1:
        raise ValueError(f"histogram has {len(histogram)} bins, expected k + 1 = {num_speculative_tokens + 1}")
    steps = sum(histogram)
    accepted = sum(j * count for j, count in enumerate(histogram))
    per_position = [sum(histogram[i + 1 :]) / steps if steps else 0.0 for i in range(num_speculative_tokens)]
    return SpecStats(
        num_speculative_tokens=num_speculative_tokens,
        drafts=steps,
        drafted=num_draft_tokens,
        accepted=accepted,
        per_position=per_position,
        mean_acceptance_length=1.0 + accepted / steps if steps else 1.0,
    )
