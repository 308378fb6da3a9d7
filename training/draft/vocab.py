"""The draft vocabulary: the target tokens the target itself emits most often.

The draft only proposes tokens it can name, so the vocabulary is counted over the target's own answers (all kinds,
all languages of the training data), not over prompts: a token that only appears in prompts is never drafted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import torch
from pydantic import BaseModel, ConfigDict


class VocabStats(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    size: int
    distinct_output_tokens: int
    # Share of all output tokens (with repeats) that the vocabulary contains: an upper bound on draft accuracy.
    coverage: float


def count_tokens(outputs: Iterable[list[int]]) -> Counter[int]:
    counts: Counter[int] = Counter()
    for ids in outputs:
        counts.update(ids)
    return counts


def select_vocab(
    counts: Counter[int],
    size: int,
    vocab_size: int,
    fallback: Counter[int] | None = None,
    prefer: Iterable[int] = (),
) -> tuple[torch.Tensor, VocabStats]:
    """`size` target ids, ascending: the most frequent answer tokens (ties by id), then the `prefer` ids (a source
    head's vocabulary: answers of another corpus) most frequent in `fallback` first, then the most frequent
    `fallback` tokens (prompt text: the facts an answer copies), then the lowest unused ids."""
    if size > vocab_size:
        raise ValueError(f"draft vocabulary size {size} exceeds the target vocabulary {vocab_size}")
    bad = [t for t in counts if not 0 <= t < vocab_size]
    if bad:
        raise ValueError(f"token ids {sorted(bad)[:5]} outside the target vocabulary 0..{vocab_size - 1}")
    ranked = sorted(counts, key=lambda t: (-counts[t], t))[:size]
    chosen = set(ranked)
    # Fewer distinct answer tokens than slots: a small model's answers hold a few thousand distinct tokens, so
    # the rest go to prompt tokens (names, tags, numbers the answers copy), then the lowest ids (special, bytes).
    often = fallback or Counter()
    preferred = sorted(set(prefer), key=lambda t: (-often[t], t))
    fallback_ranked = sorted(often, key=lambda t: (-often[t], t))
    filler = (t for t in [*preferred, *fallback_ranked, *range(vocab_size)] if t not in chosen and 0 <= t < vocab_size)
    while len(chosen) < size:
        chosen.add(next(filler))
    total = sum(counts.values())
    covered = sum(counts[t] for t in ranked)
    stats = VocabStats(size=size, distinct_output_tokens=len(counts), coverage=covered / total if total else 0.0)
    return torch.tensor(sorted(chosen), dtype=torch.long), stats
