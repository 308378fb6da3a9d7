"""Fine-tuning from an exported head (`init_from`): where that head came from, and how much of this data's answers
its draft vocabulary covers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import torch

from edge_agent.llm.manifest import MANIFEST_NAME, manifest_sha256, sha256_file, verify
from edge_agent.llm.types import ModelVerificationError
from training.draft.export import WEIGHTS_NAME
from training.draft.vocab import VocabStats
from training.trainer import TrainError


def vocab_coverage(counts: Counter[int], ids: torch.Tensor) -> VocabStats:
    """How much of these answers a vocabulary chosen elsewhere (an `init_from` head's) covers."""
    chosen = set(ids.tolist())
    total = sum(counts.values())
    covered = sum(n for token, n in counts.items() if token in chosen)
    return VocabStats(size=len(chosen), distinct_output_tokens=len(counts), coverage=covered / total if total else 0.0)


def head_lineage(directory: Path) -> dict[str, str]:
    """Where an `init_from` head came from: its path and the sha256 of its manifest (checked against its files), or
    of its weights when it has no manifest."""
    if (directory / MANIFEST_NAME).exists():
        try:
            verify(directory)
        except ModelVerificationError as exc:
            raise TrainError(f"init_from {directory}: {exc}") from exc
        return {"path": str(directory), "manifest_sha256": manifest_sha256(directory)}
    return {"path": str(directory), "weights_sha256": sha256_file(directory / WEIGHTS_NAME)}
