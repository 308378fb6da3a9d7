"""SparkplugHost against a real Mosquitto (one per module) and a real SQLite store: the host's session and STATE,
births and aliased data stored, rebirth requests on the wire, deaths as data gaps, retained births read first.

TCK assertion ids (eclipse-sparkplug/sparkplug, specification 3.0) are named where a test checks one."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from edge_agent.config.mqtt import MqttConfig
from edge_agent.config.sparkplug import SparkplugConfig
from edge_agent.connectors.sparkplug import SparkplugHost
from edge_agent.connectors.sparkplug import sparkplug_b_pb2 as pb
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.sim.sparkplug import EdgeNodeEncoder
from edge_agent.store import RecordWriter, Store
from tests.fixtures.broker import Broker, _require_mosquitto

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """One broker for the module: every test uses its own group, node and host ids."""
    _require_mosquitto()
    b = Broker(tmp_path_factory.mktemp("sparkplug-broker"))
    b.start()
    yield b
    b.stop()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


def mqtt_config(broker: Broker) -> MqttConfig:
    return MqttConfig(host=broker.host, port=broker.port, client_id="agent", reconnect_min_s=0.05, reconnect_max_s=0.5)


class Peer:
    """A plain paho client: the edge node's side, and an observer of what the host publishes."""

    def __init__(self, broker: Broker, client_id: str) -> None:
        self.messages: list[paho.MQTTMessage] = []
        self.client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
        self.client.on_message = lambda c, u, m: self.messages.append(m)
        self.client.connect(broker.host, broker.port)
        self.client.loop_start()

    def subscribe(self, topic: str) -> None:
        self.client.subscribe(topic, qos=1)
        time.sleep(0.1)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 0) -> None:
        self.client.publish(topic, payload, qos=qos, retain=retain).wait_for_publish(5)

    def on(self, topic: str) -> list[paho.MQTTMessage]:
        return [m for m in self.messages if m.topic == topic]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def peer(broker: Broker, request: pytest.FixtureRequest) -> Iterator[Peer]:
    p = Peer(broker, f"peer-{request.node.name}"[:60])
    yield p
    p.close()


@asynccontextmanager
async def running(
    broker: Broker, store: Store, group: str, *, writer_delay_s: float = 0.01, **overrides: Any
) -> AsyncIterator[SparkplugHost]:
    """A host for `group` with its store writer, run once; stopped like the supervisor stops it."""
    config = SparkplugConfig(enabled=True, group_ids=[group], client_id=f"host-{group}", **overrides)
    writer = RecordWriter(store, max_rows=500, max_delay_s=writer_delay_s)
    host = SparkplugHost(mqtt_config(broker), config, store, writer)
    writer_task = asyncio.create_task(writer.run())
    ready = asyncio.Event()
    task = asyncio.create_task(host.run(ready))
    await asyncio.wait_for(ready.wait(), 10)
    await asyncio.sleep(0.1)  # the subscriptions are granted before ready; give the broker a moment anyway
    try:
        yield host
    finally:
        for t in (task, writer_task):
            t.cancel()
            try:
                await t
            except asyncio.CancelledError:
                pass


