"""MqttIngest under hostile input and a full disk, against a real Mosquitto and a real SQLite store: garbage never
stops ingest or costs a good message, and a full store neither crashes it nor loses or acks anything."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from edge_agent.base.types import Record, idempotency_key, utcnow
from edge_agent.connectors.mqtt.ingest import MqttIngest
from edge_agent.store import RecordWriter, Store, StoreFullError
from tests.fixtures.broker import Broker
from tests.test_mqtt_ingest import mes, mqtt_config, publish, running, wait_for_count

pytestmark = pytest.mark.broker

MES, LOG = "plant/s1/mes/a", "plant/s1/log/a"
MAX_PAYLOAD = 200_000
GOOD_PER_ROUTE = 100


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


def mes_doc(**fields: object) -> bytes:
    return json.dumps({"id": "bad", "ts": "2026-11-29T06:15:00Z", "type": "x", "asset": "P-101", **fields}).encode()


def hostile() -> list[tuple[str, bytes, str]]:
    """(topic, payload, expected quarantine reason): every domain rule, the assessor's times, and random garbage."""
    now = utcnow()
    cases = [
        (MES, mes_doc(ts="0001-01-01T00:00:00+01:00"), "schema_mismatch"),
        (MES, mes_doc(ts="9999-12-31T23:59:59-01:00"), "schema_mismatch"),
        (MES, mes_doc(ts="1999-12-31T23:59:59Z"), "schema_mismatch"),
        (MES, mes_doc(ts=(now.replace(year=now.year + 1)).isoformat()), "schema_mismatch"),
        (MES, b'{"ts": "2026-11-29T06:15:00Z", "type": "x", "v": 1e400}', "schema_mismatch"),
        (MES, mes_doc(v=2**64), "schema_mismatch"),
        (MES, b'{"ts": "2026-11-29T06:15:00Z", "type": "x", "t": "\\ud800"}', "schema_mismatch"),
        (MES, b'{"ts": "2026-11-29T06:15:00Z", "type": "x", "\\udc00": 1}', "schema_mismatch"),
        (MES, b"[" * 100_000, "schema_mismatch"),
        (MES, b"[" * 10_000 + b"]" * 10_000, "schema_mismatch"),
        (MES, b'{"ts": "2026-11-29T06:15:00Z", "type": "x", "a": ' + b"[" * 40 + b"]" * 40 + b"}", "schema_mismatch"),
        (MES, mes_doc(text="x" * 70_000), "schema_mismatch"),
        (MES, b'{"id": "x", "ts": ', "invalid_json"),
        (MES, b"x" * (MAX_PAYLOAD + 1), "payload_too_large"),
        (LOG, b"caf\xc3", "invalid_utf8"),
        (LOG, b"   ", "schema_mismatch"),
    ]
    rng = random.Random(12)  # fixed: the same garbage on every run
    for topic in (MES, LOG):
        cases += [(topic, b"\xff" + rng.randbytes(rng.randrange(0, 300)), "invalid_utf8") for _ in range(20)]
    return cases


