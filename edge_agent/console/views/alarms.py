"""Alarms: the ISA-18.2 / EEMUA 191 review of the last whole days as the facts wing computes it (rate against the
benchmark, flood episodes, bad actors), with the activations per 10 minutes for the rate chart."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from starlette.requests import Request
from starlette.responses import Response

from edge_agent.base.types import StoredRecord
from edge_agent.config import AgentConfig
from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import context
from edge_agent.console.views.page import BadParam, int_param, refuse, respond
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.request import ResolvedRequest, Scope, review_window
from edge_agent.store import Store

BUCKET_S = 600  # ISA-18.2 counts alarms per operator per 10 minutes


def per_10min(records: list[StoredRecord], start: float, end: float) -> list[int]:
    """Activations (alarm records with active=true) per 10-minute interval from `start`; the last may be short."""
    counts = [0] * max(1, -(-int(end - start) // BUCKET_S))
    for r in records:
        if isinstance(r.value, dict) and r.value.get("active") is True:
            at = r.source_time.timestamp()
            if start <= at < end:
                counts[int(at - start) // BUCKET_S] += 1
    return counts


def alarms_data(store: Store, config: AgentConfig, now: datetime, days: int) -> dict[str, Any]:
    tz_name = config.site.timezone
    window = review_window(ZoneInfo(tz_name), tz_name, now, days)
    records = store.records(window.start, window.end, kinds=["alarm"])
    request = ResolvedRequest(type="alarm_performance", language="en", window=window, scope=Scope())
    facts = compute_facts(records, request, kpi=config.reports.kpi)

    def of(kind: str) -> list[dict[str, Any]]:
        return [
            {"fact": f.id, "subject": f.subject, **f.values, "record_ids": f.record_ids}
            for f in facts
            if f.kind == kind
        ]

    start, end = window.start.timestamp(), window.end.timestamp()
    rate = of("alarm_rate")
    return {
        "window": window.as_json(),
        "days": days,
        "rate": rate,
        "series": {
            "bucket_s": BUCKET_S,
            "start": start,
            "counts": per_10min(records, start, end),
            "benchmark_per_10min": rate[0]["benchmark_per_10min"] if rate else None,
            "benchmark_per_10min_max": rate[0]["benchmark_per_10min_max"] if rate else None,
        },
        "flood": of("alarm_flood"),
        "flood_episodes": of("alarm_flood_episode"),
        "bad_actors": of("alarm_bad_actor"),
        "priority_mix": of("alarm_priority_mix"),
    }


@requires("read")
async def view(request: Request) -> Response:
    ctx = context(request)
    kpi = ctx.config.reports.kpi
    try:
        days = int_param(request, "days", kpi.alarm_review_days, 1, 31)
    except BadParam as exc:
        return refuse(request, 400, exc.field, exc.reason)
    if ctx.store is None:
        return refuse(request, 404, "store", "no store")
    data = await asyncio.to_thread(alarms_data, ctx.store, ctx.config, ctx.now(), days)
    return respond(request, "alarms.html", data)
