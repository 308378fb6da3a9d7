"""The process values section's slots: the highest peak, the other peaks, and the state changes.

A tag is written as people say it ("la vibración de la bomba P-101", `SectionWriter.tag`) and its figures with the
unit its key names ("9.12 mm/s"); each peak slot's last candidate drops the units, for a unit the grounding check
would read as something else (a tag in seconds: "12 s" is read as a duration).

A two-state tag's change (on/off, true/false) is said in words, not as its values (`_state`): a run state of its
asset ("la bomba P-101 pasó de en marcha a parada", "pump P-101 went from running to stopped"), any other tag as
active or not ("de activo a inactivo"), each word agreeing with what it is said of. The grounding check does not
read state names, so the words stand where "on" and "off" stood; other states are written as the facts hold them."""

from __future__ import annotations

from edge_agent.base.quantities import quantity_of
from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.names import Label
from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.prompts import format_number
from edge_agent.reports.narrative.slots.slot import Slot, of

# A two-state value as the facts hold it (`facts.tags`: a boolean is "on"/"off"; a plant may send "true"/"false").
_TWO_STATE = {"on": True, "true": True, "off": False, "false": False}


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


def _state(w: SectionWriter, f: Fact) -> tuple[str, str, str] | None:
    """(what changed, from, to) as a sentence says them: a two-state tag's values in words (`[words.agree]`), a run
    state said of its asset ("la bomba P-101", "en marcha", "parada"), any other of the tag ("activo", "inactivo");
    other values as the facts hold them; None where one cannot stand in a sentence (`SectionWriter.inline`)."""
    v = f.values
    was, now = (_TWO_STATE.get(str(v[key]).strip().casefold()) for key in ("from", "to"))
    if was is not None and now is not None and was != now and w.words.agree:
        asset, _, _ = f.subject.partition(".")
        run_state = bool(asset) and quantity_of(f.subject).quantity == "running"
        label = w.grammar.asset(asset) if run_state else w.grammar.tag(f.subject) or Label("", f.subject)
        words = w.agree(label)
        on, off = (words["running"], words["stopped"]) if run_state else (words["on"], words["off"])
        return w.name(label.the), *((on, off) if was else (off, on))
    from_, to = w.inline(v["from"], 40), w.inline(v["to"], 40)
    return None if from_ is None or to is None else (w.tag(f.subject), from_, to)


def _change(w: SectionWriter, f: Fact, with_values: bool) -> str:
    said = _state(w, f) if with_values else None
    if said is not None:
        tag, from_, to = said
        return w.words.change.format(tag=tag, from_=from_, to=to, at=w.at(f.values["at"]))
    return w.words.change_short.format(tag=w.tag(f.subject), at=w.at(f.values["at"]))


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
        said = _state(w, changes[0])
        if said is None:
            return []
        tag, from_, to = said
        return [w.phrase("pv.state.one", tag=tag, from_=from_, to=to, at=w.at(changes[0].values["at"]))]
    return [
        w.phrase("pv.state.many", first=_change(w, changes[0], full), last=_change(w, changes[-1], full))
        for full in (True, False)
    ]
