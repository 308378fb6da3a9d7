"""MQTT ingest component: subscribe to the configured routes, parse, commit, and only then acknowledge.

Pipeline (four named tasks):
    intake  takes the messages already queued (up to INTAKE_BATCH), parses them, starts one commit per group:
            good records → `RecordWriter.write` (returns once durable), bad ones → a quarantine row each;
    ack     awaits the commits in the order they were started and acks each group's messages after its commit,
            so PUBACKs leave in receive order and never before the row exists;
    audit   writes one `ingest.batch` entry per AUDIT_EVERY_RECORDS records or AUDIT_EVERY_S seconds, and one
            `quarantine` entry per window listing what was refused, never one audit entry per message;
    ready   keeps the component's ready event equal to "broker connected and no commit waiting for store space".

A crash anywhere before an ack means the broker redelivers the message (persistent session) and the store's
idempotency key turns the redelivery into a no-op, so every message is stored exactly once.

Data never stops the component (each rule has a test in tests/test_ingest_hostile.py):
- any exception while parsing one message, other than the parser's own ParseError, quarantines that message as
  `internal_error` (detail: exception type and message);
- a batch commit that fails for any reason but a full store is redone record by record, and only the records that
  fail alone are quarantined (`internal_error`);
- a full store (`StoreFullError`) is neither a crash nor a refusal: the commit is retried with jittered backoff until
  it succeeds, its messages stay unacked meanwhile (the broker keeps them; Receive Maximum and queue_max push back),
  and the component reports itself not ready. Quarantine writes are retried the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import structlog
from prometheus_client import Counter

from edge_agent.audit import AuditSink
from edge_agent.base.logging import configure_logging
from edge_agent.base.types import Record
from edge_agent.config import AgentConfig, load_config
from edge_agent.config.mqtt import MqttConfig
from edge_agent.connectors.audit_window import append_window
from edge_agent.connectors.mqtt import MqttClient, MqttError, MqttMessage
from edge_agent.connectors.mqtt.parsers import InputLimits, ParseError, QuarantineReason
from edge_agent.connectors.mqtt.routes import RouteTable
from edge_agent.connectors.quarantine import QuarantineTally
from edge_agent.connectors.store_retry import until_stored
from edge_agent.connectors.unsettled import Unsettled
from edge_agent.store import RecordWriter, Store

T = TypeVar("T")

log = structlog.get_logger(component="mqtt")

# Messages per commit group: the store's default batch size, so one group fills one fsync'd batch.
INTAKE_BATCH = 500
# A batch with more payload than this is parsed in a thread: JSON parsing costs ~70 µs per KiB here, and a batch of
# multi-MiB messages parsed on the event loop held /metrics and readiness for over 5 s (bench.hostile's memory flood).
PARSE_ON_LOOP_MAX_BYTES = 64 * 1024
# Audit windows: an auditor can tie every record to an entry, at ~1 entry a minute under steady load.
AUDIT_EVERY_RECORDS = 10_000
AUDIT_EVERY_S = 60.0
# On stop, commits already under way get this long to finish so their messages are acked now, not redelivered.
STOP_DRAIN_S = 5.0

STORED = Counter("edge_agent_mqtt_records_stored_total", "MQTT records newly committed to the store")
DUPLICATES = Counter("edge_agent_mqtt_duplicates_total", "MQTT records already stored (redeliveries, repeats)")
QUARANTINED = Counter("edge_agent_mqtt_quarantined_total", "MQTT messages refused into quarantine", ["reason"])
AUDIT_FAILURES = Counter("edge_agent_mqtt_audit_failures_total", "Audit entries the ingest could not append")
STORE_FULL = Counter(
    "edge_agent_mqtt_store_full_total", "MQTT store writes refused by a full store (each is retried until it succeeds)"
)


class IngestError(MqttError):
    """The ingest pipeline stopped on a failure it cannot work around (store commit failed)."""


def _internal_error(exc: Exception) -> ParseError:
    return ParseError(QuarantineReason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")


def split_reused_ids(
    parsed: list[tuple[MqttMessage, Record]], reused: Sequence[int]
) -> tuple[list[tuple[MqttMessage, Record]], list[tuple[MqttMessage, ParseError]]]:
    """Split parsed messages into those stored as they are (new, or a redelivery: the same bytes) and those at the
    positions `reused` (`Inserted.reused`): an id the store holds with other content, refused with the reason
    instead of dropped without a trace as if it were a redelivery."""
    refused_at = set(reused)
    kept = [item for i, item in enumerate(parsed) if i not in refused_at]
    refused = []
    for i in sorted(refused_at):
        message, record = parsed[i]
        detail = f"a record with this message's id is stored with other content ({record.kind} {record.key})"
        refused.append((message, ParseError(QuarantineReason.DUPLICATE_ID, detail)))
    return kept, refused


@dataclass
class _Group:
    """One commit: the messages taken together, each parsed into a record or refused, and the commit's task.

    The commit may move a message from `parsed` to `refused` (its record alone failed to commit); the ack task reads
    both only once the commit is done.
    """

    messages: list[MqttMessage]
    parsed: list[tuple[MqttMessage, Record]]
    refused: list[tuple[MqttMessage, ParseError]]
    commit: asyncio.Task[int] = field(init=False)

    @property
    def records(self) -> list[Record]:
        return [record for _, record in self.parsed]


@dataclass
class _AuditWindow:
    records: int = 0
    stored: int = 0
    first_key: str | None = None
    last_key: str | None = None
    first_received: str | None = None
    last_received: str | None = None
    payloads: Any = field(default_factory=hashlib.sha256)
    quarantined: QuarantineTally = field(default_factory=QuarantineTally)

    def add(self, group: _Group, stored: int) -> None:
        records = group.records
        if records:
            if self.first_key is None:
                self.first_key = records[0].idempotency_key
                self.first_received = records[0].received_time.isoformat()
            self.last_key = records[-1].idempotency_key
            self.last_received = records[-1].received_time.isoformat()
        for record in records:
            # Length-prefixed, so the digest pins the exact sequence of payloads, not just their concatenation.
            self.payloads.update(len(record.raw).to_bytes(8, "big"))
            self.payloads.update(record.raw)
        self.records += len(records)
        self.stored += stored
        for message, error in group.refused:
            self.quarantined.add(message.topic, error.reason.value, error.detail, message.payload)

    def entries(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        entries: list[tuple[str, str, dict[str, Any]]] = []
        if self.records:
            entries.append(
                (
                    "ingest.batch",
                    source,
                    {
                        "source": source,
                        "count": self.records,
                        "stored": self.stored,
                        "duplicates": self.records - self.stored,
                        "first_key": self.first_key,
                        "last_key": self.last_key,
                        "first_received": self.first_received,
                        "last_received": self.last_received,
                        "payloads_sha256": self.payloads.hexdigest(),
                    },
                )
            )
        if self.quarantined:
            entries.append(("quarantine", source, self.quarantined.entry(source)))
        return entries


def _parse(group: _Group, routes: RouteTable) -> None:
    """The group's messages into records, or refusals with their reasons."""
    for message in group.messages:
        try:
            group.parsed.append((message, routes.parse(message.topic, message.payload, message.received_time)))
        except ParseError as error:
            group.refused.append((message, error))
        except Exception as exc:  # isolation barrier: a bug met by one message costs that message, not ingest
            log.exception("parse_internal_error", topic=message.topic)
            group.refused.append((message, _internal_error(exc)))


