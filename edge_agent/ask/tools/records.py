"""Bounded reads of the store for the tools: every window is checked against the budget and against the stored data
before anything is read, and every read stops one record past the row budget."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.errors import ToolError
from edge_agent.ask.tools.models import Window
from edge_agent.base.types import StoredRecord
from edge_agent.reports.narrative import held_ranges
from edge_agent.reports.request import ResolvedWindow
from edge_agent.store import StoredRow, from_us, to_us

# The distinct keys one look-up lists at most: the simulator has 17, a large site a few thousand (one per tag).
KEYS_MAX = 20_000
_EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
R = TypeVar("R", StoredRecord, StoredRow)


def data_span(ctx: ToolContext) -> tuple[datetime, datetime] | None:
    """The source times of the oldest and newest stored records (index look-ups), or None when there are none. The
    oldest is the oldest tag value where there are any: an alarm standing when the agent connected comes with the
    time it was raised (the demo's transmitter fault, two days before anything else), which is no data of that day."""
    oldest = ctx.store.records(limit=1, kinds=["tag_value"]) or ctx.store.records(limit=1)
    newest = ctx.store.records(limit=1, newest_first=True)
    if not oldest or not newest:
        return None
    return oldest[0].source_time, newest[0].source_time


# How far a time said may lie before the oldest stored record and still be read as stored: a sampling interval or two
# ("yesterday" asked of an agent that took its first sample at 00:00:07).
EDGE_SLACK = timedelta(minutes=15)


def stored_from(ctx: ToolContext) -> datetime | None:
    """The earliest moment a time said may begin at and still be read as stored: the oldest stored record less
    `EDGE_SLACK`; None when nothing is stored."""
    span = data_span(ctx)
    return None if span is None else span[0] - EDGE_SLACK


def check_window(ctx: ToolContext, window: Window) -> None:
    """`outside_budget` for a window longer than the budget; `outside_data` for one wholly before the oldest or after
    the newest stored record (one the question said that begins before the oldest: `ask.pipeline`)."""
    length = (window.end - window.start).total_seconds()
    if length > ctx.budget.max_window_s:
        raise ToolError("outside_budget", f"window of {length:.0f} s, more than {ctx.budget.max_window_s} s")
    span = data_span(ctx)
    if span is None:
        raise ToolError("outside_data", "the store holds no records")
    oldest, newest = span
    if window.end <= oldest or window.start > newest:
        raise ToolError(
            "outside_data",
            f"window {window.start.isoformat()}..{window.end.isoformat()} is outside the stored data "
            f"({oldest.isoformat()}..{newest.isoformat()})",
        )


class Reader:
    """Reads that share one row budget: the records of all of them together stay within `budget.max_rows`."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.left = ctx.budget.max_rows

    def read(
        self,
        start: datetime | None,
        end: datetime | None,
        *,
        keys: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[StoredRecord]:
        return self._counted(self.ctx.store.records(start, end, keys=keys, kinds=kinds, limit=self.left + 1))

    def rows(
        self,
        start: datetime | None,
        end: datetime | None,
        *,
        keys: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[StoredRow]:
        """`read`'s records as the store's light rows (`Store.record_rows`), within the same budget."""
        return self._counted(self.ctx.store.record_rows(start, end, keys=keys, kinds=kinds, limit=self.left + 1))

    def _counted(self, rows: list[R]) -> list[R]:
        if len(rows) > self.left:
            raise ToolError("outside_budget", f"more than {self.ctx.budget.max_rows} records to read")
        self.left -= len(rows)
        return rows


def report_rows(ctx: ToolContext, window: Window, kinds: Sequence[str] | None = None) -> list[StoredRecord]:
    """What a report over `window` reads (`reports.narrative.held_ranges`: the window, the data gaps begun before it,
    the alarms and MES events of the KPI history), of `kinds` only when given, within the row budget."""
    resolved = resolved_window(window)
    reader = Reader(ctx)
    rows: list[StoredRecord] = []
    try:
        ranges = held_ranges(resolved)
    except OverflowError:  # the KPI history of a window in year 1: only the window itself exists
        ranges = [(None, to_us(window.start), to_us(window.end))]
    for kind, lo, hi in ranges:
        if kind is not None and kinds is not None and kind not in kinds:
            continue
        rows += reader.read(_time(lo), from_us(hi), kinds=[kind] if kind is not None else kinds)
    return rows


def resolved_window(window: Window) -> ResolvedWindow:
    """The window as a report request resolves it (its timezone only names local times in a report's text)."""
    return ResolvedWindow(start=window.start, end=window.end, timezone="UTC")


def _time(us: int) -> datetime | None:
    """A range's start as a time; None for a start before year 1 (the data gaps are read however old they are)."""
    return None if us < to_us(_EARLIEST) else from_us(us)


def key_exists(ctx: ToolContext, key: str) -> bool:
    return bool(ctx.store.records(keys=[key], limit=1))


def known_asset(ctx: ToolContext, asset: str) -> bool:
    """An asset or line the store has records of (keyed by it, or a tag of it) or the KPI settings name."""
    kpi = ctx.config.reports.kpi
    configured = {c.line for c in kpi.lines} | {a for c in kpi.consoles for a in c.assets}
    if asset in configured or key_exists(ctx, asset):
        return True
    prefix = f"{asset}."
    return any(r.key.startswith(prefix) for r in ctx.store.recent_keys(_EARLIEST, KEYS_MAX))


def require_asset(ctx: ToolContext, *names: str | None) -> None:
    for name in names:
        if name is not None and not known_asset(ctx, name):
            raise ToolError("unknown_asset", f"no asset or line {name!r} in the stored data or the config")


def require_tag(ctx: ToolContext, tag: str) -> None:
    if not key_exists(ctx, tag):
        raise ToolError("unknown_tag", f"no tag {tag!r} in the stored data")
