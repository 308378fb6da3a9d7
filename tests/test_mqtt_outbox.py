"""OutboxPublisher against a real Mosquitto and a real store: order, deletion only after PUBACK, restarts, wake-up,
and rows the broker refuses (an ACL) or could never accept, which end in dead_letter without blocking later rows."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from structlog.testing import capture_logs

from edge_agent.base.types import OutboxMessage, utcnow
from edge_agent.config.mqtt import MqttConfig
from edge_agent.connectors.mqtt import MqttClient, MqttMessage
from edge_agent.connectors.mqtt.metrics import CONNECTS
from edge_agent.publish.outbox import DEAD_LETTERS, MAX_TOPIC_BYTES, OutboxPublisher, publish_problem
from edge_agent.store import Store
from tests.fixtures.broker import Broker

pytestmark = pytest.mark.broker

# Anonymous clients may use edge/#, except publishing under edge/s1/forbidden/ (Mosquitto ACL; `topic deny` needs 2.0).
FORBIDDING_ACL = "topic readwrite edge/#\ntopic deny edge/s1/forbidden/#\n"


def mqtt_config(broker: Broker, client_id: str = "agent", **kw: object) -> MqttConfig:
    # Fast reconnects: the tests stop and start the broker.
    fields: dict[str, object] = dict(reconnect_min_s=0.05, reconnect_max_s=0.5)
    fields.update(kw)
    return MqttConfig(host=broker.host, port=broker.port, client_id=client_id, **fields)


@pytest.fixture
def acl_broker(tmp_path: Path) -> Iterator[Broker]:
    """A broker whose ACL forbids publishing under edge/s1/forbidden/."""
    b = Broker(tmp_path, acl=FORBIDDING_ACL)
    b.start()
    yield b
    b.stop()


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


def message(topic: str, qos: int = 1, payload: bytes = b"x") -> OutboxMessage:
    return OutboxMessage(id=1, topic=topic, payload=payload, qos=qos, retain=False, created_time=utcnow())


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
            "edge/s1/reports/r",
            b"{}",
            properties={"correlation_data": "0a0b", "content_type": "application/json", "response_topic": "edge/s1/x"},
        )
        consumer = await subscriber(broker)
        try:
            async with running(OutboxPublisher(mqtt_config(broker), store)):
                [message] = await receive(consumer, 1)
        finally:
            await consumer.close()
        assert (message.correlation_data, message.content_type, message.response_topic) == (
            b"\x0a\x0b",
            "application/json",
            "edge/s1/x",
        )


class TestDeadLetters:
    async def test_a_refused_row_does_not_block_the_rows_behind_it(self, acl_broker: Broker, store: Store) -> None:
        """[refused, ok, ok]: both ok rows are delivered while the refused one waits out its backoff; after
        max_attempts refusals (PUBACK 0x87 under MQTT 5) it is a dead letter with the broker's reason."""
        refused = store.outbox_put("edge/s1/forbidden/r", b"no")
        store.outbox_put("edge/s1/reports/a", b"ok1")
        store.outbox_put("edge/s1/reports/b", b"ok2")
        consumer = await subscriber(acl_broker)
        # Backoff 1-2 s between tries: the ok rows arrive long before the second try.
        config = mqtt_config(acl_broker, reconnect_min_s=2.0, reconnect_max_s=2.0)
        publisher = OutboxPublisher(config, store, max_attempts=2)
        dead_before = DEAD_LETTERS._value.get()
        try:
            with capture_logs() as logs:
                async with running(publisher):
                    messages = await receive(consumer, 2)
                    # The consumer may see ok2 just before the publisher's ack of it commits: allow it that long,
                    # well inside the refused row's 1-2 s backoff.
                    async with asyncio.timeout(0.9):
                        while [m.id for m in store.outbox_pending()] != [refused]:  # still waiting, not blocking
                            await asyncio.sleep(0.01)
                    await until_empty(store)
        finally:
            await consumer.close()
        assert [m.payload for m in messages] == [b"ok1", b"ok2"]
        [dead] = store.dead_letters()
        assert (dead.id, dead.topic, dead.payload, dead.attempts) == (refused, "edge/s1/forbidden/r", b"no", 2)
        assert re.fullmatch(r"broker refused message \d+: Not authorized", dead.reason)
        assert DEAD_LETTERS._value.get() == dead_before + 1
        assert [(e["event"], e["attempts"]) for e in logs if e["event"].startswith("outbox_") and "attempts" in e] == [
            ("outbox_publish_refused", 1),
            ("outbox_dead_letter", 2),
        ]

    async def test_topics_no_broker_accepts_go_to_dead_letter_at_once(self, broker: Broker, store: Store) -> None:
        """Wildcard, empty, NUL, control-character and over-long topics are never sent (Mosquitto would drop the
        connection over some): each is a dead letter after one attempt, and the row behind them is delivered."""
        bad = ["edge/s1/+/r", "edge/s1/#", "", "edge/s1/nul\x00", "edge/s1/bell\x07", "edge/" + "x" * MAX_TOPIC_BYTES]
        ids = [store.outbox_put(topic, b"bad") for topic in bad]
        store.outbox_put("edge/s1/reports/r", b"ok")
        consumer = await subscriber(broker)
        try:
            async with running(OutboxPublisher(mqtt_config(broker), store)):
                [delivered] = await receive(consumer, 1)
                await until_empty(store)
        finally:
            await consumer.close()
        assert delivered.payload == b"ok"
        assert [(d.id, d.topic, d.attempts) for d in store.dead_letters()] == [
            (i, t, 1) for i, t in zip(ids, bad, strict=True)
        ]
        assert [d.reason for d in store.dead_letters()] == [publish_problem(message(t)) for t in bad]

    async def test_mqtt_311_cannot_see_a_refusal(self, acl_broker: Broker, store: Store) -> None:
        """Under MQTT 3.1.1 Mosquitto acknowledges a publish its ACL denies and drops it: the row leaves the outbox
        as published and no dead letter is written (only MQTT 5's reason codes tell the agent)."""
        store.outbox_put("edge/s1/forbidden/r", b"no")
        async with running(OutboxPublisher(mqtt_config(acl_broker, protocol="3.1.1"), store, max_attempts=1)):
            await until_empty(store)
        assert store.dead_letters() == []


