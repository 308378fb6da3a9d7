"""MqttIngest against a real Mosquitto and a real SQLite store: exactly-once storage through broker restarts and
SIGKILL, quarantine of every kind of bad input, ack only after commit, batched audit entries, MQTT 3.1.1."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import NamedTuple

import pytest
from prometheus_client import REGISTRY

from edge_agent.audit import AuditLog
from edge_agent.audit.entry import AuditEntry
from edge_agent.config.mqtt import MqttConfig, RouteConfig
from edge_agent.connectors.mqtt import MqttClient
from edge_agent.connectors.mqtt.ingest import MqttIngest
from edge_agent.store import RecordWriter, Store
from tests.fixtures.broker import Broker

pytestmark = pytest.mark.broker

REPO = Path(__file__).resolve().parents[1]
ROUTES = [
    RouteConfig(topic="plant/+/mes/#", parser="json", kind="mes_event", required=["ts", "type"]),
    RouteConfig(topic="plant/+/log/#", parser="text", kind="log_line"),
]


def mqtt_config(broker: Broker, **overrides: object) -> MqttConfig:
    base: dict[str, object] = {
        "host": broker.host,
        "port": broker.port,
        "client_id": "agent",
        "routes": ROUTES,
        # Fast reconnects: these tests restart the broker and should not wait out production backoffs.
        "reconnect_min_s": 0.05,
        "reconnect_max_s": 0.5,
    }
    return MqttConfig(**{**base, **overrides})


def mes(i: int, **extra: object) -> bytes:
    return json.dumps(
        {
            "id": f"mes-{i:06d}",
            "ts": "2026-11-29T06:15:00Z",
            "type": "production_count",
            "asset": "P-101",
            "count": i,
            "unit": "pcs",
            **extra,
        }
    ).encode()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


class Live(NamedTuple):
    task: asyncio.Task[None]  # the component's run(): done only if it raised (nothing restarts it here)
    ready: asyncio.Event


@asynccontextmanager
async def running(ingest: MqttIngest, writer: RecordWriter | None = None) -> AsyncIterator[Live]:
    """Run the writer's commit loop (when given) and the ingest component once; stop both like the supervisor does."""
    writer_task = asyncio.create_task(writer.run()) if writer is not None else None
    ready = asyncio.Event()
    task = asyncio.create_task(ingest.run(ready))
    try:
        async with asyncio.timeout(10):
            await ready.wait()
        yield Live(task, ready)
    finally:
        for t in (task, writer_task):  # intake first, then the writer
            if t is not None:
                t.cancel()
                await asyncio.gather(t, return_exceptions=True)


async def publish(broker: Broker, messages: list[tuple[str, bytes]], client_id: str = "plant") -> None:
    async with MqttClient(mqtt_config(broker, client_id=client_id, routes=[])) as pub:
        await asyncio.gather(*(pub.publish(topic, payload, qos=1, timeout=30) for topic, payload in messages))


async def wait_for_count(count: callable, n: int, timeout: float = 20.0) -> int:  # type: ignore[valid-type]
    async with asyncio.timeout(timeout):
        while (current := await asyncio.to_thread(count)) < n:
            await asyncio.sleep(0.05)
    return current


