"""The plant simulator: reproducible, documented shapes (docs/records.md), malformed share, real server + broker."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from asyncua import Client
from paho.mqtt.enums import CallbackAPIVersion

from edge_agent.config import AgentConfig, MqttConfig, SiteConfig
from edge_agent.config.sim import SimConfig
from edge_agent.sim import MALFORMED_KINDS, Malformer, Plant, SimClock, encode_mes, run_sim, tag_names, tick_messages
from edge_agent.sim.plant import ASSETS
from tests.fixtures.broker import Broker, free_port

START = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)
# Eight simulated hours at 5 s per tick: a full shift, enough for faults, downtimes and work orders to occur.
SHIFT_TICKS = 8 * 3600 // 5
MES_TYPES = {
    "work_order_start",
    "work_order_end",
    "downtime_start",
    "downtime_end",
    "quality_check",
    "production_count",
}
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$")


def run_plant(seed: int, ticks: int = SHIFT_TICKS, share: float = 0.0) -> list[tuple]:
    plant = Plant(seed, START, 5.0, site="demo-plant")
    malformer = Malformer(seed, share, 300 * 1024)
    out = []
    for _ in range(ticks):
        tick = plant.step()
        out.append((tick.time, tick.values, tick.alarms, tick_messages("demo-plant", tick, malformer)))
    return out


@pytest.fixture(scope="module")
def shift() -> list[tuple]:
    return run_plant(seed=7)


class TestReproducible:
    def test_same_seed_same_run(self, shift: list[tuple]) -> None:
        """Two plants with the same seed and start produce identical values, alarms and messages, tick for tick."""
        assert run_plant(seed=7) == shift

    def test_other_seed_other_run(self, shift: list[tuple]) -> None:
        """A different seed gives a different run."""
        assert run_plant(seed=8, ticks=200) != shift[:200]

    def test_malformed_share_leaves_the_good_stream_alone(self, shift: list[tuple]) -> None:
        """Malformed messages come in addition: the good messages of a run are the same at any share."""
        noisy = run_plant(seed=7, share=0.3)
        good = [m for _, _, _, msgs in noisy for m in msgs if m.malformed is None]
        assert good == [m for _, _, _, msgs in shift for m in msgs]


class TestShapes:
    def test_every_tick_samples_every_tag(self, shift: list[tuple]) -> None:
        """Each tick carries one value per tag: floats, and booleans for run state."""
        for _, values, _, _ in shift[:50]:
            assert list(values) == tag_names()
            assert all(
                isinstance(v, bool) if t.endswith(".running") else isinstance(v, float) for t, v in values.items()
            )

    def test_mes_events_match_the_documented_json(self, shift: list[tuple]) -> None:
        """Every MES event is a JSON object with id, ISO ts, a documented type, asset and line, on mes/<type>."""
        events = [(m.topic, json.loads(m.payload)) for _, _, _, msgs in shift for m in msgs if "/mes/" in m.topic]
        assert {e["type"] for _, e in events} == MES_TYPES
        for topic, event in events:
            assert topic == f"plant/demo-plant/mes/{event['type']}"
            assert re.fullmatch(r"mes-\d{6}", event["id"]) and ISO_Z.match(event["ts"])
            assert event["line"] == "L1" and event["asset"] in {"L1", *(a.name for a in ASSETS)}
            if event["type"] == "quality_check":
                assert event["result"] in {"pass", "fail"} and {"measure", "value", "unit"} <= event.keys()
            if event["type"] == "production_count":
                assert isinstance(event["count"], int) and event["unit"] == "m3"
        assert len({e["id"] for _, e in events}) == len(events)

    def test_every_downtime_end_matches_a_start(self, shift: list[tuple]) -> None:
        """A downtime_end carries the downtime_id of an earlier downtime_start of the same asset."""
        starts: dict[str, str] = {}
        ends = 0
        for _, _, _, msgs in shift:
            for m in msgs:
                event = json.loads(m.payload) if "/mes/" in m.topic else {}
                if event.get("type") == "downtime_start":
                    starts[event["downtime_id"]] = event["asset"]
                elif event.get("type") == "downtime_end":
                    assert starts[event["downtime_id"]] == event["asset"]
                    ends += 1
        assert ends >= 1

    def test_log_lines_have_time_author_and_text(self, shift: list[tuple]) -> None:
        """Operator lines read `<ISO time> <author>: <text>` on log/<area>, in Spanish and English at least."""
        lines = [(m.topic, m.payload.decode()) for _, _, _, msgs in shift for m in msgs if "/log/" in m.topic]
        assert lines
        for topic, line in lines:
            assert re.fullmatch(r"plant/demo-plant/log/(operations|maintenance)", topic)
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ [a-z]+\.[a-z]+: .+", line)
        text = " ".join(line for _, line in lines)
        assert re.search(r"\b(sin novedad|se detiene|Ronda|Reparación|Nivel)", text)  # Spanish
        assert re.search(r"\b(no issues|stopping|Repair|Greased)\b", text)  # English

    def test_high_vibration_alarm_is_raised_and_cleared(self, shift: list[tuple]) -> None:
        """Vibration faults raise a HighVibration alarm (severity 700) that a later tick clears."""
        alarms = [a for _, _, tick_alarms, _ in shift for a in tick_alarms]
        raised = [a for a in alarms if a.active]
        assert raised and all(a.condition == "HighVibration" and a.severity == 700 for a in raised)
        assert any(not a.active and a.asset == raised[0].asset and a.time > raised[0].time for a in alarms)


class TestMalformed:
    def test_share_produces_every_bad_kind(self) -> None:
        """At a 50 % share over a shift every malformed kind occurs, each really malformed."""
        bad = [m for _, _, _, msgs in run_plant(seed=3, share=0.5) for m in msgs if m.malformed]
        assert {m.malformed for m in bad} == set(MALFORMED_KINDS)
        for m in bad:
            if m.malformed == "bad_json":
                with pytest.raises(json.JSONDecodeError):
                    json.loads(m.payload)
            elif m.malformed == "bad_utf8":
                with pytest.raises(UnicodeDecodeError):
                    m.payload.decode("utf-8")
            elif m.malformed == "schema_mismatch":
                assert not isinstance(json.loads(m.payload), dict)
            else:
                assert len(m.payload) > 256 * 1024

    def test_zero_share_sends_nothing_malformed(self) -> None:
        """Share 0 never adds a malformed message."""
        malformer = Malformer(1, 0.0, 10)
        good = encode_mes("s", {"id": "mes-1", "ts": "2026-11-29T06:00:00Z", "type": "quality_check"})
        assert all(malformer.sibling(good) is None for _ in range(1000))


class TestClock:
    def test_catches_up_at_speed_then_keeps_wall_time(self) -> None:
        """Sim time runs `speed` times faster from its past start until it meets the wall clock, then 1:1."""
        now = [0.0]
        wall = START + timedelta(hours=1)
        clock = SimClock(START, speed=60, wall_start=wall, monotonic=lambda: now[0])
        now[0] = 30.0
        assert clock.now() == START + timedelta(minutes=30)
        now[0] = 120.0  # caught up after 3600/59 s; from then on wall time
        assert clock.now() == wall + timedelta(seconds=120)
        assert clock.elapsed_at(START + timedelta(minutes=30)) == 30.0


@pytest.mark.opcua
@pytest.mark.broker
async def test_run_sim_serves_opcua_and_publishes_every_message(broker: Broker, tmp_path: Path) -> None:
    """A short replay serves the plant over OPC UA and publishes each MES event and log line to the broker."""
    port = free_port()
    config = AgentConfig(
        site=SiteConfig(id="demo-plant"),
        paths={"state_dir": tmp_path},
        mqtt=MqttConfig(port=broker.port),
        sim=SimConfig(
            opcua_endpoint=f"opc.tcp://127.0.0.1:{port}/sim", backfill_hours=2.0, speed=20000.0, malformed_share=0.2
        ),
    )
    received: list[paho.MQTTMessage] = []
    subscribed = threading.Event()
    sub = paho.Client(CallbackAPIVersion.VERSION2, client_id="test-sim-sub", protocol=paho.MQTTv5)
    sub.on_connect = lambda c, *a: c.subscribe("plant/#", qos=1)
    sub.on_subscribe = lambda *a: subscribed.set()
    sub.on_message = lambda c, u, msg: received.append(msg)
    sub.connect(broker.host, broker.port)
    sub.loop_start()
    try:
        assert await asyncio.to_thread(subscribed.wait, 10)
        ready = asyncio.Event()
        sim_task = asyncio.create_task(run_sim(config, seed=5, duration_s=4.0, ready=ready))
        await asyncio.wait_for(ready.wait(), 15)
        async with Client(config.sim.opcua_endpoint) as client:
            level = await client.get_node("ns=2;s=T-301.level_pct").read_value()
        stats = await sim_task
        expected = stats.mes_events + stats.log_lines + sum(stats.malformed.values())
        for _ in range(100):
            if len(received) >= expected:
                break
            await asyncio.sleep(0.05)
    finally:
        sub.loop_stop()
        sub.disconnect()
    assert 2.0 <= level <= 98.0
    assert stats.first_time is not None and stats.last_time - stats.first_time >= timedelta(hours=2)
    assert stats.mes_events > 0 and stats.log_lines > 0
    assert len(received) == expected
    assert {m.topic.split("/")[2] for m in received} == {"mes", "log"}


def test_cli_refuses_a_share_outside_0_1(tmp_path: Path) -> None:
    """`edge-agent sim --malformed-share 1.5` exits 2 with the reason, before serving anything."""
    import subprocess
    import sys

    config = tmp_path / "sim.toml"
    config.write_text('[site]\nid = "demo-plant"\n', encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "edge_agent", "sim", "--config", str(config), "--malformed-share", "1.5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "--malformed-share must be within 0..1, got 1.5" in result.stderr
