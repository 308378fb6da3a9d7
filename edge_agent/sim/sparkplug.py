"""A simulated Sparkplug B 3.0 edge node: the plant's tag values as aliased DDATA, one device per asset.

`EdgeNodeEncoder` builds the payloads (pure: births with names, aliases and datatypes, data by alias only, deaths,
seq 0-255 wrapping, bdSeq per MQTT session); `SimEdgeNode` publishes them with a plain paho client (like the MES
publisher, not the agent's MQTT facade: the edge node stands in for a system nobody here wrote) and answers NCMD
`Node Control/Rebirth`. `edge-agent sim --sparkplug` (or `[sim] sparkplug = true`) runs one beside the OPC UA server:
births, aliased data every tick, a device death and its rebirth, and a reconnect (an NDEATH by Will, a new bdSeq).

Only the Tahu message definitions are shared with the agent (`edge_agent.connectors.sparkplug.sparkplug_b_pb2`); the
value
encoding (two's complement ints, packed arrays) is written here again, from the specification.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import paho.mqtt.client as paho
import structlog
from paho.mqtt.enums import CallbackAPIVersion

from edge_agent.config import MqttConfig
from edge_agent.connectors.sparkplug import sparkplug_b_pb2 as pb

log = structlog.get_logger(component="sim")

NAMESPACE = "spBv1.0"
REBIRTH = "Node Control/Rebirth"
# The scripted events, in ticks after the node's first birth: a device dies and comes back, then the node drops its
# connection (the broker publishes its NDEATH Will) and reconnects with the next bdSeq.
DEVICE_DEATH_TICK = 20
DEVICE_REBIRTH_TICK = 24
RECONNECT_TICK = 40


def to_ms(when: datetime) -> int:
    return int(when.timestamp() * 1000)


def set_value(metric: Any, datatype: int, value: Any) -> None:
    """Put a value in the field the specification names for its datatype (signed ints as two's complement)."""
    metric.datatype = datatype
    if value is None:
        metric.is_null = True
    elif datatype in (pb.Int8, pb.Int16, pb.Int32):
        metric.int_value = value & 0xFFFFFFFF
    elif datatype in (pb.UInt8, pb.UInt16, pb.UInt32):
        metric.int_value = value
    elif datatype == pb.Int64:
        metric.long_value = value & 0xFFFFFFFFFFFFFFFF
    elif datatype in (pb.UInt64, pb.DateTime):
        metric.long_value = value
    elif datatype == pb.Float:
        metric.float_value = value
    elif datatype == pb.Double:
        metric.double_value = value
    elif datatype == pb.Boolean:
        metric.boolean_value = value
    elif datatype in (pb.String, pb.Text, pb.UUID):
        metric.string_value = value
    elif datatype in (pb.Bytes, pb.File):
        metric.bytes_value = value
    elif datatype == pb.DoubleArray:
        metric.bytes_value = struct.pack(f"<{len(value)}d", *value)
    elif datatype == pb.Int32Array:
        metric.bytes_value = struct.pack(f"<{len(value)}i", *value)
    else:
        raise ValueError(f"the simulator does not encode datatype {datatype}")


def datatype_of(value: Any) -> int:
    if isinstance(value, bool):
        return pb.Boolean
    if isinstance(value, int):
        return pb.Int64
    if isinstance(value, float):
        return pb.Double
    return pb.String


class EdgeNodeEncoder:
    """Payloads of one edge node. Aliases are numbered in birth order, unique across the node and its devices."""

    def __init__(self, group: str, node: str, bdseq: int = 0) -> None:
        self.group = group
        self.node = node
        self.bdseq = bdseq
        self.seq = 0
        self.aliases: dict[tuple[str | None, str], int] = {}
        self.datatypes: dict[tuple[str | None, str], int] = {}

    def topic(self, verb: str, device: str | None = None) -> str:
        base = f"{NAMESPACE}/{self.group}/{verb}/{self.node}"
        return f"{base}/{device}" if device else base

    def _next_seq(self) -> int:
        seq, self.seq = self.seq, (self.seq + 1) % 256
        return seq

    def _alias(self, device: str | None, name: str) -> int:
        return self.aliases.setdefault((device, name), len(self.aliases) + 1)

    def nbirth(self, values: Mapping[str, Any], when_ms: int, datatypes: Mapping[str, int] | None = None) -> bytes:
        """NBIRTH: seq 0, bdSeq, Node Control/Rebirth = false, every metric by name with its alias and datatype."""
        self.seq = 0
        payload = pb.Payload(timestamp=when_ms, seq=self._next_seq())
        bd = payload.metrics.add(name="bdSeq", timestamp=when_ms)
        set_value(bd, pb.Int64, self.bdseq)
        rebirth = payload.metrics.add(name=REBIRTH, timestamp=when_ms)
        set_value(rebirth, pb.Boolean, False)
        self._birth_metrics(payload, None, values, when_ms, datatypes or {})
        return payload.SerializeToString()

    def dbirth(self, device: str, values: Mapping[str, Any], when_ms: int) -> bytes:
        payload = pb.Payload(timestamp=when_ms, seq=self._next_seq())
        self._birth_metrics(payload, device, values, when_ms, {})
        return payload.SerializeToString()

    def _birth_metrics(
        self, payload: Any, device: str | None, values: Mapping[str, Any], when_ms: int, datatypes: Mapping[str, int]
    ) -> None:
        for name, value in values.items():
            metric = payload.metrics.add(name=name, alias=self._alias(device, name), timestamp=when_ms)
            datatype = datatypes.get(name) or datatype_of(value)
            self.datatypes[(device, name)] = datatype
            set_value(metric, datatype, value)

    def data(self, device: str | None, values: Mapping[str, Any], when_ms: int, *, historical: bool = False) -> bytes:
        """NDATA (device None) or DDATA: metrics by alias only (TCK payloads-alias-data-cmd-requirement)."""
        payload = pb.Payload(timestamp=when_ms, seq=self._next_seq())
        for name, value in values.items():
            metric = payload.metrics.add(alias=self.aliases[(device, name)], timestamp=when_ms)
            if historical:
                metric.is_historical = True
            set_value(metric, self.datatypes[(device, name)], value)
        return payload.SerializeToString()

    def ddeath(self, device: str, when_ms: int) -> bytes:
        return pb.Payload(timestamp=when_ms, seq=self._next_seq()).SerializeToString()

    def ndeath(self, when_ms: int | None = None) -> bytes:
        """NDEATH: bdSeq only, no seq (the Will is built before the connection exists)."""
        payload = pb.Payload() if when_ms is None else pb.Payload(timestamp=when_ms)
        bd = payload.metrics.add(name="bdSeq")
        set_value(bd, pb.Int64, self.bdseq)
        return payload.SerializeToString()


class SimEdgeNode:
    """One edge node on the broker: `start()` connects and births, `publish_tick()` sends a tick's values."""

    def __init__(self, config: MqttConfig, group: str, node: str) -> None:
        self._config = config
        self.encoder = EdgeNodeEncoder(group, node)
        self._client: paho.Client | None = None
        self._last_sent: paho.MQTTMessageInfo | None = None
        self._connected = threading.Event()
        self._rebirth = threading.Event()
        self._devices: dict[str, dict[str, Any]] = {}
        self._dead: set[str] = set()
        self.ticks = 0
        self.rebirths_answered = 0

    def _connect(self) -> None:
        protocol = paho.MQTTv5 if self._config.protocol == "5" else paho.MQTTv311
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=f"sim-edge-{self.encoder.group}-{self.encoder.node}",
            protocol=protocol,
            clean_session=None if protocol == paho.MQTTv5 else True,
        )
        if self._config.username is not None:
            password = self._config.password.get_secret_value() if self._config.password is not None else None
            client.username_pw_set(self._config.username, password)
        client.will_set(self.encoder.topic("NDEATH"), self.encoder.ndeath(), qos=1, retain=False)
        client.on_connect = lambda c, u, f, rc, p=None: self._connected.set()
        client.on_message = self._on_message
        client.connect(self._config.host, self._config.port, keepalive=30)
        client.loop_start()
        if not self._connected.wait(10):
            raise OSError(f"sim edge node: no CONNACK from {self._config.host}:{self._config.port}")
        client.subscribe(self.encoder.topic("NCMD"), qos=1)
        self._client = client

    def _on_message(self, client: paho.Client, userdata: Any, message: paho.MQTTMessage) -> None:
        try:
            payload = pb.Payload.FromString(message.payload)
        except Exception:  # a command we cannot read is not ours to answer
            return
        if any(m.name == REBIRTH and m.boolean_value for m in payload.metrics):
            self._rebirth.set()

    def _publish(self, topic: str, payload: bytes) -> None:
        assert self._client is not None
        self._last_sent = self._client.publish(topic, payload, qos=0)

    def start(self, devices: Mapping[str, Mapping[str, Any]], when: datetime) -> None:
        self._devices = {d: dict(v) for d, v in devices.items()}
        self._connect()
        self._birth(when)

    def _birth(self, when: datetime) -> None:
        ms = to_ms(when)
        self._publish(self.encoder.topic("NBIRTH"), self.encoder.nbirth({}, ms))
        for device, values in self._devices.items():
            if device not in self._dead:
                self._publish(self.encoder.topic("DBIRTH", device), self.encoder.dbirth(device, values, ms))
        log.info("sim_sparkplug_birth", node=self.encoder.node, bdseq=self.encoder.bdseq)

    def publish_tick(self, values: Mapping[str, Any], when: datetime) -> None:
        """A tick's values ("P-101.flow_m3h": 12.5) as DDATA by alias, one message per device; the scripted events."""
        ms = to_ms(when)
        self.ticks += 1
        per_device: dict[str, dict[str, Any]] = {}
        for tag, value in values.items():
            device, _, measurement = tag.partition(".")
            per_device.setdefault(device, {})[measurement] = value
        for device, device_values in per_device.items():
            if device in self._devices:  # a birth carries current values (TCK ...-data-publish-dbirth-values)
                self._devices[device].update(device_values)
        if self._rebirth.is_set():
            self._rebirth.clear()
            self.rebirths_answered += 1
            self._birth(when)
        victim = next(iter(self._devices), None)
        if victim is not None and self.ticks == DEVICE_DEATH_TICK:
            self._dead.add(victim)
            self._publish(self.encoder.topic("DDEATH", victim), self.encoder.ddeath(victim, ms))
        if victim is not None and self.ticks == DEVICE_REBIRTH_TICK:
            self._dead.discard(victim)
            self._publish(self.encoder.topic("DBIRTH", victim), self.encoder.dbirth(victim, self._devices[victim], ms))
        if self.ticks == RECONNECT_TICK:
            self.drop_connection()
            self.encoder.bdseq = (self.encoder.bdseq + 1) % 256
            self._connect()
            self._birth(when)
        for device, device_values in per_device.items():
            known = {k: v for k, v in device_values.items() if (device, k) in self.encoder.aliases}
            if device in self._devices and device not in self._dead and known:
                self._publish(self.encoder.topic("DDATA", device), self.encoder.data(device, known, ms))

    def drop_connection(self) -> None:
        """End the TCP connection without DISCONNECT once what was published is on the wire: the broker publishes
        the NDEATH Will. A QoS 0 publish waits in paho's queue for its network thread; shut the socket under it and
        the tick's DDATA never leaves this process."""
        if self._client is None:
            return
        client, self._client = self._client, None
        self._connected.clear()
        if self._last_sent is not None and self._last_sent.rc == paho.MQTT_ERR_SUCCESS:
            self._last_sent.wait_for_publish(5)  # paho writes its queue in order: the last one out means all are
        sock = client.socket()
        if isinstance(sock, socket.socket):
            with contextlib.suppress(OSError):  # the broker may have ended it first
                sock.shutdown(socket.SHUT_RDWR)  # not close(): paho's thread uses the descriptor until it stops
        client.loop_stop()
        time.sleep(0.2)  # let the broker notice before the new session starts

    def stop(self, when: datetime) -> None:
        """A clean stop: the NDEATH published by the node itself, then DISCONNECT."""
        if self._client is None:
            return
        info = self._client.publish(self.encoder.topic("NDEATH"), self.encoder.ndeath(to_ms(when)), qos=1)
        info.wait_for_publish(5)
        self._client.disconnect()
        self._client.loop_stop()
        self._client = None


__all__ = ["EdgeNodeEncoder", "SimEdgeNode", "set_value"]