class TestIngest:
    async def test_mes_events_and_log_lines_become_records(self, broker: Broker, store: Store) -> None:
        """A MES JSON event and an operator log line are stored with the shapes of docs/records.md."""
        writer = RecordWriter(store, max_delay_s=0.01)
        line = "2026-11-29T06:20:00Z juan.perez: Se cambió el sello mecánico de P-101, vibración normal."
        async with running(MqttIngest(mqtt_config(broker), store, writer), writer):
            await publish(broker, [("plant/s1/mes/production", mes(1)), ("plant/s1/log/maint", line.encode())])
            await wait_for_count(store.record_count, 2)
        note, event = sorted(store.records(), key=lambda r: r.kind)  # log_line < mes_event
        assert (event.kind, event.key, event.value["count"]) == ("mes_event", "P-101", 1)
        assert (note.kind, note.key) == ("log_line", "plant/s1/log/maint")
        # No route vouches for an author here: the name the line claims is kept as claimed_author only.
        text = "Se cambió el sello mecánico de P-101, vibración normal."
        assert note.value == {"text": text, "claimed_author": "juan.perez", "author_from": None}

    async def test_each_bad_input_is_quarantined_between_stored_good_ones(self, broker: Broker, store: Store) -> None:
        """Invalid JSON, invalid UTF-8, schema mismatch, oversize and unknown-route messages are quarantined with
        their reason while every good message around them is stored."""
        # A subscription left in the agent's persistent session by an older config: no route matches it any more.
        async with MqttClient(mqtt_config(broker)) as old_session:
            await old_session.subscribe("plant/+/legacy/#", timeout=5)
        writer = RecordWriter(store, max_delay_s=0.01)
        stream = [
            ("plant/s1/mes/a", mes(1)),
            ("plant/s1/mes/a", b'{"id": "x", "ts": '),
            ("plant/s1/mes/a", mes(2)),
            ("plant/s1/log/a", b"caf\xc3 sin terminar"),
            ("plant/s1/mes/a", mes(3)),
            ("plant/s1/mes/a", b'{"id": "y", "asset": "P-101"}'),
            ("plant/s1/mes/a", mes(4)),
            ("plant/s1/mes/a", mes(99, text="x" * 600)),
            ("plant/s1/mes/a", mes(5)),
            ("plant/s1/legacy/a", mes(98)),
            ("plant/s1/log/a", b"ana: turno sin novedades"),
        ]
        async with running(MqttIngest(mqtt_config(broker, max_payload_bytes=512), store, writer), writer):
            async with MqttClient(mqtt_config(broker, client_id="plant", routes=[])) as pub:
                for topic, payload in stream:  # one by one: good and bad interleave on the wire
                    await pub.publish(topic, payload, timeout=5)
            await wait_for_count(store.record_count, 6)
            await wait_for_count(lambda: len(store.quarantined()), 5)
        assert sorted(r.value.get("count", -1) for r in store.records()) == [-1, 1, 2, 3, 4, 5]
        assert sorted((q.reason, q.topic) for q in store.quarantined()) == [
            ("invalid_json", "plant/s1/mes/a"),
            ("invalid_utf8", "plant/s1/log/a"),
            ("payload_too_large", "plant/s1/mes/a"),
            ("schema_mismatch", "plant/s1/mes/a"),
            ("unknown_route", "plant/s1/legacy/a"),
        ]
        assert [q.raw for q in store.quarantined() if q.reason == "invalid_utf8"] == [b"caf\xc3 sin terminar"]

    async def test_an_id_reused_for_other_content_is_quarantined_and_a_redelivery_is_not(
        self, broker: Broker, store: Store
    ) -> None:
        """An MES that restarts its numbering sends mes-000001 again with other content: the store keeps the first,
        the second goes to quarantine as `duplicate_id` with its bytes; the same bytes again (a redelivery) are
        skipped, not quarantined (`make demo` run twice on one store once dropped a whole shift's stops silently)."""
        writer = RecordWriter(store, max_delay_s=0.01)
        first, reused = mes(1), mes(1, count=7, ts="2026-11-30T06:15:00Z")
        async with running(MqttIngest(mqtt_config(broker), store, writer), writer):
            async with MqttClient(mqtt_config(broker, client_id="plant", routes=[])) as pub:
                for payload in (first, first, reused, mes(2), reused):  # one by one: each commits in order
                    await pub.publish("plant/s1/mes/a", payload, timeout=5)
            await wait_for_count(lambda: len(store.quarantined()), 2)
            await wait_for_count(store.record_count, 2)
        assert sorted(r.value["count"] for r in store.records()) == [1, 2]
        assert [(q.reason, q.topic, q.raw) for q in store.quarantined()] == [
            ("duplicate_id", "plant/s1/mes/a", reused),
            ("duplicate_id", "plant/s1/mes/a", reused),
        ]

    async def test_quarantine_counter_counts_by_reason(self, broker: Broker, store: Store) -> None:
        """edge_agent_mqtt_quarantined_total{reason} grows by one per refused message of that reason."""

        def sample(reason: str) -> float:
            return REGISTRY.get_sample_value("edge_agent_mqtt_quarantined_total", {"reason": reason}) or 0.0

        before = {r: sample(r) for r in ("invalid_json", "schema_mismatch")}
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(mqtt_config(broker), store, writer), writer):
            await publish(broker, [("plant/s1/mes/a", b"{"), ("plant/s1/mes/a", b"{"), ("plant/s1/mes/a", b"[]")])
            await wait_for_count(lambda: len(store.quarantined()), 3)
        assert sample("invalid_json") - before["invalid_json"] == 2
        assert sample("schema_mismatch") - before["schema_mismatch"] == 1

    async def test_message_is_not_acked_before_its_commit(self, broker: Broker, store: Store) -> None:
        """A message whose commit never completed is redelivered by the broker to the same session."""
        stalled = RecordWriter(store)  # its commit loop is never started: write() waits forever
        ingest = MqttIngest(mqtt_config(broker), store, stalled, stop_drain_s=0.1)
        async with running(ingest):
            await publish(broker, [("plant/s1/mes/a", mes(7))])
            await asyncio.sleep(0.5)
        assert store.record_count() == 0
        async with MqttClient(mqtt_config(broker)) as same_session:
            async with asyncio.timeout(5):
                message = await same_session.receive()
        assert message.payload == mes(7)

    async def test_broker_restart_mid_stream_stores_every_message_once(self, broker: Broker, store: Store) -> None:
        """Messages published before, during and after a broker restart are each stored exactly once."""
        total = 400
        writer = RecordWriter(store, max_delay_s=0.02)
        async with running(MqttIngest(mqtt_config(broker), store, writer), writer):
            async with MqttClient(mqtt_config(broker, client_id="plant", routes=[])) as pub:
                for start in range(0, total, 20):
                    if start == 200:
                        broker.restart()  # a QoS 1 publish during the outage waits in paho and is resent
                    await asyncio.gather(
                        *(pub.publish("plant/s1/mes/a", mes(i), timeout=30) for i in range(start, start + 20))
                    )
            await wait_for_count(store.record_count, total, timeout=30)
            await asyncio.sleep(0.3)  # any redelivery still in flight lands before we count
        ids = [r.value["id"] for r in store.records()]
        assert len(ids) == total
        assert sorted(ids) == [f"mes-{i:06d}" for i in range(total)]

    async def test_ready_follows_the_broker_connection(self, broker: Broker, store: Store) -> None:
        """The ready event clears while the broker is away and is set again once ingest has reconnected."""
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(mqtt_config(broker), store, writer), writer) as live:
            async with asyncio.timeout(10):
                broker.stop()
                while live.ready.is_set():
                    await asyncio.sleep(0.02)
                broker.start()
                await live.ready.wait()
            assert not live.task.done()

    async def test_restart_into_a_backlog_larger_than_the_queue_stores_it_all(
        self, broker: Broker, store: Store
    ) -> None:
        """An agent that returns to 10x queue_max queued messages subscribes, drains and stores every one."""
        config = mqtt_config(broker, queue_max=20)
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(config, store, writer), writer):
            pass  # creates the persistent session with its subscriptions
        await publish(broker, [("plant/s1/mes/a", mes(i)) for i in range(200)])
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(config, store, writer), writer):
            await wait_for_count(store.record_count, 200)
        assert sorted(r.value["count"] for r in store.records()) == list(range(200))

    async def test_mqtt_311_ingest_keeps_its_session_across_agent_restarts(self, broker: Broker, store: Store) -> None:
        """protocol = "3.1.1": messages sent while the agent is stopped are stored when it returns."""
        config = mqtt_config(broker, protocol="3.1.1")
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(config, store, writer), writer):
            await publish(broker, [("plant/s1/mes/a", mes(i)) for i in range(10)])
            await wait_for_count(store.record_count, 10)
        await publish(broker, [("plant/s1/mes/a", mes(i)) for i in range(10, 25)])
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(config, store, writer), writer):
            await wait_for_count(store.record_count, 25)
        assert sorted(r.value["count"] for r in store.records()) == list(range(25))


