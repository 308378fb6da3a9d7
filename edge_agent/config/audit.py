"""Audit trail: checkpoint cadence and origin."""

from __future__ import annotations

from pydantic import Field

from edge_agent.config.base import Section


class AuditConfig(Section):
    # None → "edge-agent/<site id>". The origin is the checkpoint's first line and the signing key's name, so it
    # follows C2SP note key-name rules: no spaces, no "+".
    origin: str | None = Field(None, min_length=1, pattern=r"^[^\s+]+$")
    # 256 entries: a checkpoint costs three fsyncs (~10 ms on a slow disk), so signing every 256 appends keeps that
    # under 5 % of append time even at fsync-per-entry rates, while bounding the unsigned tail.
    checkpoint_every_entries: int = Field(256, ge=1)
    # 300 s: a quiet plant still gets its newest entries signed within five minutes.
    checkpoint_every_s: float = Field(300.0, gt=0)
