"""The process values section's slots: the highest peak, the other peaks, and the state changes.

A tag is written as people say it ("la vibración de la bomba P-101", `SectionWriter.tag`) and its figures with the
unit its key names ("9.12 mm/s"); each peak slot's last candidate drops the units, for a unit the grounding check
would read as something else (a tag in seconds: "12 s" is read as a duration)."""

from __future__ import annotations

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.prompts import format_number
from edge_agent.reports.narrative.slots.slot import Slot, of


def process_value_slots(w: SectionWriter) -> list[Slot]:
    slots: list[Slot] = []
    stats = of(w.section.facts, "tag_stats")  # `split_sections` keeps the top peaks, highest first (`tag_peak`)
    if stats:
        top, tag = stats[0].values, stats[0].subject
        slots.append(
            [
                w.phrase(
                    "pv.peak",
                    tag=w.tag(tag),
                    max=w.figure(top["max"], tag, units),
                    max_at=w.at(top["max_at"]),
                    mean=w.figure(top["mean"], tag, units),
                )
                for units in (True, False)
            ]
        )
    if len(stats) > 1:
        slots.append([w.phrase("pv.peaks", items=w.listing(_peaks(w, stats[1:], units))) for units in (True, False)])
    slots.append(_states(w))
    return slots


def _peaks(w: SectionWriter, stats: list[Fact], units: bool) -> list[str]:
    return [
        w.words.peak_item.format(
            tag=w.tag(f.subject),
            max=w.figure(f.values["max"], f.subject, units),
            at=w.at(f.values["max_at"]),
            mean=w.figure(f.values["mean"], f.subject, units),
        )
        for f in stats
    ]


def _change(w: SectionWriter, f: Fact, with_values: bool) -> str:
    v, tag = f.values, w.tag(f.subject)
    from_, to = w.inline(v["from"], 40), w.inline(v["to"], 40)
    values = with_values and from_ is not None and to is not None
    if values:
        return w.words.change.format(tag=tag, from_=from_, to=to, at=w.at(v["at"]))
    return w.words.change_short.format(tag=tag, at=w.at(v["at"]))


def _states(w: SectionWriter) -> Slot:
    changes = of(w.section.facts, "state_change")
    more = of(w.section.facts, "state_changes_not_listed")
    if not changes:
        return []
    if more:
        n = more[0].values["count"]
        return [
            w.phrase(
                "pv.state.more", first=_change(w, changes[0], full), more=format_number(n), more_n=format_number(n)
            )
            for full in (True, False)
        ]
    if len(changes) == 1:
        v = changes[0].values
        from_, to = w.inline(v["from"], 40), w.inline(v["to"], 40)
        if from_ is None or to is None:
            return []
        return [w.phrase("pv.state.one", tag=w.tag(changes[0].subject), from_=from_, to=to, at=w.at(v["at"]))]
    return [
        w.phrase("pv.state.many", first=_change(w, changes[0], full), last=_change(w, changes[-1], full))
        for full in (True, False)
    ]
