"""Outbox publisher component: everything the agent publishes goes store.outbox_put(...) → here → the broker.

Rows are published in id order over one connection (MQTT keeps QoS 1 order per connection, and paho resends
unacknowledged messages in order after a reconnect) and deleted only after their PUBACK. A row published but not
yet deleted when the process dies is published again after the restart: at least once, never lost. Consumers of
reports deduplicate by the report id in the payload / the correlation data.

A row the broker refuses (PUBACK reason code >= 0x80, e.g. 0x87 "Not authorized" from an ACL) or paho will not
send never blocks the rows behind it. Ordering rule: each refusal counts an attempt on that row alone, which then
waits out its own backoff (mqtt.reconnect_min_s doubling, capped at mqtt.reconnect_max_s) while later rows go on
being published, so a refused row can be overtaken; after `store.outbox_max_attempts` refusals it moves to
dead_letter with the last reason. A row no broker could ever accept (`publish_problem`: empty topic, wildcard, NUL,
control character, over 65,535 bytes; bad QoS; oversized payload) or whose packet is over the broker's Maximum
Packet Size (`MqttPacketTooLarge`) moves at once: retrying cannot help, and some of these would make the broker drop
the connection, stalling every row. Connection failures are not the row's fault:
the whole round is retried in order, and no attempt is counted.

Waking: `wake()` (thread-safe) is the notify hook for in-process producers, called right after `outbox_put`, so a
report goes out at once. A poll every OUTBOX_POLL_S also catches rows written without the hook (another process,
e.g. the CLI, or a caller that forgot) at the cost of one primary-key range query per interval.
"""

from __future__ import annotations

import asyncio
import threading
import unicodedata
from typing import TypedDict

import structlog
from prometheus_client import Counter, Gauge

from edge_agent.base.backoff import backoff_delay
from edge_agent.base.types import OutboxMessage
from edge_agent.config.core import StoreConfig
from edge_agent.config.mqtt import MqttConfig
from edge_agent.connectors.mqtt import MqttClient, MqttError, MqttPacketTooLarge, MqttPublishError
from edge_agent.store import Store

log = structlog.get_logger(component="outbox")

# Rows read and put in flight per round: enough to pipeline a burst of reports, and under paho's in-flight cap.
OUTBOX_WINDOW = 50
# Fallback poll for rows added without `wake()`: a second of latency, one indexed query per second.
OUTBOX_POLL_S = 1.0
# MQTT's limits: a topic is a UTF-8 string with a 16-bit length; a packet's remaining length is at most 256 MiB - 1.
MAX_TOPIC_BYTES = 65535
MAX_PAYLOAD_BYTES = 268435455

PUBLISHED = Counter("edge_agent_outbox_published_total", "Outbox messages acknowledged by the broker and deleted")
PUBLISH_FAILURES = Counter("edge_agent_outbox_publish_failures_total", "Outbox publish rounds that failed (retried)")
REFUSED = Counter("edge_agent_outbox_refused_total", "Outbox publishes refused: by the broker, paho or publish_problem")
DEAD_LETTERS = Counter("edge_agent_outbox_dead_letters_total", "Outbox rows moved to dead_letter")
PENDING = Gauge("edge_agent_outbox_pending", "Outbox rows read in the last round and not yet acknowledged")


def publish_problem(message: OutboxMessage) -> str | None:
    """Why no broker could ever accept `message` (None when one could): MQTT 5 section 4.7.3 and 1.5.4."""
    topic = message.topic
    if not topic:
        return "empty topic"
    if "+" in topic or "#" in topic:
        return f"topic {topic!r} has a wildcard (+ or #)"
    # MQTT forbids U+0000 and surrogates and discourages other control characters and noncharacters; Mosquitto 2.0
    # drops a client that sends any of them ("malformed packet"), and paho then resends it on every reconnect.
    if any(_unsendable(c) for c in topic):
        return f"topic {topic!r} has a control character, surrogate or noncharacter"
    size = len(topic.encode("utf-8", "surrogatepass"))
    if size > MAX_TOPIC_BYTES:
        return f"topic is {size} bytes, over MQTT's {MAX_TOPIC_BYTES}"
    if message.qos not in (0, 1, 2):
        return f"QoS {message.qos} is not 0, 1 or 2"
    if len(message.payload) > MAX_PAYLOAD_BYTES:
        return f"payload is {len(message.payload)} bytes, over MQTT's {MAX_PAYLOAD_BYTES}"
    return None


def _unsendable(char: str) -> bool:
    code = ord(char)
    return unicodedata.category(char) in ("Cc", "Cs") or 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


class PublishProperties(TypedDict):
    """The keyword arguments of `MqttClient.publish` an outbox row carries."""

    correlation_data: bytes | None
    content_type: str | None
    response_topic: str | None


def publish_kwargs(message: OutboxMessage) -> PublishProperties:
    """MQTT 5 properties stored with the row (`correlation_data` as hex, `content_type`, `response_topic`)."""
    props = message.properties
    return {
        "correlation_data": bytes.fromhex(props["correlation_data"]) if "correlation_data" in props else None,
        "content_type": props.get("content_type"),
        "response_topic": props.get("response_topic"),
    }


