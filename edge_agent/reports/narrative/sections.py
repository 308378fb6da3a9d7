"""A report's narrative in sections (pure): which facts each section is written from.

A small model writes one short section at a time, each from its own facts only, so a section that fails the
grounding check costs that section alone. The sections, in the order a shift supervisor reads them, then the plant
KPIs':

  alarms              alarm_total, top_alarm;            related: the downtimes on the same assets (alarms are tied
                                                         to the stops they preceded)
  downtime            downtime_total, downtime_cause, downtime_longest, downtime_asset, downtime
  production_quality  production, quality_checks
  notes               operator_note, operator_notes_not_listed;  related: the one event the notes are tied to
                                                         (`note_tie`): of the first note naming an asset that had a
                                                         stop or a top alarm before it, the asset's latest stop
                                                         begun before the note, else its first such alarm; the
                                                         prompt also names that note by time and author
  process_values      tag_stats, state_change, state_changes_not_listed;  only the `TAGS_MAX` tag statistics with
                                                         the highest peaks (`tag_peak`), highest first: the tags worth
                                                         naming, each copied from its own line (among ten lines, r10
                                                         gave one tag the mean or the name of the line next to it)
  oee                 oee (per line)
  maintenance         mtbf, mttr (per asset)
  alarm_performance   alarm_rate, alarm_flood(_episode), alarm_bad_actor(s), alarm_chattering(_alarm),
                      alarm_standing(_alarm), alarm_stale(_alarm), alarm_priority_mix

A section with no fact of its kinds is not written. The window fact goes with every section: it is what times and
dates are read against. Data gaps, skipped records and completeness stay in the facts list only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from edge_agent.reports.facts import Fact
from edge_agent.reports.request import from_iso

SECTION_KINDS: dict[str, tuple[str, ...]] = {
    "alarms": ("alarm_total", "top_alarm"),
    "downtime": ("downtime_total", "downtime_cause", "downtime_longest", "downtime_asset", "downtime"),
    "production_quality": ("production", "quality_checks"),
    "notes": ("operator_note", "operator_notes_not_listed"),
    "process_values": ("tag_stats", "state_change", "state_changes_not_listed"),
    # The plant KPIs (`reports.kpi`, docs/kpis.md): in shift summaries and downtime analyses, and the alarm
    # performance review.
    "oee": ("oee",),
    "maintenance": ("mtbf", "mttr"),
    "alarm_performance": (
        "alarm_rate",
        "alarm_flood",
        "alarm_flood_episode",
        "alarm_bad_actors",
        "alarm_bad_actor",
        "alarm_chattering",
        "alarm_chattering_alarm",
        "alarm_standing",
        "alarm_standing_alarm",
        "alarm_stale",
        "alarm_stale_alarm",
        "alarm_priority_mix",
    ),
}
SECTIONS = tuple(SECTION_KINDS)
# The sections a report has only with the plant's KPI settings (`facts.compute_facts(kpi=...)`), or in a review.
KPI_SECTIONS = ("oee", "maintenance", "alarm_performance")
# An asset name as the simulator and most plants write them (P-101, C-201, T-301): what ties a note to its events.
_ASSET_IN_TEXT = re.compile(r"(?<![\w.\-])[A-Za-z]+-\d+[A-Za-z0-9]*(?![\w\-])")
# Three tags at most: the most telling peaks, not a table of every tag (the facts list keeps every tag's statistics).
TAGS_MAX = 3


@dataclass(frozen=True)
class Section:
    name: str
    window: Fact
    facts: tuple[Fact, ...]  # the section's own facts, in report order (process values: the top peaks first)
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


@dataclass(frozen=True)
class NoteTie:
    note: Fact
    asset: str
    event: Fact  # a `downtime` or a `top_alarm` of `asset`


def note_tie(notes: tuple[Fact, ...], events: tuple[Fact, ...]) -> NoteTie | None:
    """The first note (in report order) naming an asset with an event in `events` before the note: that asset's latest
    stop begun before the note, else its first alarm raised before it. One tie, computed here, so a small model
    is shown the event it may tie a note to instead of picking among every stop of every asset the notes name."""
    for note in notes:
        at = from_iso(note.values["at"])
        for asset in sorted(note_assets(note)):
            mine = [f for f in events if f.subject == asset]
            stops = [f for f in mine if f.kind == "downtime" and from_iso(f.values["start_at"]) <= at]
            if stops:
                return NoteTie(note, asset, max(stops, key=lambda f: from_iso(f.values["start_at"])))
            alarms = [f for f in mine if f.kind == "top_alarm" and from_iso(f.values["first_at"]) <= at]
            if alarms:
                return NoteTie(note, asset, alarms[0])
    return None


def left_after(note: Fact, stop: Fact) -> bool:
    """Whether the note was left once the stop had ended (the reference writer then says "after", else "during")."""
    v = stop.values
    return not v.get("open") and from_iso(v["end_at"]) <= from_iso(note.values["at"])


def left_during(note: Fact, stop: Fact) -> bool:
    """Whether the note was left while the stop went on: from its start, and before its end unless still open."""
    return from_iso(stop.values["start_at"]) <= from_iso(note.values["at"]) and not left_after(note, stop)


def tag_peak(stats: Fact) -> float:
    """How far a tag's maximum stands above its mean, relative to the mean's size (a flat tag scores 0)."""
    v = stats.values
    return float((v["max"] - v["mean"]) / max(abs(v["mean"]), 1e-9))


def _top_peaks(facts: tuple[Fact, ...]) -> tuple[Fact, ...]:
    """The `TAGS_MAX` tag statistics with the largest `tag_peak`, largest first (ties keep report order), then the
    other facts in report order."""
    stats = sorted((f for f in facts if f.kind == "tag_stats"), key=tag_peak, reverse=True)[:TAGS_MAX]
    return (*stats, *(f for f in facts if f.kind != "tag_stats"))


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
            events = tuple(f for f in facts if f.kind in ("downtime", "top_alarm"))
            tie = note_tie(tuple(f for f in own if f.kind == "operator_note"), events)
            related = (tie.event,) if tie else ()
        elif name == "process_values":
            own = _top_peaks(own)
        out.append(Section(name, windows[0], own, related))
    return out