class TestAudit:
    def entries(self, audit_dir: Path) -> list[AuditEntry]:
        return [AuditEntry.from_line(line) for line in (audit_dir / "entries.jsonl").read_bytes().splitlines()]

    async def test_batch_entry_pins_count_keys_and_payload_digest(
        self, broker: Broker, store: Store, tmp_path: Path
    ) -> None:
        """One ingest.batch entry covers the window: count, first/last idempotency keys, SHA-256 over the payloads."""
        payloads = [mes(i) for i in range(30)]
        audit = AuditLog.open(tmp_path / "audit", origin="edge-agent/test")
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(mqtt_config(broker), store, writer, audit), writer):
            async with MqttClient(mqtt_config(broker, client_id="plant", routes=[])) as pub:
                for payload in payloads:
                    await pub.publish("plant/s1/mes/a", payload, timeout=5)
            await wait_for_count(store.record_count, 30)
        audit.close()
        [entry] = [e for e in self.entries(tmp_path / "audit") if e.event == "ingest.batch"]
        digest = hashlib.sha256()
        for payload in payloads:
            digest.update(len(payload).to_bytes(8, "big") + payload)
        records = store.records()
        assert entry.actor == "mqtt"
        assert entry.payload["count"] == entry.payload["stored"] == 30
        assert entry.payload["duplicates"] == 0
        assert entry.payload["payloads_sha256"] == digest.hexdigest()
        assert (entry.payload["first_key"], entry.payload["last_key"]) == (
            next(r.idempotency_key for r in records if r.value["count"] == 0),
            next(r.idempotency_key for r in records if r.value["count"] == 29),
        )

    async def test_entries_are_batched_not_one_per_message(self, broker: Broker, store: Store, tmp_path: Path) -> None:
        """600 good and 3 bad messages with a 250-record window give a few ingest.batch entries and one quarantine
        entry whose counts add up, not 603 entries."""
        audit = AuditLog.open(tmp_path / "audit", origin="edge-agent/test")
        writer = RecordWriter(store, max_delay_s=0.01)
        ingest = MqttIngest(mqtt_config(broker), store, writer, audit, audit_every_records=250)
        async with running(ingest, writer):
            await publish(broker, [("plant/s1/mes/a", mes(i)) for i in range(600)] + [("plant/s1/mes/a", b"{")] * 3)
            await wait_for_count(store.record_count, 600)
            await wait_for_count(lambda: len(store.quarantined()), 3)
        audit.close()
        entries = self.entries(tmp_path / "audit")
        batches = [e for e in entries if e.event == "ingest.batch"]
        [quarantine] = [e for e in entries if e.event == "quarantine"]
        assert 2 <= len(batches) <= 4
        assert sum(b.payload["count"] for b in batches) == 600
        assert quarantine.payload["count"] == 3
        assert quarantine.payload["by_reason"] == {"invalid_json": 3}
        assert [i["sha256"] for i in quarantine.payload["items"]] == [hashlib.sha256(b"{").hexdigest()] * 3