class MqttIngest:
    """Component (see edge_agent.daemon.component): MQTT routes → records in the store, acked after commit."""

    def __init__(
        self,
        config: MqttConfig,
        store: Store,
        writer: RecordWriter,
        audit: AuditSink | None = None,
        *,
        source: str = "mqtt",
        client_id: str | None = None,
        audit_every_records: int = AUDIT_EVERY_RECORDS,
        audit_every_s: float = AUDIT_EVERY_S,
        stop_drain_s: float = STOP_DRAIN_S,
    ) -> None:
        self.name = f"{source}-ingest"
        self._config = config
        self._store = store
        self._writer = writer
        self._audit = audit
        self._source = source
        self._client_id = client_id or config.client_id
        self._audit_every_records = audit_every_records
        self._audit_every_s = audit_every_s
        self._stop_drain_s = stop_drain_s
        self._window = _AuditWindow()
        self._acking: _Group | None = None
        # Counted in messages, not groups, so a run of small groups can never fill the pipeline before the writer has
        # a full batch (it would then wait out its batch delay on every round).
        self._unsettled = Unsettled(config.queue_max, config.receive_queue_bytes)
        # Store writes currently waiting for space; the component is not ready while any does.
        self._waiting_for_space = 0
        self._readiness_changed = asyncio.Event()

    async def run(self, ready: asyncio.Event) -> None:
        # The supervisor may call run() again after a crash: nothing of the last run's pipeline is still in flight.
        self._acking, self._waiting_for_space = None, 0
        self._unsettled.clear()
        routes = RouteTable.from_config(
            self._config.routes,
            self._config.max_payload_bytes,
            source=self._source,
            limits=InputLimits.from_config(self._config),
        )
        groups: asyncio.Queue[_Group] = asyncio.Queue()  # bounded by _unsettled, see __init__
        async with MqttClient(self._config, self._client_id) as client:
            for topic_filter, qos in routes.subscriptions().items():
                await client.subscribe(topic_filter, qos)
            log.info("ingest_started", source=self._source, routes=list(routes.subscriptions()))
            try:
                async with asyncio.TaskGroup() as tasks:
                    tasks.create_task(self._mirror_ready(client, ready), name=f"{self.name}:ready")
                    tasks.create_task(self._intake(client, routes, groups), name=f"{self.name}:intake")
                    tasks.create_task(self._acknowledge(groups), name=f"{self.name}:ack")
                    tasks.create_task(self._audit_timer(), name=f"{self.name}:audit")
            except* MqttError as failed:
                raise IngestError(f"{self.name} stopped: {failed.exceptions[0]}") from failed.exceptions[0]
            finally:
                await asyncio.shield(self._drain(groups))

    # --- intake ----------------------------------------------------------------------------------------------

    async def _intake(self, client: MqttClient, routes: RouteTable, groups: asyncio.Queue[_Group]) -> None:
        while True:
            await self._unsettled.room()  # backpressure: wait for acks to make room
            messages = await client.receive_batch(INTAKE_BATCH)
            self._unsettled.take(messages)
            group = _Group(messages, [], [])
            if sum(len(m.payload) for m in messages) > PARSE_ON_LOOP_MAX_BYTES:
                await asyncio.to_thread(_parse, group, routes)
            else:
                _parse(group, routes)
            group.commit = asyncio.create_task(self._commit(group), name=f"{self.name}:commit")
            groups.put_nowait(group)

    async def _commit(self, group: _Group) -> int:
        stored = 0
        if group.parsed:
            try:
                inserted = await self._until_stored(partial(self._writer.write, group.records))
            except Exception as exc:  # not a full store: find the record(s) at fault and keep the rest
                log.warning("batch_commit_failed", error=str(exc), records=len(group.parsed), retry="one_by_one")
                stored = await self._commit_one_by_one(group)
            else:
                stored = inserted.count
                group.parsed, conflicts = split_reused_ids(group.parsed, inserted.reused)
                group.refused.extend(conflicts)
        for message, error in group.refused:  # one row at a time, so a retry never writes a row twice
            await self._until_stored(partial(asyncio.to_thread, self._quarantine_sync, message, error))
        return stored

    async def _commit_one_by_one(self, group: _Group) -> int:
        stored, kept = 0, []
        for message, record in group.parsed:
            try:
                inserted = await self._until_stored(partial(asyncio.to_thread, self._store.insert_records, [record]))
            except Exception as exc:
                log.exception("record_commit_failed", topic=message.topic, key=record.idempotency_key)
                group.refused.append((message, _internal_error(exc)))
            else:
                stored += inserted.count
                one, conflicts = split_reused_ids([(message, record)], inserted.reused)
                kept.extend(one)
                group.refused.extend(conflicts)
        group.parsed = kept
        return stored

    async def _until_stored(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run a store write, waiting out a full store (nothing acked meanwhile; not ready while any write waits)."""
        return await until_stored(write, log, on_full=STORE_FULL.inc, waiting=self._waiting_for_space_changed)

    def _waiting_for_space_changed(self, waiting: bool) -> None:
        self._waiting_for_space += 1 if waiting else -1
        self._readiness_changed.set()

    def _quarantine_sync(self, message: MqttMessage, error: ParseError) -> None:
        raw = message.payload
        if error.reason is QuarantineReason.PAYLOAD_TOO_LARGE:
            raw = raw[: self._config.max_payload_bytes]  # keep evidence, not an unbounded blob
        self._store.quarantine(self._source, message.topic, raw, error.reason.value, message.received_time)
        QUARANTINED.labels(reason=error.reason.value).inc()
        log.warning("quarantined", topic=message.topic, reason=error.reason.value, detail=error.detail)

    # --- readiness -------------------------------------------------------------------------------------------

    async def _mirror_ready(self, client: MqttClient, ready: asyncio.Event) -> None:
        """Keep `ready` equal to "broker connected and no store write waiting for space" (/readyz: degraded)."""
        while True:
            self._readiness_changed.clear()
            connected = client.connected
            if connected and not self._waiting_for_space:
                ready.set()
            else:
                ready.clear()
            link = asyncio.create_task(client.wait_disconnected() if connected else client.wait_connected())
            changed = asyncio.create_task(self._readiness_changed.wait())
            try:
                await asyncio.wait([link, changed], return_when=asyncio.FIRST_COMPLETED)
            finally:
                link.cancel()
                changed.cancel()

    # --- acknowledgement -------------------------------------------------------------------------------------

    async def _acknowledge(self, groups: asyncio.Queue[_Group]) -> None:
        while True:
            self._acking = await groups.get()
            await self._settle(self._acking)
            self._acking = None
            if self._window.records >= self._audit_every_records:
                await self._flush_audit()

    async def _settle(self, group: _Group) -> None:
        try:
            stored = await asyncio.shield(group.commit)  # a stop cancels the ack task, not the commit: _drain waits
        except Exception as exc:  # messages stay unacked: the broker redelivers them after the restart
            raise IngestError(f"commit of {len(group.messages)} message(s) failed: {exc}") from exc
        for message in group.messages:
            await message.ack()
        self._unsettled.settle(group.messages)
        STORED.inc(stored)
        DUPLICATES.inc(len(group.records) - stored)
        self._window.add(group, stored)

    async def _drain(self, groups: asyncio.Queue[_Group]) -> None:
        """On stop: ack the groups whose commits finish within stop_drain_s, then write the last audit window."""
        pending = [self._acking] if self._acking is not None else []
        while not groups.empty():
            pending.append(groups.get_nowait())
        self._acking = None
        try:
            async with asyncio.timeout(self._stop_drain_s):
                for group in pending:
                    await self._settle(group)
        except (TimeoutError, IngestError) as exc:
            log.warning("stop_drain_incomplete", error=str(exc), groups=len(pending))
        for group in pending:  # a commit still waiting (for space, say) must not outlive the component
            group.commit.cancel()
        await self._flush_audit()

    # --- audit -----------------------------------------------------------------------------------------------

    async def _audit_timer(self) -> None:
        while True:
            await asyncio.sleep(self._audit_every_s)
            await self._flush_audit()

    async def _flush_audit(self) -> None:
        window, self._window = self._window, _AuditWindow()
        await append_window(self._audit, window.entries(self._source), AUDIT_FAILURES)


__all__ = ["IngestError", "MqttIngest"]


async def run_standalone(config: AgentConfig) -> None:
    """The ingest alone in a process, with its own store and batch writer, until SIGTERM/SIGINT.

    For tests that kill the agent with SIGKILL and for `bench.mqtt_ingest`; the daemon runs `MqttIngest` under its
    supervisor instead.
    """
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    with Store(config.paths.store_path) as store:
        writer = RecordWriter(
            store, max_rows=config.store.batch_max_rows, max_delay_s=config.store.batch_max_delay_ms / 1000
        )
        ingest = MqttIngest(config.mqtt, store, writer)
        writer_task = asyncio.create_task(writer.run(), name="store-writer")
        ingest_task = asyncio.create_task(ingest.run(asyncio.Event()), name=ingest.name)
        stopped = asyncio.create_task(stop.wait(), name="stop-signal")
        await asyncio.wait([ingest_task, stopped], return_when=asyncio.FIRST_COMPLETED)
        # Intake first, then the writer: the writer commits whatever the ingest handed it before it stopped.
        for task in (ingest_task, writer_task, stopped):
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m edge_agent.connectors.mqtt.ingest", description=run_standalone.__doc__
    )
    parser.add_argument("--config", required=True, type=Path)
    args = parser.parse_args(argv)
    config = load_config(args.config)
    configure_logging(config.logging.level, config.logging.format)
    asyncio.run(run_standalone(config))


if __name__ == "__main__":
    main()
