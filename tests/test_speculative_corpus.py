"""Draft-head prompt corpus: disjoint, deterministic slices; the plant slice's wordings never reach training."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from edge_agent.speculative import corpus

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
