"""Sparkplug B without a broker: payload values of every datatype, naming, topics, and the host's rules as a pure
state machine (`HostState`), with Hypothesis properties over random payload bytes and random message sequences.

TCK assertion ids (eclipse-sparkplug/sparkplug, specification 3.0) are named where a test checks one."""

from __future__ import annotations

import math
import struct
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from edge_agent.base.types import Record, StoredRecord, idempotency_key
from edge_agent.base.values import PlausibleTimes
from edge_agent.config import AgentConfig
from edge_agent.config.base import PLAUSIBLE_TIME_MIN
from edge_agent.config.sparkplug import SparkplugConfig, SparkplugNamingConfig
from edge_agent.connectors.sparkplug import HostState, Inbound, MetricName, Outcome, SparkplugReason, TagNamer
from edge_agent.connectors.sparkplug import sparkplug_b_pb2 as pb
from edge_agent.connectors.sparkplug.host_state import _valid_tag
from edge_agent.connectors.sparkplug.payload import (
    MetricRefused,
    decode_payload,
    metric_value,
    properties,
    rebirth_request,
)
from edge_agent.connectors.sparkplug.topics import TopicError, parse_topic, subscriptions
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.sim.sparkplug import EdgeNodeEncoder

TIMES = PlausibleTimes(time_min=PLAUSIBLE_TIME_MIN, time_max_future=timedelta(days=1))
T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
T0_MS = int(T0.timestamp() * 1000)


def metric(datatype: int, **fields: Any) -> Any:
    m = pb.Payload.Metric(datatype=datatype)
    for name, value in fields.items():
        setattr(m, name, value)
    return m


def state(**overrides: Any) -> HostState:
    return HostState(SparkplugConfig(enabled=True, **overrides), TIMES)


def send(host: HostState, topic: str, payload: bytes, now: float, out: Outcome, received: datetime = T0) -> None:
    host.handle(Inbound(topic, payload, received, token=(topic, payload, now)), now, out)


