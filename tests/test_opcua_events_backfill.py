"""No silent hole in the history: alarms raised during an outage are read back, and what cannot be read back is
recorded as a `data_gap` record with an `opcua.gap` audit entry (real asyncua server, real store, real audit log)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from asyncua import ua

from edge_agent.audit import AuditLog
from edge_agent.audit.entry import AuditEntry
from edge_agent.audit.log import iter_lines
from edge_agent.base.types import StoredRecord
from edge_agent.connectors.opcua import GAPS
from edge_agent.sim.opcua_server import RetainedHistory
from edge_agent.sim.plant import AlarmEvent
from tests.fixtures.opcua import OpcuaServer, Running, running_source, source_config, wait_until

pytestmark = pytest.mark.opcua

VIB = "P-101.vibration_mm_s"
T0 = datetime(2020, 3, 2, 6, 0, tzinfo=UTC)
# history_backfill_max_s of the outage test: the outage lasts longer, the reconnect takes less.
MAX_S = 5.0
# Sample values start here, apart from the 0.0 a (re)started server presents before the first write.
FIRST = 1000.0


def now() -> datetime:
    return datetime.now(UTC)


def gaps(agent: Running) -> list[StoredRecord]:
    return agent.store.records(kinds=["data_gap"])


def alarm(message: str, active: bool = True) -> AlarmEvent:
    return AlarmEvent(now(), "P-101", "HighVibration", message, 700 if active else 100, active)


@pytest.fixture
def audit(tmp_path: Path) -> Iterator[AuditLog]:
    log = AuditLog.open(tmp_path / "audit", origin="edge-agent/test")
    try:
        yield log
    finally:
        log.close()


def gap_entries(audit: AuditLog) -> list[dict[str, Any]]:
    return [
        e.payload for e in (AuditEntry.from_line(line) for line in iter_lines(audit.path)) if e.event == "opcua.gap"
    ]


@asynccontextmanager
async def served(tmp_path: Path, **kwargs: Any) -> AsyncIterator[OpcuaServer]:
    server = OpcuaServer(tmp_path / "server", **kwargs)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def write_live(server: OpcuaServer, agent: Running, count: int) -> list[tuple[datetime, float]]:
    """`count` values stamped now, each waited for in the store; returns (time, value) pairs."""
    written = []
    for _ in range(count):
        when, value = now(), FIRST + len(agent.tag_values(VIB))
        await server.write({VIB: value}, when)
        written.append((when, value))
        await wait_until(
            lambda value=value: any(r.value == value for r in agent.tag_values(VIB)), what=f"value {value}"
        )
    return written


class TestEventBackfill:
    async def test_alarms_raised_during_an_outage_are_stored_once_marked_historical(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """Alarms fired while the endpoint was down come back with HistoryRead of events, each stored once."""
        assert opcua_server.server is not None
        config = source_config(opcua_server.endpoint, [], events=True)
        async with running_source(config, tmp_path / "agent") as agent:

            def alarms() -> list[StoredRecord]:
                return agent.store.records(kinds=["alarm"])

            await opcua_server.server.fire_alarm(alarm("live before"))
            await wait_until(lambda: len(alarms()) == 1, what="the first live alarm")
            await opcua_server.stop()
            for message in ("during 1", "during 2", "during 3"):
                await opcua_server.server.fire_alarm(alarm(message))  # into the server's history only
            await opcua_server.start()
            await wait_until(lambda: len(alarms()) == 4, timeout=15, what="the three alarms of the outage")
            await opcua_server.server.fire_alarm(alarm("live after", active=False))
            await wait_until(lambda: len(alarms()) == 5, what="the live alarm after the outage")
            await asyncio.sleep(0.5)  # a duplicate, had one been stored, would have landed by now
            stored = [(r.value["message"], r.historical) for r in alarms()]
            event_ids = [r.value["event_id"] for r in alarms()]
            recorded_gaps = gaps(agent)
            # The live copy and the HistoryRead copy of "live before" (the read overlaps) agree field for field: a
            # redelivery, not an EventId reused for another alarm.
            quarantined = agent.store.quarantined()
        assert quarantined == []
        assert stored == [
            ("live before", False),
            ("during 1", True),
            ("during 2", True),
            ("during 3", True),
            ("live after", False),
        ]
        assert len(set(event_ids)) == 5 and all(event_ids)
        assert recorded_gaps == []


class TestEventHistoryGap:
    async def test_server_without_event_history_records_the_interval_as_a_gap(
        self, tmp_path: Path, audit: AuditLog
    ) -> None:
        """A reconnect to a server that keeps no event history stores an event_history_unavailable gap, audited."""
        before = GAPS.labels("plc", "event_history_unavailable")._value.get()
        async with served(tmp_path, event_history=False) as server:
            config = source_config(server.endpoint, [], events=True)
            subscribing = now()
            async with running_source(config, tmp_path / "agent", audit=audit) as agent:
                await asyncio.sleep(0.5)  # a health read or two
                stopped = now()
                await server.stop()
                await server.start()
                restarted = now()
                await wait_until(lambda: len(gaps(agent)) == 1, timeout=15, what="the event history gap")
                [gap] = gaps(agent)
        assert (gap.kind, gap.key, gap.source, gap.historical) == ("data_gap", "plc", "plc", True)
        assert set(gap.value) == {"start", "end", "reason", "source", "tag"}
        assert (gap.value["reason"], gap.value["source"], gap.value["tag"]) == (
            "event_history_unavailable",
            "plc",
            None,
        )
        start, end = datetime.fromisoformat(gap.value["start"]), datetime.fromisoformat(gap.value["end"])
        assert gap.source_time == start and subscribing <= start <= stopped  # the last good health read
        assert restarted <= end <= now() + timedelta(seconds=1)  # the new subscription's start, plus a second
        assert gap_entries(audit) == [gap.value]
        assert GAPS.labels("plc", "event_history_unavailable")._value.get() == before + 1


class TestValueHistoryGaps:
    async def test_outage_longer_than_history_backfill_max_s_records_its_head(
        self, opcua_server: OpcuaServer, tmp_path: Path, audit: AuditLog
    ) -> None:
        """Only the last history_backfill_max_s of an outage is read back; its head is an outage_exceeds_history gap."""
        config = source_config(opcua_server.endpoint, [VIB], history_backfill_max_s=MAX_S)
        async with running_source(config, tmp_path / "agent", audit=audit) as agent:
            live = await write_live(opcua_server, agent, 3)
            last = live[-1][0]
            await opcua_server.stop()
            # The outage's head, just after the last stored value: older than max_s by the time the agent is back.
            head = [(last + timedelta(seconds=0.1 * (i + 1)), FIRST + 100 + i) for i in range(10)]
            for when, value in head:
                await opcua_server.write({VIB: value}, when)
            await asyncio.sleep(MAX_S + 1.0)
            # Its tail, stamped just ahead: inside the last max_s when the agent reconnects (within max_s - 1 s).
            tail = [(now() + timedelta(seconds=0.5 + 0.1 * i), FIRST + 200 + i) for i in range(5)]
            for when, value in tail:
                await opcua_server.write({VIB: value}, when)
            await opcua_server.start()
            await wait_until(lambda: len(gaps(agent)) == 1, timeout=15, what="the outage gap")
            await wait_until(
                lambda: len([r for r in agent.tag_values(VIB) if r.value >= FIRST + 200]) == len(tail),
                what="the backfilled tail",
            )
            [gap] = gaps(agent)
            from_outage = [(r.source_time, r.value) for r in agent.tag_values(VIB) if r.value >= FIRST + 100]
        assert (gap.key, gap.value["reason"], gap.value["tag"]) == (VIB, "outage_exceeds_history", VIB)
        assert gap.value["start"] == last.isoformat()  # the last value stored before the outage
        gap_end = datetime.fromisoformat(gap.value["end"])
        assert head[-1][0] < gap_end <= tail[0][0]
        assert from_outage == tail  # the head is the gap; the tail, within max_s, came back from history
        assert gap_entries(audit) == [gap.value]

    async def test_history_that_no_longer_holds_the_interval_records_history_unavailable(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """A history whose oldest value is later than the last one stored leaves that span as a gap."""
        config = source_config(opcua_server.endpoint, [VIB])
        async with running_source(config, tmp_path / "agent") as agent:
            live = await write_live(opcua_server, agent, 2)
            await opcua_server.stop()
            # The historian lost everything before `kept`: a new one holding a single later value.
            kept = live[-1][0] + timedelta(seconds=2)
            history = RetainedHistory()
            node_id = ua.NodeId.from_string(opcua_server.node_id(VIB))
            await history.new_historized_node(node_id, timedelta(hours=12))
            await history.save_node_value(
                node_id,
                ua.DataValue(ua.Variant(FIRST + 50, ua.VariantType.Double), SourceTimestamp=kept, ServerTimestamp=kept),
            )
            opcua_server.history = history
            await opcua_server.start()
            await wait_until(lambda: len(gaps(agent)) == 1, timeout=15, what="the history gap")
            await wait_until(lambda: any(r.value == FIRST + 50 for r in agent.tag_values(VIB)), what="the kept value")
            [gap] = gaps(agent)
            [kept_record] = [r for r in agent.tag_values(VIB) if r.value == FIRST + 50]
        assert gap.value == {
            "start": live[-1][0].isoformat(),
            "end": kept.isoformat(),
            "reason": "history_unavailable",
            "source": "plc",
            "tag": VIB,
        }
        assert kept_record.historical and kept_record.source_time == kept


class TestOverflowBit:
    OVERFLOW = ua.StatusCode(0x00000480)  # Good, InfoType DataValue, Overflow

    async def test_overflow_bit_without_history_records_a_queue_overflow_gap(
        self, opcua_server: OpcuaServer, tmp_path: Path, audit: AuditLog
    ) -> None:
        """A live value flagged Overflow, with backfill off, stores a gap from the value before it to it."""
        config = source_config(opcua_server.endpoint, [VIB], history_backfill=False)
        async with running_source(config, tmp_path / "agent", audit=audit) as agent:
            await opcua_server.write({VIB: FIRST}, T0)
            await wait_until(lambda: any(r.value == FIRST for r in agent.tag_values(VIB)), what="the first value")
            await opcua_server.write({VIB: FIRST + 1}, T0 + timedelta(seconds=5), self.OVERFLOW)
            await wait_until(lambda: len(gaps(agent)) == 1, what="the overflow gap")
            [gap] = gaps(agent)
            [flagged] = [r for r in agent.tag_values(VIB) if r.value == FIRST + 1]
        assert gap.value == {
            "start": T0.isoformat(),
            "end": (T0 + timedelta(seconds=5)).isoformat(),
            "reason": "queue_overflow",
            "source": "plc",
            "tag": VIB,
        }
        assert (flagged.quality, flagged.historical) == ("good", False)
        assert gap_entries(audit) == [gap.value]

    async def test_overflow_bit_with_history_is_repaired_not_a_gap(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """With backfill on, the span before a value flagged Overflow is read back from history: no gap."""
        config = source_config(opcua_server.endpoint, [VIB])
        async with running_source(config, tmp_path / "agent") as agent:
            t0 = now() - timedelta(seconds=30)  # inside the simulator's history period, unlike T0
            await opcua_server.write({VIB: FIRST}, t0)
            await wait_until(lambda: any(r.value == FIRST for r in agent.tag_values(VIB)), what="the first value")
            assert opcua_server.server is not None
            # Two values the server "lost" (in its history, never published), then the one flagged Overflow.
            for i in (1, 2):
                when = t0 + timedelta(seconds=i)
                await opcua_server.server.history.save_node_value(
                    ua.NodeId.from_string(opcua_server.node_id(VIB)),
                    ua.DataValue(
                        ua.Variant(FIRST + i, ua.VariantType.Double), SourceTimestamp=when, ServerTimestamp=when
                    ),
                )
            await opcua_server.write({VIB: FIRST + 3}, t0 + timedelta(seconds=3), self.OVERFLOW)
            await wait_until(
                lambda: len([r for r in agent.tag_values(VIB) if r.value >= FIRST]) == 4,
                what="the two lost values read back",
            )
            values = [(r.value, r.historical) for r in agent.tag_values(VIB) if r.value >= FIRST]
            recorded_gaps = gaps(agent)
        # The flagged value ends the repaired span, so history may deliver it before its live copy commits: once.
        assert values[:3] == [(FIRST, False), (FIRST + 1, True), (FIRST + 2, True)]
        assert [v for v, _ in values[3:]] == [FIRST + 3]
        assert recorded_gaps == []
