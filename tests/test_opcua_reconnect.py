"""The failure this connector exists for: the OPC UA server restarts while values keep coming (opcua-asyncio #70)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from edge_agent.config import NodeConfig
from edge_agent.connectors.opcua import RECONNECTS
from tests.fixtures.opcua import OpcuaServer, running_source, source_config, wait_until

pytestmark = pytest.mark.opcua

VIB = "P-101.vibration_mm_s"
# One sample per 40 ms: a few dozen values fall into the outage, few enough to keep the test fast.
PERIOD_S = 0.04


# Sample values start here, apart from the 0.0 a (re)started server presents before the first write.
FIRST = 1000.0


class Producer:
    """Writes sample i = FIRST + i stamped now, through the endpoint when it is up, to history while it is down."""

    def __init__(self, server: OpcuaServer) -> None:
        self.server = server
        self.written: list[tuple[datetime, float]] = []

    async def produce(self, seconds: float) -> None:
        end = asyncio.get_running_loop().time() + seconds
        while asyncio.get_running_loop().time() < end:
            when, value = datetime.now(UTC), FIRST + len(self.written)
            await self.server.write({VIB: value}, when)
            self.written.append((when, value))
            await asyncio.sleep(PERIOD_S)


async def test_server_restart_resubscribes_and_backfills_the_gap(opcua_server: OpcuaServer, tmp_path: Path) -> None:
    """After a restart a new session delivers live values again and the outage is backfilled, each value once."""
    config = source_config(opcua_server.endpoint, [VIB])
    producer = Producer(opcua_server)
    reconnects_before = RECONNECTS.labels("plc")._value.get()
    async with running_source(config, tmp_path / "agent") as agent:

        def produced_stored() -> list[tuple[datetime, float]]:
            return [(r.source_time, r.value) for r in agent.tag_values(VIB) if r.value >= FIRST]

        await producer.produce(0.5)
        await wait_until(lambda: len(produced_stored()) >= 5, what="live values before the restart")
        await opcua_server.stop()
        outage_start = len(producer.written)
        await producer.produce(1.0)  # the outage: these exist only in the server's history
        outage = range(outage_start, len(producer.written))
        restarted_at = datetime.now(UTC)
        await opcua_server.start()
        await producer.produce(2.0)
        await wait_until(
            lambda: len(produced_stored()) >= len(producer.written), timeout=15, what="every produced value stored"
        )
        records = [r for r in agent.tag_values(VIB) if r.value >= FIRST]

    assert sorted((r.source_time, r.value) for r in records) == producer.written  # nothing lost, nothing twice
    # Written while the endpoint was down: they can only have come from HistoryRead.
    from_outage = [r for r in records if int(r.value - FIRST) in outage]
    assert len(from_outage) == len(outage) > 5 and all(r.historical for r in from_outage)
    late_live = [r for r in records if not r.historical and r.source_time > restarted_at + timedelta(seconds=1)]
    assert late_live, "no live value after the restart: the subscription did not come back"
    # At least one new session (a loaded CI box may time out a health read and add another; values dedupe).
    assert RECONNECTS.labels("plc")._value.get() >= reconnects_before + 1


async def test_first_start_backfills_history_page_by_page(
    opcua_server: OpcuaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """history_backfill_initial_s reads what the server kept before the agent started, across truncated pages."""
    import edge_agent.connectors.opcua.history

    # asyncua's history cuts a reply at NumValuesPerNode without a continuation point: 23 values = 5 pages of 5.
    monkeypatch.setattr(edge_agent.connectors.opcua.history, "HISTORY_PAGE_VALUES", 5)
    t0 = datetime.now(UTC) - timedelta(minutes=10)
    written = [(t0 + timedelta(seconds=i), FIRST + i) for i in range(23)]
    for when, value in written:
        await opcua_server.write({VIB: value}, when)
    config = source_config(opcua_server.endpoint, [VIB], history_backfill_initial_s=3600.0)
    async with running_source(config, tmp_path / "agent") as agent:
        await wait_until(lambda: len(agent.tag_values(VIB)) >= 23, what="23 values")
        await asyncio.sleep(0.3)  # a duplicate, if any were stored, would have landed by now
        records = agent.tag_values(VIB)
    # The last write is also the node's current value, so it arrives live too: stored once, either way.
    assert [(r.source_time, r.value) for r in records] == written
    assert sum(r.historical for r in records) >= 22


async def test_notification_overflow_reconnects_and_backfills(
    opcua_server: OpcuaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When our notification queue overflows, the session is replaced and the dropped values come from history."""
    import edge_agent.connectors.opcua.session

    monkeypatch.setattr(edge_agent.connectors.opcua.session, "NOTIFICATION_QUEUE_MAX", 5)
    config = source_config(opcua_server.endpoint, [VIB], publishing_interval_ms=200.0)
    reconnects_before = RECONNECTS.labels("plc")._value.get()
    async with running_source(config, tmp_path / "agent") as agent:
        t0 = datetime.now(UTC)
        written = [(t0 + timedelta(milliseconds=i), FIRST + i) for i in range(60)]
        for when, value in written:  # 60 changes inside one publishing interval: 12 times the queue
            await opcua_server.write({VIB: value}, when)
        await wait_until(
            lambda: len([r for r in agent.tag_values(VIB) if r.value >= FIRST]) >= 60, timeout=15, what="all 60 values"
        )
        records = [r for r in agent.tag_values(VIB) if r.value >= FIRST]
    assert [(r.source_time, r.value) for r in records] == written
    assert RECONNECTS.labels("plc")._value.get() >= reconnects_before + 1


