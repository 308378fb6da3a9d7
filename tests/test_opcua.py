"""OpcuaSource against the real simulator server: live values, deadband, alarm events, record helpers."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from asyncua import ua
from asyncua.server import event_generator

from edge_agent.config import NodeConfig
from edge_agent.connectors.opcua import Backoff, item_request, quality_of, tag_record
from edge_agent.sim.plant import AlarmEvent
from tests.fixtures.opcua import OpcuaServer, running_source, source_config, wait_until

pytestmark = pytest.mark.opcua

# Long before the server started: its initial values (stamped 'now') sort after, and filter out by date.
T0 = datetime(2020, 3, 2, 6, 0, tzinfo=UTC)
BEFORE_START = T0 + timedelta(days=1)
VIB = "P-101.vibration_mm_s"
LEVEL = "T-301.level_pct"
RUNNING = "P-101.running"


class TestLiveValues:
    async def test_written_values_are_stored_with_their_source_time(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """Each value written on the server becomes one live tag_value record stamped with its source time."""
        config = source_config(opcua_server.endpoint, [VIB, LEVEL, RUNNING])
        async with running_source(config, tmp_path / "agent") as agent:
            await opcua_server.write({VIB: 2.5, LEVEL: 55.25, RUNNING: True}, T0)
            await opcua_server.write({VIB: 3.75}, T0 + timedelta(seconds=5))
            await wait_until(lambda: len(agent.tag_values(VIB)) == 3, what="3 vibration records")
            await wait_until(lambda: len(agent.tag_values(RUNNING)) == 2, what="2 run-state records")
            vib = agent.tag_values(VIB)
            running = agent.tag_values(RUNNING)
            level = agent.tag_values(LEVEL)
        # Besides these, each tag has one record of its value when subscribed (the server's initial 0.0 / False).
        assert [(r.source_time, r.value) for r in vib if r.source_time < BEFORE_START] == [
            (T0, 2.5),
            (T0 + timedelta(seconds=5), 3.75),
        ]
        assert [(r.source_time, r.value) for r in running if r.source_time < BEFORE_START] == [(T0, True)]
        assert [(r.source_time, r.value) for r in level if r.source_time < BEFORE_START] == [(T0, 55.25)]
        assert all(
            r.kind == "tag_value" and r.source == "plc" and not r.historical and r.quality == "good"
            for r in vib + running + level
        )

    async def test_absolute_deadband_drops_changes_within_it(self, opcua_server: OpcuaServer, tmp_path: Path) -> None:
        """With an absolute deadband of 0.5 only changes larger than 0.5 from the last reported value arrive."""
        node = NodeConfig(
            node_id=opcua_server.node_id(VIB),
            tag=VIB,
            sampling_interval_ms=0,
            queue_size=100,
            deadband_type="absolute",
            deadband_value=0.5,
        )
        config = source_config(opcua_server.endpoint, [], nodes=[node])
        async with running_source(config, tmp_path / "agent") as agent:
            for i, value in enumerate([1.0, 1.2, 1.4, 2.0, 2.1, 3.0]):
                await opcua_server.write({VIB: value}, T0 + timedelta(seconds=i))
            await wait_until(lambda: any(r.value == 3.0 for r in agent.tag_values(VIB)), what="the value 3.0")
            values = [r.value for r in agent.tag_values(VIB) if r.source_time < BEFORE_START]
        assert values == [1.0, 2.0, 3.0]  # 1.2, 1.4 within 0.5 of 1.0; 2.1 within 0.5 of 2.0

    async def test_a_node_the_server_lacks_does_not_stop_the_others(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """A monitored item the server refuses is logged and counted; the other nodes still deliver values."""
        nodes = [
            NodeConfig(node_id="ns=2;s=NO-SUCH.tag", tag="NO-SUCH.tag", sampling_interval_ms=0),
            NodeConfig(node_id=opcua_server.node_id(VIB), tag=VIB, sampling_interval_ms=0),
        ]
        config = source_config(opcua_server.endpoint, [], nodes=nodes)
        async with running_source(config, tmp_path / "agent") as agent:
            await opcua_server.write({VIB: 4.5}, T0)
            await wait_until(lambda: any(r.value == 4.5 for r in agent.tag_values(VIB)), what="the value 4.5")
            assert agent.tag_values("NO-SUCH.tag") == []


class TestAlarms:
    async def test_alarm_events_become_alarm_records(self, opcua_server: OpcuaServer, tmp_path: Path) -> None:
        """An AlarmConditionType event from the Server object is stored as an alarm record keyed by its asset."""
        config = source_config(opcua_server.endpoint, [], events=True)
        async with running_source(config, tmp_path / "agent") as agent:
            assert opcua_server.server is not None
            await opcua_server.server.fire_alarm(
                AlarmEvent(T0, "P-101", "HighVibration", "Vibración alta en P-101: 7.4 mm/s", 700, True)
            )
            await opcua_server.server.fire_alarm(
                AlarmEvent(
                    T0 + timedelta(minutes=30), "P-101", "HighVibration", "Vibración normal en P-101", 100, False
                )
            )
            await wait_until(lambda: len(agent.store.records(kinds=["alarm"])) == 2, what="2 alarm records")
            alarms = agent.store.records(kinds=["alarm"])
        raised, cleared = alarms
        assert raised.key == "P-101" and raised.source_time == T0
        assert {k: v for k, v in raised.value.items() if k != "event_id"} == {
            "message": "Vibración alta en P-101: 7.4 mm/s",
            "severity": 700,
            "condition": "HighVibration",
            "active": True,
        }
        assert cleared.value["active"] is False and cleared.value["severity"] == 100
        assert len(raised.value["event_id"]) > 0 and raised.value["event_id"] != cleared.value["event_id"]

    async def test_an_event_id_the_server_reuses_for_another_alarm_is_quarantined_not_skipped(
        self, opcua_server: OpcuaServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A server that numbers its EventIds and restarts the count gives a new alarm an old alarm's EventId. The
        store's key for an alarm is its EventId, so the new alarm used to be skipped as a duplicate without a trace;
        it is kept in quarantine as `duplicate_id`, with the record as evidence, and the alarms after it are stored."""
        counter = iter([1, 2, 1, 3])  # the third alarm comes after the server restarted its count
        monkeypatch.setattr(event_generator, "uuid", SimpleNamespace(uuid4=lambda: uuid.UUID(int=next(counter))))
        config = source_config(opcua_server.endpoint, [], events=True)
        alarms = [
            AlarmEvent(T0, "P-101", "HighVibration", "Vibración alta en P-101", 700, True),
            AlarmEvent(T0 + timedelta(minutes=5), "P-101", "HighVibration", "Vibración normal en P-101", 100, False),
            AlarmEvent(T0 + timedelta(hours=2), "C-201", "HighTemperature", "Temperatura alta en C-201", 800, True),
            AlarmEvent(T0 + timedelta(hours=3), "C-201", "HighTemperature", "Temperatura normal en C-201", 100, False),
        ]
        async with running_source(config, tmp_path / "agent") as agent:
            assert opcua_server.server is not None
            for alarm in alarms:
                await opcua_server.server.fire_alarm(alarm)
            await wait_until(lambda: len(agent.store.records(kinds=["alarm"])) == 3, what="3 alarm records")
            await wait_until(lambda: bool(agent.store.quarantined()), what="the reused EventId in quarantine")
            stored = [r.value["message"] for r in agent.store.records(kinds=["alarm"])]
            [item] = agent.store.quarantined()
        assert stored == ["Vibración alta en P-101", "Vibración normal en P-101", "Temperatura normal en C-201"]
        assert (item.source, item.topic, item.reason) == ("plc", "opcua/plc/events", "duplicate_id")
        evidence = json.loads(item.raw)
        assert (evidence["key"], evidence["value"]["message"]) == ("C-201", "Temperatura alta en C-201")