def good() -> list[tuple[str, bytes]]:
    """Numbered good messages on every route; the log lines include the assessor's time, kept as text."""
    messages = [(MES, mes(i)) for i in range(GOOD_PER_ROUTE)]
    messages += [(LOG, f"2026-11-29T06:20:00Z ana: nota {i}".encode()) for i in range(GOOD_PER_ROUTE // 2)]
    messages += [(LOG, f"0001-01-01T00:00:00+01:00 nota {i}".encode()) for i in range(GOOD_PER_ROUTE // 2)]
    return messages


def poison_trigger(db: Path) -> None:
    """A real constraint in the real store (from a second connection): a record whose value mentions "poison" is
    refused, failing the whole batch it is in, the way a record the store cannot take would."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON records WHEN NEW.value LIKE '%poison%'"
            " BEGIN SELECT RAISE(ABORT, 'poisoned record'); END"
        )


def store_full_count() -> float:
    return REGISTRY.get_sample_value("edge_agent_mqtt_store_full_total") or 0.0


def fill(store: Store) -> None:
    """Cap the store at its current size and fill every table ingest writes until the smallest row no longer fits."""
    store.set_max_pages(1)  # below the current size: held at it
    for i in range(100_000):
        try:
            store.insert_records(
                [
                    Record(
                        source="f",
                        kind="f",
                        key="f",
                        source_time=utcnow(),
                        idempotency_key=idempotency_key("f", str(i)),
                    )
                ]
            )
        except StoreFullError:
            break
    for _ in range(100_000):
        try:
            store.quarantine("f", "f", b"", "f")
        except StoreFullError:
            break


class TestHostileStream:
    async def test_garbage_never_stops_ingest_or_costs_a_good_message(self, broker: Broker, store: Store) -> None:
        """A shuffled stream of garbage and numbered good messages on every route: every good one stored once, every
        bad one quarantined with its reason, the ingest task never ends, and a message after it all is stored."""
        bad, ok = hostile(), good()
        poisoned = [(MES, mes(1000 + i, note="poison")) for i in range(3)]  # pass parsing, fail their batch
        poison_trigger(store.path)
        stream = [(topic, payload) for topic, payload, _ in bad] + ok + poisoned
        random.Random(7).shuffle(stream)
        writer = RecordWriter(store, max_delay_s=0.01)
        config = mqtt_config(broker, max_payload_bytes=MAX_PAYLOAD)
        async with running(MqttIngest(config, store, writer), writer) as live:
            await publish(broker, stream)
            await publish(broker, [(MES, mes(5000))])  # after all the garbage
            await wait_for_count(store.record_count, len(ok) + 1, timeout=60)
            await wait_for_count(lambda: len(store.quarantined()), len(bad) + len(poisoned), timeout=60)
            await asyncio.sleep(0.3)  # anything stored twice would land now
            assert not live.task.done()  # never raised: the supervisor would have had nothing to restart
        records = store.records()
        assert sorted(r.value["count"] for r in records if r.kind == "mes_event") == [*range(GOOD_PER_ROUTE), 5000]
        assert Counter(r.raw for r in records if r.kind == "log_line") == Counter(p for t, p in ok if t == LOG)
        assert Counter((q.topic, q.raw, q.reason) for q in store.quarantined()) == Counter(
            [(t, p[:MAX_PAYLOAD], reason) for t, p, reason in bad] + [(t, p, "internal_error") for t, p in poisoned]
        )


class TestStoreFull:
    async def test_full_store_holds_messages_unacked_until_space_returns(self, broker: Broker, store: Store) -> None:
        """With the store full nothing is stored and ingest is alive but not ready; once space returns every message
        (and the quarantined one) is stored exactly once and ingest is ready again."""
        total = 200
        writer = RecordWriter(store, max_delay_s=0.01)
        full_before = store_full_count()
        async with running(MqttIngest(mqtt_config(broker), store, writer), writer) as live:
            fill(store)
            await publish(broker, [(MES, mes(i)) for i in range(total)] + [(MES, b"{")])
            async with asyncio.timeout(20):
                while store_full_count() == full_before or live.ready.is_set():
                    await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # a few retries
            assert (store.record_count(source="mqtt"), live.ready.is_set(), live.task.done()) == (0, False, False)
            store.set_max_pages(None)
            space_returned = time.monotonic()
            await wait_for_count(lambda: store.record_count(source="mqtt"), total, timeout=30)
            all_stored_s = time.monotonic() - space_returned
            async with asyncio.timeout(10):
                await live.ready.wait()
            await wait_for_count(lambda: len([q for q in store.quarantined() if q.source == "mqtt"]), 1)
            await asyncio.sleep(0.3)  # anything stored twice would land now
        print(f"\nstore full → space returned → all {total} stored in {all_stored_s:.2f} s")
        assert sorted(r.value["count"] for r in store.records() if r.source == "mqtt") == list(range(total))
        assert [(q.raw, q.reason) for q in store.quarantined() if q.source == "mqtt"] == [(b"{", "invalid_json")]

    async def test_messages_refused_by_a_full_store_stay_with_the_broker(self, broker: Broker, store: Store) -> None:
        """Ingest stopped while the store is full acked nothing: the broker redelivers every message to the next run."""
        total = 50
        config = mqtt_config(broker)
        full_before = store_full_count()
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(config, store, writer, stop_drain_s=0.2), writer):
            fill(store)
            await publish(broker, [(MES, mes(i)) for i in range(total)])
            async with asyncio.timeout(20):
                while store_full_count() == full_before:
                    await asyncio.sleep(0.05)
        store.set_max_pages(None)
        assert store.record_count(source="mqtt") == 0
        writer = RecordWriter(store, max_delay_s=0.01)
        async with running(MqttIngest(config, store, writer), writer):
            await wait_for_count(lambda: store.record_count(source="mqtt"), total, timeout=30)
        assert sorted(r.value["count"] for r in store.records() if r.source == "mqtt") == list(range(total))