class TestValues:
    @pytest.mark.parametrize(
        ("datatype", "raw", "expected"),
        [
            (pb.Int8, (-12) & 0xFF, -12),  # 8 bits sent
            (pb.Int8, (-12) & 0xFFFFFFFF, -12),  # sign-extended to 32 bits by other encoders
            (pb.Int16, (-300) & 0xFFFFFFFF, -300),
            (pb.Int32, 4294967284, -12),  # the example: -12, not 4294967284
            (pb.Int32, 2**31 - 1, 2**31 - 1),
            (pb.UInt8, 255, 255),
            (pb.UInt16, 65535, 65535),
            (pb.UInt32, 4294967284, 4294967284),
        ],
    )
    def test_int_value_types(self, datatype: int, raw: int, expected: int) -> None:
        """32-bit and smaller ints travel in int_value; signed ones are two's complement."""
        assert metric_value(metric(datatype, int_value=raw), datatype) == expected

    def test_int64_two_complement(self) -> None:
        """An Int64 of -1 arrives as 2**64-1 in long_value."""
        assert metric_value(metric(pb.Int64, long_value=2**64 - 1), pb.Int64) == -1

    def test_uint64_beyond_int64_is_decimal_text(self) -> None:
        """A UInt64 near its top is stored as exact text, as OPC UA's are (SQLite and JSON would round it)."""
        assert metric_value(metric(pb.UInt64, long_value=2**64 - 1), pb.UInt64) == str(2**64 - 1)

    def test_uint8_out_of_range_refused(self) -> None:
        """A UInt8 of 300 is outside its type: schema_mismatch."""
        with pytest.raises(MetricRefused) as refused:
            metric_value(metric(pb.UInt8, int_value=300), pb.UInt8)
        assert refused.value.reason is SparkplugReason.SCHEMA_MISMATCH

    def test_floats(self) -> None:
        """Float and Double keep their value; NaN and infinities become OPC UA's strings."""
        assert metric_value(metric(pb.Float, float_value=1.5), pb.Float) == 1.5
        assert metric_value(metric(pb.Double, double_value=-2.25), pb.Double) == -2.25
        assert metric_value(metric(pb.Double, double_value=math.nan), pb.Double) == "NaN"
        assert metric_value(metric(pb.Float, float_value=-math.inf), pb.Float) == "-Infinity"

    def test_text_kinds_boolean_datetime_bytes(self) -> None:
        """String, Text, UUID as text; Boolean; DateTime (ms) as ISO-8601 UTC; Bytes and File as hex."""
        assert metric_value(metric(pb.String, string_value="ñ"), pb.String) == "ñ"
        assert metric_value(metric(pb.Text, string_value="t"), pb.Text) == "t"
        assert metric_value(metric(pb.UUID, string_value="u-1"), pb.UUID) == "u-1"
        assert metric_value(metric(pb.Boolean, boolean_value=True), pb.Boolean) is True
        assert metric_value(metric(pb.DateTime, long_value=T0_MS), pb.DateTime) == T0.isoformat()
        assert metric_value(metric(pb.Bytes, bytes_value=b"\x01\xff"), pb.Bytes) == "01ff"
        assert metric_value(metric(pb.File, bytes_value=b"\x00"), pb.File) == "00"

    def test_is_null(self) -> None:
        """is_null gives None whatever the type."""
        assert metric_value(metric(pb.Double, is_null=True), pb.Double) is None

    def test_wrong_value_field_refused(self) -> None:
        """A Double sent in string_value is schema_mismatch, naming the field."""
        with pytest.raises(MetricRefused, match="string_value"):
            metric_value(metric(pb.Double, string_value="1.0"), pb.Double)

    @pytest.mark.parametrize(
        ("datatype", "data", "expected"),
        [
            (pb.Int8Array, struct.pack("<3b", -1, 0, 1), [-1, 0, 1]),
            (pb.Int16Array, struct.pack("<2h", -300, 300), [-300, 300]),
            (pb.Int32Array, struct.pack("<2i", -12, 12), [-12, 12]),
            (pb.Int64Array, struct.pack("<1q", -(2**40)), [-(2**40)]),
            (pb.UInt8Array, bytes([0, 255]), [0, 255]),
            (pb.UInt16Array, struct.pack("<H", 65535), [65535]),
            (pb.UInt32Array, struct.pack("<I", 2**32 - 1), [2**32 - 1]),
            (pb.UInt64Array, struct.pack("<Q", 2**64 - 1), [str(2**64 - 1)]),
            (pb.FloatArray, struct.pack("<2f", 1.5, -0.5), [1.5, -0.5]),
            (pb.DoubleArray, struct.pack("<2d", 1.25, math.inf), [1.25, "Infinity"]),
            (pb.BooleanArray, struct.pack("<I", 3) + bytes([0b10100000]), [True, False, True]),
            (pb.StringArray, b"ab\x00\x00c\x00", ["ab", "", "c"]),
            (pb.DateTimeArray, struct.pack("<q", T0_MS), [T0.isoformat()]),
        ],
    )
    def test_arrays(self, datatype: int, data: bytes, expected: list[Any]) -> None:
        """Arrays are packed little-endian in bytes_value (spec 3.0 §6.4.17) and stored as lists."""
        assert metric_value(metric(datatype, bytes_value=data), datatype) == expected

    def test_truncated_array_refused(self) -> None:
        """An Int32Array of 5 bytes is schema_mismatch."""
        with pytest.raises(MetricRefused):
            metric_value(metric(pb.Int32Array, bytes_value=b"\x00" * 5), pb.Int32Array)

    def test_dataset_structured(self) -> None:
        """A DataSet is stored as a structured value: columns, type names, rows."""
        m = metric(pb.DataSet)
        ds = m.dataset_value
        ds.num_of_columns = 2
        ds.columns.extend(["t", "ok"])
        ds.types.extend([pb.Int32, pb.Boolean])
        row = ds.rows.add()
        row.elements.add(int_value=(-5) & 0xFFFFFFFF)
        row.elements.add(boolean_value=True)
        assert metric_value(m, pb.DataSet) == {
            "columns": ["t", "ok"],
            "types": ["Int32", "Boolean"],
            "rows": [[-5, True]],
        }

    def test_properties_engineering_units(self) -> None:
        """A metric's PropertySet is read: engUnit and a limit."""
        m = metric(pb.Double, double_value=1.0)
        m.properties.keys.extend(["engUnit", "engHigh"])
        m.properties.values.add(type=pb.String, string_value="mm/s")
        m.properties.values.add(type=pb.Double, double_value=25.0)
        assert properties(m) == {"engUnit": "mm/s", "engHigh": 25.0}

    def test_garbage_is_invalid_payload(self) -> None:
        """Bytes that are no protobuf raise MetricRefused(invalid_payload), nothing else."""
        with pytest.raises(MetricRefused) as refused:
            decode_payload(b"\xff\xff\xff")
        assert refused.value.reason is SparkplugReason.INVALID_PAYLOAD

    def test_rebirth_request_payload(self) -> None:
        """[tck-id-operational-behavior-data-commands-ncmd-rebirth-name] / [...-ncmd-rebirth-value]: one metric
        'Node Control/Rebirth', Boolean true."""
        (m,) = decode_payload(rebirth_request(T0_MS)).metrics
        assert (m.name, m.datatype, m.boolean_value) == ("Node Control/Rebirth", pb.Boolean, True)