class TestItemRequest:
    """Deadbands are filtered by the server, so the request must carry exactly what the node config says. The
    simulator's server (asyncua) implements absolute deadbands (tested live above) but passes every change under a
    percent deadband, so percent is specified here at the request."""

    @pytest.mark.parametrize(
        ("kind", "expected"), [("absolute", ua.DeadbandType.Absolute), ("percent", ua.DeadbandType.Percent)]
    )
    def test_deadband_becomes_a_data_change_filter(self, kind: str, expected: ua.DeadbandType) -> None:
        node = NodeConfig(
            node_id="ns=2;s=T-301.level_pct",
            tag=LEVEL,
            sampling_interval_ms=250,
            queue_size=20,
            deadband_type=kind,
            deadband_value=2.5,
        )
        params = item_request(7, node).RequestedParameters
        assert (params.ClientHandle, params.SamplingInterval, params.QueueSize) == (7, 250, 20)
        assert isinstance(params.Filter, ua.DataChangeFilter)
        assert (params.Filter.DeadbandType, params.Filter.DeadbandValue) == (expected, 2.5)
        assert params.Filter.Trigger == ua.DataChangeTrigger.StatusValue

    def test_no_deadband_no_filter(self) -> None:
        request = item_request(1, NodeConfig(node_id="ns=2;s=P-101.running", tag=RUNNING))
        assert not isinstance(request.RequestedParameters.Filter, ua.DataChangeFilter)  # asyncua's empty default
        assert request.ItemToMonitor.NodeId == ua.NodeId.from_string("ns=2;s=P-101.running")
        assert request.MonitoringMode == ua.MonitoringMode.Reporting


