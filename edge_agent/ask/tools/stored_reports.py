"""Report tools: the stored reports (newest first) and one report's summary and facts, read from the report
repository; nothing is generated."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.errors import ToolError
from edge_agent.ask.tools.facts import record_ids
from edge_agent.ask.tools.models import (
    FactSummary,
    ReportEntry,
    ReportGetInput,
    ReportGetOutput,
    ReportsListInput,
    ReportsListOutput,
)
from edge_agent.reports.document import ReportRepository
from edge_agent.reports.errors import ReportError, ReportNotFound
from edge_agent.reports.request import from_iso
from edge_agent.store import from_us

# The reports one answer lists, newest first: a month of three shift reports a day fits.
LIST_MAX = 50


@contextmanager
def _repository(ctx: ToolContext) -> Iterator[ReportRepository]:
    if ctx.reports is not None:
        yield ctx.reports
        return
    try:
        repo = ReportRepository(ctx.store.path, ctx.config.paths.state_dir / "reports")
    except (OSError, ReportError) as exc:  # no state directory of ours here (a copied store): no reports either
        raise ToolError("outside_data", f"no report repository beside {ctx.store.path}: {exc}") from exc
    try:
        yield repo
    finally:
        repo.close()


def reports_list(ctx: ToolContext, args: ReportsListInput) -> ReportsListOutput:
    """The stored reports requested in the window (any time without one) with the status given (any without one),
    newest first, at most fifty: id, type, status and when it was requested."""
    with _repository(ctx) as repo:
        rows = repo.list(limit=ctx.budget.max_rows)
    entries = []
    for row in rows:
        at = from_us(row["created_time_us"])
        if args.window is not None and not args.window.start <= at < args.window.end:
            continue
        if args.status is not None and row["status"] != args.status:
            continue
        entries.append(ReportEntry(report_id=row["report_id"], type=row["type"], status=row["status"], requested_at=at))
    return ReportsListOutput(
        record_ids=[], record_count=0, truncated=len(entries) > LIST_MAX, reports=entries[:LIST_MAX]
    )


def report_get(ctx: ToolContext, args: ReportGetInput) -> ReportGetOutput:
    """One stored report: its type, status, window, scope, narrative and facts (each with the records behind it)."""
    with _repository(ctx) as repo:
        try:
            document = repo.get(args.report_id)
        except ReportNotFound as exc:
            raise ToolError("outside_data", f"no report {args.report_id!r}") from exc
    body: dict[str, Any] = document["body"]
    facts = body["facts"]
    request = body["request"]
    ids = sorted({i for f in facts for i in f["record_ids"]})
    return ReportGetOutput(
        record_ids=record_ids(*(f["record_ids"] for f in facts)),
        record_count=len(ids),
        report_id=document["report_id"],
        type=request["type"],
        status=document["status"],
        requested_at=from_iso(document["requested_at"]),
        window=request["window"],
        scope=request["scope"],
        narrative=body.get("narrative"),
        facts=[
            FactSummary(id=f["id"], kind=f["kind"], subject=f["subject"], values=f["values"], ids=f["ids"])
            for f in facts
        ],
    )
