"""Stops read from MES events, and the interval arithmetic the KPIs share (pure).

A stop is paired as `facts._downtime` pairs it (the first `downtime_start` of an id, then the first `downtime_end` of
that id after it); one without an end is open and runs to the end of what is measured. Times are POSIX seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from edge_agent.base.types import StoredRecord

Interval = tuple[float, float]


@dataclass(frozen=True)
class Stop:
    asset: str
    line: str
    reason: str
    start: float
    end: float | None  # None: still open
    records: tuple[StoredRecord, ...]

    def until(self, limit: float) -> float:
        """Its end, or `limit` when it is still open or ends after it."""
        return limit if self.end is None else min(self.end, limit)


def _text(value: object) -> str | None:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return None


def read_stops(records: Iterable[StoredRecord]) -> list[Stop]:
    """Every stop the MES events (in time order) hold; events that are not usable stops are left to the downtime
    facts, which count them as skipped."""
    starts: dict[str, tuple[StoredRecord, str, str]] = {}
    ends: dict[str, StoredRecord] = {}
    for r in sorted(records, key=lambda r: (r.source_time, r.id)):
        if r.kind != "mes_event" or not isinstance(r.value, dict):
            continue
        kind = r.value.get("type")
        if kind not in ("downtime_start", "downtime_end"):
            continue
        texts = [_text(r.value.get(k)) for k in ("downtime_id", "id", "reason", "line")]
        if any(t is None for t in texts):
            continue
        downtime_id, message_id, reason, line = (t or "" for t in texts)
        key = downtime_id or message_id or r.idempotency_key
        if kind == "downtime_start":
            starts.setdefault(key, (r, reason, line))
        elif downtime_id and key in starts and key not in ends:
            ends[key] = r
    stops = []
    for key, (start, reason, line) in starts.items():
        end = ends.get(key)
        stops.append(
            Stop(
                asset=start.key,
                line=line,
                reason=reason,
                start=start.source_time.timestamp(),
                end=end.source_time.timestamp() if end is not None else None,
                records=(start,) if end is None else (start, end),
            )
        )
    stops.sort(key=lambda s: (s.start, s.asset))
    return stops


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """Sorted, non-overlapping intervals covering the same time; empty ones dropped."""
    out: list[Interval] = []
    for a, b in sorted(i for i in intervals if i[1] > i[0]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def clip(intervals: Iterable[Interval], lo: float, hi: float) -> list[Interval]:
    return union((max(a, lo), min(b, hi)) for a, b in intervals)


def length(intervals: Sequence[Interval]) -> float:
    return sum(b - a for a, b in union(intervals))


def minus(intervals: Sequence[Interval], taken: Sequence[Interval]) -> list[Interval]:
    """`intervals` without any time `taken` covers."""
    out: list[Interval] = []
    cut = union(taken)
    for a, b in union(intervals):
        start = a
        for c, d in cut:
            if d <= start or c >= b:
                continue
            if c > start:
                out.append((start, c))
            start = max(start, d)
            if start >= b:
                break
        if start < b:
            out.append((start, b))
    return out
