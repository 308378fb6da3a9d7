"""OutboxPublisher against a real Mosquitto and a real store: order, deletion only after PUBACK, restarts, wake-up."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from connectors.mqtt import MqttClient, MqttMessage
from connectors.outbox import OutboxPublisher
from edge_agent.config.mqtt import MqttConfig
from edge_agent.store import Store
from tests.fixtures.broker import Broker

pytestmark = pytest.mark.broker


def mqtt_config(broker: Broker, client_id: str = "agent") -> MqttConfig:
    # Fast reconnects: the tests stop and start the broker.
    return MqttConfig(host=broker.host, port=broker.port, client_id=client_id, reconnect_min_s=0.05, reconnect_max_s=0.5)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


@asynccontextmanager
async def running(publisher: OutboxPublisher) -> AsyncIterator[asyncio.Event]:
    ready = asyncio.Event()
    task = asyncio.create_task(publisher.run(ready))
    try:
        yield ready
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def receive(client: MqttClient, n: int, timeout: float = 10.0) -> list[MqttMessage]:
    out = []
    async with asyncio.timeout(timeout):
        while len(out) < n:
            message = await client.receive()
            await message.ack()
            out.append(message)
    return out


async def subscriber(broker: Broker) -> MqttClient:
    client = MqttClient(mqtt_config(broker, "consumer"))
    await client.__aenter__()
    await client.subscribe("edge/s1/#", timeout=5)
    return client


async def until_empty(store: Store, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while await asyncio.to_thread(store.outbox_pending):
            await asyncio.sleep(0.02)


class TestOutbox:
    async def test_publishes_rows_in_order_and_deletes_them(self, broker: Broker, store: Store) -> None:
        """120 queued rows (more than one round) arrive in id order and the outbox ends empty."""
        for i in range(120):
            store.outbox_put(f"edge/s1/reports/{i % 3}", f"r{i}".encode())
        consumer = await subscriber(broker)
        try:
            async with running(OutboxPublisher(mqtt_config(broker), store)):
                messages = await receive(consumer, 120)
                await until_empty(store)
        finally:
            await consumer.close()
        assert [m.payload for m in messages] == [f"r{i}".encode() for i in range(120)]

    async def test_rows_survive_a_restart_until_the_broker_acknowledges(self, broker: Broker, store: Store) -> None:
        """Rows queued while the broker is down stay through a publisher restart and go out, in order, once it is up."""
        consumer = await subscriber(broker)  # its persistent session will collect the messages
        await consumer.close()
        broker.stop()
        for i in range(5):
            store.outbox_put("edge/s1/reports/r", f"r{i}".encode())
        async with running(OutboxPublisher(mqtt_config(broker), store)) as ready:
            await asyncio.sleep(0.5)
            assert not ready.is_set()
        assert [m.payload for m in store.outbox_pending()] == [b"r0", b"r1", b"r2", b"r3", b"r4"]
        broker.start()
        async with running(OutboxPublisher(mqtt_config(broker), store)):
            await until_empty(store)
        consumer = MqttClient(mqtt_config(broker, "consumer"))
        async with consumer:
            messages = await receive(consumer, 5)
        assert [m.payload for m in messages] == [b"r0", b"r1", b"r2", b"r3", b"r4"]

    async def test_wake_publishes_without_waiting_for_the_poll(self, broker: Broker, store: Store) -> None:
        """With a 30 s poll, a row followed by wake() is delivered within a second."""
        consumer = await subscriber(broker)
        publisher = OutboxPublisher(mqtt_config(broker), store, poll_s=30.0)
        try:
            async with running(publisher) as ready:
                async with asyncio.timeout(5):
                    await ready.wait()
                await asyncio.sleep(0.2)  # the publisher has found the outbox empty and is waiting
                store.outbox_put("edge/s1/reports/r", b"now")
                publisher.wake()
                [message] = await receive(consumer, 1, timeout=1.0)
        finally:
            await consumer.close()
        assert message.payload == b"now"

    async def test_reply_properties_are_sent(self, broker: Broker, store: Store) -> None:
        """correlation_data (hex in the row), content_type and response_topic become MQTT 5 properties."""
        store.outbox_put(
            "edge/s1/reports/r", b"{}",
            properties={"correlation_data": "0a0b", "content_type": "application/json", "response_topic": "edge/s1/x"},
        )
        consumer = await subscriber(broker)
        try:
            async with running(OutboxPublisher(mqtt_config(broker), store)):
                [message] = await receive(consumer, 1)
        finally:
            await consumer.close()
        assert (message.correlation_data, message.content_type, message.response_topic) == (
            b"\x0a\x0b", "application/json", "edge/s1/x",
        )
