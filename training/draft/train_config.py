"""How a draft head is trained: `[train]` of configs/draft.toml, each default with the reason for its value."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from training.recipes import RecipeModel


class TrainConfig(RecipeModel):
    """`[train]` of configs/draft.toml."""

    data: Path = Path("var/draft/train.jsonl")
    work_dir: Path = Path("var/draft/eagle31")
    fc_norm: bool = True
    norm_output: bool = True
    # 8192 ids cover ~99 % of the target's answer tokens here and keep the bf16 head under 20 MB.
    draft_vocab_size: int = Field(8192, ge=16)
    # 6 unrolled steps: as deep as the largest k benchmarked (6); each step costs a full pass of the head.
    ttt_steps: int = Field(6, ge=1)
    # 0.8 per step: later steps still matter (they set τ at large k) without dominating the easy early ones.
    step_decay: float = Field(0.8, gt=0, le=1)
    lr: float = Field(5e-4, gt=0)
    # 5 % warm-up then cosine to 10 %: the usual AdamW schedule for a freshly initialised layer.
    warmup_frac: float = Field(0.05, ge=0, lt=1)
    weight_decay: float = 0.0
    grad_clip: float = Field(0.5, gt=0)
    samples_per_step: int = Field(4, ge=1)
    steps: int = Field(600, ge=1)
    # 640 tokens of prompt + answer (answers ≤ 192): the answer is kept whole, the prompt cut from the left.
    max_seq_len: int = Field(640, ge=16)
    seed: int = 0
    dtype: Literal["bfloat16", "float32"] = "bfloat16"
    # Where the frozen target captures its states and the heads train; auto: CUDA when torch sees a GPU. The same
    # code runs on either: tensors are made on `device`, the loss under autocast to `dtype` there.
    device: Literal["auto", "cpu", "cuda"] = "auto"
    threads: int | None = Field(None, ge=1)
    checkpoint_every: int = Field(50, ge=1)
    # The target's forward is ~45 % of a step's work for two heads; each sample's captured states (~1.8 MB at
    # 450 tokens, bf16) are kept in memory after the first epoch's pass, up to this many MiB. 0 = always recompute.
    feature_cache_mb: int = Field(4096, ge=0)
    # Samples per forward pass of the target (right-padded, masked). 1: one at a time, the pass the shipped head's
    # figures came from, bit for bit; more fills a GPU at the cost of padding to the step's longest sample.
    target_batch: int = Field(1, ge=1)
    # An exported head (config.json + model.safetensors) to fine-tune: its weights and draft vocabulary replace the
    # fresh head and the vocabulary counted from the data. A checkpoint in work_dir still wins once it exists.
    init_from: Path | None = None
    # With init_from: every answer token of this data in the vocabulary, then the source's tokens (its own corpus's
    # answers), instead of the source's alone (whose answers may not have held this workload's tokens: names, tags,
    # quotes); lm_head rows of the tokens both hold are the source's, the others start as the target's output rows.
    reselect_vocab: bool = False
