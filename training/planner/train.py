"""The planner's training: the narrator's LoRA adapter continued on the planner's corpus with a share of the
narrator's own samples mixed in, so the one shipped adapter plans and keeps writing report sections.

The recipe is the narrator's (`[lora]`, `[train]`, `[export]`, configs/narrator.toml) plus `[mix]`: the planner's
corpus and how many narrator samples go with each planner sample. The trainer is the narrator's
(`training.narrator.train.NarratorTrainer`): resumable, the same checkpoint and export.
"""

from __future__ import annotations

import random
from pathlib import Path

from pydantic import Field

from training.narrator.corpus import NarratorSample
from training.narrator.train import NarratorRecipe, TrainError
from training.planner.corpus import PlannerSample
from training.recipes import RecipeModel, load_recipe_file


class PlannerMix(RecipeModel):
    """`[mix]` of configs/planner.toml."""

    corpus: Path = Path("var/planner/corpus.jsonl")
    narrator_corpus: Path = Path("var/narrator/corpus.jsonl")
    # Narrator samples per planner sample: the continuation must not cost the sections what they have (r5's 240
    # steps on one section alone drifted the others), so they stay in every batch.
    narrator_per_planner: float = Field(0.5, ge=0)
    seed: int = 0


class PlannerRecipe(NarratorRecipe):
    """configs/planner.toml."""

    mix: PlannerMix = Field(default_factory=PlannerMix)


def load_planner_recipe(path: Path | str) -> PlannerRecipe:
    return load_recipe_file(path, PlannerRecipe, TrainError)


def mixed_samples(
    planner: list[PlannerSample], narrator: list[NarratorSample], per_planner: float, seed: int
) -> list[PlannerSample | NarratorSample]:
    """Every planner sample and `per_planner` times as many narrator samples drawn without replacement by `seed`
    (all of them when there are fewer), the narrator's in their corpus order after the planner's (the trainer
    shuffles batches)."""
    wanted = min(len(narrator), round(len(planner) * per_planner))
    chosen = sorted(random.Random(seed).sample(range(len(narrator)), wanted))
    return [*planner, *(narrator[i] for i in chosen)]
