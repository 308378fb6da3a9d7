"""The alarms tool: activations in a window by priority and the most frequent (the report's alarm and alarm
performance facts), and which alarms stood active at a moment (its standing-alarm facts)."""

from __future__ import annotations

from datetime import datetime, timedelta

from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.facts import of_kind, record_ids, window_facts
from edge_agent.ask.tools.models import (
    MIN_WINDOW,
    ActiveAlarm,
    AlarmsInput,
    AlarmsOutput,
    ByPriority,
    FrequentAlarm,
    Window,
)
from edge_agent.ask.tools.records import check_window, report_rows, require_asset
from edge_agent.reports.facts import Fact
from edge_agent.reports.request import from_iso

# 1 µs, a store time's resolution: "active at t" counts a transition at t itself (standing alarms are those of the
# transitions strictly before a window's end).
_TICK = timedelta(microseconds=1)
# Alarm transitions read back from a moment to find what stands at it (the (kind, time) index): 10,000 take ~0.2 s
# on 2 cores. A site raising 2,000 alarms a day keeps five days' in it; the simulated plant's history holds ~190.
STANDING_READ = 10_000


def alarms(ctx: ToolContext, args: AlarmsInput) -> AlarmsOutput:
    """Alarm activations in the window (a clear is not an alarm): how many, by ISA-18.2 priority (`reports.kpi`'s
    severity bands), the five most frequent; with `active_at`, the alarms active at that moment and since when
    (however long ago they were raised, `_standing`)."""
    require_asset(ctx, args.asset)
    check_window(ctx, args.window)
    rows = report_rows(ctx, args.window, kinds=["alarm"])
    facts = window_facts(ctx, rows, args.window, "alarm_performance", asset=args.asset, kpi=True)
    total = of_kind(facts, "alarm_total")[0].fact
    top = [t.fact for t in of_kind(facts, "top_alarm")]
    mix = of_kind(facts, "alarm_priority_mix")[0].fact.values
    standing = _standing(ctx, args.active_at, args.asset) if args.active_at is not None else None
    active = None
    if standing is not None:
        active = [
            ActiveAlarm(condition=f.values["condition"], asset=f.subject, since=from_iso(f.values["since_at"]))
            for f in standing
        ]
    return AlarmsOutput(
        record_ids=record_ids(*(f.record_ids for f in standing or []), *(f.record_ids for f in top), total.record_ids),
        record_count=total.record_count,
        count=total.values["count"],
        by_priority=ByPriority(high=mix["high_count"], medium=mix["medium_count"], low=mix["low_count"]),
        most_frequent=[
            FrequentAlarm(condition=f.values["condition"], asset=f.subject, count=f.values["count"]) for f in top
        ],
        active_at=active,
        active_count=None if active is None else len(active),
    )


def _standing(ctx: ToolContext, active_at: datetime, asset: str | None) -> list[Fact]:
    """The report's standing-alarm facts of a one-second window that ends just after `active_at`, over the newest
    `STANDING_READ` alarm transitions at or before it however old: the alarms whose last transition is an
    activation (a fault raised days ago and never cleared still stands)."""
    try:
        end = active_at + _TICK
    except OverflowError:  # 9999-12-31T23:59:59.999999Z: no transition can come after it
        end = active_at
    try:
        moment = Window(start=end - MIN_WINDOW, end=end)
    except OverflowError:  # within the first second of year 1: nothing stood before it
        return []
    newest = ctx.store.records(None, end, kinds=["alarm"], limit=STANDING_READ, newest_first=True)
    facts = window_facts(ctx, newest[::-1], moment, "alarm_performance", asset=asset, kpi=True)
    return [t.fact for t in of_kind(facts, "alarm_standing_alarm")]
