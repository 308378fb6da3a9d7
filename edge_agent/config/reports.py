"""Report service: topics, queue, authorisation."""

from __future__ import annotations

from pydantic import Field

from edge_agent.config.base import Section


class ShiftConfig(Section):
    name: str = Field(min_length=1)
    start: str = Field(pattern=r"^\d{2}:\d{2}$", description="local time HH:MM in site.timezone")
    end: str = Field(pattern=r"^\d{2}:\d{2}$")


class ReportsConfig(Section):
    enabled: bool = True
    # None → edge/<site>/reports/request
    request_topic: str | None = None
    signoff_topic: str | None = None
    queue_max: int = Field(8, ge=1)
    concurrency: int = Field(1, ge=1)
    rate_limit_per_min: int = Field(6, ge=1, description="per requesting client")
    # Empty list = anyone authenticated on the broker may request; sign-off always needs a listed user.
    requesters: list[str] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)
    default_language: str = Field("es", pattern=r"^(es|en|pt)$")
    shifts: list[ShiftConfig] = Field(default_factory=list)
