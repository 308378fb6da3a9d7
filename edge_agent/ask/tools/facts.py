"""The report facts of a window, computed by the facts wing over the records a report would read: the tools answer
with the figures a report over the same window and scope carries, and the same record ids."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.models import RECORD_IDS_MAX, FactSummary, Window
from edge_agent.ask.tools.records import resolved_window
from edge_agent.base.types import StoredRecord
from edge_agent.reports.facts import Fact, traced_facts, traced_tag_stats
from edge_agent.reports.request import ReportType, ResolvedRequest, Scope
from edge_agent.store import StoredRow

# A report lists 24 stops and causes; a tool lists up to this many internally so that its counts (planned,
# unplanned, open) cover every stop of a 31-day window (the simulator makes ~8 a day) before it cuts its own lists.
LIST_MAX = 1000
# As a report's notes section (`compute_facts`' notes_max).
NOTES_MAX = 12


@dataclass(frozen=True)
class Traced:
    fact: Fact
    sources: frozenset[int]


def window_facts(
    ctx: ToolContext,
    rows: Sequence[StoredRecord],
    window: Window,
    report_type: ReportType,
    *,
    asset: str | None = None,
    line: str | None = None,
    kpi: bool = False,
) -> list[Traced]:
    request = ResolvedRequest(
        type=report_type,
        language="en",
        window=resolved_window(window),
        scope=Scope(assets=[asset] if asset else [], line=line),
    )
    kpi_config = ctx.config.reports.kpi if kpi else None
    traced = traced_facts(rows, request, list_max=LIST_MAX, notes_max=NOTES_MAX, kpi=kpi_config)
    return [Traced(fact, sources) for fact, sources in traced]


def tag_stats_facts(rows: Sequence[StoredRow], window: Window) -> list[Traced]:
    """The `tag_stats` facts `window_facts` gives for tag values alone (an asset history without scope), from the
    store's light rows (`traced_tag_stats`): the same figures and record ids, without a StoredRecord per sample."""
    request = ResolvedRequest(type="asset_history", language="en", window=resolved_window(window), scope=Scope())
    return [Traced(fact, sources) for fact, sources in traced_tag_stats(rows, request)]


def of_kind(facts: Iterable[Traced], *kinds: str) -> list[Traced]:
    return [t for t in facts if t.fact.kind in kinds]


def record_ids(*groups: Iterable[int]) -> list[int]:
    """The ids of several groups, in order, each once, at most RECORD_IDS_MAX."""
    out: list[int] = []
    for group in groups:
        for i in group:
            if i not in out:
                out.append(i)
                if len(out) == RECORD_IDS_MAX:
                    return out
    return out


def summary(fact: Fact) -> FactSummary:
    return FactSummary(id=fact.id, kind=fact.kind, subject=fact.subject, values=fact.values, ids=fact.ids)
