"""What the ask gives instead of a plan: a question back (which of these did you mean?) or a refusal with its code."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

RefusalReason = Literal["out_of_scope", "write_request", "outside_data", "injection", "outside_budget"]


class Clarification(BaseModel):
    """The question names something that matches several things or none: the candidates go back to the asker, never
    a guess. `reason`: ambiguous_name, unknown_name, several_subjects, unknown_tag, which_tag, unknown_shift,
    future_window, unknown_time."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str
    candidates: list[str]


class Refusal(BaseModel):
    """A question the agent does not answer: a command or write to the plant, an injection, something outside the
    plant's stored data or outside what the ask is for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: RefusalReason
    detail: str
