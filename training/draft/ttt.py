"""The training-time test's pieces (`train`): the attention mask of an unrolled draft step, the steps' weights, the
loss restricted to the draft vocabulary and its per-step counts, and what the frozen target gives per sample."""

from __future__ import annotations

from dataclasses import dataclass

import torch


def ttt_mask(length: int, step: int, offset: int = 0, device: torch.device | None = None) -> torch.Tensor:
    """Attention mask of draft step `step`: [length - offset, length + step*(length - offset)], True = may attend.

    Queries are indices offset..length-1. Keys: step-0 keys at all `length` indices (causal: index ≤ query), then
    for each step 1..step one key per query index (the same index only).
    """
    q = torch.arange(offset, length, device=device)
    causal = torch.arange(length, device=device)[None, :] <= q[:, None]  # [n_q, length]
    diag = torch.eye(length - offset, dtype=torch.bool, device=device)  # [n_q, n_q]
    return torch.cat([causal] + [diag] * step, dim=1)


def step_weights(steps: int, decay: float) -> list[float]:
    return [decay**j for j in range(steps)]


def restricted_loss(
    draft_logits: torch.Tensor,  # [n, draft_vocab]
    target_probs: torch.Tensor,  # [n, draft_vocab]: softmax of the target's logits on the draft vocabulary
    target_top: torch.Tensor,  # [n]: the target's greedy token (argmax over its whole vocabulary)
    draft_ids: torch.Tensor,  # [draft_vocab] target id of each draft id
    t2d: torch.Tensor,  # [vocab] bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(summed soft cross-entropy over in-vocab positions, their count, number of greedy hits)."""
    in_vocab = t2d[target_top]  # [n] target's choice is draftable
    logq = torch.log_softmax(draft_logits.float(), dim=-1)
    ce = -(target_probs * logq).sum(-1)  # [n]
    hits = draft_ids[draft_logits.argmax(-1)] == target_top
    return (ce * in_vocab).sum(), in_vocab.sum(), hits.sum()


@dataclass(frozen=True)
class StepStats:
    """One unrolled draft step over one sample, or summed over a step's samples (floats: sums of counts)."""

    ce: float  # summed soft cross-entropy over the in-vocabulary answer positions
    in_vocab: float  # answer positions whose target token is in the draft vocabulary
    hits: float  # answer positions where the head's greedy token is the target's
    positions: float  # answer positions

    def __add__(self, other: StepStats) -> StepStats:
        return StepStats(
            self.ce + other.ce, self.in_vocab + other.in_vocab, self.hits + other.hits, self.positions + other.positions
        )

    @property
    def accuracy(self) -> float:
        """Greedy hits over all answer positions: a target token outside the draft vocabulary is a miss."""
        return self.hits / self.positions if self.positions else 0.0


NO_STATS = StepStats(0.0, 0.0, 0.0, 0.0)


class Features:
    """What the frozen target gives for one sample: token ids, captured states, and on the answer positions its
    final (post-norm) state and greedy token. Logits on the draft vocabulary are recomputed from the final state
    (576 × 8192 per position), so a cached sample costs states, not vocabulary-wide logits."""

    def __init__(self, ids: torch.Tensor, p_len: int, aux: torch.Tensor, last: torch.Tensor, top: torch.Tensor) -> None:
        self.ids = ids  # [S]
        self.p_len = p_len
        self.aux = aux  # [1, S, n_aux*H]
        self.last = last  # [S - (p_len - 1), H]: target final state at positions p_len-1 .. S-1
        self.top = top  # [S - (p_len - 1)]: the target's next token there

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.ids, self.aux, self.last, self.top))

    def targets(self, draft_lm_head: torch.Tensor) -> Targets:
        """The target's distribution on the draft vocabulary at every answer position, computed once per sample and
        shared by all unrolled steps and all heads."""
        probs = torch.softmax((self.last @ draft_lm_head.T).float(), dim=-1)
        return Targets(self.p_len - 1, probs, self.top)


class Targets:
    """Loss targets of one sample: probabilities on the draft vocabulary [n, draft_vocab] and the target's greedy
    token [n], for positions `first` .. S-1."""

    def __init__(self, first: int, probs: torch.Tensor, top: torch.Tensor) -> None:
        self.first, self.probs, self.top = first, probs, top

    def at(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = positions - self.first
        return self.probs[rows], self.top[rows]
