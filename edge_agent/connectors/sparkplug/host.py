"""The Sparkplug B host application component: its own MQTT session, births read, values stored, then acked.

Tasks (named, in one TaskGroup):
    links    on every connection: the Primary Host's STATE birth (when `primary_host_id` is set); readiness;
    intake   takes queued messages, runs them through `HostState`, starts one commit per group of outcomes;
    timer    gives up on seq gaps whose reorder timeout has passed (`HostState.tick`);
    ack      awaits the commits in order, acks each group's messages after its commit, then notes its audit window;
    rebirth  publishes NCMD `Node Control/Rebirth` requests (QoS 0, not retained: TCK payloads-ncmd-qos/-retain);
    audit    one `ingest.batch` and one `quarantine` entry per window, plus the births, gaps and rebirths it saw.

Session (Sparkplug 3.0 §7.5, TCK message-flow-phid-sparkplug-clean-session-50/-311): Clean Start true, Session
Expiry 0, its own client id, never the ingest's persistent session. Subscriptions: the Sparkplug-aware broker's
retained births (`$sparkplug/certificates/...`) first, so they are read before any node is asked for a rebirth, then
`spBv1.0/#` or the configured groups, then its own STATE topic (TCK host-topic-phid-birth-sub-required).

Primary Host (TCK host-topic-phid-*): the Will is `{"online": false, "timestamp": T}` on `spBv1.0/STATE/<id>`, QoS 1,
retained, T the time of that CONNECT; after each CONNACK the birth `{"online": true, "timestamp": T}` (same T),
QoS 1, retained; on a clean stop the death with the time of the stop is published before DISCONNECT; a delivered
STATE of its own id saying offline is answered with the birth again (TCK message-flow-hid-sparkplug-state-message-
delivered).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any, TypeVar

import structlog
from prometheus_client import Counter

from edge_agent.audit import AuditSink
from edge_agent.base.canonical import canonical_json
from edge_agent.base.types import Record, utcnow
from edge_agent.base.values import PlausibleTimes
from edge_agent.config.mqtt import MqttConfig
from edge_agent.config.sparkplug import SparkplugConfig
from edge_agent.connectors.audit_window import append_window
from edge_agent.connectors.mqtt import MqttClient, MqttError, MqttMessage
from edge_agent.connectors.mqtt.client import WillMessage
from edge_agent.connectors.quarantine import QuarantineTally
from edge_agent.connectors.sparkplug.host_state import HostState, Inbound, Outcome, Refusal
from edge_agent.connectors.sparkplug.payload import rebirth_request
from edge_agent.connectors.sparkplug.reasons import SparkplugReason
from edge_agent.connectors.sparkplug.topics import ncmd_topic, state_topic, subscriptions
from edge_agent.connectors.store_retry import until_stored
from edge_agent.connectors.unsettled import Unsettled
from edge_agent.store import RecordWriter, Store

T = TypeVar("T")

log = structlog.get_logger(component="sparkplug")

# Messages per commit group: one NDATA of 100 metrics is 100 records, so 50 messages fill the store's 5000-row
# batches without holding the acks of a slow trickle for long.
INTAKE_BATCH = 50
# Audit windows, as the MQTT ingest's: an auditor ties every record to an entry at ~1 entry a minute.
AUDIT_EVERY_RECORDS = 10_000
AUDIT_EVERY_S = 60.0
STOP_DRAIN_S = 5.0
# The reorder timer's resolution: a gap is given up on at most this late (against a timeout of ~seconds).
TICK_S = 0.05
# The STATE death on a clean stop: a tiny QoS 1 publish; past this the stop goes on (the Will covers it).
DEATH_TIMEOUT_S = 2.0

STORED = Counter("edge_agent_sparkplug_records_stored_total", "Sparkplug records newly committed to the store")
QUARANTINED = Counter(
    "edge_agent_sparkplug_quarantined_total", "Sparkplug messages refused into quarantine", ["reason"]
)
REBIRTHS = Counter("edge_agent_sparkplug_rebirths_requested_total", "NCMD Node Control/Rebirth requests sent")
REBIRTHS_SUPPRESSED = Counter(
    "edge_agent_sparkplug_rebirths_suppressed_total", "Rebirth requests held back by rebirth_min_interval_s"
)
AUDIT_FAILURES = Counter("edge_agent_sparkplug_audit_failures_total", "Audit entries the host could not append")


class SparkplugError(MqttError):
    """The host stopped on a failure it cannot work around (a store commit failed)."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class _Group:
    outcome: Outcome
    commit: asyncio.Task[int] = field(init=False)


