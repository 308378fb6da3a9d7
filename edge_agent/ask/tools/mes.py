"""MES tools: stops (the report's downtime facts), production counts and quality checks of a window."""

from __future__ import annotations

import math
from collections import defaultdict

from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.facts import Traced, of_kind, record_ids, window_facts
from edge_agent.ask.tools.models import (
    ProductionInput,
    ProductionOutput,
    QualityCheck,
    QualityChecksInput,
    QualityChecksOutput,
    ReasonTotal,
    ScopedInput,
    StopsInput,
    StopsOutput,
)
from edge_agent.ask.tools.records import Reader, check_window, require_asset
from edge_agent.base.types import StoredRecord
from edge_agent.reports.facts import round_value
from edge_agent.reports.request import from_iso

# As the facts' measured values (`reports.facts.builder.MEASURED_ABS_MAX`): beyond it a float holds no 2 decimals.
MEASURED_ABS_MAX = 1e15
# The causes a stops answer lists, as a report's downtime section (`compute_facts`' list_max): the rest are counted.
REASONS_MAX = 24
# The checks a quality answer lists, newest first; the counts cover them all.
CHECKS_MAX = 20


def _amount(value: object) -> bool:
    """A scrap amount as the OEE fact takes one: a finite number, not negative, within a measured value's range."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return number and math.isfinite(value) and 0 <= value <= MEASURED_ABS_MAX  # type: ignore[arg-type,operator]


def _scoped_facts(ctx: ToolContext, args: ScopedInput) -> tuple[list[StoredRecord], list[Traced]]:
    require_asset(ctx, args.asset, args.line)
    check_window(ctx, args.window)
    rows = Reader(ctx).read(args.window.start, args.window.end, kinds=["mes_event"])
    facts = window_facts(ctx, rows, args.window, "shift_summary", asset=args.asset, line=args.line)
    return rows, facts


def stops(ctx: ToolContext, args: StopsInput) -> StopsOutput:
    """The stops that began in the window: how many, their total and longest duration (a stop still open at the
    window's end counts up to it), the time lost per cause, and how many were planned (by `reports.kpi`'s
    downtime classes; a reason not listed is unplanned) and still open."""
    _, facts = _scoped_facts(ctx, args)
    total = of_kind(facts, "downtime_total")[0].fact
    listed = [t.fact for t in of_kind(facts, "downtime")]
    longest = of_kind(facts, "downtime_longest") or of_kind(facts, "downtime")
    causes = [t.fact.values for t in of_kind(facts, "downtime_cause")]
    classes = ctx.config.reports.kpi.downtime_classes
    planned = sum(c["count"] for c in causes if classes.get(c["reason"], "unplanned") == "planned")
    key = longest[0].fact.record_ids if longest else []
    return StopsOutput(
        record_ids=record_ids(key, total.record_ids),
        record_count=total.record_count,
        truncated=len(causes) > REASONS_MAX or total.values["count"] > len(listed),
        count=total.values["count"],
        total_s=total.values["duration_s"],
        longest_s=longest[0].fact.values["duration_s"] if longest else None,
        longest_at=from_iso(longest[0].fact.values["start_at"]) if longest else None,
        reasons=[ReasonTotal(reason=c["reason"], count=c["count"], total_s=c["duration_s"]) for c in causes][
            :REASONS_MAX
        ],
        planned_count=planned,
        unplanned_count=total.values["count"] - planned,
        open_count=sum(1 for f in listed if f.values["open"]),
    )


def production(ctx: ToolContext, args: ProductionInput) -> ProductionOutput:
    """Produced, scrapped and good amounts counted in the window (the report's `production` facts, summed over the
    assets in scope), in the unit most counts use."""
    rows, facts = _scoped_facts(ctx, args)
    by_unit: dict[str, list[Traced]] = defaultdict(list)
    for t in of_kind(facts, "production"):
        by_unit[t.fact.values["unit"]].append(t)
    if not by_unit:
        return ProductionOutput(record_ids=[], record_count=0, produced=0, scrap=None, good=None, unit=None)
    unit = min(by_unit, key=lambda u: (-sum(t.fact.record_count for t in by_unit[u]), u))
    mine = by_unit[unit]
    sources = set().union(*(t.sources for t in mine))
    counts = [r for r in rows if r.id in sources]
    produced = sum(r.value["count"] for r in counts)
    scraps = [r.value.get("scrap") for r in counts]
    scrap = sum(scraps) if all(_amount(s) for s in scraps) else None
    return ProductionOutput(
        record_ids=record_ids(*(t.fact.record_ids for t in mine)),
        record_count=len(sources),
        truncated=len(by_unit) > 1,
        produced=round_value(produced),
        scrap=None if scrap is None else round_value(scrap),
        good=None if scrap is None else round_value(produced - scrap),
        unit=unit or None,
    )


def quality_checks(ctx: ToolContext, args: QualityChecksInput) -> QualityChecksOutput:
    """Quality checks in the window (the report's `quality_checks` facts, summed over the assets in scope): how many
    passed and failed, and the newest checks, failed ones' records first among the ids."""
    rows, facts = _scoped_facts(ctx, args)
    mine = of_kind(facts, "quality_checks")
    sources = set().union(*(t.sources for t in mine)) if mine else set()
    checks = sorted((r for r in rows if r.id in sources), key=lambda r: (r.source_time, r.id), reverse=True)
    listed = [QualityCheck(at=r.source_time, asset=r.key, result=r.value["result"], record_id=r.id) for r in checks][
        :CHECKS_MAX
    ]
    return QualityChecksOutput(
        record_ids=record_ids(*(t.fact.record_ids for t in mine)),
        record_count=len(sources),
        truncated=len(checks) > CHECKS_MAX,
        count=sum(t.fact.values["checks_count"] for t in mine),
        passed=sum(t.fact.values["pass_count"] for t in mine),
        failed=sum(t.fact.values["fail_count"] for t in mine),
        checks=listed,
    )
