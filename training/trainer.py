"""What the narrator's and the draft head's trainers share: the error they raise, the device they run on and their
learning-rate schedule."""

from __future__ import annotations

import math

import torch


class TrainError(Exception):
    """Training could not start or continue."""


def cosine_lr(step: int, lr: float, warmup_frac: float, steps: int) -> float:
    """Linear warm-up over `warmup_frac` of the run, then cosine from lr down to 10 % of it (the draft head's and the
    narrator adapter's schedule)."""
    warm = max(1, int(warmup_frac * steps))
    if step < warm:
        return lr * (step + 1) / warm
    progress = (step - warm) / max(1, steps - warm)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def train_device(requested: str) -> torch.device:
    """The torch device for a recipe's `device` ("auto", "cpu", "cuda"); TrainError when CUDA is asked for and torch
    sees none."""
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise TrainError("device cuda requested but torch sees no CUDA device (CPU-only torch build or no GPU)")
    return torch.device(requested)
