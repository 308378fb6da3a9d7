"""The downtime section's slots: no stops, one stop, or the total, the causes, the longest stop and one still open."""

from __future__ import annotations

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.slots.slot import Slot, of


def downtime_slots(w: SectionWriter) -> list[Slot]:
    facts = w.section.facts
    totals = of(facts, "downtime_total")
    stops = of(facts, "downtime")
    total = totals[0] if totals else None
    if total is not None and total.values["count"] == 0:
        return [[w.phrase("dt.none")]]
    if total is not None and total.values["count"] == 1 and len(stops) == 1:
        return [_stop(w, stops[0], "dt.single", "dt.single_open")]
    slots: list[Slot] = []
    if total is not None:
        slots.append(
            [w.phrase("dt.total", stops=w.count("stop", total.values["count"]), dur=w.dur(total.values["duration_s"]))]
        )
    causes = of(facts, "downtime_cause")
    if causes and (total is None or total.values["count"] >= 2):
        slots.append(_causes(w, causes, total))
    # Two stops or more have a `downtime_longest` fact (over every stop; a single stop was said above).
    named = of(facts, "downtime_longest")
    if named:
        longest = named[0]
        slots.append(_stop(w, longest, "dt.longest", "dt.longest_open"))
        same = (longest.subject, longest.values["start_at"])
        still_open = [f for f in stops if f.values.get("open") and (f.subject, f.values["start_at"]) != same]
        if still_open:
            slots.append(_stop(w, still_open[0], None, "dt.open"))
    return slots


def _stop(w: SectionWriter, fact: Fact, closed: str | None, open_: str) -> Slot:
    v = fact.values
    kind = open_ if v.get("open") else closed
    assert kind is not None  # only open stops are asked for without a closed wording
    fields = {
        "asset": w.name(fact.subject),
        "span": w.span(v["start_at"], v["end_at"]),
        "start": w.at(v["start_at"]),
        "start_bare": w.bare(v["start_at"]),
        "dur": w.dur(v["duration_s"]),
    }
    agreeing = w.agreeing(fact.subject)  # "{asset} continuaba {stopped}": "parada" of a pump
    return [w.phrase(kind, cause=cause, **fields, **agreeing) for cause in (w.cause(v["reason"]), "")]


def _causes(w: SectionWriter, causes: list[Fact], total: Fact | None) -> Slot:
    """The cause that cost the most time (rank 1), then the most frequent (ties: the better ranked). Past
    `list_facts_max` causes the unlisted ones may hold more stops: frequency is claimed only when they cannot."""
    top = w.reason(causes[0].values["reason"])
    if top is None:
        return []
    if len(causes) == 1 and (total is None or causes[0].values["count"] == total.values["count"]):
        return [w.phrase("dt.cause_only", reason=top)]
    frequent_fact = max(causes, key=lambda f: (f.values["count"], -f.values["rank"]))
    unlisted = total.values["count"] - sum(f.values["count"] for f in causes) if total is not None else 0
    if frequent_fact.values["count"] <= unlisted:
        return []
    frequent = w.reason(frequent_fact.values["reason"])
    if frequent_fact is causes[0] or frequent is None:
        return [w.phrase("dt.cause_same", reason=top)]
    return [w.phrase("dt.cause_split", reason=top, frequent=frequent)]
