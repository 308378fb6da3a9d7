"""The alarms section's slots: the total, the most frequent alarm, and the first alarm followed by a stop on its
asset."""

from __future__ import annotations

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.slots.slot import Slot, of, seconds

# An alarm is tied to a stop on its asset that starts from its first activation to an hour after its last: long
# enough for a vibration alarm to end in a trip, short enough not to blame an alarm for the next shift's stop.
TIE_WINDOW_S = 3600


def alarm_slots(w: SectionWriter) -> list[Slot]:
    totals = of(w.section.facts, "alarm_total")
    tops = sorted(of(w.section.facts, "top_alarm"), key=lambda f: f.values["rank"])
    total = totals[0] if totals else None
    if total is not None and total.values["count"] == 0:
        return [[w.phrase("al.none")]]
    slots: list[Slot] = []
    top = tops[0] if tops else None
    if total is not None and total.values["count"] == 1 and top is not None:
        slots.append(
            [
                w.phrase("al.single", short=w.short(top, n), first=w.at(top.values["first_at"]))
                for n in w.alarm_names(top)
            ]
        )
    else:
        if total is not None:
            n = total.values["count"]
            assets = w.count("asset", total.values["assets_count"])
            slots.append(
                [w.phrase(f"al.total.{'one' if n == 1 else 'other'}", alarms=w.count("alarm", n), assets=assets)]
            )
        if top is not None:
            slots.append(_top_alarm(w, top))
    tie = _tie(w, tops)
    if tie is not None:
        slots.append(tie)
    return slots


def _top_alarm(w: SectionWriter, top: Fact) -> Slot:
    v = top.values
    kind = "al.top.one" if v["count"] == 1 else "al.top.other"
    return [
        w.phrase(
            kind,
            alarm=w.alarm(top, name),
            times=w.count("time", v["count"]),
            first=w.at(v["first_at"]),
            span=w.span(v["first_at"], v["last_at"]),
        )
        for name in w.alarm_names(top)
    ]


def _tie(w: SectionWriter, tops: list[Fact]) -> Slot | None:
    """The first alarm, by rank, followed by a stop on its asset: from its first activation to an hour past its
    last (the earliest such stop)."""
    stops = of(w.section.related, "downtime")
    for alarm in tops:
        first, last = seconds(alarm.values["first_at"]), seconds(alarm.values["last_at"])
        tied = [
            s
            for s in stops
            if s.subject == alarm.subject and first <= seconds(s.values["start_at"]) <= last + TIE_WINDOW_S
        ]
        if tied:
            stop = min(tied, key=lambda s: seconds(s.values["start_at"]))
            # The most frequent alarm was named in the sentence before: "the same alarm" refers back to it.
            names = [w.words.same_alarm] if alarm is tops[0] else [w.alarm(alarm, n) for n in w.alarm_names(alarm)]
            return [
                w.phrase(
                    "al.tie",
                    alarm=name,
                    asset=w.name(stop.subject),
                    stop=w.at(stop.values["start_at"]),
                    cause=cause,
                )
                for cause in (w.cause(stop.values["reason"]), "")
                for name in names
            ]
    return None