class TestNaming:
    def test_default_rule(self) -> None:
        """Last path element is the measurement; the device, else the element before, else the node, the asset."""
        namer = TagNamer(SparkplugNamingConfig())
        assert namer.split(MetricName("E1", None, "Line1/P-101/Vibration")) == ("P-101", "Vibration")
        assert namer.split(MetricName("E1", "D1", "Line1/P-101/Vibration")) == ("D1", "Vibration")
        assert namer.split(MetricName("E1", None, "Temp")) == ("E1", "Temp")

    def test_path_and_node_rules(self) -> None:
        """asset_from = path prefers the element before the last; node always takes the edge node."""
        assert TagNamer(SparkplugNamingConfig(asset_from="path")).split(MetricName("E1", "D1", "A/B/x")) == ("B", "x")
        assert TagNamer(SparkplugNamingConfig(asset_from="node")).split(MetricName("E1", "D1", "A/B/x")) == ("E1", "x")

    def test_pattern(self) -> None:
        """A pattern's named groups win where it matches."""
        config = SparkplugNamingConfig(pattern=r"(?P<asset>[^/]+)_(?P<measurement>.+)")
        assert TagNamer(config).split(MetricName("E1", "D1", "P-101_flow")) == ("P-101", "flow")
        assert TagNamer(config).split(MetricName("E1", "D1", "plain")) == ("D1", "plain")

    def test_dotted_asset_sanitised(self) -> None:
        """A "." in an asset would move the report's split: it becomes "_" (a device named by its IP keeps its data)."""
        assert TagNamer(SparkplugNamingConfig()).split(MetricName("E1", "10.0.0.5", "temp")) == ("10_0_0_5", "temp")

    def test_collision_takes_whole_name(self) -> None:
        """Two metrics of one BIRTH the rule would give one tag keep their whole names as measurements."""
        names = [MetricName("E1", "D1", "In/Temp"), MetricName("E1", "D1", "Out/Temp"), MetricName("E1", "D1", "Run")]
        assert list(TagNamer(SparkplugNamingConfig()).tags(names).values()) == ["D1.In/Temp", "D1.Out/Temp", "D1.Run"]


class TestTopicsAndConfig:
    def test_topics(self) -> None:
        """Node and device topics parse; a retained certificate is marked; other shapes are TopicError."""
        assert parse_topic("spBv1.0/G/DDATA/E/D").device == "D"
        assert parse_topic("$sparkplug/certificates/spBv1.0/G/NBIRTH/E").certificate
        for bad in ("spBv1.0/G/NDATA", "spBv1.0/G/NDATA/E/D", "spBv1.0/G/XDATA/E", "spBv1.0//NDATA/E"):
            with pytest.raises(TopicError):
                parse_topic(bad)

    def test_subscriptions_certificates_first(self) -> None:
        """Retained births are subscribed before the live namespace, so they are read before any rebirth request."""
        assert subscriptions([]) == ["$sparkplug/certificates/spBv1.0/#", "spBv1.0/#"]
        assert subscriptions(["A"])[0].startswith("$sparkplug/")

    def test_enabled_alone_is_enough(self) -> None:
        """[sparkplug] enabled = true validates with every other key at its default."""
        config = AgentConfig.model_validate({"site": {"id": "s"}, "sparkplug": {"enabled": True}})
        assert config.sparkplug.request_rebirth and config.sparkplug.reorder_timeout_ms == 2000

    @pytest.mark.parametrize(
        ("section", "path"),
        [
            ({"group_ids": ["a/b"]}, ("sparkplug", "group_ids", 0)),
            ({"primary_host_id": "h#"}, ("sparkplug", "primary_host_id")),
            ({"reorder_timeout_ms": -1}, ("sparkplug", "reorder_timeout_ms")),
            ({"naming": {"pattern": "(?P<x>.*)"}}, ("sparkplug", "naming", "pattern")),
            ({"naming": {"asset_from": "tag"}}, ("sparkplug", "naming", "asset_from")),
            ({"rebirth_every": 1}, ("sparkplug", "rebirth_every")),
        ],
    )
    def test_bad_keys_named(self, section: dict[str, Any], path: tuple[Any, ...]) -> None:
        """Each bad key is an error at its own path (what `config check` prints)."""
        with pytest.raises(ValidationError) as error:
            AgentConfig.model_validate({"site": {"id": "s"}, "sparkplug": section})
        assert [e["loc"] for e in error.value.errors()] == [path]


def born(host: HostState, out: Outcome, node: EdgeNodeEncoder | None = None) -> EdgeNodeEncoder:
    node = node or EdgeNodeEncoder("G", "E")
    send(
        host, node.topic("NBIRTH"), node.nbirth({"Line1/P-101/Vibration": 1.0, "Line1/P-101/Run": True}, T0_MS), 0, out
    )
    return node


def values(out: Outcome) -> list[tuple[str, Any]]:
    return [(r.key, r.value) for r in out.records if r.kind == "tag_value"]


