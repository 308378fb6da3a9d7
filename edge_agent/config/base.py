"""Shared base for every config section: unknown keys are errors, values are validated on assignment."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A config section. `extra="forbid"` turns a typo in a plant's TOML into an error instead of a silent default."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)
