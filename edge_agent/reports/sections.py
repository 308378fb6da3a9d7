"""A report's narrative in sections (pure): which facts each section is written from.

A small model writes one short section at a time, each from its own facts only, so a section that fails the
grounding check costs that section alone. Five sections, in the order a shift supervisor reads them:

  alarms              alarm_total, top_alarm;            related: the downtimes on the same assets (alarms are tied
                                                         to the stops they preceded)
  downtime            downtime_total, downtime_cause, downtime_longest, downtime_asset, downtime
  production_quality  production, quality_checks
  notes               operator_note, operator_notes_not_listed;  related: the downtimes and alarms of the assets a
                                                         note names
  process_values      tag_stats, state_change, state_changes_not_listed

A section with no fact of its kinds is not written. The window fact goes with every section: it is what times and
dates are read against. Data gaps, skipped records and completeness stay in the facts list only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from edge_agent.reports.facts import Fact

SECTION_KINDS: dict[str, tuple[str, ...]] = {
    "alarms": ("alarm_total", "top_alarm"),
    "downtime": ("downtime_total", "downtime_cause", "downtime_longest", "downtime_asset", "downtime"),
    "production_quality": ("production", "quality_checks"),
    "notes": ("operator_note", "operator_notes_not_listed"),
    "process_values": ("tag_stats", "state_change", "state_changes_not_listed"),
}
SECTIONS = tuple(SECTION_KINDS)
# An asset name as the simulator and most plants write them (P-101, C-201, T-301): what ties a note to its events.
_ASSET_IN_TEXT = re.compile(r"(?<![\w.\-])[A-Za-z]+-\d+[A-Za-z0-9]*(?![\w\-])")


@dataclass(frozen=True)
class Section:
    name: str
    window: Fact
    facts: tuple[Fact, ...]  # the section's own facts, in report order
    related: tuple[Fact, ...] = ()  # facts of other sections it may mention, in report order

    def grounding_facts(self) -> list[Fact]:
        """What a claim in this section may rest on: the window, the section's facts and the related ones."""
        return [self.window, *self.facts, *self.related]

    @property
    def notes(self) -> tuple[Fact, ...]:
        return tuple(f for f in self.facts if f.kind == "operator_note")


def note_assets(note: Fact) -> set[str]:
    """Asset names a note's text mentions (flagged notes mention nothing: their text never reaches a prompt)."""
    if note.values.get("flagged"):
        return set()
    return set(_ASSET_IN_TEXT.findall(str(note.values.get("text", ""))))


def split_sections(facts: list[Fact]) -> list[Section]:
    """The sections a report's facts make, in `SECTIONS` order; empty when there is no window fact."""
    windows = [f for f in facts if f.kind == "window"]
    if not windows:
        return []
    by_section = {name: tuple(f for f in facts if f.kind in kinds) for name, kinds in SECTION_KINDS.items()}
    out = []
    for name, own in by_section.items():
        if not own:
            continue
        related: tuple[Fact, ...] = ()
        if name == "alarms":
            assets = {f.subject for f in own if f.kind == "top_alarm"}
            related = tuple(f for f in by_section["downtime"] if f.kind == "downtime" and f.subject in assets)
        elif name == "notes":
            named = set().union(*(note_assets(f) for f in own if f.kind == "operator_note"))
            related = tuple(f for f in facts if f.kind in ("downtime", "top_alarm") and f.subject in named)
        out.append(Section(name, windows[0], own, related))
    return out
