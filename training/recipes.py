"""Training recipes (configs/draft*.toml, configs/narrator.toml): strict TOML files read into pydantic models."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError


class RecipeModel(BaseModel):
    """A recipe table: an unknown key is an error, as a typo would otherwise train with a silent default."""

    model_config = ConfigDict(extra="forbid")


M = TypeVar("M", bound=BaseModel)


def load_recipe_file(path: Path | str, model: type[M], error: type[Exception]) -> M:
    """The recipe at `path` as `model`; `error` (naming the file) when it is missing, not TOML, or invalid."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise error(f"{path}: no such recipe file") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path}: not valid TOML: {exc}") from exc
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise error(f"{path}: {exc}") from exc