class TestMaximumPacketSize:
    """A broker with `max_packet_size` drops a client that sends a larger packet, and paho resends the unacknowledged
    PUBLISH on every reconnect: one such reply used to stall the outbox for good."""

    LIMIT = 1024

    @pytest.fixture
    def small_broker(self, tmp_path: Path) -> Iterator[Broker]:
        b = Broker(tmp_path, extra_conf=f"max_packet_size {self.LIMIT}")
        b.start()
        yield b
        b.stop()

    @staticmethod
    def payload_for(topic: str, packet: int) -> bytes:
        """A payload making a plain QoS 1 MQTT 5 PUBLISH to `topic` exactly `packet` bytes (2-byte remaining length)."""
        return b"p" * (packet - (1 + 2 + 2 + len(topic) + 2 + 1))

    async def test_a_row_over_the_announced_maximum_is_a_dead_letter_and_never_sent(
        self, small_broker: Broker, store: Store
    ) -> None:
        """[exactly the limit, one byte over, ok]: the first and last are delivered over one connection (the broker
        took the packet at its limit), the one over is a dead letter after one attempt with the sizes in its reason."""
        topic = "edge/s1/reports/r"
        at_limit = store.outbox_put(topic, self.payload_for(topic, self.LIMIT))
        over = store.outbox_put(topic, self.payload_for(topic, self.LIMIT + 1))
        store.outbox_put(topic, b"ok")
        consumer = await subscriber(small_broker)
        publisher = OutboxPublisher(mqtt_config(small_broker), store)
        connects = CONNECTS.labels(client="agent-outbox")._value.get()
        try:
            async with running(publisher):
                messages = await receive(consumer, 2)
                await until_empty(store)
        finally:
            await consumer.close()
        assert [len(m.payload) for m in messages] == [len(self.payload_for(topic, self.LIMIT)), 2]
        [dead] = store.dead_letters()
        assert (dead.id, dead.attempts) == (over, 1) and dead.id != at_limit
        assert dead.reason == f"PUBLISH to {topic!r} is {self.LIMIT + 1} bytes, over the broker's 1024-byte maximum"
        assert CONNECTS.labels(client="agent-outbox")._value.get() == connects + 1  # never dropped

    async def test_mqtt_311_takes_the_configured_maximum(self, small_broker: Broker, store: Store) -> None:
        """A 3.1.1 broker announces no limit: `mqtt.max_packet_bytes` stands in for it (1 + 2 + 2 + 17 + 2 + 2000
        bytes: no property block in 3.1.1)."""
        topic = "edge/s1/reports/r"
        store.outbox_put(topic, b"p" * 2000)
        store.outbox_put(topic, b"ok")
        consumer = await subscriber(small_broker)
        config = mqtt_config(small_broker, protocol="3.1.1", max_packet_bytes=self.LIMIT)
        try:
            async with running(OutboxPublisher(config, store)):
                [delivered] = await receive(consumer, 1)
                await until_empty(store)
        finally:
            await consumer.close()
        assert delivered.payload == b"ok"
        [dead] = store.dead_letters()
        assert dead.reason == f"PUBLISH to {topic!r} is 2024 bytes, over the broker's 1024-byte maximum"


