"""Plant KPIs as report facts: OEE per line (ISO 22400-2), MTBF/MTTR per asset, and ISA-18.2 / EEMUA 191 alarm
performance per operator position. Each fact carries its record ids like every other (`facts._Builder`); the
figures come from the pure functions of `oee`, `reliability` and `alarms`. docs/kpis.md is the guide.

Ratios (`facts.is_ratio`: availability, performance, quality, oee, `*_share`) are held in [0, 1] to 4 decimals and
written as percentages; a ratio that cannot be computed is None and the fact's `missing` names why.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime

from edge_agent.base.types import StoredRecord
from edge_agent.config.kpi import KpiConfig
from edge_agent.reports.facts.builder import Builder, measure_problem, parse_alarm, round_value
from edge_agent.reports.facts.kpi.alarms import (
    Activation,
    flood_seconds,
    floods,
    max_burst,
    priority,
    rates,
    standing,
    top_contributors,
)
from edge_agent.reports.facts.kpi.intervals import Stop, read_stops
from edge_agent.reports.facts.kpi.oee import oee_figures, ratio, stop_intervals
from edge_agent.reports.facts.kpi.reliability import reliability
from edge_agent.reports.request import iso

# Benchmarks each alarm figure is compared with (docs/kpis.md, "Benchmarks", names their sources).
PER_HOUR_ACCEPTABLE = 6
PER_HOUR_MANAGEABLE = 12
PER_10MIN_ACCEPTABLE = 1
PER_10MIN_MANAGEABLE = 2
FLOOD_SHARE_MAX = 0.01
PRIORITY_TARGETS = {"low": 0.80, "medium": 0.15, "high": 0.05}
TOP_ACTORS = 10
FLOOD_CONTRIBUTORS = 3
DEFAULT_CONSOLE = "all"


def _at(seconds: float) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


def _unplanned(stop: Stop, kpi: KpiConfig) -> bool:
    return kpi.downtime_classes.get(stop.reason, "unplanned") == "unplanned"


def _production(rows: Sequence[StoredRecord]) -> dict[str, list[StoredRecord]]:
    out: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in rows:
        if r.kind == "mes_event" and isinstance(r.value, dict) and r.value.get("type") == "production_count":
            if measure_problem(r.value.get("count")) is None:
                out[r.key].append(r)
    return out


def oee_facts(
    b: Builder,
    scoped: Sequence[StoredRecord],
    rows: Sequence[StoredRecord],
    start: datetime,
    end: datetime,
    kpi: KpiConfig,
) -> None:
    """One `oee` fact per line: configured, counted in production, or named by a stop in the window."""
    lo, hi = start.timestamp(), end.timestamp()
    stops = [s for s in read_stops(scoped) if s.start < hi and s.until(hi) > lo]
    produced = _production(rows)
    ideal = {c.line: c.ideal_rate_per_min for c in kpi.lines}
    lines = sorted(set(ideal) | set(produced) | {s.line for s in stops if s.line})
    for line in lines:
        mine = [s for s in stops if line in (s.line, s.asset)]
        planned = stop_intervals([s for s in mine if not _unplanned(s, kpi)], lo, hi)
        unplanned = stop_intervals([s for s in mine if _unplanned(s, kpi)], lo, hi)
        counts = produced.get(line, [])
        total = float(sum(r.value["count"] for r in counts)) if counts else None
        scraps = [r.value.get("scrap") for r in counts]
        scrap = None
        if counts and all(measure_problem(s) is None and s >= 0 for s in scraps):
            scrap = float(sum(scraps))
        f = oee_figures(hi - lo, planned, unplanned, total, scrap, ideal.get(line))
        values = {
            "availability": ratio(f.availability),
            "performance": ratio(f.performance),
            "quality": ratio(f.quality),
            "oee": ratio(f.oee),
            "planned_busy_time_s": round(f.planned_busy_s),
            "actual_production_time_s": round(f.actual_production_s),
            "planned_downtime_s": round(f.planned_down_s),
            "unplanned_downtime_s": round(f.unplanned_down_s),
            "produced_count": None if total is None else round_value(total),
            "scrap_count": None if scrap is None else round_value(scrap),
            "good_count": None if total is None or scrap is None else round_value(total - scrap),
            "ideal_rate_per_min": ideal.get(line),
            "missing": ", ".join(f.missing),
        }
        used = [r for s in mine for r in s.records] + counts
        b.add("oee", values, used, subject=line, ids=sorted({s.asset for s in mine}))


def reliability_facts(
    b: Builder, scoped: Sequence[StoredRecord], start: datetime, end: datetime, kpi: KpiConfig
) -> None:
    """`mtbf` and `mttr` per asset with a stop in the period: the window and `kpi.lookback_days` before it."""
    hi = end.timestamp()
    lo = start.timestamp() - kpi.lookback_days * 86_400
    per_asset: dict[str, list[Stop]] = defaultdict(list)
    for s in read_stops(scoped):
        if s.start < hi and s.until(hi) > lo:
            per_asset[s.asset].append(s)
    for asset in sorted(per_asset):
        stops = per_asset[asset]
        r = reliability(stops, [_unplanned(s, kpi) for s in stops], lo, hi)
        failures = [s for s in stops if _unplanned(s, kpi) and lo <= s.start < hi]
        used = [rec for s in stops for rec in s.records]
        key = [rec for s in failures for rec in s.records]
        period = round(hi - lo)
        b.add(
            "mtbf",
            {
                "mtbf_s": None if r.mtbf_s is None else round(r.mtbf_s),
                "failure_count": r.failures,
                "operating_time_s": round(r.operating_s),
                "period_s": period,
            },
            used,
            subject=asset,
            key_records=key,
        )
        b.add(
            "mttr",
            {
                "mttr_s": None if r.mttr_s is None else round(r.mttr_s),
                "failure_count": r.failures,
                "unplanned_downtime_s": round(r.unplanned_down_s),
                "period_s": period,
            },
            used,
            subject=asset,
            key_records=key,
        )


def _console_of(kpi: KpiConfig) -> tuple[list[str], dict[str, str], str | None]:
    if not kpi.consoles:
        return [DEFAULT_CONSOLE], {}, DEFAULT_CONSOLE
    owner: dict[str, str] = {}
    for c in kpi.consoles:
        for asset in c.assets:
            owner.setdefault(asset, c.name)
    rest = next((c.name for c in kpi.consoles if not c.assets), None)
    return [c.name for c in kpi.consoles], owner, rest


def alarm_facts(
    b: Builder, scoped: Sequence[StoredRecord], start: datetime, end: datetime, kpi: KpiConfig, list_max: int
) -> None:
    """The ISA-18.2 / EEMUA 191 figures of the window's alarms; standing and stale alarms also read the alarm
    transitions before it (`generate.KPI_HISTORY`)."""
    lo, hi = start.timestamp(), end.timestamp()
    records = [r for r in scoped if r.kind == "alarm" and r.source_time < end]
    scratch = Builder()  # alarms are parsed (and bad ones skipped) by the alarm facts: not counted twice
    transitions: list[Activation] = []
    for i, r in enumerate(records):
        a = parse_alarm(scratch, r)
        if a is not None:
            at = r.source_time.timestamp()
            transitions.append(Activation(at, r.key, a.condition or a.message, a.severity, a.active, i))
    raised = [t for t in transitions if t.active and lo <= t.at < hi]
    rec = [records[t.index] for t in raised]
    names, owner, rest = _console_of(kpi)
    by_console: dict[str, list[Activation]] = defaultdict(list)
    for t in raised:
        by_console[owner.get(t.asset) or rest or "unassigned"].append(t)
    for console in names + (["unassigned"] if by_console.get("unassigned") else []):
        mine = by_console.get(console, [])
        load = rates([t.at for t in mine], lo, hi)
        per_hour = round_value(load.per_hour_mean)
        rating = (
            "acceptable"
            if per_hour <= PER_HOUR_ACCEPTABLE
            else "manageable"
            if per_hour <= PER_HOUR_MANAGEABLE
            else "over_demanding"
        )
        mine_records = [records[t.index] for t in mine]
        b.add(
            "alarm_rate",
            {
                "count": load.count,
                "per_hour_mean": per_hour,
                "per_10min_mean": round_value(load.per_10min_mean),
                "per_hour_peak": load.per_hour_peak,
                "per_10min_peak": load.per_10min_peak,
                "peak_10min_at": _at(load.peak_10min_start),
                "rating": rating,
                "benchmark_per_hour": PER_HOUR_ACCEPTABLE,
                "benchmark_per_hour_max": PER_HOUR_MANAGEABLE,
                "benchmark_per_10min": PER_10MIN_ACCEPTABLE,
                "benchmark_per_10min_max": PER_10MIN_MANAGEABLE,
            },
            mine_records,
            subject=console,
        )
        flooded, episodes = floods(mine, lo, hi, kpi.flood_per_10min)
        b.add(
            "alarm_flood",
            {
                "intervals_count": len(flooded),
                "flood_intervals_count": sum(flooded),
                "flood_share": ratio(sum(flooded) / len(flooded)),
                "flood_time_s": round(flood_seconds(flooded, lo, hi)),
                "episodes_count": len(episodes),
                "threshold_per_10min": kpi.flood_per_10min,
                "benchmark_flood_share": FLOOD_SHARE_MAX,
            },
            [records[t.index] for e in episodes for t in e.members],
            subject=console,
        )
        for e in episodes[:list_max]:
            values: dict[str, object] = {"start_at": _at(e.start), "end_at": _at(e.end), "count": e.count}
            top = top_contributors(e.members, FLOOD_CONTRIBUTORS)
            for n, ((asset, condition), count) in enumerate(top, start=1):
                values |= {f"top_{n}_asset": asset, f"top_{n}_condition": condition, f"top_{n}_count": count}
            b.add(
                "alarm_flood_episode",
                values,
                [records[t.index] for t in e.members],
                subject=console,
                ids=[asset for (asset, _), _ in top],
            )
    _chattering(b, raised, records, kpi, list_max)
    _standing(b, transitions, records, hi, kpi, list_max)
    _bad_actors(b, raised, records, rec)
    _priorities(b, raised, rec, kpi)


def _chattering(
    b: Builder, raised: list[Activation], records: list[StoredRecord], kpi: KpiConfig, list_max: int
) -> None:
    groups: dict[tuple[str, str], list[Activation]] = defaultdict(list)
    for t in raised:
        groups[(t.asset, t.condition)].append(t)
    chattering = []
    for (asset, condition), ts in sorted(groups.items()):
        burst = max_burst([t.at for t in ts], kpi.chatter_window_s)
        if burst >= kpi.chatter_count:
            chattering.append((asset, condition, ts, burst))
    b.add(
        "alarm_chattering",
        {
            "count": len(chattering),
            "activations_count": sum(len(ts) for _, _, ts, _ in chattering),
            "threshold_count": kpi.chatter_count,
            "threshold_window_s": kpi.chatter_window_s,
            "benchmark_count": 0,
        },
        [records[t.index] for _, _, ts, _ in chattering for t in ts],
        ids=sorted({a for a, _, _, _ in chattering}),
    )
    chattering.sort(key=lambda c: (-len(c[2]), c[0], c[1]))
    for asset, condition, ts, burst in chattering[:list_max]:
        b.add(
            "alarm_chattering_alarm",
            {"condition": condition, "count": len(ts), "burst_count": burst, "first_at": _at(ts[0].at)},
            [records[t.index] for t in ts],
            subject=asset,
        )


def _standing(
    b: Builder, transitions: list[Activation], records: list[StoredRecord], hi: float, kpi: KpiConfig, list_max: int
) -> None:
    active = standing(transitions, hi)
    stale = [s for s in active if hi - s.since > kpi.stale_after_s]
    for kind, items, extra in (
        ("alarm_standing", active, {}),
        ("alarm_stale", stale, {"threshold_s": kpi.stale_after_s, "benchmark_count": 0}),
    ):
        b.add(
            kind,
            {"count": len(items), **extra},
            [records[s.index] for s in items],
            ids=sorted({s.asset for s in items}),
        )
        for s in items[:list_max]:
            b.add(
                f"{kind}_alarm",
                {"condition": s.condition, "since_at": _at(s.since), "active_s": round(hi - s.since)},
                [records[s.index]],
                subject=s.asset,
            )


def _bad_actors(b: Builder, raised: list[Activation], records: list[StoredRecord], rec: list[StoredRecord]) -> None:
    top = top_contributors(raised, TOP_ACTORS)
    total = len(raised)
    top_total = sum(c for _, c in top)
    b.add(
        "alarm_bad_actors",
        {
            "total_count": total,
            "top_count": len(top),
            "top_activations_count": top_total,
            "top10_share": ratio(top_total / total) if total else None,
        },
        rec,
        ids=sorted({a for (a, _), _ in top}),
    )
    for rank, ((asset, condition), count) in enumerate(top, start=1):
        b.add(
            "alarm_bad_actor",
            {"rank": rank, "condition": condition, "count": count, "load_share": ratio(count / total)},
            [records[t.index] for t in raised if (t.asset, t.condition) == (asset, condition)],
            subject=asset,
        )


def _priorities(b: Builder, raised: list[Activation], rec: list[StoredRecord], kpi: KpiConfig) -> None:
    bands = [priority(t.severity, kpi.priority_low_max, kpi.priority_medium_max) for t in raised]
    total = len(bands)
    values: dict[str, object] = {}
    for band in ("low", "medium", "high"):
        n = bands.count(band)
        values[f"{band}_count"] = n
        values[f"{band}_share"] = ratio(n / total) if total else None
        values[f"benchmark_{band}_share"] = PRIORITY_TARGETS[band]
    values |= {"low_max_severity": kpi.priority_low_max, "medium_max_severity": kpi.priority_medium_max}
    b.add("alarm_priority_mix", values, rec)


def kpi_facts(
    b: Builder,
    report_type: str,
    scoped: Sequence[StoredRecord],
    rows: Sequence[StoredRecord],
    start: datetime,
    end: datetime,
    kpi: KpiConfig,
    list_max: int,
) -> None:
    """The KPI facts a report type carries: OEE and MTBF/MTTR in shift summaries and downtime analyses, the alarm
    performance figures in alarm performance reviews."""
    if report_type in ("shift_summary", "downtime_analysis"):
        oee_facts(b, scoped, rows, start, end, kpi)
        reliability_facts(b, scoped, start, end, kpi)
    elif report_type == "alarm_performance":
        alarm_facts(b, scoped, start, end, kpi, list_max)


__all__ = ["alarm_facts", "kpi_facts", "oee_facts", "reliability_facts"]