@dataclass
class _Window:
    records: int = 0
    stored: int = 0
    first_key: str | None = None
    last_key: str | None = None
    payloads: Any = field(default_factory=hashlib.sha256)
    quarantined: QuarantineTally = field(default_factory=QuarantineTally)
    extra: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)

    def add(self, outcome: Outcome, stored: int) -> None:
        if outcome.records:
            self.first_key = self.first_key or outcome.records[0].idempotency_key
            self.last_key = outcome.records[-1].idempotency_key
        for record in outcome.records:
            self.payloads.update(record.idempotency_key.encode())
        self.records += len(outcome.records)
        self.stored += stored
        for refusal in outcome.refused:
            self.quarantined.add(refusal.topic, refusal.reason.value, refusal.detail, refusal.raw)
        self.extra.extend(outcome.audit)

    def entries(self, source: str) -> list[tuple[str, str, dict[str, Any]]]:
        entries = list(self.extra)
        if self.records:
            batch = {
                "source": source,
                "count": self.records,
                "stored": self.stored,
                "duplicates": self.records - self.stored,
                "first_key": self.first_key,
                "last_key": self.last_key,
                # Over the records' idempotency keys: one message holds many records, so its bytes are no key.
                "keys_sha256": self.payloads.hexdigest(),
            }
            entries.append(("ingest.batch", source, batch))
        if self.quarantined:
            entries.append(("quarantine", source, self.quarantined.entry(source)))
        return entries