class TestRecordHelpers:
    def test_live_and_history_copies_of_one_value_share_a_key(self) -> None:
        """The idempotency key ignores how a value arrived, so live + backfill overlap is stored once."""
        dv = ua.DataValue(ua.Variant(2.5, ua.VariantType.Double), SourceTimestamp=T0, ServerTimestamp=T0)
        live = tag_record("plc", VIB, dv, historical=False)
        backfilled = tag_record("plc", VIB, dv, historical=True)
        assert live.idempotency_key == backfilled.idempotency_key and backfilled.historical

    @pytest.mark.parametrize(
        ("code", "quality"),
        [
            (ua.StatusCodes.Good, "good"),
            (ua.StatusCodes.UncertainLastUsableValue, "uncertain"),
            (ua.StatusCodes.BadSensorFailure, "bad"),
        ],
    )
    def test_quality_follows_status_code_severity(self, code: int, quality: str) -> None:
        """Quality is the status code's class: good, uncertain or bad."""
        assert quality_of(ua.StatusCode(code)) == quality

    def test_backoff_is_jittered_within_doubling_bounds(self) -> None:
        """Delay n lies in [min, min·2^n] capped at max, and reset starts over."""
        import random

        backoff = Backoff(0.5, 4.0, rng=random.Random(1))
        delays = [backoff.next_delay() for _ in range(6)]
        ceilings = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
        assert all(0.5 <= d <= c for d, c in zip(delays, ceilings, strict=True))
        backoff.reset()
        assert backoff.next_delay() == 0.5


class TestAudit:
    async def test_ingest_batches_are_audited_with_their_counts(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """Stored values are summarized in `ingest.batch` audit entries whose counts add up to what was stored."""
        from edge_agent.audit import AuditLog
        from edge_agent.audit.entry import AuditEntry
        from edge_agent.audit.log import iter_lines

        audit = AuditLog.open(tmp_path / "audit", origin="edge-agent/test")
        config = source_config(opcua_server.endpoint, [VIB])
        try:
            async with running_source(config, tmp_path / "agent", audit=audit) as agent:
                for i in range(5):
                    await opcua_server.write({VIB: 10.0 + i}, T0 + timedelta(seconds=i))
                await wait_until(lambda: len(agent.tag_values(VIB)) == 6, what="6 records")
                stored = len(agent.tag_values(VIB))
            entries = [AuditEntry.from_line(line) for line in iter_lines(audit.path)]
        finally:
            audit.close()
        batches = [e for e in entries if e.event == "ingest.batch"]
        assert batches and all(e.actor == "opcua" and e.payload["source"] == "plc" for e in batches)
        assert sum(e.payload["stored"] for e in batches) == stored == 6