class TestHostRules:
    def test_birth_then_alias_only_data(self) -> None:
        """[tck-id-payloads-alias-data-cmd-requirement]: DATA carries aliases only; the BIRTH's names resolve them."""
        host, out = state(), Outcome()
        node = born(host, out)
        send(host, node.topic("NDATA"), node.data(None, {"Line1/P-101/Vibration": 2.5}, T0_MS + 1000), 0, out)
        assert values(out)[-1] == ("P-101.Vibration", 2.5)
        assert out.records[-1].source_time == T0 + timedelta(seconds=1)

    def test_data_before_birth(self) -> None:
        """DATA from a node never born is quarantined as data_before_birth and a rebirth is requested."""
        host, out = state(), Outcome()
        node = EdgeNodeEncoder("G", "E")
        node.nbirth({"x": 1.0}, T0_MS)  # aliases known to the node, never sent
        send(host, node.topic("NDATA"), node.data(None, {"x": 2.0}, T0_MS), 0, out)
        assert [r.reason for r in out.refused] == [SparkplugReason.DATA_BEFORE_BIRTH]
        assert out.rebirths == [("G", "E")] and not out.records

    def test_unknown_alias(self) -> None:
        """An alias the BIRTH did not define: the message quarantined as unknown_alias, its other metrics stored,
        a rebirth requested."""
        host, out = state(), Outcome()
        node = born(host, out)
        payload = pb.Payload(timestamp=T0_MS, seq=1)
        payload.metrics.add(alias=99, datatype=pb.Double, double_value=1.0)
        payload.metrics.add(alias=node.aliases[(None, "Line1/P-101/Vibration")], datatype=pb.Double, double_value=3.0)
        send(host, node.topic("NDATA"), payload.SerializeToString(), 0, out)
        assert out.refused[-1].reason is SparkplugReason.UNKNOWN_ALIAS
        assert values(out)[-1] == ("P-101.Vibration", 3.0) and out.rebirths == [("G", "E")]

    def test_reordering_success(self) -> None:
        """[tck-id-operational-behavior-host-reordering-start] / [...-reordering-success]: seq 2 before seq 1 waits;
        seq 1 arriving in time releases both, in order, with no gap and no rebirth."""
        host, out = state(), Outcome()
        node = born(host, out)
        one = node.data(None, {"Line1/P-101/Vibration": 1.1}, T0_MS + 1)
        two = node.data(None, {"Line1/P-101/Vibration": 1.2}, T0_MS + 2)
        send(host, node.topic("NDATA"), two, 0.0, out)
        assert host.next_deadline() == 2.0  # the reorder timer started
        send(host, node.topic("NDATA"), one, 0.5, out)
        assert values(out)[-2:] == [("P-101.Vibration", 1.1), ("P-101.Vibration", 1.2)]
        assert host.next_deadline() is None and not out.rebirths and not out.refused

    def test_reordering_rebirth(self) -> None:
        """[tck-id-operational-behavior-host-reordering-rebirth]: the timeout passes without seq 1: seq 2 is stored,
        the hole is a sequence_gap data_gap and quarantine row, and a rebirth is requested."""
        host, out = state(), Outcome()
        node = born(host, out)
        node.data(None, {"Line1/P-101/Vibration": 1.1}, T0_MS + 1000)  # lost
        send(host, node.topic("NDATA"), node.data(None, {"Line1/P-101/Vibration": 1.2}, T0_MS + 2000), 0.0, out)
        host.tick(1.9, out)
        assert not out.rebirths
        host.tick(2.0, out)
        assert values(out)[-1] == ("P-101.Vibration", 1.2)
        gap = [r for r in out.records if r.kind == "data_gap"][-1]
        assert gap.key == "G/E" and gap.value["reason"] == "sequence_gap"
        assert gap.value["start"] == T0.isoformat() and gap.value["end"] == (T0 + timedelta(seconds=2)).isoformat()
        assert [r.reason for r in out.refused] == [SparkplugReason.SEQUENCE_GAP] and out.rebirths == [("G", "E")]

    def test_seq_wraps(self) -> None:
        """[tck-id-payloads-sequence-num-incrementing]: 255 is followed by 0, no gap."""
        host, out = state(), Outcome()
        node = born(host, out)
        for i in range(300):
            send(host, node.topic("NDATA"), node.data(None, {"Line1/P-101/Vibration": float(i)}, T0_MS + i), 0, out)
        assert len(values(out)) == 302 and not out.refused and not out.rebirths

    def test_rebirth_rate_limit(self) -> None:
        """At most one rebirth request per node per rebirth_min_interval_s."""
        host, out = state(rebirth_min_interval_s=10), Outcome()
        node = EdgeNodeEncoder("G", "E")
        node.nbirth({"x": 1.0}, T0_MS)
        for now in (0.0, 1.0, 9.9, 10.0):
            send(host, node.topic("NDATA"), node.data(None, {"x": 2.0}, T0_MS), now, out)
        assert len(out.rebirths) == 2 and out.suppressed_rebirths == 2

    def test_rebirth_off(self) -> None:
        """request_rebirth = false: quarantined all the same, no request."""
        host, out = state(request_rebirth=False), Outcome()
        node = EdgeNodeEncoder("G", "E")
        node.nbirth({"x": 1.0}, T0_MS)
        send(host, node.topic("NDATA"), node.data(None, {"x": 2.0}, T0_MS), 0, out)
        assert out.refused and not out.rebirths

    def test_ndeath_bdseq_must_match(self) -> None:
        """[tck-id-payloads-ndeath-bdseq]: an NDEATH with another bdSeq is an older session's: bdseq_mismatch, the
        node stays alive."""
        host, out = state(), Outcome()
        node = born(host, out)
        stale = EdgeNodeEncoder("G", "E", bdseq=7)
        send(host, node.topic("NDEATH"), stale.ndeath(), 0, out)
        assert out.refused[-1].reason is SparkplugReason.BDSEQ_MISMATCH and ("G", "E") in host.nodes

    def test_ndeath_marks_node_and_device_tags_stale(self) -> None:
        """[tck-id-operational-behavior-edge-node-termination-host-action-ndeath-node-tags-stale] and
        [...-ndeath-devices-tags-stale]: every tag of the node and its devices gets an open data_gap (node_death);
        the next NBIRTH/DBIRTH closes them, still node_death (the DBIRTH closing a device's tags does not make the
        node's death a device's)."""
        host, out = state(), Outcome()
        node = born(host, out)
        send(host, node.topic("DBIRTH", "D1"), node.dbirth("D1", {"flow": 3.0}, T0_MS), 0, out)
        died = T0 + timedelta(minutes=2)
        send(host, node.topic("NDEATH"), node.ndeath(), 1, out, received=died)
        open_gaps = {r.key: r.value for r in out.records if r.kind == "data_gap"}
        assert set(open_gaps) == {"P-101.Vibration", "P-101.Run", "D1.flow"}
        assert all(v["end"] is None and v["reason"] == "node_death" for v in open_gaps.values())
        back = T0 + timedelta(minutes=17)
        out = Outcome()
        send(
            host,
            node.topic("NBIRTH"),
            node.nbirth({"Line1/P-101/Vibration": 1.0, "Line1/P-101/Run": True}, T0_MS),
            2,
            out,
            received=back,
        )
        send(host, node.topic("DBIRTH", "D1"), node.dbirth("D1", {"flow": 3.0}, T0_MS), 2, out, received=back)
        closed = {r.key: r.value for r in out.records if r.kind == "data_gap"}
        assert set(closed) == set(open_gaps) and all(v["end"] == back.isoformat() for v in closed.values())
        assert all(v["reason"] == "node_death" for v in closed.values())

    def test_ddeath_and_data_gap_fact(self) -> None:
        """[tck-id-operational-behavior-device-ddeath]: a DDEATH opens gaps for the device's tags only, DDATA before
        its DBIRTH is data_before_birth; the report facts read the gap ("no data from D1 from 10:02 to 10:17")."""
        host, out = state(), Outcome()
        node = born(host, out)
        send(host, node.topic("DBIRTH", "D1"), node.dbirth("D1", {"flow": 3.0}, T0_MS), 0, out)
        send(host, node.topic("DDEATH", "D1"), node.ddeath("D1", T0_MS), 0, out, received=T0 + timedelta(minutes=2))
        send(host, node.topic("DDATA", "D1"), node.data("D1", {"flow": 4.0}, T0_MS), 0, out)
        assert out.refused[-1].reason is SparkplugReason.DATA_BEFORE_BIRTH
        send(
            host,
            node.topic("DBIRTH", "D1"),
            node.dbirth("D1", {"flow": 3.0}, T0_MS),
            0,
            out,
            received=T0 + timedelta(minutes=17),
        )
        gaps = [r for r in out.records if r.kind == "data_gap"]
        assert {g.key for g in gaps} == {"D1.flow"}
        stored = [StoredRecord(**g.model_dump(), id=i) for i, g in enumerate(gaps, 1)]
        window = ResolvedWindow(start=T0, end=T0 + timedelta(hours=1), shift=None, timezone="UTC")
        facts = compute_facts(
            stored, ResolvedRequest(type="shift_summary", language="en", window=window, scope=Scope())
        )
        (gap,) = [f for f in facts if f.kind == "data_gap"]
        assert gap.subject == "D1.flow" and gap.values["reason"] == "device_death"
        assert gap.values["duration_s"] == 15 * 60

    def test_historical_metric(self) -> None:
        """is_historical values are stored with their own timestamps as history."""
        host, out = state(), Outcome()
        node = born(host, out)
        old = T0_MS - 3_600_000
        send(host, node.topic("NDATA"), node.data(None, {"Line1/P-101/Vibration": 0.5}, old, historical=True), 0, out)
        assert out.records[-1].historical and out.records[-1].source_time == T0 - timedelta(hours=1)

    def test_template_members_flattened(self) -> None:
        """A Template instance's members become tags of their own ("Pump1/Vibration" → Pump1.Vibration)."""
        host, out = state(), Outcome()
        payload = pb.Payload(timestamp=T0_MS, seq=0)
        payload.metrics.add(name="bdSeq", datatype=pb.Int64, long_value=0)
        udt = payload.metrics.add(name="Pump1", alias=1, datatype=pb.Template)
        udt.template_value.template_ref = "Pump"
        udt.template_value.metrics.add(name="Vibration", datatype=pb.Double, double_value=4.5)
        send(host, "spBv1.0/G/NBIRTH/E", payload.SerializeToString(), 0, out)
        assert values(out) == [("Pump1.Vibration", 4.5)]

    def test_retained_certificate_birth(self) -> None:
        """A retained NBIRTH from $sparkplug/certificates defines the node; the first live DATA sets the seq (the
        retained one's is long past), so no rebirth is asked for ([tck-id-conformance-mqtt-aware-nbirth-mqtt-topic])."""
        host, out = state(), Outcome()
        node = EdgeNodeEncoder("G", "E")
        birth = node.nbirth({"x": 1.0}, T0_MS)
        send(host, "$sparkplug/certificates/spBv1.0/G/NBIRTH/E", birth, 0, out)
        node.seq = 57
        send(host, node.topic("NDATA"), node.data(None, {"x": 2.0}, T0_MS + 1), 0, out)
        assert values(out)[-1] == ("E.x", 2.0) and not out.rebirths and not out.refused