class SparkplugHost:
    """Component (edge_agent.daemon.component): a Sparkplug B 3.0 host application storing what its nodes send."""

    def __init__(
        self,
        mqtt: MqttConfig,
        config: SparkplugConfig,
        store: Store,
        writer: RecordWriter,
        audit: AuditSink | None = None,
        *,
        source: str = "sparkplug",
        clock: Callable[[], float] = time.monotonic,
        audit_every_s: float = AUDIT_EVERY_S,
    ) -> None:
        self.name = f"{source}-host"
        self._mqtt = mqtt
        self._config = config
        self._store = store
        self._writer = writer
        self._audit = audit
        self._source = source
        self._clock = clock
        self._audit_every_s = audit_every_s
        self._client_id = config.client_id or f"{mqtt.client_id}-sparkplug"
        self._times = PlausibleTimes(time_min=mqtt.time_min, time_max_future=timedelta(seconds=mqtt.time_max_future_s))
        self._state_topic = state_topic(config.primary_host_id) if config.primary_host_id else None
        self._state_ts = 0
        self._window = _Window()
        self._acking: _Group | None = None
        self._unsettled = Unsettled(mqtt.queue_max, mqtt.receive_queue_bytes)
        self._rebirths: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._rebirth_birth = asyncio.Event()  # set once STATE birth is out on this connection (or no primary role)
        self._state_wanted = asyncio.Event()
        self.state: HostState | None = None  # the live state, for tests and diagnostics

    # --- life cycle ------------------------------------------------------------------------------------------

    def _will(self) -> WillMessage:
        """The STATE death for the next CONNECT; its timestamp is the one the birth after it repeats."""
        assert self._state_topic is not None
        self._state_ts = now_ms()
        payload = json.dumps({"online": False, "timestamp": self._state_ts}).encode()
        return WillMessage(self._state_topic, payload, qos=1, retain=True)

    async def run(self, ready: asyncio.Event) -> None:
        self._acking = None
        self._unsettled.clear()
        self.state = state = HostState(self._config, self._times, source=self._source)
        groups: asyncio.Queue[_Group] = asyncio.Queue()
        client = MqttClient(
            self._mqtt,
            self._client_id,
            clean_start=True,
            will=self._will if self._state_topic is not None else None,
        )
        async with client:
            for topic_filter in subscriptions(self._config.group_ids):
                await client.subscribe(topic_filter, qos=1)
            if self._state_topic is not None and self._config.group_ids:
                await client.subscribe(self._state_topic, qos=1)
            log.info("sparkplug_host_started", groups=self._config.group_ids or "all", primary=self._state_topic)
            try:
                async with asyncio.TaskGroup() as tasks:
                    tasks.create_task(self._links(client, ready), name=f"{self.name}:links")
                    tasks.create_task(self._intake(client, state, groups), name=f"{self.name}:intake")
                    tasks.create_task(self._timer(state, groups), name=f"{self.name}:timer")
                    tasks.create_task(self._acknowledge(groups), name=f"{self.name}:ack")
                    tasks.create_task(self._publish_rebirths(client), name=f"{self.name}:rebirth")
                    tasks.create_task(self._audit_timer(), name=f"{self.name}:audit")
            except* MqttError as failed:
                raise SparkplugError(f"{self.name} stopped: {failed.exceptions[0]}") from failed.exceptions[0]
            finally:
                await asyncio.shield(self._stop(client, groups))

    async def _stop(self, client: MqttClient, groups: asyncio.Queue[_Group]) -> None:
        if self._state_topic is not None and client.connected:
            # Before DISCONNECT, with the time of the stop (TCK host-topic-phid-death-payload-disconnect-clean).
            death = json.dumps({"online": False, "timestamp": now_ms()})
            try:
                await client.publish(self._state_topic, death, qos=1, retain=True, timeout=DEATH_TIMEOUT_S)
            except MqttError as exc:
                log.warning("state_death_not_published", error=str(exc))
        await self._drain(groups)

    async def _links(self, client: MqttClient, ready: asyncio.Event) -> None:
        """Per connection: the STATE birth first (TCK host-topic-phid-birth-message), then ready."""
        while True:
            await client.wait_connected()
            self._state_wanted.set()
            while client.connected:
                if self._state_wanted.is_set():
                    self._state_wanted.clear()
                    if self._state_topic is not None:
                        birth = json.dumps({"online": True, "timestamp": self._state_ts})
                        await client.publish(self._state_topic, birth, qos=1, retain=True)
                        log.info("state_birth_published", topic=self._state_topic, timestamp=self._state_ts)
                    self._rebirth_birth.set()
                    ready.set()
                wanted = asyncio.create_task(self._state_wanted.wait())
                gone = asyncio.create_task(client.wait_disconnected())
                try:
                    await asyncio.wait([wanted, gone], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    wanted.cancel()
                    gone.cancel()
            ready.clear()
            self._rebirth_birth.clear()

    # --- intake ----------------------------------------------------------------------------------------------

    async def _intake(self, client: MqttClient, state: HostState, groups: asyncio.Queue[_Group]) -> None:
        while True:
            await self._unsettled.room()  # backpressure: wait for acks to make room
            messages = await client.receive_batch(INTAKE_BATCH)
            self._unsettled.take(messages)
            out = Outcome()
            now = self._clock()
            for message in messages:
                if message.topic == self._state_topic:
                    self._own_state(message)
                    out.done.append(message)
                    continue
                try:
                    state.handle(Inbound(message.topic, message.payload, message.received_time, message), now, out)
                except Exception as exc:  # isolation barrier: a bug met by one message costs that message
                    log.exception("sparkplug_internal_error", topic=message.topic)
                    detail = f"{type(exc).__name__}: {exc}"
                    out.refused.append(Refusal(message.topic, message.payload, SparkplugReason.INTERNAL_ERROR, detail))
                    if message not in out.done:
                        out.done.append(message)
            self._submit(out, groups)
            # receive_batch does not suspend while messages are queued: without this the writer's task could not
            # start this group's commit (in its thread) until the queue ran dry, and decoding and committing would
            # take turns instead of overlapping.
            await asyncio.sleep(0)

    def _own_state(self, message: MqttMessage) -> None:
        try:
            online = json.loads(message.payload).get("online")
        except (ValueError, AttributeError):
            return
        if online is False:  # another client (or a stale Will) says we are offline: say otherwise, same timestamp
            self._state_wanted.set()

    async def _timer(self, state: HostState, groups: asyncio.Queue[_Group]) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            deadline = state.next_deadline()
            if deadline is not None and self._clock() >= deadline:
                out = Outcome()
                state.tick(self._clock(), out)
                self._submit(out, groups)

    def _submit(self, out: Outcome, groups: asyncio.Queue[_Group]) -> None:
        for key in out.rebirths:
            self._rebirths.put_nowait(key)
        REBIRTHS_SUPPRESSED.inc(out.suppressed_rebirths)
        group = _Group(out)
        group.commit = asyncio.create_task(self._commit(group), name=f"{self.name}:commit")
        groups.put_nowait(group)

    async def _commit(self, group: _Group) -> int:
        out = group.outcome
        stored = 0
        if out.records:
            try:
                inserted = await self._until_stored(partial(self._writer.write, out.records))
            except Exception as exc:  # not a full store: find the record(s) at fault and keep the rest
                log.warning("batch_commit_failed", error=str(exc), records=len(out.records), retry="one_by_one")
                stored = await self._commit_one_by_one(out)
            else:
                stored = inserted.count
                if inserted.reused:
                    reused = set(inserted.reused)
                    out.refused.extend(self._reused(out.records[i]) for i in sorted(reused))
                    out.records = [r for i, r in enumerate(out.records) if i not in reused]
        for refusal in out.refused:
            await self._until_stored(partial(asyncio.to_thread, self._quarantine_sync, refusal))
        return stored

    async def _commit_one_by_one(self, out: Outcome) -> int:
        stored, kept = 0, []
        for record in out.records:
            try:
                inserted = await self._until_stored(partial(asyncio.to_thread, self._store.insert_records, [record]))
            except Exception as exc:
                log.exception("record_commit_failed", key=record.key)
                raw = canonical_json(record.model_dump(mode="json"))
                detail = f"{type(exc).__name__}: {exc}"
                out.refused.append(Refusal(f"sparkplug/{record.key}", raw, SparkplugReason.INTERNAL_ERROR, detail))
            else:
                stored += inserted.count
                if inserted.reused:
                    out.refused.append(self._reused(record))
                else:
                    kept.append(record)
        out.records = kept
        return stored

    def _reused(self, record: Record) -> Refusal:
        """A key the store holds with another value: a node that sent two values of one metric with one timestamp
        in one message (or reused seq and bdSeq). Evidence: the record as canonical JSON."""
        detail = f"a record with this metric's key is stored with another value ({record.key})"
        raw = canonical_json(record.model_dump(mode="json"))
        return Refusal(f"sparkplug/{record.key}", raw, SparkplugReason.DUPLICATE_ID, detail)

    async def _until_stored(self, write: Callable[[], Awaitable[T]]) -> T:
        """Run a store write, waiting out a full store (nothing acked meanwhile)."""
        return await until_stored(write, log)

    def _quarantine_sync(self, refusal: Refusal) -> None:
        raw = refusal.raw[: self._mqtt.max_payload_bytes]
        self._store.quarantine(self._source, refusal.topic, raw, refusal.reason.value, utcnow())
        QUARANTINED.labels(reason=refusal.reason.value).inc()
        log.warning("quarantined", topic=refusal.topic, reason=refusal.reason.value, detail=refusal.detail)

    # --- acknowledgement -------------------------------------------------------------------------------------

    async def _acknowledge(self, groups: asyncio.Queue[_Group]) -> None:
        while True:
            self._acking = await groups.get()
            await self._settle(self._acking)
            self._acking = None
            if self._window.records >= AUDIT_EVERY_RECORDS:
                await self._flush_audit()

    async def _settle(self, group: _Group) -> None:
        try:
            # Shielded: a stop cancels the ack task, not a commit half done (records written, quarantine not);
            # _drain waits for it.
            stored = await asyncio.shield(group.commit)
        except Exception as exc:  # messages stay unacked
            raise SparkplugError(f"commit of {len(group.outcome.records)} record(s) failed: {exc}") from exc
        for message in group.outcome.done:
            if isinstance(message, MqttMessage):
                await message.ack()
        self._unsettled.settle(group.outcome.done)
        STORED.inc(stored)
        self._window.add(group.outcome, stored)

    async def _drain(self, groups: asyncio.Queue[_Group]) -> None:
        pending = [self._acking] if self._acking is not None else []
        while not groups.empty():
            pending.append(groups.get_nowait())
        self._acking = None
        try:
            async with asyncio.timeout(STOP_DRAIN_S):
                for group in pending:
                    await self._settle(group)
        except (TimeoutError, SparkplugError) as exc:
            log.warning("stop_drain_incomplete", error=str(exc), groups=len(pending))
        for group in pending:
            group.commit.cancel()
        await self._flush_audit()

    # --- rebirth requests ------------------------------------------------------------------------------------

    async def _publish_rebirths(self, client: MqttClient) -> None:
        while True:
            group, node = await self._rebirths.get()
            await self._rebirth_birth.wait()  # our STATE birth goes out before any command
            try:
                await client.publish(ncmd_topic(group, node), rebirth_request(now_ms()), qos=0, retain=False)
            except MqttError as exc:  # QoS 0 while disconnected: the next gap or DATA asks again
                log.warning("rebirth_not_sent", group=group, node=node, error=str(exc))
                continue
            REBIRTHS.inc()
            log.info("rebirth_requested", group=group, node=node)

    # --- audit -----------------------------------------------------------------------------------------------

    async def _audit_timer(self) -> None:
        while True:
            await asyncio.sleep(self._audit_every_s)
            await self._flush_audit()

    async def _flush_audit(self) -> None:
        window, self._window = self._window, _Window()
        await append_window(self._audit, window.entries(self._source), AUDIT_FAILURES)


__all__ = ["SparkplugError", "SparkplugHost"]
