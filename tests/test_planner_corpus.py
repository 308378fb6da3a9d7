"""The planner's corpus and training (training.planner): every reading is one the agent follows, the held-out bench
questions are not in it, the mix keeps narrator samples, and `python -m training planner` trains and exports on tiny
data (the real run never runs in CI)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.ask.model_planner import PlanDraft, planner_messages, reading_of
from edge_agent.ask.resolve import fold
from tests.test_narrator_lora import SAMPLES, tiny_model_dir
from training.cli import main as training_main
from training.narrator.corpus import TRAIN_SEEDS as NARRATOR_SEEDS
from training.narrator.corpus import NarratorSample, write_corpus
from training.planner.corpus import TEST_SEEDS, TRAIN_SEEDS, build_samples, reading_json
from training.planner.train import mixed_samples

REPO = Path(__file__).resolve().parents[1]
BENCH_QUESTIONS = [REPO / "bench" / "data" / name for name in ("ask_questions.toml", "ask_questions_blind.toml")]


@pytest.fixture(scope="module")
def corpus() -> list:
    return list(build_samples(TRAIN_SEEDS[:1500], "train"))


class TestCorpus:
    def test_every_reading_is_followed(self, corpus: list) -> None:
        """Each target parses under the reading's schema and its spans are words of its question: the model is
        taught only readings the agent follows."""
        for sample in corpus:
            assert reading_of(sample.target, sample.question) == (reading_of(sample.target, sample.question)[0], None)
            PlanDraft.model_validate_json(sample.target)

    def test_targets_are_what_the_engine_writes(self, corpus: list) -> None:
        """Compact JSON, keys in the schema's order (the engine writes no whitespace under the grammar)."""
        for sample in corpus[:200]:
            draft = json.loads(sample.target)
            assert list(draft) == ["intents", "subject", "time"]
            assert sample.target == reading_json(draft["intents"], draft["subject"], draft["time"])
            assert ", " not in sample.target.split('"subject"')[0]

    def test_messages_are_the_agents(self, corpus: list) -> None:
        assert corpus[0].messages == planner_messages(corpus[0].question)

    def test_same_seeds_same_samples(self) -> None:
        assert list(build_samples(range(5), "train")) == list(build_samples(range(5), "train"))

    def test_languages_and_kinds_are_all_there(self, corpus: list) -> None:
        assert {s.language for s in corpus} == {"es", "en", "pt"}
        intents = {i for s in corpus for i in json.loads(s.target)["intents"]}
        assert intents == set(PlanDraft.model_json_schema()["properties"]["intents"]["items"]["enum"])
        assert any(json.loads(s.target)["intents"] == [] for s in corpus)  # questions to leave alone
        assert any(len(json.loads(s.target)["intents"]) == 2 for s in corpus)

    def test_held_out_questions_are_not_in_the_corpus(self) -> None:
        """bench.ask's questions (both files, held out) appear in neither split."""
        held = [tomllib.loads(path.read_text(encoding="utf-8")) for path in BENCH_QUESTIONS]
        questions = {
            fold(q["q"]).strip(" ?¿") for data in held for kind in ("answerable", "refuse") for q in data[kind]
        }
        every = [*build_samples(TRAIN_SEEDS, "train"), *build_samples(TEST_SEEDS, "test")]
        assert not questions & {fold(s.question).strip(" ?¿") for s in every}

    def test_splits_and_other_corpora_use_disjoint_seeds(self) -> None:
        assert not set(TRAIN_SEEDS) & set(TEST_SEEDS)
        assert not set(TRAIN_SEEDS) & set(NARRATOR_SEEDS)
        assert 4242 not in TRAIN_SEEDS  # bench.ask's plant

    @settings(max_examples=60, deadline=None)
    @given(st.integers(min_value=0, max_value=2**31))
    def test_any_seed_gives_a_followed_reading(self, seed: int) -> None:
        (sample,) = build_samples([seed], "train")
        assert reading_of(sample.target, sample.question)[1] is None


class TestMix:
    def test_half_as_many_narrator_samples_seeded(self) -> None:
        planner = list(build_samples(range(10), "train"))
        narrator = [f"n{i}" for i in range(40)]
        mixed = mixed_samples(planner, narrator, 0.5, seed=3)  # type: ignore[arg-type]
        assert mixed[:10] == planner and len(mixed) == 15
        assert mixed == mixed_samples(planner, narrator, 0.5, seed=3)  # type: ignore[arg-type]
        assert mixed != mixed_samples(planner, narrator, 0.5, seed=4)  # type: ignore[arg-type]
        assert len(mixed_samples(planner, narrator[:2], 0.5, seed=3)) == 12  # type: ignore[arg-type]


class TestTrainingCommand:
    def test_train_and_export_on_tiny_data(self, tmp_path: Path) -> None:
        """`python -m training planner data|train|export` on a tiny random model: the corpus is written, two steps
        train on planner and narrator samples mixed, the export holds the adapter with the mix's sample count."""
        model = tiny_model_dir(tmp_path / "model")
        narrator = tmp_path / "narrator.jsonl"
        write_corpus(
            narrator,
            [
                NarratorSample(
                    id=f"train-{i}",
                    split="train",
                    seed=i,
                    language="en",
                    report_type="shift_summary",
                    section="downtime",
                    strict=False,
                    messages=s.messages,  # type: ignore[arg-type]
                    target=s.target,
                )
                for i, s in enumerate(SAMPLES)
            ],
        )
        recipe = tmp_path / "planner.toml"
        recipe.write_text(
            f'model_dir = "{model}"\n'
            '[lora]\nrank = 4\nalpha = 8\nlayers = "all"\n'
            f'[mix]\ncorpus = "{tmp_path / "planner.jsonl"}"\nnarrator_corpus = "{narrator}"\n'
            "narrator_per_planner = 0.002\n"
            f'[train]\nwork_dir = "{tmp_path / "work"}"\nbatch_size = 2\nsteps = 2\nmax_seq_len = 4096\n'
            'device = "cpu"\ncheckpoint_every = 1\n'
            f'[export]\ndir = "{tmp_path / "adapter"}"\nname = "tiny-planner"\ndtype = "float32"\n',
            encoding="utf-8",
        )
        assert training_main(["planner", "data", "--config", str(recipe)]) == 0
        assert training_main(["planner", "train", "--config", str(recipe), "--no-progress"]) == 0
        assert training_main(["planner", "export", "--config", str(recipe)]) == 0
        config = json.loads((tmp_path / "adapter" / "adapter_config.json").read_text())
        assert config["meta"]["samples"] == len(TRAIN_SEEDS) + round(len(TRAIN_SEEDS) * 0.002)
        assert config["meta"]["steps"] == 2