# --- properties --------------------------------------------------------------------------------------------------


@given(st.binary(max_size=512), st.sampled_from(["NBIRTH", "NDATA", "NDEATH", "DBIRTH", "DDATA", "DDEATH"]))
def test_any_bytes_record_or_quarantine(raw: bytes, verb: str) -> None:
    """Any payload on any Sparkplug topic, born node or not: records or quarantine rows, never an exception."""
    host, out = state(), Outcome()
    born(host, out)
    topic = f"spBv1.0/G/{verb}/E" + ("/D1" if verb.startswith("D") else "")
    before = len(out.done)
    send(host, topic, raw, 1.0, out)
    host.tick(100.0, out)
    assert len(out.done) == before + 1  # dealt with exactly once, stored or refused


@st.composite
def metric_payloads(draw: st.DrawFn) -> bytes:
    """Structurally valid Payloads with arbitrary metric fields (datatypes, value fields, aliases, names)."""
    payload = pb.Payload(seq=draw(st.integers(0, 300)))
    if draw(st.booleans()):
        payload.timestamp = draw(st.integers(0, 2**64 - 1))
    for _ in range(draw(st.integers(0, 4))):
        m = payload.metrics.add()
        if draw(st.booleans()):
            m.alias = draw(st.integers(0, 5))
        if draw(st.booleans()):
            m.name = draw(st.sampled_from(["x", "bdSeq", "Node Control/Rebirth", "a/b", ""]))
        m.datatype = draw(st.integers(0, 40))
        field = draw(
            st.sampled_from(
                [
                    "int_value",
                    "long_value",
                    "float_value",
                    "double_value",
                    "boolean_value",
                    "string_value",
                    "bytes_value",
                    None,
                ]
            )
        )
        strategies = {
            "int_value": st.integers(0, 2**32 - 1),
            "long_value": st.integers(0, 2**64 - 1),
            "float_value": st.floats(width=32),
            "double_value": st.floats(),
            "boolean_value": st.booleans(),
            "string_value": st.text(max_size=8),
            "bytes_value": st.binary(max_size=16),
        }
        if field is not None:
            setattr(m, field, draw(strategies[field]))
        m.is_null = draw(st.booleans())
        m.is_historical = draw(st.booleans())
        if draw(st.booleans()):
            m.timestamp = draw(st.integers(0, 2**64 - 1))
    return payload.SerializeToString()