async def until(check: Any, timeout: float = 5.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        await asyncio.sleep(0.02)
    raise AssertionError(f"not within {timeout}s: {check}")


def tag_values(store: Store) -> list[tuple[str, Any]]:
    return [(r.key, r.value) for r in store.records(kinds=["tag_value"])]


def now_ms() -> int:
    return int(time.time() * 1000)


class TestHostSession:
    async def test_primary_host_state_birth_and_clean_death(self, broker: Broker, store: Store, peer: Peer) -> None:
        """[tck-id-host-topic-phid-birth-topic], [...-birth-qos], [...-birth-retain], [...-birth-payload],
        [...-birth-payload-timestamp]: a retained JSON {"online": true, "timestamp": T} on spBv1.0/STATE/<id>;
        [tck-id-host-topic-phid-death-payload-disconnect-clean]: {"online": false} with a later time before the
        DISCONNECT."""
        async with running(broker, store, "GS", primary_host_id="scada-1") as host:
            await asyncio.sleep(0.2)
        late = Peer(broker, "late-reader")  # a late subscriber gets the retained STATE: the death, stamped later
        late.subscribe("spBv1.0/STATE/scada-1")
        await until(lambda: late.on("spBv1.0/STATE/scada-1"))
        (retained,) = late.on("spBv1.0/STATE/scada-1")
        death = json.loads(retained.payload)
        assert retained.retain and death["online"] is False
        assert death["timestamp"] >= host._state_ts > 0
        late.close()

    async def test_birth_timestamp_is_the_wills(self, broker: Broker, store: Store, peer: Peer) -> None:
        """[tck-id-host-topic-phid-birth-payload-timestamp]: the birth's timestamp is the one of the Will set in
        the CONNECT before it; [tck-id-message-flow-hid-sparkplug-state-message-delivered]: a STATE of our id
        saying offline is answered with the birth again, same timestamp."""
        peer.subscribe("spBv1.0/STATE/scada-2")
        async with running(broker, store, "GT", primary_host_id="scada-2") as host:
            birth = await until(lambda: [m for m in peer.on("spBv1.0/STATE/scada-2") if b"true" in m.payload])
            assert json.loads(birth[0].payload) == {"online": True, "timestamp": host._state_ts}
            peer.publish("spBv1.0/STATE/scada-2", json.dumps({"online": False, "timestamp": 1}).encode(), qos=1)
            again = await until(lambda: [m for m in peer.on("spBv1.0/STATE/scada-2") if b"true" in m.payload][1:])
            assert json.loads(again[0].payload)["timestamp"] == host._state_ts

    async def test_clean_start_no_session_kept(self, broker: Broker, store: Store, peer: Peer) -> None:
        """[tck-id-message-flow-phid-sparkplug-clean-session-50]: Clean Start true, Session Expiry 0: a QoS 1
        message published while the host is away is not kept for it."""
        node = EdgeNodeEncoder("GC", "E")
        async with running(broker, store, "GC"):
            peer.publish(node.topic("NBIRTH"), node.nbirth({"x": 1.0}, now_ms()), qos=1)
            await until(lambda: tag_values(store))
        peer.publish(node.topic("NDATA"), node.data(None, {"x": 2.0}, now_ms()), qos=1)
        async with running(broker, store, "GC"):
            await asyncio.sleep(0.5)
        assert tag_values(store) == [("E.x", 1.0)]


class TestHostData:
    async def test_births_and_aliased_data_stored(self, broker: Broker, store: Store, peer: Peer) -> None:
        """NBIRTH and DBIRTH define names and aliases; NDATA/DDATA by alias only are stored under their tags, with
        an Int32 of -12 as -12; an audit-free host still stores durably before acking."""
        node = EdgeNodeEncoder("GD", "E1")
        async with running(broker, store, "GD"):
            t = now_ms()
            peer.publish(
                node.topic("NBIRTH"), node.nbirth({"Line1/P-101/Count": 1}, t, {"Line1/P-101/Count": pb.Int32})
            )
            peer.publish(node.topic("DBIRTH", "P-102"), node.dbirth("P-102", {"Vibration": 2.5}, t))
            peer.publish(node.topic("NDATA"), node.data(None, {"Line1/P-101/Count": -12}, t + 1))
            peer.publish(node.topic("DDATA", "P-102"), node.data("P-102", {"Vibration": 3.5}, t + 2))
            await until(lambda: len(tag_values(store)) == 4)
        assert sorted(tag_values(store), key=str) == sorted(
            [("P-101.Count", 1), ("P-102.Vibration", 2.5), ("P-101.Count", -12), ("P-102.Vibration", 3.5)], key=str
        )
        assert {r.source for r in store.records()} == {"sparkplug"}

    async def test_data_before_birth_asks_rebirth_once(self, broker: Broker, store: Store, peer: Peer) -> None:
        """DATA before BIRTH: quarantined as data_before_birth with its bytes, and one NCMD Node Control/Rebirth =
        true ([tck-id-operational-behavior-data-commands-ncmd-rebirth-verb], [...-ncmd-rebirth-name],
        [...-ncmd-rebirth-value]) on spBv1.0/<group>/NCMD/<node>, QoS 0, not retained ([tck-id-payloads-ncmd-qos],
        [tck-id-payloads-ncmd-retain]); a second one within rebirth_min_interval_s asks nothing more."""
        node = EdgeNodeEncoder("GR", "E1")
        node.nbirth({"x": 1.0}, now_ms())
        peer.subscribe(node.topic("NCMD"))
        async with running(broker, store, "GR", rebirth_min_interval_s=60):
            first = node.data(None, {"x": 2.0}, now_ms())
            peer.publish(node.topic("NDATA"), first)
            peer.publish(node.topic("NDATA"), node.data(None, {"x": 3.0}, now_ms()))
            (ncmd,) = await until(lambda: peer.on(node.topic("NCMD")))
            await until(lambda: len(store.quarantined()) == 2)
            await asyncio.sleep(0.3)
        assert len(peer.on(node.topic("NCMD"))) == 1 and ncmd.qos == 0 and not ncmd.retain
        (metric,) = pb.Payload.FromString(ncmd.payload).metrics
        assert (metric.name, metric.boolean_value) == ("Node Control/Rebirth", True)
        rows = store.quarantined()
        assert {q.reason for q in rows} == {"data_before_birth"} and rows[0].raw == first

    async def test_seq_gap_times_out_to_rebirth(self, broker: Broker, store: Store, peer: Peer) -> None:
        """[tck-id-operational-behavior-host-reordering-param] / [...-reordering-rebirth]: a lost seq not arriving
        within reorder_timeout_ms: the later message's values stored, a sequence_gap data_gap and quarantine row,
        an NCMD rebirth."""
        node = EdgeNodeEncoder("GQ", "E1")
        peer.subscribe(node.topic("NCMD"))
        async with running(broker, store, "GQ", reorder_timeout_ms=200):
            t = now_ms()
            peer.publish(node.topic("NBIRTH"), node.nbirth({"x": 1.0}, t))
            node.data(None, {"x": 2.0}, t + 1)  # lost
            peer.publish(node.topic("NDATA"), node.data(None, {"x": 3.0}, t + 2))
            await until(lambda: peer.on(node.topic("NCMD")))
            await until(lambda: store.records(kinds=["data_gap"]))
        assert ("E1.x", 3.0) in tag_values(store)
        (gap,) = store.records(kinds=["data_gap"])
        assert gap.key == "GQ/E1" and gap.value["reason"] == "sequence_gap"
        assert [q.reason for q in store.quarantined()] == ["sequence_gap"]

    async def test_a_commit_in_flight_at_stop_is_finished(self, broker: Broker, store: Store, peer: Peer) -> None:
        """Stopping while a group's records wait on the store writer (here 0.5 s): the stop waits for that commit,
        so the gap's record and its quarantine row are both written, not one without the other."""
        node = EdgeNodeEncoder("GS", "E1")
        peer.subscribe(node.topic("NCMD"))
        async with running(broker, store, "GS", writer_delay_s=0.5, reorder_timeout_ms=100):
            t = now_ms()
            peer.publish(node.topic("NBIRTH"), node.nbirth({"x": 1.0}, t))
            await until(lambda: tag_values(store))  # the birth's group is settled: the gap's is the one in flight
            node.data(None, {"x": 2.0}, t + 1)  # lost
            peer.publish(node.topic("NDATA"), node.data(None, {"x": 3.0}, t + 2))
            await until(lambda: peer.on(node.topic("NCMD")))  # asked at submit, before the commit
        assert [r.value["reason"] for r in store.records(kinds=["data_gap"])] == ["sequence_gap"]
        assert [q.reason for q in store.quarantined()] == ["sequence_gap"]

    async def test_retained_births_read_before_rebirth(self, broker: Broker, store: Store, peer: Peer) -> None:
        """At start the host reads the retained births a Sparkplug-aware broker keeps
        ([tck-id-conformance-mqtt-aware-nbirth-mqtt-topic], [...-dbirth-mqtt-topic]) before anything else: DATA
        then resolves by alias and no rebirth is asked for."""
        node = EdgeNodeEncoder("GK", "E1")
        t = now_ms()
        peer.publish("$sparkplug/certificates/spBv1.0/GK/NBIRTH/E1", node.nbirth({}, t), retain=True, qos=1)
        peer.publish(
            "$sparkplug/certificates/spBv1.0/GK/DBIRTH/E1/D1", node.dbirth("D1", {"flow": 1.0}, t), retain=True, qos=1
        )
        peer.subscribe(node.topic("NCMD"))
        async with running(broker, store, "GK"):
            node.seq = 42  # the node has moved on since its birth
            peer.publish(node.topic("DDATA", "D1"), node.data("D1", {"flow": 7.0}, t + 5))
            await until(lambda: ("D1.flow", 7.0) in tag_values(store))
            await asyncio.sleep(0.3)
        assert not peer.on(node.topic("NCMD")) and not store.quarantined()
        for topic in (
            "$sparkplug/certificates/spBv1.0/GK/NBIRTH/E1",
            "$sparkplug/certificates/spBv1.0/GK/DBIRTH/E1/D1",
        ):
            peer.publish(topic, b"", retain=True, qos=1)  # clear the retained messages


# An edge node in a process of its own, killed to drop its connection the way a crash or power loss does (no
# DISCONNECT): connects with its NDEATH as Will, then publishes each "<topic> <hex payload>" line read on stdin with
# QoS 0 and answers "sent" once it is written to the socket.
EDGE_PROCESS = """
import sys, threading
import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion
host, port, client_id, will_topic, will = sys.argv[1:]
connected = threading.Event()
client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
client.will_set(will_topic, bytes.fromhex(will), qos=1)
client.on_connect = lambda *args: connected.set()
client.connect(host, int(port), keepalive=60)
client.loop_start()
connected.wait(10)
print("connected", flush=True)
for line in sys.stdin:
    topic, payload = line.split()
    client.publish(topic, bytes.fromhex(payload), qos=0).wait_for_publish(5)
    print("sent", flush=True)
"""


class EdgeProcess:
    """A killable edge node session: `node`'s NDEATH (its bdSeq now) is the Will of the connection."""

    def __init__(self, broker: Broker, node: EdgeNodeEncoder, client_id: str) -> None:
        args = [broker.host, str(broker.port), client_id, node.topic("NDEATH"), node.ndeath().hex()]
        self.proc = subprocess.Popen(
            [sys.executable, "-c", EDGE_PROCESS, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self._expect("connected")

    def _expect(self, line: str) -> None:
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == line

    def publish(self, topic: str, payload: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{topic} {payload.hex()}\n")
        self.proc.stdin.flush()
        self._expect("sent")

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def edge_processes() -> Iterator[list[EdgeProcess]]:
    started: list[EdgeProcess] = []
    yield started
    for edge in started:
        if edge.proc.poll() is None:
            edge.kill()


def gap_values(store: Store) -> dict[tuple[str, bool], dict[str, Any]]:
    """The data_gap records by (tag, closed)."""
    return {(g.key, g.value["end"] is not None): g.value for g in store.records(kinds=["data_gap"])}


class TestNodeWill:
    async def test_killed_node_will_marks_its_tags_stale(
        self, broker: Broker, store: Store, peer: Peer, edge_processes: list[EdgeProcess]
    ) -> None:
        """An edge node process killed after NBIRTH, DBIRTH and DATA: the broker publishes the NDEATH it set as Will
        ([tck-id-payloads-ndeath-will-message]); with its NBIRTH's bdSeq it opens a node_death data_gap for every
        tag of the node and its devices, at the host's time ([tck-id-operational-behavior-edge-node-termination-
        host-action-ndeath-node-tags-stale], [...-ndeath-devices-tags-stale]), which the report facts read as an
        open gap; the next NBIRTH and DBIRTH close them, still node_death. The DATA sent before the kill is stored."""
        node = EdgeNodeEncoder("GW", "E1", bdseq=3)
        async with running(broker, store, "GW"):
            edge = EdgeProcess(broker, node, "edge-gw")
            edge_processes.append(edge)
            t = now_ms()
            for topic, payload in [
                (node.topic("NBIRTH"), node.nbirth({"Line1/P-101/Vibration": 1.0}, t)),
                (node.topic("DBIRTH", "P-102"), node.dbirth("P-102", {"Flow": 2.0}, t)),
                (node.topic("NDATA"), node.data(None, {"Line1/P-101/Vibration": 1.5}, t + 1)),
                (node.topic("DDATA", "P-102"), node.data("P-102", {"Flow": 2.5}, t + 1)),
            ]:
                await asyncio.to_thread(edge.publish, topic, payload)
            await until(lambda: len(tag_values(store)) == 4)
            killed = datetime.now(UTC)
            await asyncio.to_thread(edge.kill)
            await until(lambda: len(gap_values(store)) == 2, timeout=10)
            opened = gap_values(store)
            assert set(opened) == {("P-101.Vibration", False), ("P-102.Flow", False)}
            assert all(g["reason"] == "node_death" for g in opened.values())
            assert all(datetime.fromisoformat(g["start"]) >= killed for g in opened.values())
            window = ResolvedWindow(start=killed - timedelta(hours=1), end=killed + timedelta(hours=1), timezone="UTC")
            request = ResolvedRequest(type="shift_summary", language="en", window=window, scope=Scope())
            facts = [f for f in compute_facts(store.records(), request) if f.kind == "data_gap"]
            assert {(f.subject, f.values["reason"], f.values["open"]) for f in facts} == {
                ("P-101.Vibration", "node_death", True),
                ("P-102.Flow", "node_death", True),
            }
            node.bdseq = 4
            t = now_ms()
            peer.publish(node.topic("NBIRTH"), node.nbirth({"Line1/P-101/Vibration": 1.0}, t))
            peer.publish(node.topic("DBIRTH", "P-102"), node.dbirth("P-102", {"Flow": 2.0}, t))
            await until(lambda: len(gap_values(store)) == 4)
        for tag in ("P-101.Vibration", "P-102.Flow"):
            closed = gap_values(store)[(tag, True)]
            assert closed["start"] == opened[(tag, False)]["start"] and closed["reason"] == "node_death"
        assert not store.quarantined()

    async def test_stale_will_of_an_older_session_ignored(
        self, broker: Broker, store: Store, edge_processes: list[EdgeProcess]
    ) -> None:
        """A node back on a new connection (new client id, next bdSeq) before the broker saw its old one die: the
        old connection's Will arrives after the new NBIRTH and names the old bdSeq ([tck-id-payloads-ndeath-bdseq]
        is what ties an NDEATH to its NBIRTH): quarantined as bdseq_mismatch, no gap, the node's DATA still stored;
        the live session's own Will still ends it."""
        old = EdgeNodeEncoder("GV", "E1", bdseq=5)
        async with running(broker, store, "GV"):
            first = EdgeProcess(broker, old, "edge-gv-1")
            edge_processes.append(first)
            await asyncio.to_thread(first.publish, old.topic("NBIRTH"), old.nbirth({"x": 1.0}, now_ms()))
            await until(lambda: tag_values(store))
            new = EdgeNodeEncoder("GV", "E1", bdseq=6)
            second = EdgeProcess(broker, new, "edge-gv-2")
            edge_processes.append(second)
            await asyncio.to_thread(second.publish, new.topic("NBIRTH"), new.nbirth({"x": 2.0}, now_ms()))
            await until(lambda: len(tag_values(store)) == 2)
            await asyncio.to_thread(first.kill)
            (stale,) = await until(store.quarantined, timeout=10)
            await asyncio.to_thread(second.publish, new.topic("NDATA"), new.data(None, {"x": 3.0}, now_ms()))
            await until(lambda: ("E1.x", 3.0) in tag_values(store))
            assert not store.records(kinds=["data_gap"])
            await asyncio.to_thread(second.kill)
            (gap,) = await until(lambda: store.records(kinds=["data_gap"]), timeout=10)
        assert stale.reason == "bdseq_mismatch" and stale.topic == old.topic("NDEATH")
        assert pb.Payload.FromString(stale.raw).metrics[0].long_value == 5
        assert gap.key == "E1.x" and gap.value["reason"] == "node_death" and gap.value["end"] is None


class TestSimEdgeNode:
    async def test_sim_edge_node_end_to_end(
        self, broker: Broker, store: Store, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The simulator's edge node (`edge-agent sim --sparkplug`): births, aliased DDATA, a device death and its
        rebirth, a reconnect with an NDEATH by Will: every tick's values stored under the plant's tags, the device's
        and the node's gaps opened and closed, nothing quarantined; each birth carries the values of its tick, so no
        tag holds two values at one time."""
        from edge_agent.sim import sparkplug as sim_sparkplug

        monkeypatch.setattr(sim_sparkplug, "DEVICE_DEATH_TICK", 3)
        monkeypatch.setattr(sim_sparkplug, "DEVICE_REBIRTH_TICK", 5)
        monkeypatch.setattr(sim_sparkplug, "RECONNECT_TICK", 7)
        edge = sim_sparkplug.SimEdgeNode(mqtt_config(broker), "GSIM", "L1-edge")
        start = datetime.now(UTC) - timedelta(minutes=5)
        async with running(broker, store, "GSIM"):
            ticks = [{"P-101.flow_m3h": float(i), "P-102.running": i % 2 == 0} for i in range(10)]
            devices: dict[str, dict[str, Any]] = {"P-101": {"flow_m3h": 0.0}, "P-102": {"running": True}}
            await asyncio.to_thread(edge.start, devices, start)
            for i, values in enumerate(ticks):
                await asyncio.to_thread(edge.publish_tick, values, start + timedelta(seconds=5 * (i + 1)))
            # Generous bounds: the waits end as soon as the store holds it all, a loaded 2-core box needs longer.
            await until(lambda: len(store.records(kinds=["data_gap"])) >= 6, timeout=60)
            sent = {float(i) for i in range(10)} - {2.0, 3.0}  # ticks 3 and 4: the device was dead, not sent
            await until(
                lambda: sent <= {r.value for r in store.records(kinds=["tag_value"], keys=["P-101.flow_m3h"])},
                timeout=60,
            )
            await asyncio.to_thread(edge.stop, start + timedelta(minutes=2))
        flows = [r.value for r in store.records(kinds=["tag_value"], keys=["P-101.flow_m3h"])]
        # Births carry values too; the 3rd and 4th ticks' P-101 values were not sent (the device was dead).
        assert sent <= set(flows)
        gaps = store.records(kinds=["data_gap"])
        assert {g.value["reason"] for g in gaps} == {"device_death", "node_death"}
        assert not store.quarantined()
        values_at: dict[tuple[str, datetime], set[Any]] = {}
        for r in store.records(kinds=["tag_value"]):
            values_at.setdefault((r.key, r.source_time), set()).add(r.value)
        assert {at: v for at, v in values_at.items() if len(v) > 1} == {}

    async def test_sim_runner_stores_each_first_value_once(self, broker: Broker, store: Store) -> None:
        """`edge-agent sim --sparkplug` births on its first tick with that tick's values and sends no DDATA of them:
        every tag holds one record per tick time, the first tick's included."""
        from edge_agent.sim import sparkplug as sim_sparkplug
        from edge_agent.sim.plant import Tick
        from edge_agent.sim.runner import _sparkplug_tick

        edge = sim_sparkplug.SimEdgeNode(mqtt_config(broker), "GRUN", "L1-edge")
        start = (datetime.now(UTC) - timedelta(minutes=5)).replace(microsecond=0)  # Sparkplug times are in ms
        ticks = [
            Tick(start + timedelta(seconds=5 * i), {"P-101.flow_m3h": float(i), "P-102.running": i % 2 == 0})
            for i in range(2)
        ]
        async with running(broker, store, "GRUN"):
            for tick in ticks:
                await asyncio.to_thread(_sparkplug_tick, edge, tick)
            await until(lambda: len(store.records(kinds=["tag_value"])) >= 4, timeout=60)
            await asyncio.to_thread(edge.stop, start + timedelta(minutes=1))
        stored = sorted((r.key, r.source_time, r.value) for r in store.records(kinds=["tag_value"]))
        assert stored == sorted((tag, tick.time, value) for tick in ticks for tag, value in tick.values.items())
