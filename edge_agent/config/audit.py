"""Audit trail: checkpoint cadence and origin."""

from __future__ import annotations

from pydantic import Field

from edge_agent.config.base import Section


class AuditConfig(Section):
    # None → "edge-agent/<site id>": the checkpoint origin line names the log.
    origin: str | None = None
    checkpoint_every_entries: int = Field(256, ge=1)
    checkpoint_every_s: float = Field(300.0, gt=0)