@given(metric_payloads(), st.sampled_from(["NBIRTH", "NDATA", "DBIRTH", "DDATA"]))
def test_any_metrics_record_or_quarantine(raw: bytes, verb: str) -> None:
    """Any well-formed Payload with arbitrary metrics: records or quarantine rows, never an exception."""
    host, out = state(reorder_timeout_ms=0), Outcome()
    born(host, out)
    topic = f"spBv1.0/G/{verb}/E" + ("/D1" if verb.startswith("D") else "")
    send(host, topic, raw, 1.0, out)
    assert out.done


# A random edge node history: messages with seq, some lost, some duplicated, some delivered late.
EVENTS = st.lists(
    st.tuples(st.sampled_from(["data", "data", "data", "lose", "dup", "swap", "death", "rebirth"]), st.floats(0, 3)),
    max_size=60,
)


@settings(max_examples=200)
@given(EVENTS, st.integers(0, 3000), st.floats(0, 20))
def test_sequences(events: list[tuple[str, float]], reorder_ms: int, interval: float) -> None:
    """Random births, deaths and data with losses, duplicates and reorderings: no value stored twice (a repeat has
    its first delivery's key and value, which the store skips), none lost that arrived after its BIRTH, a rebirth
    asked for each gap the timeout did not close (or one within the rate limit before it), never two requests for
    one node within rebirth_min_interval_s."""
    host = HostState(
        SparkplugConfig(enabled=True, reorder_timeout_ms=reorder_ms, rebirth_min_interval_s=interval), TIMES
    )
    node = EdgeNodeEncoder("G", "E")
    out = Outcome()
    clock = {"now": 0.0}
    arrived_after_birth: set[float] = set()
    requests: list[float] = []
    timeout_gaps: list[float] = []  # when a gap was given up on by its timeout (not overtaken by a BIRTH/DEATH)

    def step(action: Any, birth_or_death: bool = False) -> None:
        rebirths, refused = len(out.rebirths), len(out.refused)
        action()
        requests.extend([clock["now"]] * (len(out.rebirths) - rebirths))
        if not birth_or_death and any(r.reason is SparkplugReason.SEQUENCE_GAP for r in out.refused[refused:]):
            timeout_gaps.append(clock["now"])

    def deliver(topic: str, payload: bytes) -> None:
        send(host, topic, payload, clock["now"], out, received=T0 + timedelta(seconds=clock["now"]))

    alive, counter = True, 0
    held: list[tuple[bytes, float]] = []  # messages delivered after the next one ("swap")
    step(lambda: deliver(node.topic("NBIRTH"), node.nbirth({"v": 0.0}, T0_MS)), True)
    for action, dt in events:
        clock["now"] += dt
        step(lambda: host.tick(clock["now"], out))
        if action in ("death", "rebirth"):
            for late, late_value in held:  # what was held back arrives before the death or birth
                step(lambda late=late: deliver(node.topic("NDATA"), late))
                arrived_after_birth.add(late_value)
            held.clear()
        if action == "death":
            step(lambda: deliver(node.topic("NDEATH"), node.ndeath()), True)
            alive = False
            continue
        if action == "rebirth":
            node.bdseq += 1
            step(lambda: deliver(node.topic("NBIRTH"), node.nbirth({"v": 0.0}, T0_MS)), True)
            alive = True
            continue
        if not alive:
            continue
        counter += 1
        value = float(counter)
        payload = node.data(None, {"v": value}, T0_MS + counter)
        if action == "lose":
            continue
        if action == "swap":
            held.append((payload, value))
            continue
        step(lambda payload=payload: deliver(node.topic("NDATA"), payload))
        arrived_after_birth.add(value)
        if action == "dup":
            step(lambda payload=payload: deliver(node.topic("NDATA"), payload))
        for late, late_value in held:
            step(lambda late=late: deliver(node.topic("NDATA"), late))
            arrived_after_birth.add(late_value)
        held.clear()
    clock["now"] += 10
    step(lambda: host.tick(clock["now"], out))

    data = [r for r in out.records if r.kind == "tag_value" and r.value != 0.0]
    by_key: dict[str, set[Any]] = {}
    for r in data:
        by_key.setdefault(r.idempotency_key, set()).add(r.value)
    assert all(len(v) == 1 for v in by_key.values())  # a repeat is the same record: the store keeps it once
    assert len(by_key) == len({r.value for r in data})  # each value under one key: stored once
    assert arrived_after_birth <= {r.value for r in data}  # none lost that arrived after its BIRTH
    assert all(b - a >= interval for a, b in zip(requests, requests[1:], strict=False))  # the rate limit
    for when in timeout_gaps:  # each unrecoverable gap asked for a rebirth, or one had been asked within the limit
        assert any(when - interval < r <= when or r == when for r in requests)