class TestCrash:
    def count_rows(self, db: Path) -> tuple[int, int]:
        if not db.exists():
            return (0, 0)
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
                return conn.execute("SELECT COUNT(*), COUNT(DISTINCT idempotency_key) FROM records").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # the agent has created the file but not yet migrated it
                return (0, 0)
            raise

    def start_agent(self, broker: Broker, state_dir: Path) -> subprocess.Popen[bytes]:
        config = state_dir / "agent.toml"
        config.write_text(
            f"""
[site]
id = "s1"
[paths]
state_dir = "{state_dir}"
[logging]
level = "warning"
format = "json"
[mqtt]
host = "{broker.host}"
port = {broker.port}
client_id = "agent"
reconnect_min_s = 0.05
reconnect_max_s = 0.5
[[mqtt.routes]]
topic = "plant/+/mes/#"
parser = "json"
kind = "mes_event"
"""
        )
        log = open(state_dir / "agent.log", "ab")
        return subprocess.Popen(
            [sys.executable, "-m", "edge_agent.connectors.mqtt.ingest", "--config", str(config)],
            cwd=REPO,
            stdout=log,
            stderr=log,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )

    async def test_sigkill_mid_ingest_loses_and_duplicates_nothing(self, broker: Broker, tmp_path: Path) -> None:
        """The agent process is SIGKILLed while messages stream in and restarted: stored count == published count,
        every message once."""
        total = 3000
        db = tmp_path / "store.sqlite3"
        agent = self.start_agent(broker, tmp_path)
        try:
            # The agent's session exists (subscribed) before the plant starts publishing.
            async with MqttClient(mqtt_config(broker, client_id="probe", routes=[])) as probe:
                await probe.wait_connected(5)
                for _ in range(100):
                    await probe.publish("plant/s1/mes/probe", mes(-1), timeout=5)
                    if (await asyncio.to_thread(self.count_rows, db))[0] > 0:
                        break
                    await asyncio.sleep(0.1)
            publishing = asyncio.create_task(publish(broker, [("plant/s1/mes/a", mes(i)) for i in range(total)]))
            await wait_for_count(lambda: self.count_rows(db)[0], 300, timeout=60)
            agent.send_signal(signal.SIGKILL)
            agent.wait(10)
            at_kill = (await asyncio.to_thread(self.count_rows, db))[0]
            agent = self.start_agent(broker, tmp_path)
            await publishing
            await wait_for_count(lambda: self.count_rows(db)[0], total + 1, timeout=90)
            await asyncio.sleep(0.5)  # redeliveries still in flight would land now
            stored, distinct = await asyncio.to_thread(self.count_rows, db)
        finally:
            agent.terminate()
            agent.wait(10)
        assert at_kill < total + 1  # the kill really landed mid-stream
        assert stored == distinct == total + 1  # every published message (+ the probe) exactly once
