"""Training recipe files: strict TOML into a model, and one named error for anything else."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from training.draft.recipe import RecipeError
from training.draft.recipe import load_recipe as load_draft_recipe
from training.narrator.train import NarratorRecipe, TrainError
from training.narrator.train import load_recipe as load_narrator_recipe
from training.recipes import RecipeModel, load_recipe_file


class Tiny(RecipeModel):
    steps: int = 1


class RecipeFailed(Exception):
    pass


class TestLoadRecipeFile:
    def test_a_valid_file_is_read(self, tmp_path: Path) -> None:
        (path := tmp_path / "r.toml").write_text("steps = 7\n")
        assert load_recipe_file(path, Tiny, RecipeFailed) == Tiny(steps=7)

    @pytest.mark.parametrize(
        ("content", "message"),
        [
            (None, "no such recipe file"),
            (b"steps = = 7", "not valid TOML"),
            (b"\xff\xfe steps", "not valid TOML"),
            (b"stpes = 7", "stpes"),  # a typo is an error, not a silent default
            (b'steps = "many"', "steps"),
        ],
    )
    def test_every_failure_names_the_file(self, tmp_path: Path, content: bytes | None, message: str) -> None:
        path = tmp_path / "r.toml"
        if content is not None:
            path.write_bytes(content)
        with pytest.raises(RecipeFailed, match=message) as caught:
            load_recipe_file(path, Tiny, RecipeFailed)
        assert str(path) in str(caught.value)

    @given(st.binary(max_size=200))
    def test_any_bytes_give_a_recipe_or_the_named_error(self, content: bytes) -> None:
        import tempfile

        with tempfile.TemporaryDirectory() as d:
            (path := Path(d) / "r.toml").write_bytes(content)
            try:
                assert isinstance(load_recipe_file(path, Tiny, RecipeFailed), Tiny)
            except RecipeFailed as exc:
                assert str(path) in str(exc)

    def test_both_trainers_raise_their_own_error(self, tmp_path: Path) -> None:
        (path := tmp_path / "r.toml").write_text("[train]\nstpes = 1\n")
        with pytest.raises(TrainError, match="stpes"):
            load_narrator_recipe(path)
        with pytest.raises(RecipeError, match="stpes"):
            load_draft_recipe(path)

    def test_the_shipped_narrator_recipe_loads(self) -> None:
        recipe = load_narrator_recipe(Path(__file__).resolve().parents[1] / "configs" / "narrator.toml")
        assert isinstance(recipe, NarratorRecipe) and recipe.train.init_from is not None
