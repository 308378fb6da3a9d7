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

Never raises on anything the store can hold: a record a section reads but cannot use (a tag value that is an
object, an infinite count, an alarm severity of "high", a data gap without a start) is skipped and counted in a
`skipped_records` fact with its reason, and a report with skipped records or data gaps carries a `completeness`
fact saying it is incomplete.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any, NamedTuple

from edge_agent.base.types import StoredRecord
from edge_agent.config.kpi import KpiConfig
from edge_agent.reports.facts.builder import (
    Alarm,
    Builder,
    Fact,
    is_number,
    measure_problem,
    parse_alarm,
    round_value,
    texts_of,
)
from edge_agent.reports.facts.kpi import kpi_facts
from edge_agent.reports.request import ResolvedRequest, Scope, iso
from edge_agent.reports.untrusted import looks_like_instruction

# The fact rules' version: raise it with any change that gives other facts for the same records, request and
# settings. Export bundles record it beside the code version (`audit export`), so an auditor who recomputes a
# bundle's facts (`audit verify-bundle --recompute`) knows which rules made them. 1: the rules of 0.2.0.
FACTS_VERSION = "1"

# Top 5 alarms: what a shift handover reads; the full count is in alarm_total.
TOP_ALARMS = 5
DATA_GAP = "data_gap"


def record_asset(record: StoredRecord) -> str | None:
    """The asset a record is about: tag `P-101.vibration_mm_s` → `P-101`; alarms and MES events key by asset; a data
    gap of a tag → the tag's asset (a gap keyed by a whole source, without a `.`, is about no single asset)."""
    if record.kind == "tag_value":
        return record.key.split(".", 1)[0]
    if record.kind in ("alarm", "mes_event"):
        return record.key
    if record.kind == DATA_GAP and "." in record.key:
        return record.key.split(".", 1)[0]
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


_SECTIONS: dict[str, tuple[str, ...]] = {
    "shift_summary": ("counts", "tags", "states", "alarms", "downtime", "production", "quality", "notes"),
    "alarm_summary": ("counts", "alarms", "notes"),
    "downtime_analysis": ("counts", "downtime", "alarms", "notes"),
    "asset_history": ("counts", "tags", "states", "alarms", "downtime", "production", "quality", "notes"),
    "alarm_performance": ("counts", "alarms"),
}
# Value keys holding a ratio in [0, 1] (4 decimals), written as a percentage (`grounding` reads "87.5 %" against
# them); None when not computable. The plant KPIs' (`reports.kpi`).
RATIO_KEYS = frozenset({"availability", "performance", "quality", "oee"})


def is_ratio(name: str) -> bool:
    return name in RATIO_KEYS or name.endswith("_share")


def compute_facts(
    records: Sequence[StoredRecord],
    request: ResolvedRequest,
    *,
    list_max: int = 24,
    notes_max: int = 12,
    kpi: KpiConfig | None = None,
) -> list[Fact]:
    """All facts for one report, in a fixed order; `records` are those of the window (any order), plus any
    `data_gap` records that started before it (`generate.report_records`), which count where they overlap it.

    Lists keep their newest `list_max` entries, operator notes their newest `notes_max`; the rest are counted. The
    notes section's prompt shows every listed note, so what the model reads, what the reference writer may cite and
    what grounding accepts are the same notes.

    `kpi`: the plant's KPI settings (`[reports.kpi]`); the KPI facts (`reports.kpi`: OEE, MTBF/MTTR, alarm
    performance) are computed only with them, or always for an alarm performance review. The records may include
    stops and alarms from before the window (`generate.report_records`), which only the KPIs read."""
    return [fact for fact, _ in traced_facts(records, request, list_max=list_max, notes_max=notes_max, kpi=kpi)]


def traced_facts(
    records: Sequence[StoredRecord],
    request: ResolvedRequest,
    *,
    list_max: int = 24,
    notes_max: int = 12,
    kpi: KpiConfig | None = None,
) -> list[tuple[Fact, frozenset[int]]]:
    """`compute_facts`, each fact with every record id behind it (the ids its `record_ids_sha256` hashes; its
    `record_ids` lists at most `RECORD_IDS_MAX` of them): what an export bundle carries as evidence."""
    start, end = request.window.start, request.window.end
    scoped = sorted((r for r in records if in_scope(r, request.scope)), key=lambda r: (r.source_time, r.id))
    rows = [r for r in scoped if start <= r.source_time < end]
    b = Builder()
    b.add(
        "window",
        {"start_at": iso(start), "end_at": iso(end), "duration_s": int((end - start).total_seconds())},
        [],
        subject=request.window.shift or "",
    )
    by_kind: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in rows:
        by_kind[r.kind].append(r)
    gaps = _data_gaps(b, [r for r in scoped if r.kind == DATA_GAP and r.source_time < end], start, end, list_max)
    for section in _SECTIONS[request.type]:
        _SECTION_FUNCS[section](b, by_kind, end, notes_max if section == "notes" else list_max)
    if kpi is not None or request.type == "alarm_performance":
        kpi_facts(b, request.type, scoped, rows, start, end, kpi or KpiConfig(), list_max)
    skipped = _skipped(b)
    if gaps or skipped:
        b.add("completeness", {"status": "incomplete", "data_gap_count": gaps, "skipped_count": skipped}, [])
        b.move(len(b.facts) - 1, 1)  # right after the window: the first thing a reader must know
    return list(zip(b.numbered(), b.sources, strict=True))


