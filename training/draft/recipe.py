"""The draft recipe file (`configs/draft.toml`): data, the heads to train on it, export and benchmark settings."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from training.draft.data import BENCH_SLICES
from training.draft.train import TrainConfig
from training.recipes import RecipeModel, load_recipe_file


class RecipeError(Exception):
    """The recipe file is missing or invalid."""


class DataConfig(RecipeModel):
    out: Path = Path("var/draft/train.jsonl")
    # 640 prompts × ≤192 answer tokens ≈ 110k on-policy tokens: ~6 min of batched vLLM on 2 quiet cores (the
    # shipped head's recipe asks for 2560).
    prompts: int = Field(640, ge=1)
    # Report-section prompts of the narrator corpus's training seeds, after the general ones: a report specialist's
    # head learns its target on its own workload (~10 sections per simulated day, ~1.3 s a day to draw).
    report_prompts: int = Field(0, ge=0)
    max_tokens: int = Field(192, ge=1)
    seed: int = 0
    chunk: int = Field(64, ge=1)


class HeadConfig(RecipeModel):
    """One head to train from the shared data and `[train]` settings."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    fc_norm: bool
    norm_output: bool
    work_dir: Path
    export_dir: Path


class BenchConfig(RecipeModel):
    # 6 prompts × 96 tokens per slice: ~150 drafting rounds per slice and head, a whole run in ~15 min on a
    # shared 2-core CPU; raise both (`--prompts`, `--max-tokens`) on a quiet or bigger machine.
    prompts_per_slice: int = Field(6, ge=1)
    max_tokens: int = Field(96, ge=1)
    ks: list[int] = Field(default_factory=lambda: [2, 3, 4, 5, 6])
    # k values of the first head timed against no draft, engines side by side (empty: no speed figure).
    speed_ks: list[int] = Field(default_factory=lambda: [2, 3, 4])
    seed: int = 0
    # "report": sections of the narrator corpus's test seeds (data.BENCH_SLICES lists every slice).
    slices: list[str] = Field(default_factory=lambda: ["test", "plant", "long", "perturbed"])
    results: Path = Path("docs/img/draft-bench.json")
    img_dir: Path = Path("docs/img")
    # The BENCHMARKS.md section the figures go to: one per recipe, so benching one head keeps another's figures.
    section: str = Field("draft", pattern=r"^[a-z0-9-]+$")
    title: str = "EAGLE 3.1 draft head"

    @field_validator("slices")
    @classmethod
    def _known_slices(cls, slices: list[str]) -> list[str]:
        unknown = [s for s in slices if s not in BENCH_SLICES]
        if unknown:
            raise ValueError(f"unknown slices {unknown}; one of {list(BENCH_SLICES)}")
        return slices


class DraftRecipe(RecipeModel):
    model_dir: Path = Path("models/default")
    data: DataConfig = Field(default_factory=DataConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    heads: list[HeadConfig]
    export_dtype: str = "bfloat16"
    bench: BenchConfig = Field(default_factory=BenchConfig)

    def head(self, name: str) -> HeadConfig:
        for head in self.heads:
            if head.name == name:
                return head
        raise RecipeError(f"no head named {name!r}; the recipe has {[h.name for h in self.heads]}")

    def train_config(self, head: HeadConfig) -> TrainConfig:
        return self.train.model_copy(
            update={
                "data": self.data.out,
                "work_dir": head.work_dir,
                "fc_norm": head.fc_norm,
                "norm_output": head.norm_output,
            }
        )


def load_recipe(path: Path | str) -> DraftRecipe:
    return load_recipe_file(path, DraftRecipe, RecipeError)
