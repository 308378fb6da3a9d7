"""Facts from MES events: stops (totals, causes, the longest, per asset, listed), production counts and quality
checks."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from edge_agent.base.types import StoredRecord
from edge_agent.reports.facts.builder import Builder, measure_problem, round_value, texts_of
from edge_agent.reports.request import iso


def _fields(b: Builder, r: StoredRecord) -> dict[str, Any] | None:
    """A MES event's JSON object, or None (skipped) when the value is not one or has no string `type`."""
    if not isinstance(r.value, dict):
        b.skip(r, "not_an_object")
        return None
    if not isinstance(r.value.get("type"), str):
        b.skip(r, "bad_type")
        return None
    return r.value


def downtime_facts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    starts: dict[str, tuple[StoredRecord, dict[str, str]]] = {}
    ends: dict[str, StoredRecord] = {}
    for r in by_kind.get("mes_event", []):
        fields = _fields(b, r)
        if fields is None or fields["type"] not in ("downtime_start", "downtime_end"):
            continue
        texts = texts_of(b, r, fields, ("downtime_id", "id", "reason", "line", "work_order"))
        if texts is None:
            continue
        downtime_id = texts["downtime_id"] or texts["id"] or r.idempotency_key
        if fields["type"] == "downtime_start":
            if downtime_id in starts:
                b.skip(r, "duplicate_downtime_id")
            else:
                starts[downtime_id] = (r, texts)
        elif texts["downtime_id"] and downtime_id in starts and downtime_id not in ends:
            # Rows are in time order, so this end is at or after its start; an end seen before any start of its
            # id closes a downtime that began before the window, as an end of an already closed one is a repeat.
            ends[downtime_id] = r
    events = []
    for downtime_id, (start, texts) in starts.items():
        stop = ends.get(downtime_id)
        finish = stop.source_time if stop is not None else end
        events.append((start, texts, stop, int((finish - start.source_time).total_seconds())))
    events.sort(key=lambda e: (e[0].source_time, e[0].id))
    per_asset: dict[str, list[tuple[StoredRecord, StoredRecord | None, int]]] = defaultdict(list)
    for start, _, stop, seconds in events:
        per_asset[start.key].append((start, stop, seconds))
    used = [r for s, _, e, _ in events for r in (s, e) if r is not None]
    b.add(
        "downtime_total",
        {"count": len(events), "duration_s": sum(s for *_, s in events)},
        used,
        ids=sorted(per_asset),
    )
    # Causes ranked by time lost, then by number of stops, over every stop in the window (not only the listed
    # ones): a supervisor asks for the top cause first, and a small model cannot be trusted to add durations up.
    per_reason: dict[str, list[tuple[StoredRecord, StoredRecord | None, int]]] = defaultdict(list)
    for start, texts, stop, seconds in events:
        per_reason[texts["reason"]].append((start, stop, seconds))
    ranked = sorted(per_reason.items(), key=lambda kv: (-sum(s for *_, s in kv[1]), -len(kv[1]), kv[0]))
    for rank, (reason, items) in enumerate(ranked[:list_max], start=1):
        b.add(
            "downtime_cause",
            {"rank": rank, "reason": reason, "count": len(items), "duration_s": sum(s for *_, s in items)},
            [r for s, e, _ in items for r in (s, e) if r is not None],
            ids=sorted({s.key for s, _, _ in items}),
        )
    if len(events) >= 2:
        # The longest stop over every stop in the window, as the causes: naming it means comparing durations, which
        # a small model gets wrong (r4 called a shorter stop the longest in 8 of 19 sections), so code compares.
        # Ties: the earliest, as report order lists them.
        _add_stop(b, "downtime_longest", max(events, key=lambda e: e[3]), end)
    for asset in sorted(per_asset):
        items = per_asset[asset]
        b.add(
            "downtime_asset",
            {"count": len(items), "duration_s": sum(s for _, _, s in items)},
            [r for s, e, _ in items for r in (s, e) if r is not None],
            subject=asset,
        )
    for event in events[:list_max]:
        _add_stop(b, "downtime", event, end)


def _add_stop(
    b: Builder, kind: str, event: tuple[StoredRecord, dict[str, str], StoredRecord | None, int], end: datetime
) -> None:
    """One stop as a fact of `kind` (a listed stop, or the longest): its asset, reason, times and duration."""
    start, texts, stop, seconds = event
    values = {
        "reason": texts["reason"],
        "start_at": iso(start.source_time),
        "end_at": iso(stop.source_time if stop is not None else end),
        "duration_s": seconds,
        "open": stop is None,
    }
    extra = [texts[k] for k in ("line", "work_order") if texts[k]]
    b.add(kind, values, [r for r in (start, stop) if r is not None], subject=start.key, ids=extra)


def production_facts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    groups: dict[tuple[str, str], list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("mes_event", []):
        fields = _fields(b, r)
        if fields is None or fields["type"] != "production_count":
            continue
        problem = measure_problem(fields.get("count"))
        texts = texts_of(b, r, fields, ("unit",))
        if problem is not None:
            b.skip(r, f"count_{problem}")
        elif texts is not None:
            groups[(r.key, texts["unit"])].append(r)
    for (asset, unit), rs in sorted(groups.items()):
        total = sum(r.value["count"] for r in rs)
        b.add("production", {"count": round_value(total), "unit": unit}, rs, subject=asset)


def quality_facts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    groups: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("mes_event", []):
        fields = _fields(b, r)
        if fields is None or fields["type"] != "quality_check":
            continue
        if fields.get("result") in ("pass", "fail"):
            groups[r.key].append(r)
        else:
            b.skip(r, "bad_result")
    for asset in sorted(groups):
        rs = groups[asset]
        failed = [r for r in rs if r.value["result"] == "fail"]
        values = {"checks_count": len(rs), "pass_count": len(rs) - len(failed), "fail_count": len(failed)}
        b.add("quality_checks", values, rs, subject=asset, key_records=failed)
