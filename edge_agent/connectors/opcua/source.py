"""`OpcuaSource`: one configured OPC UA server into the store, through sessions that are rebuilt after any loss.

Live notifications pass the isolation barrier (`records`) in batches; after a reconnect the gap is read back with
HistoryRead (values and events), and a server-side queue overflow is repaired the same way. What cannot be read back
becomes a `data_gap` record and an `opcua.gap` audit entry.

One module, over 450 lines, because `OpcuaSource` is one unit: the live consumer, the overflow repair and the
backfills share one session's batches, gap starts and audit tally; what stands alone is in its own module already
(`session`, `history`, `records`, `security`, `metrics`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter as Tally
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

import structlog
from asyncua import ua
from asyncua.common.subscription import DataChangeEvent, OpcEvent, StatusChangeEvent, Subscription

from edge_agent.audit import AuditSink
from edge_agent.base.types import Record, utcnow
from edge_agent.base.values import PlausibleTimes
from edge_agent.config import NodeConfig, OpcuaSourceConfig
from edge_agent.connectors.opcua.metrics import (
    ALARMS_RECEIVED,
    CONNECT_FAILURES,
    CONNECTED,
    GAPS,
    OVERFLOW_SUSPECTED,
    QUARANTINED,
    RECONNECTS,
    RECORDS_STORED,
    VALUES_BACKFILLED,
    VALUES_RECEIVED,
)
from edge_agent.connectors.opcua.records import (
    Refused,
    convert_event,
    convert_history_event,
    convert_value,
    gap_record,
    overflowed,
    reused_id,
)
from edge_agent.connectors.opcua.security import (
    Identity,
    OpcuaError,
    OpcuaSecurityError,
    default_application_uri,
    ensure_certificate,
    load_identity,
)
from edge_agent.connectors.opcua.session import Backoff, ConnectionLost, Session
from edge_agent.connectors.quarantine import QuarantineTally
from edge_agent.store import Inserted, RecordWriter

log = structlog.get_logger(component="opcua")

# Records per store write, and the longest a received value waits for its batch (the writer adds its own batching).
BATCH_MAX_RECORDS = 500
BATCH_MAX_DELAY_S = 0.1
# A backfill re-reads this far before the last value seen: servers stamp values with their own (or the device's)
# clock and may deliver them out of order; the overlap costs a few duplicate reads, deduplicated by key.
BACKFILL_OVERLAP_S = 5.0
# Pending overflow repairs; beyond this a repair's span is recorded as a queue_overflow gap instead of read back.
REPAIR_QUEUE_MAX = 1000


class QuarantineSink(Protocol):
    """What this connector needs of `edge_agent.store.Store`: a place for what cannot become a record."""

    def quarantine(
        self, source: str, topic: str, raw: bytes, reason: str, received_time: datetime | None = None
    ) -> int: ...


def _first_error(group: BaseExceptionGroup) -> BaseException:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            return _first_error(exc)
        if not isinstance(exc, asyncio.CancelledError):
            return exc
    return group.exceptions[0]


@dataclass
class _Burst:
    """Per tag, the notifications consumed back to back (one or more publishes), for `_suspect_overflow`."""

    counts: Tally[str] = field(default_factory=Tally)
    first: dict[str, datetime] = field(default_factory=dict)
    before: dict[str, datetime | None] = field(default_factory=dict)

    def add(self, batch: Sequence[Record], last_seen: dict[str, datetime]) -> None:
        for r in batch:
            if r.kind != "tag_value":
                continue
            if r.key not in self.counts:
                self.before[r.key] = last_seen.get(r.key)
                self.first[r.key] = r.source_time
            self.counts[r.key] += 1
            self.first[r.key] = min(self.first[r.key], r.source_time)


@dataclass
class _Converted:
    """What one batch of notifications (or one history page) became: records, refusals, and gaps it revealed."""

    records: list[Record] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    gaps: list[Record] = field(default_factory=list)

    def add(self, item: Record | Refused) -> None:
        if isinstance(item, Record):
            self.records.append(item)
        else:
            self.refused.append(item)

    def __len__(self) -> int:
        return len(self.records) + len(self.refused) + len(self.gaps)


# One pending repair: the node, the span to read back, and whether loss is certain (Overflow bit) or suspected.
_Repair = tuple[NodeConfig, datetime, datetime, bool]


@dataclass
class _AuditTally:
    records: int = 0
    stored: int = 0
    historical: int = 0
    alarms: int = 0
    first: datetime | None = None
    last: datetime | None = None
    quarantined: QuarantineTally = field(default_factory=QuarantineTally)

    def add(self, records: Sequence[Record], stored: int) -> None:
        self.records += len(records)
        self.stored += stored
        self.historical += sum(r.historical for r in records)
        self.alarms += sum(r.kind == "alarm" for r in records)
        times = [r.source_time for r in records]
        if times:
            self.first = min([t for t in (self.first, min(times)) if t is not None])
            self.last = max([t for t in (self.last, max(times)) if t is not None])

    def refuse(self, refused: Sequence[Refused]) -> None:
        for item in refused:
            self.quarantined.add(item.topic, item.reason, item.detail, item.raw)

    def entries(self, source: str, endpoint: str) -> list[tuple[str, str, dict[str, Any]]]:
        entries: list[tuple[str, str, dict[str, Any]]] = []
        if self.records:
            entries.append(
                (
                    "ingest.batch",
                    "opcua",
                    {
                        "source": source,
                        "endpoint": endpoint,
                        "records": self.records,
                        "stored": self.stored,
                        "historical": self.historical,
                        "alarms": self.alarms,
                        "first_source_time": self.first.isoformat() if self.first else None,
                        "last_source_time": self.last.isoformat() if self.last else None,
                    },
                )
            )
        if self.quarantined:
            entries.append(("quarantine", "opcua", self.quarantined.entry(source)))
        return entries


class OpcuaSource:
    """A daemon Component: one configured OPC UA server into the store through the shared `RecordWriter`.

    Every value and event passes an isolation barrier (`convert_value`, `convert_event`): what cannot become a record
    is quarantined with its reason (`quarantine`, e.g. the `Store`), counted and audited, and the rest of its batch
    goes on. An interval that neither the live subscription nor the server's history could fill becomes a
    `data_gap` record and an `opcua.gap` audit entry.
    """

    def __init__(
        self,
        config: OpcuaSourceConfig,
        writer: RecordWriter,
        *,
        quarantine: QuarantineSink,
        pki_dir: Path,
        audit: AuditSink | None = None,
        audit_every_s: float = 60.0,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.name = f"opcua:{config.name}"
        self._writer = writer
        self._quarantine = quarantine
        self._times = PlausibleTimes(config.time_min, timedelta(seconds=config.time_max_future_s))
        self._pki_dir = pki_dir
        self._audit = audit
        self._audit_every_s = audit_every_s
        self._backoff = Backoff(config.reconnect_min_s, config.reconnect_max_s, rng=rng or random.Random())
        # Newest source time seen per tag, live or backfilled: where the next backfill starts.
        self.last_seen: dict[str, datetime] = {}
        # Backfills a session started and did not finish (it was lost): the next session starts them over from here.
        self._backfill_from: dict[str, datetime] = {}
        self._events_backfill_from: datetime | None = None
        # Until when the event subscription is known to have delivered every event (its last good health read).
        self._events_covered_until: datetime | None = None
        self._nodes_by_tag = {node.tag: node for node in config.nodes}
        self._repairs: asyncio.Queue[_Repair] | None = None
        self._sessions = 0
        self._tally = _AuditTally()
        self._audit_due = time.monotonic() + audit_every_s
        self._identity: Identity | None = None
        self._audit_tasks: set[asyncio.Future[Any]] = set()
        self._in_flight: set[asyncio.Future[None]] = set()
        self._stop_requested = False

    # --- Component ------------------------------------------------------------------------------------------

    def stop_requested(self) -> None:
        """The supervisor is about to cancel us for the agent's stop (daemon.HearsStop)."""
        self._stop_requested = True

    async def run(self, ready: asyncio.Event) -> None:
        cfg = self.config
        self._stop_requested = False
        self._identity = self._load_identity()
        try:
            while True:
                try:
                    async with Session(cfg, self._identity) as session:
                        await self._serve(session, ready)
                except (OpcuaSecurityError, asyncio.CancelledError):
                    raise
                except (OpcuaError, OSError, TimeoutError, ConnectionError, ua.UaError) as exc:
                    CONNECTED.labels(cfg.name).set(0)
                    if self._stop_requested:
                        # A stop that met the connection's end (server gone as the agent stops): the TaskGroup or
                        # the session's close reports the loss and swallows the cancellation, which still stands.
                        raise asyncio.CancelledError(f"stopped while the connection ended: {exc!r}") from exc
                    delay = self._backoff.next_delay()
                    if isinstance(exc, ConnectionLost):
                        log.warning(
                            "opcua_connection_lost", source=cfg.name, error=str(exc), retry_in_s=round(delay, 2)
                        )
                    else:
                        CONNECT_FAILURES.labels(cfg.name).inc()
                        log.warning(
                            "opcua_connect_failed",
                            source=cfg.name,
                            endpoint=cfg.endpoint,
                            error=repr(exc),
                            retry_in_s=round(delay, 2),
                        )
                    await asyncio.sleep(delay)
        finally:
            CONNECTED.labels(cfg.name).set(0)
            if self._in_flight:
                await asyncio.shield(asyncio.gather(*self._in_flight, return_exceptions=True))
            await asyncio.shield(self._audit_settled())
            await asyncio.shield(self._flush_audit(force=True))
            await asyncio.shield(self._audit_settled())

    def _load_identity(self) -> Identity | None:
        return client_identity(self.config, self._pki_dir)

    async def _serve(self, session: Session, ready: asyncio.Event) -> None:
        cfg = self.config
        # Snapshot before the first notification moves it: the gap runs from here to the new subscription. A gap a
        # lost session did not finish filling starts where that session's started.
        for tag, seen in self.last_seen.items():
            self._backfill_from.setdefault(tag, seen)
        if self._events_backfill_from is None:
            self._events_backfill_from = self._events_covered_until
        gap_start = dict(self._backfill_from)
        events_from = self._events_backfill_from
        first_session = self._sessions == 0
        self._sessions += 1
        if not first_session:
            RECONNECTS.labels(cfg.name).inc()
        self._backoff.reset()
        CONNECTED.labels(cfg.name).set(1)
        log.info(
            "opcua_subscribed",
            source=cfg.name,
            endpoint=cfg.endpoint,
            items=len(session.tags_by_handle),
            events=session.event_handle is not None,
            session=self._sessions,
        )
        ready.set()
        try:
            async with asyncio.TaskGroup() as tasks:
                # Kept across sessions: a repair the lost session did not finish is done by the next one.
                if self._repairs is None:
                    self._repairs = asyncio.Queue(REPAIR_QUEUE_MAX)
                repairs = self._repairs
                tasks.create_task(self._consume(session, repairs), name=f"opcua-{cfg.name}-consume")
                tasks.create_task(session.watch(), name=f"opcua-{cfg.name}-watch")
                if cfg.history_backfill:
                    tasks.create_task(
                        self._backfill(session, gap_start, first_session), name=f"opcua-{cfg.name}-backfill"
                    )
                    tasks.create_task(self._repair(session, repairs), name=f"opcua-{cfg.name}-repair")
                    if session.event_handle is not None:
                        tasks.create_task(
                            self._backfill_events(session, events_from, first_session),
                            name=f"opcua-{cfg.name}-backfill-events",
                        )
        except BaseExceptionGroup as group:
            # The first failure (usually the watch's ConnectionLost) decides; the rest were cancelled with it.
            raise _first_error(group) from group
        finally:
            if session.event_handle is not None:
                self._events_covered_until = session.healthy_at

    # --- live values ----------------------------------------------------------------------------------------

    async def _consume(self, session: Session, repairs: asyncio.Queue[_Repair]) -> None:
        assert session.subscription is not None
        sub = session.subscription
        loop = asyncio.get_running_loop()
        burst = _Burst()
        while True:
            batch = _Converted()
            event: Any = await self._next_event(sub, 0)  # a poll: None when the queue has run dry
            if event is None:
                # Everything the server has published so far is consumed: judge this burst, start the next.
                if self.config.history_backfill:
                    self._suspect_overflow(burst, repairs, batch)
                burst = _Burst()
                if batch:
                    await self._store(batch)
                    batch = _Converted()
                event = await self._next_event(sub, None)
            deadline = loop.time() + BATCH_MAX_DELAY_S
            while event is not None:
                self._convert(session, event, batch, repairs)
                if len(batch) >= BATCH_MAX_RECORDS or (remaining := deadline - loop.time()) <= 0:
                    break
                event = await self._next_event(sub, remaining)
            if batch:
                burst.add(batch.records, self.last_seen)
                await self._store(batch)

    def _suspect_overflow(self, burst: _Burst, repairs: asyncio.Queue[_Repair], out: _Converted) -> None:
        """Queue a history repair for tags whose server-side queue may have overflowed.

        A server drops the oldest queued values of a monitored item when the client lags (asyncua does it without
        setting the Overflow bit), so loss is invisible in the data. A tag that delivered a full queue's worth in
        one burst (notifications consumed back to back) is suspect: what it may have lost lies between its value
        before the burst and the burst's first. A false alarm costs one HistoryRead whose values are all
        duplicates. Items with queue_size 1 are left alone: "latest value only" is what that setting asks for.
        """
        for tag, count in burst.counts.items():
            node = self._nodes_by_tag.get(tag)
            before = burst.before.get(tag)
            if node is None or node.queue_size <= 1 or count < node.queue_size or before is None:
                continue
            OVERFLOW_SUSPECTED.labels(self.config.name).inc()
            self._queue_repair(repairs, (node, before, burst.first[tag], False), out)

    def _queue_repair(self, repairs: asyncio.Queue[_Repair], repair: _Repair, out: _Converted) -> None:
        try:
            repairs.put_nowait(repair)
        except asyncio.QueueFull:
            # Nobody will read this span back: it is recorded as a gap rather than lost without a word.
            node, start, end, _ = repair
            log.warning("opcua_repair_queue_full", source=self.config.name, tag=node.tag)
            out.gaps.append(gap_record(self.config.name, node.tag, start, end, "queue_overflow"))

    @staticmethod
    async def _next_event(sub: Subscription, timeout: float | None) -> Any:
        """The next notification, or None after `timeout` seconds.

        Not asyncua's `next_event(timeout)`: it uses `asyncio.wait_for`, which on Python 3.11 can swallow the
        cancellation that arrives as an item does; the TaskGroup then waits forever for this task to stop.
        """
        try:
            async with asyncio.timeout(timeout):
                return await sub.next_event()
        except TimeoutError:
            return None
        except StopAsyncIteration as exc:
            raise ConnectionLost("subscription closed") from exc

    def _convert(self, session: Session, event: Any, out: _Converted, repairs: asyncio.Queue[_Repair]) -> None:
        cfg = self.config
        if isinstance(event, DataChangeEvent):
            tag = session.tags_by_handle.get(event.data.monitored_item.ClientHandle)
            if tag is None:
                return
            dv = event.data.monitored_item.Value
            item = convert_value(cfg.name, tag, dv, historical=False, times=self._times)
            out.add(item)
            VALUES_RECEIVED.labels(cfg.name).inc()
            if isinstance(item, Record):
                # The value delivered before this one (arrival order: the server's queue order).
                before = session.latest.get(tag) or self.last_seen.get(tag) or session.healthy_at
                session.latest[tag] = item.source_time
                if overflowed(dv.StatusCode):
                    self._overflowed(self._nodes_by_tag[tag], before, item.source_time, out, repairs)
        elif isinstance(event, OpcEvent):
            out.add(convert_event(cfg.name, event.event, historical=False, times=self._times))
            ALARMS_RECEIVED.labels(cfg.name).inc()
        elif isinstance(event, StatusChangeEvent):
            status = event.notification.Status
            # BadTimeout / BadShutdown: the server dropped this subscription; only a new session brings it back.
            if not status.is_good():
                session.lost_reason = f"subscription status {status.name}"
                session.lost.set()

    def _overflowed(
        self, node: NodeConfig, before: datetime, at: datetime, out: _Converted, repairs: asyncio.Queue[_Repair]
    ) -> None:
        """A value flagged Overflow: the server lost values of this item between `before` and `at`."""
        before, at = sorted((before, at))  # a device may stamp out of order; the span is what lies between
        log.warning(
            "opcua_queue_overflow", source=self.config.name, tag=node.tag, start=before.isoformat(), end=at.isoformat()
        )
        if self.config.history_backfill:
            self._queue_repair(repairs, (node, before, at, True), out)
        else:
            out.gaps.append(gap_record(self.config.name, node.tag, before, at, "queue_overflow"))

    async def _store(self, batch: _Converted) -> None:
        # Shielded and tracked: a stop arriving while the batch commits still counts and audits it (run() waits).
        task = asyncio.ensure_future(self._commit(batch))
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)
        await asyncio.shield(task)

    async def _commit(self, batch: _Converted) -> None:
        records = batch.records
        inserted = await self._writer.write(records) if records else Inserted(0)
        if inserted.reused:  # kept aside with the reason, never skipped as if it were a duplicate
            batch.refused.extend(reused_id(self.config.name, records[i]) for i in inserted.reused)
            reused = set(inserted.reused)
            records = [r for i, r in enumerate(records) if i not in reused]
        stored = inserted.count
        RECORDS_STORED.labels(self.config.name).inc(stored)
        for r in records:
            if r.kind == "tag_value" and (r.key not in self.last_seen or r.source_time > self.last_seen[r.key]):
                self.last_seen[r.key] = r.source_time
        if batch.refused:
            await asyncio.to_thread(self._quarantine_sync, batch.refused)
        for gap in batch.gaps:
            await self._commit_gap(gap)
        self._tally.add(records, stored)
        self._tally.refuse(batch.refused)
        await self._flush_audit()

    def _quarantine_sync(self, refused: Sequence[Refused]) -> None:
        for item in refused:
            self._quarantine.quarantine(self.config.name, item.topic, item.raw, item.reason)
            QUARANTINED.labels(self.config.name, item.reason).inc()
            log.warning(
                "opcua_quarantined", source=self.config.name, topic=item.topic, reason=item.reason, detail=item.detail
            )

    async def _commit_gap(self, gap: Record) -> None:
        """Store one `data_gap` record; the first time it is stored, count it and write its `opcua.gap` entry."""
        if not (await self._writer.write([gap])).count:
            return  # recorded before (same source, tag, interval, reason)
        GAPS.labels(self.config.name, gap.value["reason"]).inc()
        log.warning("opcua_data_gap", **gap.value)
        if self._audit is not None:
            task = asyncio.ensure_future(
                asyncio.to_thread(self._audit.append_many, [("opcua.gap", "opcua", gap.value)])
            )
            self._audit_tasks.add(task)
            await asyncio.shield(self._audit_settled())

    async def _gap(self, tag: str | None, start: datetime, end: datetime | None, reason: str) -> None:
        await self._store(_Converted(gaps=[gap_record(self.config.name, tag, start, end, reason)]))

    # --- backfill -------------------------------------------------------------------------------------------

    async def _backfill(self, session: Session, gap_start: dict[str, datetime], first_session: bool) -> None:
        """HistoryRead each node from its last seen value to now; the overlap with live values is deduplicated.

        What the history cannot give is recorded as a gap: the head of an outage longer than history_backfill_max_s
        (`outage_exceeds_history`), and a span the server's history no longer (or never) held
        (`history_unavailable`). The first session's `history_backfill_initial_s` read claims nothing, so finds no gap.
        """
        cfg = self.config
        end = utcnow() + timedelta(seconds=1)  # the live subscription covers everything after this
        earliest = end - timedelta(seconds=cfg.history_backfill_max_s)
        total = 0
        for node in cfg.nodes:
            seen = gap_start.get(node.tag)
            if seen is not None:
                total += await self._fill(session, node, seen, earliest, end)
            elif first_session and cfg.history_backfill_initial_s > 0:
                initial = end - timedelta(seconds=cfg.history_backfill_initial_s)
                with suppress(ua.UaStatusCodeError):  # no history kept for this node: nothing to add
                    total += (await self._history_into_store(session, node, initial, end))[0]
            self._backfill_from.pop(node.tag, None)
        if total:
            log.info("opcua_backfilled", source=cfg.name, values=total)

    async def _fill(self, session: Session, node: NodeConfig, seen: datetime, earliest: datetime, end: datetime) -> int:
        """Backfill one node whose values are stored up to `seen`; returns values read."""
        start = seen
        if seen < earliest:
            await self._gap(node.tag, seen, earliest, "outage_exceeds_history")
            start = earliest
        try:
            held = await session.history_reaches(node, start)
            read, first = await self._history_into_store(
                session, node, max(start - timedelta(seconds=BACKFILL_OVERLAP_S), earliest), end
            )
        except ua.UaStatusCodeError as exc:  # BadHistoryOperationUnsupported and kin: the server keeps none
            log.info("opcua_history_unavailable", source=self.config.name, tag=node.tag, status=type(exc).__name__)
            await self._gap(node.tag, start, end, "history_unavailable")
            return 0
        if not held:
            # The history starts after the last value we hold: what lies between is gone.
            await self._gap(node.tag, start, first if first is not None and first < end else end, "history_unavailable")
        return read

    async def _repair(self, session: Session, repairs: asyncio.Queue[_Repair]) -> None:
        """Fill what a server-side queue overflow dropped (see `_suspect_overflow`, `_overflowed`)."""
        while True:
            node, start, end, certain = await repairs.get()
            try:
                read, _ = await self._history_into_store(session, node, start, end)
            except ua.UaStatusCodeError as exc:
                log.info("opcua_history_unavailable", source=self.config.name, tag=node.tag, status=type(exc).__name__)
                if certain:  # the server said values were lost, and its history cannot give them back
                    await self._gap(node.tag, start, end, "queue_overflow")
                continue
            except BaseException:
                with suppress(asyncio.QueueFull):  # the session died under it: the next one retries
                    repairs.put_nowait((node, start, end, certain))
                raise
            log.info(
                "opcua_overflow_repaired",
                source=self.config.name,
                tag=node.tag,
                values_read=read,
                start=start.isoformat(),
                end=end.isoformat(),
            )

    async def _history_into_store(
        self, session: Session, node: NodeConfig, start: datetime, end: datetime
    ) -> tuple[int, datetime | None]:
        """HistoryRead one node's raw values in [start, end] into the store (historical=True).

        Returns the values read and the oldest source time among them. Raises `ua.UaStatusCodeError` when the
        server refuses the read (it keeps no history for the node).
        """
        cfg = self.config
        total = 0
        oldest: datetime | None = None
        async for page in session.history(node, start, end):
            batch = _Converted()
            for dv in page:
                batch.add(convert_value(cfg.name, node.tag, dv, historical=True, times=self._times))
            if page:
                VALUES_BACKFILLED.labels(cfg.name).inc(len(page))
                total += len(page)
                times = [r.source_time for r in batch.records]
                if times:
                    oldest = min([t for t in (oldest, min(times)) if t is not None])
                await self._store(batch)
        return total, oldest

    async def _backfill_events(self, session: Session, since: datetime | None, first_session: bool) -> None:
        """HistoryRead the Server object's events from when the last session was last known healthy to now.

        Stored with `historical=True`, deduplicated against the live ones by EventId. A server that keeps no event
        history (its EventNotifier lacks HistoryRead, or it refuses the read) gets an `event_history_unavailable`
        gap for the interval, as does the head of an outage longer than history_backfill_max_s.
        """
        cfg = self.config
        end = utcnow() + timedelta(seconds=1)  # the live subscription covers everything after this
        earliest = end - timedelta(seconds=cfg.history_backfill_max_s)
        claimed = since is not None
        if since is None:
            if not (first_session and cfg.history_backfill_initial_s > 0):
                return
            since = end - timedelta(seconds=cfg.history_backfill_initial_s)
        if claimed and since < earliest:
            await self._gap(None, since, earliest, "outage_exceeds_history")
        start = max(since, earliest)
        read = 0
        try:
            if not await session.events_historized():
                raise ua.UaStatusCodeError(ua.StatusCodes.BadHistoryOperationUnsupported)
            assert session.event_filter is not None
            clauses = session.event_filter.SelectClauses
            async for page in session.event_history(max(start - timedelta(seconds=BACKFILL_OVERLAP_S), earliest), end):
                batch = _Converted()
                for fields in page:
                    batch.add(convert_history_event(cfg.name, clauses, fields, self._times))
                read += len(page)
                await self._store(batch)
        except ua.UaStatusCodeError as exc:
            log.info("opcua_event_history_unavailable", source=cfg.name, status=type(exc).__name__)
            if claimed:
                await self._gap(None, start, end, "event_history_unavailable")
        self._events_backfill_from = None
        if read:
            log.info("opcua_events_backfilled", source=cfg.name, events=read)

    # --- audit ----------------------------------------------------------------------------------------------

    async def _flush_audit(self, force: bool = False) -> None:
        """One `ingest.batch` (and `quarantine`) entry per `audit_every_s`, not per value: the log stays small."""
        if self._audit is None or (self._tally.records == 0 and not self._tally.quarantined):
            return
        if not force and time.monotonic() < self._audit_due:
            return
        tally, self._tally = self._tally, _AuditTally()
        self._audit_due = time.monotonic() + self._audit_every_s
        entries = tally.entries(self.config.name, self.config.endpoint)
        # Shielded: a stop arriving mid-append must not leave an entry half-reported; run() waits for it.
        task = asyncio.ensure_future(asyncio.to_thread(self._audit.append_many, entries))
        self._audit_tasks.add(task)
        await asyncio.shield(self._audit_settled())

    async def _audit_settled(self) -> None:
        """Wait for every audit append in flight; a failed one is logged, never raised into ingest."""
        for task in list(self._audit_tasks):
            try:
                await task
            except Exception as exc:  # the audit log failing must be loud, but must not stop ingest
                if task in self._audit_tasks:
                    log.error("opcua_audit_append_failed", source=self.config.name, error=repr(exc))
            self._audit_tasks.discard(task)


def client_identity(cfg: OpcuaSourceConfig, pki_dir: Path) -> Identity | None:
    """The source's client certificate: the configured one, else `<pki_dir>/opcua-<name>` (generated on first use);
    None under security_policy None. What the agent and `edge-agent opcua browse` both present to the server."""
    if cfg.security_policy == "None":
        return None
    if cfg.client_cert is not None or cfg.client_key is not None:
        if cfg.client_cert is None or cfg.client_key is None:
            raise OpcuaSecurityError(f"source {cfg.name}: client_cert and client_key must be set together")
        identity = load_identity(cfg.client_cert, cfg.client_key)
    else:
        identity = ensure_certificate(pki_dir, f"opcua-{cfg.name}", default_application_uri(cfg.name))
    log.info(
        "opcua_client_certificate",
        source=cfg.name,
        path=str(identity.cert_path),
        generated=identity.generated,
        sha256=identity.thumbprint_sha256,
        application_uri=identity.application_uri,
    )
    return identity
