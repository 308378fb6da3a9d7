"""Now: each line's state, the current shift's OEE so far, the open stops, and the alarms of the last hour, all as
the facts wing computes them from the store (the same figures a shift report would carry)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from starlette.requests import Request
from starlette.responses import Response

from edge_agent.config import AgentConfig
from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import context
from edge_agent.console.views.page import respond, when
from edge_agent.reports.facts import Fact, compute_facts
from edge_agent.reports.request import ReportType, ResolvedRequest, ResolvedWindow, Scope, shift_bounds
from edge_agent.store import Store

# What the OEE and stop facts read; tag samples (most of a shift's rows) are left in the store.
SHIFT_KINDS = ("mes_event", "alarm", "log_line", "data_gap")
# A stop still open may have begun before the shift: its start is looked for this far back, as far as a report's
# KPIs look for earlier stops (the narrative wing's held ranges: two days).
OPEN_STOP_LOOKBACK = timedelta(days=2)


def current_window(config: AgentConfig, now: datetime) -> ResolvedWindow:
    """The configured shift running at `now`, from its start to `now`; with none running, the local day so far."""
    tz_name = config.site.timezone
    tz = ZoneInfo(tz_name)
    today = now.astimezone(tz).date()
    for shift in config.reports.shifts:
        for back in (0, 1):  # a shift that crosses midnight started yesterday
            start, end = shift_bounds(shift, today - timedelta(days=back), tz)
            if start <= now < end:
                return ResolvedWindow(start=start, end=now, shift=shift.name, timezone=tz_name)
    midnight = datetime.combine(today, time(0, 0), tzinfo=tz)
    return ResolvedWindow(start=midnight.astimezone(UTC), end=now, timezone=tz_name)


def _facts(
    store: Store, config: AgentConfig, window: ResolvedWindow, kinds: tuple[str, ...], kind: ReportType
) -> list[Fact]:
    if window.end <= window.start:
        return []
    records = store.records(window.start, window.end, kinds=list(kinds))
    request = ResolvedRequest(type=kind, language="en", window=window, scope=Scope())
    return compute_facts(records, request, kpi=config.reports.kpi)


def now_data(store: Store, config: AgentConfig, now: datetime) -> dict[str, Any]:
    window = current_window(config, now)
    shift = _facts(store, config, window, SHIFT_KINDS, "downtime_analysis")
    hour = ResolvedWindow(start=now - timedelta(hours=1), end=now, timezone=window.timezone)
    recent = _facts(store, config, hour, ("alarm",), "alarm_summary")
    back = ResolvedWindow(start=window.start - OPEN_STOP_LOOKBACK, end=now, timezone=window.timezone)
    stops = [
        {
            "fact": f.id,
            "asset": f.subject,
            "reason": f.values["reason"],
            "since": f.values["start_at"],
            "duration_s": f.values["duration_s"],
            "line": next(iter(f.ids), None),
            "record_ids": f.record_ids,
        }
        for f in _facts(store, config, back, ("mes_event",), "downtime_analysis")
        if f.kind == "downtime" and f.values.get("open")
    ]
    stopped = {s["line"] for s in stops} | {s["asset"] for s in stops}
    lines = [
        {
            "line": f.subject,
            "state": "stopped" if f.subject in stopped else "running",
            **{k: f.values[k] for k in ("oee", "availability", "performance", "quality", "unplanned_downtime_s")},
            "fact": f.id,
            "record_ids": f.record_ids,
        }
        for f in shift
        if f.kind == "oee"
    ]
    total = next((f for f in recent if f.kind == "alarm_total"), None)
    alarms = [
        {
            "asset": f.subject,
            "condition": f.values["condition"],
            "count": f.values["count"],
            "max_severity": f.values["max_severity"],
            "last_at": f.values["last_at"],
            "record_ids": f.record_ids,
        }
        for f in recent
        if f.kind == "top_alarm"
    ]
    return {
        "at": when(now),
        "window": window.as_json(),
        "lines": lines,
        "open_stops": stops,
        "alarms_last_hour": {"count": total.values["count"] if total else 0, "top": alarms},
    }


@requires("read")
async def view(request: Request) -> Response:
    ctx = context(request)
    if ctx.store is None:
        return respond(request, "problem.html", {"error": "no store", "field": "", "status": 503}, status=503)
    data = await asyncio.to_thread(now_data, ctx.store, ctx.config, ctx.now())
    return respond(request, "now.html", data)
