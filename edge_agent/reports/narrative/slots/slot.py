"""A sentence slot and the small readers every section's slots share."""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.reports.facts import Fact
from edge_agent.reports.request import from_iso

# A section's sentences at most (`reference.SECTION_SENTENCES` names the sections allowed more).
MAX_SENTENCES = 4

# A sentence slot: its candidate wordings, richest first; the first that passes the checks is written.
Slot = list[str]


def of(facts: Sequence[Fact], kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


def seconds(iso_utc: str) -> float:
    return from_iso(iso_utc).timestamp()
