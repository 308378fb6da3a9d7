"""Facts from data gap records: each interval without data that overlaps the window, cut to it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NamedTuple

from edge_agent.base.types import StoredRecord
from edge_agent.reports.facts.builder import Builder
from edge_agent.reports.request import iso

DATA_GAP = "data_gap"


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


def data_gap_facts(b: Builder, records: list[StoredRecord], start: datetime, end: datetime, list_max: int) -> int:
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