def _counts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    values = {f"{kind}_count": len(by_kind.get(kind, [])) for kind in ("tag_value", "alarm", "mes_event", "log_line")}
    b.add("record_counts", values, [r for rs in by_kind.values() for r in rs])


def _fields(b: Builder, r: StoredRecord) -> dict[str, Any] | None:
    """A MES event's JSON object, or None (skipped) when the value is not one or has no string `type`."""
    if not isinstance(r.value, dict):
        b.skip(r, "not_an_object")
        return None
    if not isinstance(r.value.get("type"), str):
        b.skip(r, "bad_type")
        return None
    return r.value


def _tags(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    per_tag: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("tag_value", []):
        if isinstance(r.value, (bool, str)):
            continue  # a state: `_states` reads it
        problem = "not_a_scalar" if not is_number(r.value) else measure_problem(r.value)
        if problem is None and r.quality == "bad":
            problem = "bad_quality"  # the server says the value is not valid: left out of the statistics
        if problem is not None:
            b.skip(r, problem)
        else:
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


def _states(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    per_tag: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("tag_value", []):
        if isinstance(r.value, (bool, str)):
            per_tag[r.key].append(r)
        elif not is_number(r.value):
            b.skip(r, "not_a_scalar")
    changes: list[tuple[StoredRecord, StoredRecord]] = []
    for tag in sorted(per_tag):
        samples = per_tag[tag]
        changes.extend((prev, cur) for prev, cur in pairwise(samples) if prev.value != cur.value)
    changes.sort(key=lambda pc: (pc[1].source_time, pc[1].id))
    for prev, cur in changes[:list_max]:
        asset = cur.key.split(".", 1)[0]
        values = {"from": _state(prev.value), "to": _state(cur.value), "at": iso(cur.source_time)}
        b.add("state_change", values, [prev, cur], subject=cur.key, ids=[asset])
    if len(changes) > list_max:
        b.add("state_changes_not_listed", {"count": len(changes) - list_max}, [c for _, c in changes[list_max:]])


def _state(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)


def _alarms(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    alarms = [a for r in by_kind.get("alarm", []) if (a := parse_alarm(b, r)) is not None]
    # An alarm record with active=false is the condition clearing; only activations count as alarms.
    raised = [a for a in alarms if a.active]
    assets = sorted({a.record.key for a in raised})
    b.add("alarm_total", {"count": len(raised), "assets_count": len(assets)}, [a.record for a in raised], ids=assets)
    groups: dict[tuple[str, str], list[Alarm]] = defaultdict(list)
    for a in raised:
        groups[(a.record.key, a.condition or a.message)].append(a)

    def severity(group: list[Alarm]) -> int:
        return max(a.severity for a in group)

    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), -severity(kv[1]), kv[0]))
    for rank, ((asset, condition), group) in enumerate(ranked[:TOP_ALARMS], start=1):
        values = {
            "rank": rank,
            "condition": condition,
            "message": group[0].message,
            "count": len(group),
            "max_severity": severity(group),
            "first_at": iso(group[0].record.source_time),
            "last_at": iso(group[-1].record.source_time),
        }
        b.add("top_alarm", values, [a.record for a in group], subject=asset)


