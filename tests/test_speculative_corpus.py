"""Draft-head prompt corpus: disjoint, deterministic slices; the plant slice's wordings never reach training; report
prompts come from the narrator's training seeds for data and its test seeds for the bench."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from training.draft import corpus
from training.draft.data import discard_off_policy, model_stamp, report_prompts, slice_prompts, training_prompts
from training.narrator.corpus import TEST_SEEDS, TRAIN_SEEDS, SectionCase, case_messages, section_cases

MODEL_DIR = Path(__file__).resolve().parents[1] / "models" / "default"


class TestCorpus:
    def test_train_and_test_never_share_a_prompt(self) -> None:
        """The held-out test split holds no prompt text of the training split."""
        train = {p.text() for p in corpus.build("train", 10_000)}
        test = {p.text() for p in corpus.build("test", 10_000)}
        assert len(test) > 100
        assert not train & test

    def test_slices_are_deterministic(self) -> None:
        """Building a slice twice with one seed gives the same prompts, another seed others."""
        for name in corpus.SLICES:
            assert corpus.build(name, 5, seed=1) == corpus.build(name, 5, seed=1)  # type: ignore[arg-type]
        assert corpus.build("plant", 5, seed=1) != corpus.build("plant", 5, seed=2)

    def test_prefix_of_a_larger_draw_is_the_smaller_draw(self) -> None:
        """The first n training prompts do not depend on how many are drawn, so a partial data file resumes."""
        assert corpus.build("train", 640)[:320] == corpus.build("train", 320)

    def test_plant_wordings_never_reach_training(self) -> None:
        """No fixed phrase of a plant-style prompt template occurs in any training prompt."""
        style = json.loads((Path(corpus.__file__).parent / "plant_style.json").read_text())
        phrases = [p.strip() for t in style["prompts"] for p in re.split(r"\{[a-z_]+\}", t) if len(p.strip()) >= 12]
        assert len(phrases) > 15
        train = "\n".join(p.text() for p in corpus.build("train", 10_000))
        assert [p for p in phrases if p in train] == []

    def test_perturbed_prompts_use_unseen_templates(self) -> None:
        """Every perturbed prompt is a raw string with a system prompt training never uses."""
        style = json.loads((Path(corpus.__file__).parent / "plant_style.json").read_text())
        systems = [s.split("{")[0] for s in style["perturbed_system"]]
        for prompt in corpus.build("perturbed", 8):
            assert prompt.raw is not None and prompt.messages is None
            assert any(s in prompt.raw for s in systems)

    def test_unknown_slice_is_refused(self) -> None:
        """A typo in a slice name is an error naming the valid slices."""
        with pytest.raises(ValueError, match="unknown slice"):
            corpus.build("tset", 1)  # type: ignore[arg-type]

    @pytest.mark.skipif(not (MODEL_DIR / "tokenizer.json").exists(), reason="prepared model missing: make model")
    def test_long_slice_has_at_least_1500_tokens_of_context(self) -> None:
        """Every long-context prompt is ≥ 1.5k tokens with the chat template applied."""
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(MODEL_DIR))
        for prompt in corpus.build("long", 4):
            ids = tok.apply_chat_template(prompt.messages, add_generation_prompt=True, tokenize=True)
            ids = ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids
            assert len(ids) >= 1500

    @pytest.mark.skipif(not (MODEL_DIR / "tokenizer.json").exists(), reason="prepared model missing: make model")
    def test_bench_sends_a_raw_prompt_as_it_is_and_chat_through_the_template(self) -> None:
        """1 in 10 corpus prompts is a raw alternative template: the speed bench must time it, not stop on it (it
        did at 8 prompts per slice)."""
        from transformers import AutoTokenizer

        from edge_agent.llm.chat import render_chat
        from training.draft.bench import prompt_text

        tok = AutoTokenizer.from_pretrained(str(MODEL_DIR))
        prompts = corpus.build("test", 40)
        raw = next(p for p in prompts if p.raw is not None)
        chat = next(p for p in prompts if p.messages is not None)
        assert prompt_text(tok, raw) == raw.raw
        assert chat.messages is not None
        assert prompt_text(tok, chat) == render_chat(tok, chat.messages)


def _report_prompt(case: SectionCase) -> corpus.Prompt:
    """Written out from the brief: the narrator's messages for the section, slice "report", its request's language."""
    return corpus.Prompt(
        id=f"report-{case.id}",
        slice="report",
        lang=case.request.language,
        kind="report_section",
        messages=[m.model_dump() for m in case_messages(case)],
    )


def _day(prompt: corpus.Prompt) -> int:
    """The narrator seed of a report prompt: ids are report-<seed>-<request>-<section>."""
    return int(prompt.id.split("-")[1])


@cache
def _cases(seed: int) -> list[SectionCase]:
    return section_cases(seed)


class TestReportPrompts:
    """Report-section prompts: the specialist's own prompts, training seeds for data, test seeds for the bench."""

    def test_training_data_are_general_then_narrator_prompts_of_training_seeds(self) -> None:
        """`[data]` prompts = the corpus's first train prompts, then the sections of TRAIN_SEEDS[0] in order."""
        prompts = training_prompts(3, 5)
        assert prompts[:3] == corpus.build("train", 3)
        assert prompts[3:] == [_report_prompt(c) for c in section_cases(TRAIN_SEEDS[0])[:5]]
        assert {p.lang for p in prompts[3:]} <= {"en", "es", "pt"}

    def test_zero_report_prompts_is_the_general_corpus(self) -> None:
        """report_prompts = 0 (the default) leaves the data what configs/draft.toml always made."""
        assert training_prompts(4, 0) == corpus.build("train", 4)

    def test_report_bench_slice_uses_only_test_seeds(self) -> None:
        """The bench's report slice is the sections of TEST_SEEDS[0], none of a training seed's day."""
        bench = slice_prompts("report", 14)
        assert not set(TRAIN_SEEDS) & set(TEST_SEEDS)
        assert {_day(p) for p in bench} <= set(TEST_SEEDS)
        cases = [*section_cases(TEST_SEEDS[0]), *section_cases(TEST_SEEDS[1])]
        assert bench == [_report_prompt(c) for c in cases[:14]]
        train = training_prompts(0, 14)
        assert not {p.id for p in bench} & {p.id for p in train}
        assert not {p.text() for p in bench} & {p.text() for p in train}

    def test_seed_picks_the_first_day(self) -> None:
        """Seed s starts at seeds[s % len(seeds)] and wraps round: seed 4 over days (7, 8) starts at day 7."""
        days = (TEST_SEEDS[7], TEST_SEEDS[8])
        assert report_prompts(1, days, seed=1) == [_report_prompt(section_cases(days[1])[0])]
        assert report_prompts(1, days, seed=4) == [_report_prompt(section_cases(days[0])[0])]

    def test_unknown_slice_is_refused_by_the_bench_and_the_recipe(self) -> None:
        """A typo in a bench slice is an error naming the valid ones, in code and in a recipe file."""
        from training.draft.recipe import BenchConfig

        with pytest.raises(ValueError, match="unknown bench slice 'reports'"):
            slice_prompts("reports", 1)
        with pytest.raises(ValidationError, match="unknown slices \\['reports'\\]"):
            BenchConfig(slices=["test", "reports"])

    @settings(max_examples=200)  # days cached: ~10 ms an example
    @given(n=st.integers(-3, 40), seed=st.integers(0, 10_000), more=st.integers(0, 10))
    def test_first_n_of_the_rotated_days(self, n: int, seed: int, more: int) -> None:
        """Any n and seed: exactly the first n sections of the days taken from seeds[seed % 3] round, a prefix of
        a larger draw, no id twice."""
        days = (TEST_SEEDS[0], TEST_SEEDS[1], TEST_SEEDS[2])
        start = seed % 3
        rotated = [c for d in days[start:] + days[:start] for c in _cases(d)]
        with patch("training.draft.data.section_cases", _cases):
            got = report_prompts(n, days, seed)
            larger = report_prompts(n + more, days, seed)
        assert got == [_report_prompt(c) for c in rotated[: max(n, 0)]]
        assert larger[: len(got)] == got
        assert len({p.id for p in larger}) == len(larger)