class TestRecordsBuiltUnvalidated:
    """Tag values of BIRTH-checked definitions are built without pydantic's validation (`_tag_record`): each must be
    the very Record validation gives, and what validation would refuse or convert must still go through it."""

    @staticmethod
    def assert_revalidates(records: list[Record]) -> None:
        for r in records:
            again = Record(**dict(r))
            assert again == r and dict(again) == dict(r)
            if r.kind == "tag_value":  # the host names every field, so a validated one has them all set too
                assert r.model_fields_set == again.model_fields_set == set(Record.model_fields)
            assert repr(again) == repr(r)
            assert again.model_dump(mode="json") == r.model_dump(mode="json")
            assert {k: type(v) for k, v in dict(again).items()} == {k: type(v) for k, v in dict(r).items()}
            assert r.source_time.tzinfo is UTC and r.received_time.tzinfo is UTC

    def test_keys_pinned_and_time_ordered(self) -> None:
        """Idempotency keys as documented at KEY_TIME_DIGITS (the metric's ms time in 13 hex digits, then SHA-256
        over the message's and metric's parts as `idempotency_key` hashes them, cut to 64 digits), the fast path's
        the same as that formula's, a later metric's key sorting after an earlier one's; values unchanged: scalar
        types, a non-finite value, a message without timestamps (keyed by the receive time)."""
        host, out = state(), Outcome()
        node = EdgeNodeEncoder("G", "E", bdseq=3)
        names = {"Line1/P-001/Vibration": 0.0, "n": 5, "b": True, "s": "x"}
        send(host, node.topic("NBIRTH"), node.nbirth(names, T0_MS), 0, out)
        assert all(d.checked for d in host.nodes[("G", "E")].by_name.values())  # so built by `_tag_record`
        data = {"Line1/P-001/Vibration": 1.5, "n": -7, "b": False, "s": "é"}
        send(host, node.topic("NDATA"), node.data(None, data, T0_MS + 1), 0, out)
        payload = pb.Payload(seq=2)  # no timestamp anywhere: keyed by the receive time
        payload.metrics.add(alias=1).double_value = math.nan
        send(host, node.topic("NDATA"), payload.SerializeToString(), 0, out)
        assert [(r.key, r.idempotency_key, r.value, r.quality) for r in out.records] == [
            ("P-001.Vibration", "001a2310c01000adace0c758e498e88ee029bbf2f83858d74d4316af9e80c010", 0.0, "good"),
            ("E.n", "001a2310c01001ecf2392638f2e8f51c56eaa21481675552aebc49550be7399e", 5, "good"),
            ("E.b", "001a2310c01001474bd1d67179e2d15a1de988685cabad58c16144fe4b7c3b73", True, "good"),
            ("E.s", "001a2310c010061458a4e82cb60a1b331679007a6be079257cce1da493268b6c", "x", "good"),
            ("P-001.Vibration", "001a2310c01016f46fbd4d863a15e6e8d558d4f234b582d6849665e4b0fd694a", 1.5, "good"),
            ("E.n", "001a2310c0101a4d2edd40c60acfa5d02d6a4e87da70e41deaa66fd15a860871", -7, "good"),
            ("E.b", "001a2310c01014fed6ea11db1ed4210f867fc68a6cc3ba73255a8f0b528a8929", False, "good"),
            ("E.s", "001a2310c010129db3d3afd3c214acde63583fe6beaafdab3bb4967e0c7e2392", "é", "good"),
            ("P-001.Vibration", "001a2310c0100530c6e34d2d67dbb4a7c91b61b17f108248f64c6750fcf3e35f", "NaN", "uncertain"),
        ]
        stamps = [str(T0_MS)] * 4 + [str(T0_MS + 1)] * 4 + [T0.isoformat()]
        times_ms = [T0_MS] * 4 + [T0_MS + 1] * 4 + [T0_MS]
        seqs = ["0"] * 4 + ["1"] * 4 + ["2"]
        metric_names = [*names, *names, "Line1/P-001/Vibration"]
        for r, stamp, ms, seq, name in zip(out.records, stamps, times_ms, seqs, metric_names, strict=True):
            digest = idempotency_key("sparkplug", "G", "E", "", "3", seq, name, stamp)
            assert r.idempotency_key == f"{ms:013x}" + digest[:51]
        keys = [r.idempotency_key for r in out.records]
        assert max(keys[:4]) < min(keys[4:8])
        self.assert_revalidates(out.records)

    @pytest.mark.parametrize(
        "received",
        [T0.replace(tzinfo=None), T0.astimezone(timezone(timedelta(hours=2)))],
        ids=["naive", "utc+2"],
    )
    def test_receive_time_not_utc_is_validated(self, received: datetime) -> None:
        """A receive time that is naive or in another zone takes the validating path, which makes it UTC."""
        host, out = state(), Outcome()
        node = born(host, out)
        send(host, node.topic("NDATA"), node.data(None, {"Line1/P-101/Vibration": 2.5}, T0_MS + 1), 0, out, received)
        assert out.records[-1].received_time == T0 and out.records[-1].received_time.tzinfo is UTC
        self.assert_revalidates(out.records)

    def test_invalid_source_still_refused_by_validation(self) -> None:
        """A source that Record refuses is never trusted: the BIRTH check fails, and each record is validated."""
        host, out = HostState(SparkplugConfig(enabled=True), TIMES, source=""), Outcome()
        node = EdgeNodeEncoder("G", "E")
        with pytest.raises(ValidationError):
            send(host, node.topic("NBIRTH"), node.nbirth({"x": 1.0}, T0_MS), 0, out)
        assert not out.records

    def test_unchecked_definition_is_validated(self) -> None:
        """A definition whose tag did not pass the BIRTH check (here forced) builds its records through Record."""
        host, out = state(), Outcome()
        node = born(host, out)
        for definition in host.nodes[("G", "E")].by_alias.values():
            definition.checked, definition.tag = False, ""
        with pytest.raises(ValidationError):
            send(host, node.topic("NDATA"), node.data(None, {"Line1/P-101/Vibration": 2.5}, T0_MS + 1), 0, out)

    def test_tag_check(self) -> None:
        assert _valid_tag("sparkplug", "P-101.Vibration")
        assert not _valid_tag("sparkplug", "") and not _valid_tag("", "P-101.Vibration")
        assert not _valid_tag("sparkplug", "lone \ud800 surrogate")

    @given(metric_payloads(), st.sampled_from(["NBIRTH", "NDATA", "DBIRTH", "DDATA"]))
    def test_any_metrics_revalidate(self, raw: bytes, verb: str) -> None:
        """Whatever records arbitrary metrics make are the records validation makes of them."""
        host, out = state(reorder_timeout_ms=0), Outcome()
        born(host, out)
        send(host, f"spBv1.0/G/{verb}/E" + ("/D1" if verb.startswith("D") else ""), raw, 1.0, out)
        self.assert_revalidates(out.records)