class OutboxPublisher:
    """Component: publishes `Store.outbox_pending()` in order and `outbox_ack`s each row after its PUBACK; a refused
    row is retried on its own and dead-lettered after `max_attempts` (see the module docstring)."""

    name = "outbox"

    def __init__(
        self,
        config: MqttConfig,
        store: Store,
        client_id: str | None = None,
        poll_s: float = OUTBOX_POLL_S,
        max_attempts: int = StoreConfig.model_fields["outbox_max_attempts"].default,
    ) -> None:
        self._config = config
        self._store = store
        # Its own session: the ingest session's client id must stay exclusive to the ingest.
        self._client_id = client_id or f"{config.client_id}-outbox"
        self._poll_s = poll_s
        self._max_attempts = max_attempts
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._wakeup = asyncio.Event()
        # Refused rows waiting out their backoff: row id → loop time of the next try. In memory only: a restart
        # retries them at once, and the attempts counted so far are in the store.
        self._retry_at: dict[int, float] = {}

    def wake(self) -> None:
        """A row was added: publish now instead of at the next poll. Safe from any thread."""
        loop = self._loop
        if loop is None:
            return  # not running yet; the first round reads every pending row anyway
        if threading.get_ident() == self._loop_thread:
            self._wakeup.set()
        else:
            loop.call_soon_threadsafe(self._wakeup.set)

    async def run(self, ready: asyncio.Event) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        async with MqttClient(self._config, self._client_id) as client:
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(client.mirror_ready(ready), name="outbox:ready")
                tasks.create_task(self._publish_loop(client), name="outbox:publish")

    async def _publish_loop(self, client: MqttClient) -> None:
        failures = 0
        while True:
            # Cleared before reading, so a wake() that lands during the round triggers the next one.
            self._wakeup.clear()
            rows = await self._due_rows()
            PENDING.set(len(rows))
            if not rows:
                await self._idle()
                continue
            await client.wait_connected()
            try:
                await self._publish_round(client, rows)
                failures = 0
            except MqttError as exc:
                PUBLISH_FAILURES.inc()
                delay = backoff_delay(failures, self._config.reconnect_min_s, self._config.reconnect_max_s)
                failures += 1
                log.error("outbox_publish_failed", error=str(exc), retry_in_s=round(delay, 2))
                await asyncio.sleep(delay)

    async def _due_rows(self) -> list[OutboxMessage]:
        """Up to OUTBOX_WINDOW pending rows in id order, skipping refused rows still waiting out their backoff."""
        assert self._loop is not None
        now = self._loop.time()
        # A backoff that has run out is over: the row is due again (or gone, and then must not keep `_idle` awake).
        self._retry_at = {row_id: at for row_id, at in self._retry_at.items() if at > now}
        due: list[OutboxMessage] = []
        after_id = 0
        while len(due) < OUTBOX_WINDOW:
            rows = await asyncio.to_thread(self._store.outbox_pending, OUTBOX_WINDOW, after_id)
            due += [row for row in rows if row.id not in self._retry_at]
            if len(rows) < OUTBOX_WINDOW:
                break
            after_id = rows[-1].id
        return due[:OUTBOX_WINDOW]

    async def _idle(self) -> None:
        """Wait for wake(), the poll interval, or the first refused row's next try, whichever comes first."""
        assert self._loop is not None
        timeout = self._poll_s
        if self._retry_at:
            timeout = max(0.0, min(timeout, min(self._retry_at.values()) - self._loop.time()))
        try:
            async with asyncio.timeout(timeout):  # not wait_for: it can swallow a cancel on 3.11
                await self._wakeup.wait()
        except TimeoutError:
            pass

    async def _publish_round(self, client: MqttClient, rows: list[OutboxMessage]) -> None:
        sendable = []
        for row in rows:
            if (problem := publish_problem(row)) is not None:
                await self._failed(row, problem, max_attempts=1)
            else:
                sendable.append(row)
        # Tasks start in creation order, so paho queues the PUBLISH packets in row order; they then share the wire.
        publishes = [
            asyncio.create_task(
                client.publish(row.topic, row.payload, qos=row.qos, retain=row.retain, **publish_kwargs(row)),
                name=f"outbox:publish:{row.id}",
            )
            for row in sendable
        ]
        try:
            for row, publish in zip(sendable, publishes, strict=True):
                try:
                    await publish
                except MqttPacketTooLarge as exc:  # no resend can fit: dead at once, the rows behind it go on
                    await self._failed(row, str(exc), max_attempts=1)
                    continue
                except MqttPublishError as exc:  # this row's own refusal; the rows behind it go on
                    await self._failed(row, str(exc), max_attempts=self._max_attempts)
                    continue
                await asyncio.to_thread(self._store.outbox_ack, row.id)
                self._retry_at.pop(row.id, None)
                PUBLISHED.inc()
                log.debug("outbox_published", id=row.id, topic=row.topic)
        finally:
            for publish in publishes:
                publish.cancel()
            # Collect what the cancelled or failed tasks ended with, so none is reported as "never retrieved".
            await asyncio.gather(*publishes, return_exceptions=True)

    async def _failed(self, row: OutboxMessage, reason: str, max_attempts: int) -> None:
        """Count a refusal of `row`: back it off, or at `max_attempts` it has moved to dead_letter."""
        assert self._loop is not None
        REFUSED.inc()
        attempts = await asyncio.to_thread(self._store.outbox_fail, row.id, reason, max_attempts)
        if attempts == 0 or attempts >= max_attempts:  # 0: the row left the outbox meanwhile
            self._retry_at.pop(row.id, None)
            if attempts:
                DEAD_LETTERS.inc()
                log.error("outbox_dead_letter", id=row.id, topic=row.topic, attempts=attempts, reason=reason)
            return
        delay = backoff_delay(attempts - 1, self._config.reconnect_min_s, self._config.reconnect_max_s)
        self._retry_at[row.id] = self._loop.time() + delay
        log.warning(
            "outbox_publish_refused",
            id=row.id,
            topic=row.topic,
            attempts=attempts,
            reason=reason,
            retry_in_s=round(delay, 2),
        )


__all__ = ["OutboxPublisher", "publish_kwargs", "publish_problem"]
