"""HistoryRead, page by page: raw values of one node, and events of the Server object."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from asyncua import Node, ua

from edge_agent.base.types import to_utc
from edge_agent.connectors.opcua.records import NULL_TIME

# Values per HistoryRead page: bounds memory while backfilling a long gap.
HISTORY_PAGE_VALUES = 2000
# The start of a history probe: OPC UA's first representable time (its DateTime 0 itself asks for a backward read).
HISTORY_PROBE_START = NULL_TIME + timedelta(seconds=1)


class _HistoryPages:
    """HistoryRead page by page, so a long gap never sits in memory at once.

    A compliant server returns a continuation point when more remains. Some (asyncua's own HistoryDict among them)
    just cut the reply at NumValuesPerNode without one: a full page without a continuation point is therefore followed
    by a new read starting at the last returned timestamp (that boundary item comes twice and is deduplicated by its
    idempotency key).
    """

    def __init__(self, node: Node, start: datetime, end: datetime, page_values: int | None = None) -> None:
        self.node = node
        self.start = start
        self.end = end
        self.page_values = page_values or HISTORY_PAGE_VALUES

    def _details(self) -> Any:
        raise NotImplementedError

    def _items(self, result: ua.HistoryReadResult) -> list[Any]:
        raise NotImplementedError

    def _time(self, item: Any) -> datetime | None:
        raise NotImplementedError

    def __aiter__(self) -> _HistoryPages:
        self._continuation: bytes | None = None
        self._done = False
        return self

    async def __anext__(self) -> list[Any]:
        if self._done:
            raise StopAsyncIteration
        previous = self._continuation
        result = await self.node.history_read(self._details(), previous)
        result.StatusCode.check()
        items = self._items(result) if result.HistoryData is not None else []
        self._continuation = result.ContinuationPoint
        if self._continuation is not None:
            # A repeated continuation point would loop forever.
            self._done = self._continuation == previous or not items
            return items
        last = self._time(items[-1]) if items else None
        if len(items) >= self.page_values and last is not None and to_utc(last) > to_utc(self.start):
            self.start = last
        else:
            self._done = True
        return items


class AsyncHistoryPages(_HistoryPages):
    """Raw values of one node (ReadRawModifiedDetails)."""

    def _details(self) -> ua.ReadRawModifiedDetails:
        details = ua.ReadRawModifiedDetails()
        details.IsReadModified = False
        details.StartTime = self.start
        details.EndTime = self.end
        details.NumValuesPerNode = self.page_values
        details.ReturnBounds = False
        return details

    def _items(self, result: ua.HistoryReadResult) -> list[ua.DataValue]:
        return list(result.HistoryData.DataValues or [])

    def _time(self, item: ua.DataValue) -> datetime | None:
        return item.SourceTimestamp


class AsyncEventHistoryPages(_HistoryPages):
    """Events of the Server object (ReadEventDetails), with the live subscription's select clauses."""

    def __init__(self, node: Node, start: datetime, end: datetime, event_filter: ua.EventFilter) -> None:
        super().__init__(node, start, end)
        self.event_filter = event_filter
        paths = [[q.Name for q in c.BrowsePath] for c in event_filter.SelectClauses]
        self._time_index = paths.index(["Time"]) if ["Time"] in paths else None

    def _details(self) -> ua.ReadEventDetails:
        details = ua.ReadEventDetails()
        details.StartTime = self.start
        details.EndTime = self.end
        details.NumValuesPerNode = self.page_values
        details.Filter = self.event_filter
        return details

    def _items(self, result: ua.HistoryReadResult) -> list[ua.HistoryEventFieldList]:
        return list(result.HistoryData.Events or [])

    def _time(self, item: ua.HistoryEventFieldList) -> datetime | None:
        fields = item.EventFields or []
        if self._time_index is None or self._time_index >= len(fields):
            return None
        when = fields[self._time_index].Value
        return when if isinstance(when, datetime) else None
