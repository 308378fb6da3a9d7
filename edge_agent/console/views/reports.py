"""Reports: the list with each report's status; one report with its sections, each fact linked to the stored records
behind it (`/records?ids=…`), a trend of the tags its facts cite, its draft/approved state and who signed; and the
records page those links open."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from edge_agent.base.types import StoredRecord
from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import context
from edge_agent.console.views.page import BadParam, choice_param, int_param, param, refuse, respond, when
from edge_agent.reports.document import ReportRepository
from edge_agent.reports.errors import ReportNotFound
from edge_agent.reports.request import from_iso
from edge_agent.store import Store

STATUSES = ("draft", "approved", "rejected")
# The facts that cite a tag by its key (`subject`): a tag's statistics and its state changes.
TAG_FACTS = ("tag_stats", "state_change")
# 8 charts: a shift summary cites a handful of tags; beyond that a page of charts is read by nobody.
TRENDS_MAX = 8
# A chart 1000 px wide shows at most ~1000 points; 500 by default keeps the page light.
POINTS_DEFAULT, POINTS_MAX = 500, 5000
# One records page lists at most 200: a fact names at most 50 (RECORD_IDS_MAX), a hand-made link a few more.
IDS_MAX = 200
ID_MAX = 2**63 - 1  # SQLite's INTEGER


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("report_id", "request_id", "type", "status", "requested_by", "body_sha256")} | {
        "created_time_us": row["created_time_us"]
    }


@requires("read")
async def list_view(request: Request) -> Response:
    try:
        limit = int_param(request, "limit", 50, 1, 500)
        status = choice_param(request, "status", STATUSES)
    except BadParam as exc:
        return refuse(request, 400, exc.field, exc.reason)
    rows = await asyncio.to_thread(context(request).repo.list, limit)
    reports = [_summary(r) for r in rows if status is None or r["status"] == status]
    return respond(request, "reports.html", {"status": status, "limit": limit, "reports": reports})


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return None


def trends(store: Store, facts: list[dict[str, Any]], window: dict[str, Any], points: int) -> list[dict[str, Any]]:
    """Per tag a report's facts cite (the first TRENDS_MAX): its samples over the report's window as `t` (epoch
    seconds) and `v`, every n-th of them so that at most `points` remain (`Store.series`)."""
    tags: list[str] = []
    for fact in facts:
        if fact.get("kind") in TAG_FACTS and fact.get("subject") and fact["subject"] not in tags:
            tags.append(fact["subject"])
    try:
        start, end = from_iso(window["start"]), from_iso(window["end"])
    except (KeyError, TypeError, ValueError):
        return []
    out = []
    for tag in tags[:TRENDS_MAX]:
        samples = [(at, _numeric(v)) for at, v in store.series(tag, start, end, points)]
        kept = [(at, v) for at, v in samples if v is not None]
        cited = [f["id"] for f in facts if f.get("subject") == tag]
        out.append({"tag": tag, "facts": cited, "t": [at.timestamp() for at, _ in kept], "v": [v for _, v in kept]})
    return out


def report_data(repo: ReportRepository, store: Store | None, report_id: str, points: int) -> dict[str, Any]:
    document = repo.get(report_id)
    body = document.get("body") or {}
    facts: list[dict[str, Any]] = body.get("facts") or []
    window = (body.get("request") or {}).get("window") or {}
    by_id = {f["id"]: f for f in facts}
    sections = [
        {
            "name": s.get("name"),
            "status": s.get("status"),
            "text": s.get("text"),
            "fact_ids": [i for i in s.get("fact_ids") or [] if i in by_id],
        }
        for s in body.get("sections") or []
    ]
    signoff = document.get("signoff")
    signed = None
    if signoff:
        signed = {k: signoff.get(k) for k in ("by", "decision", "at", "via", "comment")}
    return {
        "report_id": document["report_id"],
        "request_id": document.get("request_id"),
        "requested_by": document.get("requested_by"),
        "requested_at": document.get("requested_at"),
        "type": (body.get("request") or {}).get("type"),
        "window": window,
        "status": document.get("status"),
        "body_sha256": document.get("body_sha256"),
        "signoff": signed,
        "sections": sections,
        "facts": [
            {
                "id": f["id"],
                "kind": f["kind"],
                "subject": f.get("subject", ""),
                "values": f.get("values", {}),
                "record_ids": f.get("record_ids", []),
                "record_count": f.get("record_count", 0),
                "records_url": "/records?ids=" + ",".join(str(i) for i in f.get("record_ids", [])),
            }
            for f in facts
        ],
        "trends": trends(store, facts, window, points) if store is not None else [],
    }


@requires("read")
async def report_view(request: Request) -> Response:
    ctx = context(request)
    report_id = request.path_params["report_id"].removesuffix(".json")
    try:
        points = int_param(request, "points", POINTS_DEFAULT, 10, POINTS_MAX)
    except BadParam as exc:
        return refuse(request, 400, exc.field, exc.reason)
    try:
        data = await asyncio.to_thread(report_data, ctx.repo, ctx.store, report_id, points)
    except ReportNotFound:
        return refuse(request, 404, "report_id", f"no report {report_id[:128]!r}")
    return respond(request, "report.html", data)


def parse_ids(text: str | None) -> list[int]:
    """`1,2,3` → [1, 2, 3]: at least one id, at most IDS_MAX, each a positive SQLite integer."""
    if not text:
        raise BadParam("ids", "one or more record ids, comma-separated")
    parts = text.split(",")
    if len(parts) > IDS_MAX:
        raise BadParam("ids", f"at most {IDS_MAX} ids")
    ids = []
    for part in parts:
        part = part.strip()
        if not (part.isascii() and part.isdigit()) or len(part) > 19 or not 1 <= int(part) <= ID_MAX:
            raise BadParam("ids", f"{part[:32]!r} is not a record id")
        ids.append(int(part))
    return ids


def _record(r: StoredRecord) -> dict[str, Any]:
    return {
        "id": r.id,
        "source": r.source,
        "kind": r.kind,
        "key": r.key,
        "source_time": when(r.source_time),
        "received_time": when(r.received_time),
        "value": r.value,
        "quality": r.quality,
    }


@requires("read")
async def records_view(request: Request) -> Response:
    ctx = context(request)
    try:
        ids = parse_ids(param(request, "ids"))
    except BadParam as exc:
        return refuse(request, 400, exc.field, exc.reason)
    if ctx.store is None:
        return refuse(request, 404, "ids", "no store")
    found = await asyncio.to_thread(ctx.store.records_by_id, ids)
    have = {r.id for r in found}
    return respond(
        request,
        "records.html",
        {"ids": ids, "records": [_record(r) for r in found], "missing": [i for i in ids if i not in have]},
    )
