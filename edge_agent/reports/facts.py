"""Report facts: pure functions from stored records to numbered, rounded, traceable statements.

Every fact carries the ids of the records behind it (`record_ids`, the most telling first, at most
`RECORD_IDS_MAX`), how many there were (`record_count`) and a SHA-256 of all of them, so an auditor can re-run the
selection and check it.

Value keys follow one convention, which the grounding check reads:
  `*_s`   a duration in whole seconds          `*_at`  a time, ISO-8601 UTC with `Z`
  `count`, `*_count`  an exact count            other numbers: a measured value, rounded as below
  strings: names and ids (ids also listed in `ids`), or untrusted text (`text`, never checked as a claim)

Rounding rules (stated in every prompt and checked by `grounding.py`):
  measured values → 2 decimals, half away from zero; means over the samples in the window, unweighted;
  durations → whole seconds (a downtime still open at the window end is cut there and marked `open`);
  counts are exact.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.reports.request import ResolvedRequest, Scope, iso
from edge_agent.reports.untrusted import looks_like_instruction
from edge_agent.types import StoredRecord

# 50 ids: enough to point at every record behind a small fact and at the extremes of a large one, while a
# shift of 1 Hz samples does not turn the report into megabytes of ids (the hash covers the rest).
RECORD_IDS_MAX = 50
# Top 5 alarms: what a shift handover reads; the full count is in alarm_total.
TOP_ALARMS = 5
DECIMALS = 2


class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: str
    subject: str = ""
    values: dict[str, Any]
    ids: list[str] = Field(default_factory=list, description="asset, tag, line, work-order ids this fact names")
    record_ids: list[int]
    record_count: int
    record_ids_sha256: str


def round_value(value: float, decimals: int = DECIMALS) -> float | int:
    """Half away from zero (what people expect, unlike Python's banker's rounding); integers stay integers."""
    if isinstance(value, bool):
        raise TypeError("a bool is not a measured value")
    if isinstance(value, int):
        return value
    quantum = Decimal(1).scaleb(-decimals)
    rounded = Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP)
    return float(rounded)


def ids_sha256(record_ids: Iterable[int]) -> str:
    return hashlib.sha256(",".join(str(i) for i in sorted(set(record_ids))).encode()).hexdigest()


def record_asset(record: StoredRecord) -> str | None:
    """The asset a record is about: tag `P-101.vibration_mm_s` → `P-101`; alarms and MES events key by asset."""
    if record.kind == "tag_value":
        return record.key.split(".", 1)[0]
    if record.kind in ("alarm", "mes_event"):
        return record.key
    return None


def in_scope(record: StoredRecord, scope: Scope) -> bool:
    """Scope filters apply where a record carries the attribute: assets (log lines: mentioned in the text),
    line (MES events with a `line`), area (log lines, by the last topic level)."""
    value = record.value if isinstance(record.value, dict) else {}
    if scope.assets:
        asset = record_asset(record)
        if asset is not None and asset not in scope.assets:
            return False
        if record.kind == "log_line" and not any(a in str(value.get("text", "")) for a in scope.assets):
            return False
    if scope.line is not None and record.kind == "mes_event" and value.get("line") not in (None, scope.line):
        return False
    if scope.area is not None and record.kind == "log_line" and record.key.rsplit("/", 1)[-1] != scope.area:
        return False
    return True


class _Builder:
    def __init__(self) -> None:
        self.facts: list[Fact] = []

    def add(
        self,
        kind: str,
        values: dict[str, Any],
        records: Sequence[StoredRecord],
        *,
        subject: str = "",
        ids: Iterable[str] = (),
        key_records: Sequence[StoredRecord] = (),
    ) -> None:
        ordered: list[int] = []
        for r in [*key_records, *records]:
            if r.id not in ordered:
                ordered.append(r.id)
            if len(ordered) >= RECORD_IDS_MAX:
                break
        all_ids = {r.id for r in records} | {r.id for r in key_records}
        self.facts.append(
            Fact(
                id=f"F{len(self.facts) + 1:02d}",
                kind=kind,
                subject=subject,
                values=values,
                ids=sorted({i for i in (subject, *ids) if i}),
                record_ids=ordered,
                record_count=len(all_ids),
                record_ids_sha256=ids_sha256(all_ids),
            )
        )


_SECTIONS: dict[str, tuple[str, ...]] = {
    "shift_summary": ("counts", "tags", "states", "alarms", "downtime", "production", "quality", "notes"),
    "alarm_summary": ("counts", "alarms", "notes"),
    "downtime_analysis": ("counts", "downtime", "alarms", "notes"),
    "asset_history": ("counts", "tags", "states", "alarms", "downtime", "production", "quality", "notes"),
}


def compute_facts(records: Sequence[StoredRecord], request: ResolvedRequest, *, list_max: int = 24) -> list[Fact]:
    """All facts for one report, in a fixed order; `records` are those of the window (any order)."""
    start, end = request.window.start, request.window.end
    rows = sorted(
        (r for r in records if start <= r.source_time < end and in_scope(r, request.scope)),
        key=lambda r: (r.source_time, r.id),
    )
    b = _Builder()
    b.add(
        "window",
        {"start_at": iso(start), "end_at": iso(end), "duration_s": int((end - start).total_seconds())},
        [],
        subject=request.window.shift or "",
    )
    by_kind: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in rows:
        by_kind[r.kind].append(r)
    for section in _SECTIONS[request.type]:
        _SECTION_FUNCS[section](b, by_kind, end, list_max)
    return b.facts


def _counts(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    values = {f"{kind}_count": len(by_kind.get(kind, [])) for kind in ("tag_value", "alarm", "mes_event", "log_line")}
    b.add("record_counts", values, [r for rs in by_kind.values() for r in rs])


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _tags(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    per_tag: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("tag_value", []):
        if _is_number(r.value) and r.quality != "bad":
            per_tag[r.key].append(r)
    for tag in sorted(per_tag):
        samples = per_tag[tag]
        lo = min(samples, key=lambda r: (r.value, r.source_time, r.id))
        hi = max(samples, key=lambda r: (r.value, -r.source_time.timestamp(), -r.id))
        mean = sum(float(r.value) for r in samples) / len(samples)
        values = {
            "samples_count": len(samples),
            "min": round_value(lo.value),
            "min_at": iso(lo.source_time),
            "max": round_value(hi.value),
            "max_at": iso(hi.source_time),
            "mean": round_value(mean),
            "first": round_value(samples[0].value),
            "last": round_value(samples[-1].value),
        }
        asset = tag.split(".", 1)[0]
        b.add("tag_stats", values, samples, subject=tag, ids=[asset], key_records=[lo, hi, samples[0], samples[-1]])


def _states(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    per_tag: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("tag_value", []):
        if isinstance(r.value, (bool, str)):
            per_tag[r.key].append(r)
    changes: list[tuple[StoredRecord, StoredRecord]] = []
    for tag in sorted(per_tag):
        samples = per_tag[tag]
        changes.extend((prev, cur) for prev, cur in zip(samples, samples[1:]) if prev.value != cur.value)
    changes.sort(key=lambda pc: (pc[1].source_time, pc[1].id))
    for prev, cur in changes[:list_max]:
        asset = cur.key.split(".", 1)[0]
        values = {"from": _state(prev.value), "to": _state(cur.value), "at": iso(cur.source_time)}
        b.add("state_change", values, [prev, cur], subject=cur.key, ids=[asset])
    if len(changes) > list_max:
        b.add("state_changes_not_listed", {"count": len(changes) - list_max}, [c for _, c in changes[list_max:]])


def _state(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def _alarm_fields(r: StoredRecord) -> dict[str, Any]:
    return r.value if isinstance(r.value, dict) else {"message": str(r.value)}


def _alarms(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    # An alarm record with active=false is the condition clearing; only activations count as alarms.
    raised = [r for r in by_kind.get("alarm", []) if _alarm_fields(r).get("active", True) is not False]
    assets = sorted({r.key for r in raised})
    b.add("alarm_total", {"count": len(raised), "assets_count": len(assets)}, raised, ids=assets)
    groups: dict[tuple[str, str], list[StoredRecord]] = defaultdict(list)
    for r in raised:
        fields = _alarm_fields(r)
        groups[(r.key, str(fields.get("condition") or fields.get("message") or ""))].append(r)

    def severity(rs: list[StoredRecord]) -> int:
        return max(int(_alarm_fields(r).get("severity") or 0) for r in rs)

    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), -severity(kv[1]), kv[0]))
    for rank, ((asset, condition), rs) in enumerate(ranked[:TOP_ALARMS], start=1):
        values = {
            "rank": rank,
            "condition": condition,
            "message": str(_alarm_fields(rs[0]).get("message", "")),
            "count": len(rs),
            "max_severity": severity(rs),
            "first_at": iso(rs[0].source_time),
            "last_at": iso(rs[-1].source_time),
        }
        b.add("top_alarm", values, rs, subject=asset)


def _downtime(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    starts: dict[str, StoredRecord] = {}
    ends: dict[str, StoredRecord] = {}
    for r in by_kind.get("mes_event", []):
        fields = r.value if isinstance(r.value, dict) else {}
        downtime_id = str(fields.get("downtime_id") or fields.get("id") or r.idempotency_key)
        if fields.get("type") == "downtime_start":
            starts.setdefault(downtime_id, r)
        elif fields.get("type") == "downtime_end" and fields.get("downtime_id"):
            ends.setdefault(downtime_id, r)
    events = []
    for downtime_id, start in starts.items():
        stop = ends.get(downtime_id)
        finish = stop.source_time if stop is not None else end
        events.append((start, stop, int((finish - start.source_time).total_seconds())))
    events.sort(key=lambda e: (e[0].source_time, e[0].id))
    per_asset: dict[str, list[tuple[StoredRecord, StoredRecord | None, int]]] = defaultdict(list)
    for start, stop, seconds in events:
        per_asset[start.key].append((start, stop, seconds))
    used = [r for s, e, _ in events for r in (s, e) if r is not None]
    b.add(
        "downtime_total",
        {"count": len(events), "duration_s": sum(s for _, _, s in events)},
        used,
        ids=sorted(per_asset),
    )
    for asset in sorted(per_asset):
        items = per_asset[asset]
        b.add(
            "downtime_asset",
            {"count": len(items), "duration_s": sum(s for _, _, s in items)},
            [r for s, e, _ in items for r in (s, e) if r is not None],
            subject=asset,
        )
    for start, stop, seconds in events[:list_max]:
        fields = start.value if isinstance(start.value, dict) else {}
        values = {
            "reason": str(fields.get("reason", "")),
            "start_at": iso(start.source_time),
            "end_at": iso(stop.source_time if stop is not None else end),
            "duration_s": seconds,
            "open": stop is None,
        }
        extra = [str(fields[k]) for k in ("line", "work_order") if fields.get(k)]
        b.add("downtime", values, [r for r in (start, stop) if r is not None], subject=start.key, ids=extra)


def _production(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    groups: dict[tuple[str, str], list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("mes_event", []):
        fields = r.value if isinstance(r.value, dict) else {}
        if fields.get("type") == "production_count" and _is_number(fields.get("count")):
            groups[(r.key, str(fields.get("unit", "")))].append(r)
    for (asset, unit), rs in sorted(groups.items()):
        total = sum(r.value["count"] for r in rs)
        b.add("production", {"count": round_value(total), "unit": unit}, rs, subject=asset)


def _quality(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    groups: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("mes_event", []):
        fields = r.value if isinstance(r.value, dict) else {}
        if fields.get("type") == "quality_check":
            groups[r.key].append(r)
    for asset in sorted(groups):
        rs = groups[asset]
        failed = [r for r in rs if r.value.get("result") == "fail"]
        values = {"checks_count": len(rs), "pass_count": len(rs) - len(failed), "fail_count": len(failed)}
        b.add("quality_checks", values, rs, subject=asset, key_records=failed)


def _notes(b: _Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    lines = by_kind.get("log_line", [])
    for r in lines[-list_max:]:
        fields = r.value if isinstance(r.value, dict) else {"text": str(r.value)}
        text = str(fields.get("text", ""))
        values = {
            "at": iso(r.source_time),
            "author": str(fields.get("author") or ""),
            "area": r.key.rsplit("/", 1)[-1],
            "text": text,
            "flagged": looks_like_instruction(text),
        }
        b.add("operator_note", values, [r])
    if len(lines) > list_max:
        b.add("operator_notes_not_listed", {"count": len(lines) - list_max}, lines[:-list_max])


_SECTION_FUNCS = {
    "counts": _counts,
    "tags": _tags,
    "states": _states,
    "alarms": _alarms,
    "downtime": _downtime,
    "production": _production,
    "quality": _quality,
    "notes": _notes,
}
