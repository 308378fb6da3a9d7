"""Outbox publisher component: everything the agent publishes goes store.outbox_put(...) → here → the broker.

Rows are published in id order over one connection (MQTT keeps QoS 1 order per connection, and paho resends
unacknowledged messages in order after a reconnect) and deleted only after their PUBACK. A row published but not
yet deleted when the process dies is published again after the restart: at least once, never lost. Consumers of
reports deduplicate by the report id in the payload / the correlation data.

Waking: `wake()` (thread-safe) is the notify hook for in-process producers, called right after `outbox_put`, so a
report goes out at once. A poll every OUTBOX_POLL_S also catches rows written without the hook (another process,
e.g. the CLI, or a caller that forgot) at the cost of one primary-key range query per interval.
"""

from __future__ import annotations

import asyncio
import threading

import structlog
from prometheus_client import Counter, Gauge

from connectors.mqtt import MqttClient, MqttError, backoff_delay
from edge_agent.config.mqtt import MqttConfig
from edge_agent.store import Store
from edge_agent.types import OutboxMessage

log = structlog.get_logger(component="outbox")

# Rows read and put in flight per round: enough to pipeline a burst of reports, and under paho's in-flight cap.
OUTBOX_WINDOW = 50
# Fallback poll for rows added without `wake()`: a second of latency, one indexed query per second.
OUTBOX_POLL_S = 1.0

PUBLISHED = Counter("edge_agent_outbox_published_total", "Outbox messages acknowledged by the broker and deleted")
PUBLISH_FAILURES = Counter("edge_agent_outbox_publish_failures_total", "Outbox publish rounds that failed (retried)")
PENDING = Gauge("edge_agent_outbox_pending", "Outbox rows read in the last round and not yet acknowledged")


def publish_kwargs(message: OutboxMessage) -> dict[str, object]:
    """MQTT 5 properties stored with the row (`correlation_data` as hex, `content_type`, `response_topic`)."""
    props = message.properties
    return {
        "correlation_data": bytes.fromhex(props["correlation_data"]) if "correlation_data" in props else None,
        "content_type": props.get("content_type"),
        "response_topic": props.get("response_topic"),
    }


class OutboxPublisher:
    """Component: publishes `Store.outbox_pending()` in order and `outbox_ack`s each row after its PUBACK."""

    name = "outbox"

    def __init__(
        self, config: MqttConfig, store: Store, client_id: str | None = None, poll_s: float = OUTBOX_POLL_S
    ) -> None:
        self._config = config
        self._store = store
        # Its own session: the ingest session's client id must stay exclusive to the ingest.
        self._client_id = client_id or f"{config.client_id}-outbox"
        self._poll_s = poll_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._wakeup = asyncio.Event()

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
            rows = await asyncio.to_thread(self._store.outbox_pending, OUTBOX_WINDOW)
            PENDING.set(len(rows))
            if not rows:
                try:
                    async with asyncio.timeout(self._poll_s):  # not wait_for: it can swallow a cancel on 3.11
                        await self._wakeup.wait()
                except TimeoutError:
                    pass
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

    async def _publish_round(self, client: MqttClient, rows: list[OutboxMessage]) -> None:
        # Tasks start in creation order, so paho queues the PUBLISH packets in row order; they then share the wire.
        publishes = [
            asyncio.create_task(
                client.publish(row.topic, row.payload, qos=row.qos, retain=row.retain, **publish_kwargs(row)),
                name=f"outbox:publish:{row.id}",
            )
            for row in rows
        ]
        try:
            for row, publish in zip(rows, publishes):
                await publish
                await asyncio.to_thread(self._store.outbox_ack, row.id)
                PUBLISHED.inc()
                log.debug("outbox_published", id=row.id, topic=row.topic)
        finally:
            for publish in publishes:
                publish.cancel()
            # Collect what the cancelled or failed tasks ended with, so none is reported as "never retrieved".
            await asyncio.gather(*publishes, return_exceptions=True)


__all__ = ["OutboxPublisher", "publish_kwargs"]
