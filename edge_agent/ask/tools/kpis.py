"""The KPI tool: OEE per line, MTBF/MTTR per asset or the ISA-18.2 alarm performance of a window, the facts a report
over the window carries (the facts wing computes them with `[reports.kpi]`)."""

from __future__ import annotations

from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.facts import of_kind, record_ids, summary, window_facts
from edge_agent.ask.tools.models import KpisInput, KpisOutput
from edge_agent.ask.tools.records import check_window, report_rows, require_asset
from edge_agent.reports.request import ReportType

KINDS: dict[str, tuple[str, ...]] = {
    "oee": ("oee",),
    "reliability": ("mtbf", "mttr"),
    "alarm_performance": (
        "alarm_rate",
        "alarm_priority_mix",
        "alarm_flood",
        "alarm_chattering",
        "alarm_standing",
        "alarm_stale",
        "alarm_bad_actors",
        "alarm_flood_episode",
        "alarm_chattering_alarm",
        "alarm_standing_alarm",
        "alarm_stale_alarm",
        "alarm_bad_actor",
    ),
}
# As many facts as a report's section lists (`compute_facts`' list_max); the totals come first, so a cut drops
# only listed episodes and alarms.
FACTS_MAX = 24


def kpis(ctx: ToolContext, args: KpisInput) -> KpisOutput:
    """The window's `oee` facts (per line: availability, performance, quality, OEE and the times and counts behind
    them), `reliability` facts (per asset: MTBF and MTTR) or `alarm_performance` facts (per operator position:
    alarm rates, floods, chattering, standing and stale alarms, bad actors, priority mix)."""
    require_asset(ctx, args.asset, args.line)
    check_window(ctx, args.window)
    kinds = KINDS[args.kind]
    alarm = args.kind == "alarm_performance"
    rows = report_rows(ctx, args.window, kinds=["alarm"] if alarm else ["mes_event"])
    report_type: ReportType = "alarm_performance" if alarm else "shift_summary"
    facts = window_facts(ctx, rows, args.window, report_type, asset=args.asset, line=args.line, kpi=True)
    mine = sorted(of_kind(facts, *kinds), key=lambda t: kinds.index(t.fact.kind))
    if args.kind == "oee" and args.line is not None:
        mine = [t for t in mine if t.fact.subject == args.line]
    listed = mine[:FACTS_MAX]
    sources = set().union(*(t.sources for t in mine)) if mine else set()
    return KpisOutput(
        record_ids=record_ids(*(t.fact.record_ids for t in listed)),
        record_count=len(sources),
        truncated=len(mine) > len(listed),
        facts=[summary(t.fact) for t in listed],
    )