class TestPublishProblem:
    @pytest.mark.parametrize(
        ("topic", "problem"),
        [
            ("", "empty topic"),
            ("a/+/b", "topic 'a/+/b' has a wildcard (+ or #)"),
            ("a/#", "topic 'a/#' has a wildcard (+ or #)"),
            ("a\x00b", "topic 'a\\x00b' has a control character, surrogate or noncharacter"),
            ("a\x85", "topic 'a\\x85' has a control character, surrogate or noncharacter"),
            ("a\ufffe", "topic 'a\\ufffe' has a control character, surrogate or noncharacter"),
            ("a\ufdd0", "topic 'a\\ufdd0' has a control character, surrogate or noncharacter"),
            ("a\U0001ffff", "topic 'a\\U0001ffff' has a control character, surrogate or noncharacter"),
            ("a\udc80", "topic 'a\\udc80' has a control character, surrogate or noncharacter"),
            ("é" * 32768, "topic is 65536 bytes, over MQTT's 65535"),
        ],
    )
    def test_unsendable_topics_are_named(self, topic: str, problem: str) -> None:
        """Each topic no broker accepts gets the reason it is kept with."""
        assert publish_problem(message(topic)) == problem

    @pytest.mark.parametrize(
        "topic", ["edge/s1/reports/reply/op/1", "/", "$SYS/x", "a/\u00a0/\u2028/😀", "x" * MAX_TOPIC_BYTES]
    )
    def test_sendable_topics_pass(self, topic: str) -> None:
        """Valid topics (even ones an ACL may refuse, like $SYS/x) are left to the broker."""
        assert publish_problem(message(topic)) is None

    def test_a_qos_outside_0_to_2_is_named(self) -> None:
        assert publish_problem(message("a", qos=3)) == "QoS 3 is not 0, 1 or 2"

    @given(topic=st.text(st.characters(blacklist_categories=())))
    @example(topic="\udc80")
    def test_any_topic_gets_an_answer_and_paho_accepts_every_passed_one(
        self, offline_paho: paho.Client, topic: str
    ) -> None:
        """publish_problem never raises; a topic it passes, paho queues without ValueError."""
        if publish_problem(message(topic)) is None:
            assert offline_paho.publish(topic, b"x", qos=1).rc == paho.MQTT_ERR_NO_CONN


@pytest.fixture(scope="module")
def offline_paho() -> Iterator[paho.Client]:
    """A real paho client never connected: publish() validates the topic, then queues it for a connection."""
    yield paho.Client(paho.CallbackAPIVersion.VERSION2, protocol=paho.MQTTv5)
