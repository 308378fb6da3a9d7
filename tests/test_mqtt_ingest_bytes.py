"""The MQTT ingest's memory is bounded in bytes end to end (`mqtt.queue_max_bytes`): the client's receive queue and
the messages taken from it but not yet committed and acknowledged. On the real broker, with a store that cannot
commit: reading stops, nothing is dropped, and every message is stored once space returns."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path
from typing import Any

import pytest

from edge_agent.config import MqttConfig
from edge_agent.connectors.mqtt import MqttClient
from edge_agent.connectors.mqtt.ingest import MqttIngest
from edge_agent.store import RecordWriter, Store
from tests.fixtures.broker import Broker
from tests.test_daemon import wait_until
from tests.test_mqtt_ingest import publish, running

pytestmark = pytest.mark.broker


async def test_large_messages_wait_at_the_broker_while_the_store_is_full(broker: Broker, tmp_path: Path) -> None:
    """40 MES events of ~60 kB (under max_string_chars) against a 600 kB bound and a full store: the ingest
    holds at most the bound plus one intake batch uncommitted, the client's queue at most the bound plus one
    message, the rest waits at the broker; when space returns all 40 are stored exactly once."""
    size, bound, messages = 60_000, 600_000, 40
    config = MqttConfig.model_validate(
        {
            "host": broker.host,
            "port": broker.port,
            "client_id": "bytes-agent",
            "queue_max_bytes": bound,
            "routes": [{"topic": "plant/bytes/mes/#", "parser": "json", "kind": "mes_event"}],
        }
    )
    with Store(tmp_path / "store.sqlite3") as store:
        writer = RecordWriter(store, max_rows=500, max_delay_s=0.05)
        ingest = MqttIngest(config, store, writer)
        async with running(ingest, writer):
            store.set_max_pages(1)  # below its size: every commit fails as on a full disk
            payloads = [{"id": f"b-{i}", "asset": "P-1", "type": "t", "pad": "x" * size} for i in range(messages)]
            await publish(broker, [("plant/bytes/mes/x", json.dumps(p).encode()) for p in payloads])
            [client] = _clients()
            peak_unsettled = peak_queued = 0
            for _ in range(40):  # 2 s with nothing committed
                peak_unsettled = max(peak_unsettled, ingest._unsettled.bytes)
                peak_queued = max(peak_queued, client._queued_bytes)
                await asyncio.sleep(0.05)
            assert store.record_count() == 0
            assert bound <= peak_unsettled <= 2 * bound + size
            assert peak_queued <= bound + size
            assert ingest._unsettled.messages < messages  # the rest were never read: they wait at the broker
            store.set_max_pages(None)
            await wait_until(lambda: store.record_count() == messages, timeout=60)
            assert sorted(r.value["id"] for r in store.records()) == sorted(f"b-{i}" for i in range(messages))
            await wait_until(lambda: ingest._unsettled.bytes == 0, timeout=10)


async def test_large_batches_are_parsed_off_the_event_loop(
    broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch over PARSE_ON_LOOP_MAX_BYTES is parsed in a worker thread, so multi-MiB JSON cannot hold /metrics and
    readiness; a small batch is parsed on the loop (no thread hop per message). Every message is stored either way."""
    import threading

    from edge_agent.connectors.mqtt import ingest as ingest_module

    parsed_on: list[tuple[int, bool]] = []
    real_parse = ingest_module._parse

    def spy(group: Any, routes: Any) -> None:
        parsed_on.append((len(group.messages), threading.current_thread() is threading.main_thread()))
        real_parse(group, routes)

    monkeypatch.setattr(ingest_module, "_parse", spy)
    config = MqttConfig.model_validate(
        {
            "host": broker.host,
            "port": broker.port,
            "client_id": "parse-agent",
            "routes": [{"topic": "plant/parse/mes/#", "parser": "json", "kind": "mes_event"}],
        }
    )
    size = ingest_module.PARSE_ON_LOOP_MAX_BYTES + 1
    with Store(tmp_path / "store.sqlite3") as store:
        writer = RecordWriter(store, max_rows=500, max_delay_s=0.05)
        async with running(MqttIngest(config, store, writer), writer):
            for i, pad in enumerate((size, 0)):
                pads = ["x" * 1000] * -(-pad // 1000)  # over `size` bytes, in strings under max_string_chars
                payload = {"id": f"p-{i}", "asset": "P-1", "type": "t", "pad": pads}
                await publish(broker, [("plant/parse/mes/x", json.dumps(payload).encode())])
                await wait_until(lambda n=i + 1: store.record_count() == n, timeout=30)
    assert parsed_on == [(1, False), (1, True)]


def _clients() -> list[MqttClient]:
    """The ingest's live MqttClient, found among the objects the garbage collector tracks (it is a local of run())."""
    return [o for o in gc.get_objects() if isinstance(o, MqttClient) and o.client_id == "bytes-agent"]