class TestOnPolicyStamp:
    def test_answers_of_another_model_are_discarded(self, tmp_path: Path) -> None:
        """Stamped by model A: kept for A, removed for B; an unstamped file (made before stamps) is removed too."""
        data = tmp_path / "train.jsonl"
        data.write_text('{"id": "x"}\n')
        model_stamp(data).write_text("a" * 64 + "\n")
        assert not discard_off_policy(data, "a" * 64) and data.exists()
        assert discard_off_policy(data, "b" * 64) and not data.exists()
        data.write_text('{"id": "x"}\n')
        model_stamp(data).unlink()
        assert discard_off_policy(data, "a" * 64) and not data.exists()
        assert not discard_off_policy(data, "a" * 64)  # nothing to discard


class TestNarratorRecipe:
    RECIPE = Path(__file__).resolve().parents[1] / "configs" / "draft-narrator.toml"
    SOURCE = Path(__file__).resolve().parents[1] / "assets" / "eagle31-narrator-smollm2-135m-h1"  # init_from

    def test_fine_tunes_the_previous_specialist_head_on_both_kinds_of_prompt(self) -> None:
        """The specialist's recipe as shipped (h2): 1,536 general + 768 report prompts, 800 steps from h1 in its
        vocabulary, one 3.1 head, and the report slice in the bench."""
        from training.draft.recipe import load_recipe

        recipe = load_recipe(self.RECIPE)
        assert (recipe.data.prompts, recipe.data.report_prompts, recipe.data.max_tokens) == (1536, 768, 192)
        [head] = recipe.heads
        train = recipe.train_config(head)
        assert train.init_from == Path("assets/eagle31-narrator-smollm2-135m-h1")
        assert (train.fc_norm, train.norm_output, train.lr, train.steps) == (True, True, 3e-4, 800)
        assert not train.reselect_vocab
        assert head.export_dir == Path("edge_agent/llm/shipped/eagle31-narrator-smollm2-135m")
        assert "report" in recipe.bench.slices

    def test_benchmarks_go_to_their_own_section(self) -> None:
        """Benching the specialist's head leaves the shipped head's BENCHMARKS.md section and plots alone."""
        from training.draft.recipe import load_recipe

        shipped, narrator = load_recipe(self.RECIPE.with_name("draft.toml")).bench, load_recipe(self.RECIPE).bench
        assert (shipped.section, narrator.section) == ("draft", "draft-narrator")
        assert shipped.results != narrator.results and shipped.img_dir != narrator.img_dir

    @pytest.mark.skipif(not (SOURCE / "config.json").exists(), reason="init_from head missing")
    @pytest.mark.skipif(not (MODEL_DIR / "config.json").exists(), reason="prepared model missing: make model")
    def test_source_head_has_the_shape_the_run_builds(self) -> None:
        """The head the trainer builds for the prepared model from this recipe has exactly the init_from head's
        config, so init_from accepts it (the merged specialist keeps the base model's config)."""
        from transformers import AutoConfig

        from training.draft.export import load_exported
        from training.draft.model import DraftConfig
        from training.draft.recipe import load_recipe

        recipe = load_recipe(self.RECIPE)
        train = recipe.train_config(recipe.heads[0])
        built = DraftConfig.for_target(
            AutoConfig.from_pretrained(MODEL_DIR),
            draft_vocab_size=train.draft_vocab_size,
            fc_norm=train.fc_norm,
            norm_output=train.norm_output,
        )
        assert load_exported(self.SOURCE).config == built

    @pytest.mark.skipif(not (SOURCE / "config.json").exists(), reason="init_from head missing")
    def test_vocabulary_size_is_the_source_heads(self) -> None:
        """init_from keeps the source's vocabulary, so the recipe's size must be the init_from head's."""
        from training.draft.recipe import load_recipe

        source = json.loads((self.SOURCE / "config.json").read_text())
        assert load_recipe(self.RECIPE).train.draft_vocab_size == source["draft_vocab_size"]