def _downtime(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
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


def _production(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
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


def _quality(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
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


def _notes(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    lines = []
    for r in by_kind.get("log_line", []):
        # A bare string is the line's text, as a plain-text parser stores it.
        fields = r.value if isinstance(r.value, dict) else {"text": r.value}
        # Attributed by the ingest route (edge_agent/connectors/mqtt/authorship.py): `author` is what the broker
        # vouched for, and a
        # name the line claimed is only `claimed_author`. Records from before carry the line's claim as `author`.
        attributed = "author_from" in fields
        texts = texts_of(b, r, fields, ("text", "author", "claimed_author") if attributed else ("text", "author"))
        if texts is not None:
            lines.append((r, texts))
    listed = lines[max(0, len(lines) - list_max) :]
    for r, texts in listed:
        values = {
            "at": iso(r.source_time),
            "author": texts["author"],
            "area": r.key.rsplit("/", 1)[-1],
            "text": texts["text"],
            "flagged": looks_like_instruction(texts["text"]),
        }
        if "claimed_author" in texts:
            values["claimed_author"] = texts["claimed_author"] or None  # null: the line claimed no name
        b.add("operator_note", values, [r])
    if len(lines) > len(listed):
        unlisted = lines[: len(lines) - len(listed)]
        b.add("operator_notes_not_listed", {"count": len(unlisted)}, [r for r, _ in unlisted])


class _Gap(NamedTuple):
    record: StoredRecord
    start: datetime
    end: datetime | None
    reason: str
    source: str


def _gap_time(value: Any) -> datetime | None:
    """An ISO-8601 time as aware UTC (naive is UTC, as everywhere in the store); None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # not ISO-8601, or an offset that moves it out of years 1..9999
        return None


def _gap(r: StoredRecord, skip: Callable[[StoredRecord, str], None]) -> _Gap | None:
    if not isinstance(r.value, dict):
        skip(r, "not_an_object")
        return None
    start, end = _gap_time(r.value.get("start")), _gap_time(r.value.get("end"))
    reason, source = r.value.get("reason"), r.value.get("source")
    source = "" if source is None else source
    problem = None
    if start is None:
        problem = "bad_start"
    elif end is None and r.value.get("end") is not None:
        problem = "bad_end"
    elif end is not None and end < start:
        problem = "end_before_start"
    elif not isinstance(reason, str) or not reason:
        problem = "bad_reason"
    elif not isinstance(source, str):
        problem = "bad_source"
    if problem is not None:
        skip(r, problem)
        return None
    assert start is not None and isinstance(reason, str) and isinstance(source, str)  # checked just above
    return _Gap(r, start, end, reason, source)


def _data_gaps(b: Builder, records: list[StoredRecord], start: datetime, end: datetime, list_max: int) -> int:
    """One `data_gap` fact per interval without data that overlaps the window (cut to it); returns how many.

    A malformed gap record counts as skipped only when its own time is in the window: one that started earlier
    would otherwise mark every later report incomplete. The same gap recorded again (open, then closed) is one gap,
    its closed record authoritative."""

    def skip(r: StoredRecord, reason: str) -> None:
        if start <= r.source_time < end:
            b.skip(r, reason)

    same: dict[tuple[str, datetime], list[_Gap]] = defaultdict(list)
    for r in records:
        if (gap := _gap(r, skip)) is not None:
            same[(r.key, gap.start)].append(gap)
    gaps: list[tuple[_Gap, list[StoredRecord]]] = []
    for versions in same.values():
        gap = max(versions, key=lambda g: (g.end is not None, g.end or g.start, g.record.id))
        if gap.start < end and (gap.end is None or gap.end > start):
            gaps.append((gap, [v.record for v in versions]))
    gaps.sort(key=lambda gv: (gv[0].start, gv[0].record.key, gv[0].record.id))
    for gap, version_records in gaps[:list_max]:
        cut_start = max(gap.start, start)
        cut_end = end if gap.end is None else min(gap.end, end)
        values = {
            "reason": gap.reason,
            "source": gap.source,
            "start_at": iso(cut_start),
            "end_at": iso(cut_end),
            "duration_s": int((cut_end - cut_start).total_seconds()),
            "open": gap.end is None or gap.end > end,
        }
        b.add(
            DATA_GAP,
            values,
            version_records,
            subject=gap.record.key,
            ids=[gap.record.key.split(".", 1)[0]],
            key_records=[gap.record],
        )
    if len(gaps) > list_max:
        b.add("data_gaps_not_listed", {"count": len(gaps) - list_max}, [r for _, vs in gaps[list_max:] for r in vs])
    return len(gaps)


def _skipped(b: Builder) -> int:
    """One `skipped_records` fact per record kind and reason; returns how many records were skipped."""
    groups: dict[tuple[str, str], list[StoredRecord]] = defaultdict(list)
    for record, reason in b.skipped.values():
        groups[(record.kind, reason)].append(record)
    for (kind, reason), rs in sorted(groups.items()):
        rs.sort(key=lambda r: (r.source_time, r.id))
        b.add("skipped_records", {"count": len(rs), "record_kind": kind, "reason": reason}, rs)
    return len(b.skipped)


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