async def test_server_queue_overflow_is_repaired_from_history(opcua_server: OpcuaServer, tmp_path: Path) -> None:
    """Values the server dropped from a full monitored-item queue are read back from its history."""
    node = NodeConfig(node_id=opcua_server.node_id(VIB), tag=VIB, sampling_interval_ms=0, queue_size=5)
    config = source_config(opcua_server.endpoint, [], nodes=[node], publishing_interval_ms=500.0)
    async with running_source(config, tmp_path / "agent") as agent:
        await wait_until(lambda: len(agent.tag_values(VIB)) == 1, what="the initial value")
        t0 = datetime.now(UTC)
        written = [(t0 + timedelta(milliseconds=i), FIRST + i) for i in range(40)]
        for when, value in written:  # 40 changes within one publishing interval; the server keeps the last 5
            await opcua_server.write({VIB: value}, when)
        await wait_until(
            lambda: len([r for r in agent.tag_values(VIB) if r.value >= FIRST]) >= 40, timeout=15, what="all 40 values"
        )
        records = [r for r in agent.tag_values(VIB) if r.value >= FIRST]
    assert [(r.source_time, r.value) for r in records] == written
    assert sum(r.historical for r in records) >= 35


async def test_a_stop_as_the_server_goes_away_stops_the_source(opcua_server: OpcuaServer, tmp_path: Path) -> None:
    """The agent stopped as its server goes away (a plant shutting both down): the source ends with the cancellation
    within a second and does not go on reconnecting. The race where the lost connection's error reaches the run loop
    instead of the cancellation (a server process that exits: tests/test_install.py's plant run met it as
    `component_stop_overran`, exit 1) is closed by the supervisor telling the source first (`stop_requested`)."""
    config = source_config(opcua_server.endpoint, [VIB])
    async with running_source(config, tmp_path / "agent") as agent:
        stopping = asyncio.create_task(opcua_server.stop())
        await asyncio.sleep(0)
        agent.source.stop_requested()  # what the supervisor does before it cancels (daemon.HearsStop)
        agent.task.cancel()
        await stopping
        done, _ = await asyncio.wait({agent.task}, timeout=1.0)
        assert agent.task in done, "the source kept running after it was cancelled"
        assert agent.task.cancelled()
    await opcua_server.start()
