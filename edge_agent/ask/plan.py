"""A plan: the tool calls that answer a question, as one JSON-schema'd object, so the reference planner (code) and a
model planner under structured outputs produce the same thing."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.ask.tools.models import ToolName

# 4 calls: the widest question of the reference planner ("stops, scrap and alarms of shift A on L1") needs 3; a plan
# longer than that is a planner gone astray, and each call reads up to the row budget.
MAX_CALLS = 4


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: ToolName
    args: dict[str, Any] = Field(default_factory=dict)


class Plan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    calls: list[ToolCall] = Field(min_length=1, max_length=MAX_CALLS)


def plan_schema() -> dict[str, Any]:
    """The plan's JSON schema (draft 2020-12), what a structured-output engine constrains a model planner to."""
    return Plan.model_json_schema()
