"""Report service: topics, queue, authorisation, shifts and the limits on what a prompt may carry."""

from __future__ import annotations

from pydantic import Field

from edge_agent.config.base import Section


class ShiftConfig(Section):
    name: str = Field(min_length=1)
    start: str = Field(pattern=r"^\d{2}:\d{2}$", description="local time HH:MM in site.timezone")
    end: str = Field(pattern=r"^\d{2}:\d{2}$", description="HH:MM; an end at or before start crosses midnight")


class ReportsConfig(Section):
    enabled: bool = True
    # None → edge/<site>/reports/request; the service subscribes to <topic>/# and reads the level after it as the
    # authenticated MQTT user (the broker ACL `pattern write .../request/%u` makes that level the user name).
    request_topic: str | None = None
    # None → edge/<site>/reports/signoff (same rule: <topic>/<user>).
    signoff_topic: str | None = None
    queue_max: int = Field(8, ge=1)
    concurrency: int = Field(1, ge=1)
    rate_limit_per_min: int = Field(6, ge=1, description="per requesting client")
    # Empty list = anyone authenticated on the broker may request; sign-off always needs a listed user.
    requesters: list[str] = Field(default_factory=list)
    approvers: list[str] = Field(default_factory=list)
    default_language: str = Field("es", pattern=r"^(es|en|pt)$")
    shifts: list[ShiftConfig] = Field(default_factory=list)
    # 320 tokens: a five-to-eight sentence narrative; more only lengthens the wait on a CPU box.
    narrative_max_tokens: int = Field(320, ge=16)
    # 280 characters: a long operator note; anything longer is cut so untrusted text cannot crowd out the facts.
    note_max_chars: int = Field(280, ge=16)
    # 12 notes, 24 facts of each list kind: keeps the prompt well inside a 4096-token context.
    notes_max: int = Field(12, ge=0)
    list_facts_max: int = Field(24, ge=1)
