"""Greedy acceptance arithmetic: how many drafted tokens the target keeps, and τ from per-position counts.

Rule (greedy verification): the target keeps drafted tokens while each equals its own argmax at that position; the
first mismatch and everything after it is rejected, and the target's own token there is emitted instead. So a round
that drafts k tokens emits `accepted + 1` tokens, and the mean acceptance length is τ = 1 + E[accepted].
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict


class AcceptanceStats(BaseModel):
    """Acceptance over many drafting rounds at one k."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    num_drafts: int
    k: int
    # per_position[i]: share of rounds whose drafted token i (0-based) was accepted (so were all before it).
    per_position: list[float]

    @property
    def tau(self) -> float:
        """Mean tokens emitted per target forward pass: 1 + the sum of per-position acceptance rates."""
        return 1.0 + sum(self.per_position)

    def tau_at(self, k: int) -> float:
        """τ had only the first `k` positions been drafted (greedy: a longer draft never changes earlier tokens)."""
        if not 1 <= k <= self.k:
            raise ValueError(f"k {k} outside 1..{self.k}")
        return 1.0 + sum(self.per_position[:k])


def accepted_length(draft: Sequence[int], target: Sequence[int]) -> int:
    """Number of leading drafted tokens equal to the target's greedy tokens at the same positions."""
    n = 0
    for d, t in zip(draft, target, strict=False):
        if d != t:
            break
        n += 1
    return n


def verify_mask(draft: Sequence[int], target: Sequence[int]) -> list[int]:
    """Per drafted position: its token id if accepted, -1 from the first rejection on (`[5, 7, -1, -1]`)."""
    n = accepted_length(draft, target)
    return [d if i < n else -1 for i, d in enumerate(draft)]


def from_rounds(rounds: Sequence[tuple[Sequence[int], Sequence[int]]], k: int) -> AcceptanceStats:
    """Acceptance stats from (drafted, target greedy) token lists of each round."""
    counts = [0] * k
    for draft, target in rounds:
        for i in range(accepted_length(draft[:k], target[:k])):
            counts[i] += 1
    n = len(rounds)
    return AcceptanceStats(num_drafts=n, k=k, per_position=[c / n if n else 0.0 for c in counts])


def from_counts(num_drafts: int, accepted_per_position: Sequence[int]) -> AcceptanceStats:
    """Acceptance stats from vLLM's counters (`spec_decode_num_drafts`, `..._num_accepted_tokens_per_pos`)."""
    if any(b > a for a, b in zip(accepted_per_position, accepted_per_position[1:], strict=False)):
        raise ValueError(f"accepted counts {list(accepted_per_position)} increase with position")
    if accepted_per_position and accepted_per_position[0] > num_drafts:
        raise ValueError(f"{accepted_per_position[0]} accepted at position 0 of {num_drafts} drafts")
    k = len(accepted_per_position)
    rates = [c / num_drafts if num_drafts else 0.0 for c in accepted_per_position]
    return AcceptanceStats(num_drafts=num_drafts, k=k, per_position=rates)
