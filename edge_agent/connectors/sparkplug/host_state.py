"""What a Sparkplug host knows of its edge nodes, and what each message means: pure, no I/O, time passed in.

`HostState.handle(message, now, out)` and `HostState.tick(now, out)` fill an `Outcome`: records to store, messages
to quarantine (reason, evidence), rebirths to request, audit entries, and the messages now dealt with (to ack once
the records are durable). The component (`edge_agent.connectors.sparkplug.host`) does the I/O; tests drive this
directly too.

Rules (Sparkplug 3.0; docs/connect.md "Sparkplug B"):
- NBIRTH opens an edge node's session: its bdSeq, seq, and the metric names, aliases and datatypes; DBIRTH does the
  same for a device. DATA resolves metrics by alias (or by name where the node sends no aliases).
- seq (0-255, wrapping) is tracked per edge node over every message but NDEATH. A message ahead of the next
  expected seq waits up to `reorder_timeout` for the missing ones (TCK host-reordering-start); if they arrive, the
  waiting ones follow in order (reordering-success); if not, the gap is unrecoverable (reordering-rebirth): the waiting
  messages are stored, the hole is a `data_gap` (reason `sequence_gap`) with a quarantine row of that reason, and a
  rebirth is requested. A message behind the expected seq is a late or repeated one: stored (its idempotency key
  makes a repeat a no-op).
- NDEATH counts only with its NBIRTH's bdSeq (else `bdseq_mismatch`); it, and DDEATH, open a `data_gap` (reason
  `node_death` / `device_death`) for every tag of the node or device (TCK ...-ndeath-node-tags-stale), closed by the
  next BIRTH.
- DATA before BIRTH and unknown aliases are quarantined and a rebirth is requested; at most one request per edge
  node per `rebirth_min_interval_s`.

One module, over 450 lines, because `HostState` is one state machine: every rule above reads and changes the same
per-node sessions (seq, aliases, the messages waiting for a missing seq, open gaps), so its transitions stay side by
side; the records it builds are made here too, on its hot path (one per metric).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from pydantic import ValidationError

from edge_agent.base.types import Record, idempotency_key
from edge_agent.base.values import PlausibleTimes
from edge_agent.config.sparkplug import SparkplugConfig
from edge_agent.connectors.sparkplug import sparkplug_b_pb2 as pb
from edge_agent.connectors.sparkplug.naming import MetricName, TagNamer
from edge_agent.connectors.sparkplug.payload import (
    DATATYPE_NAMES,
    EPOCH,
    MetricRefused,
    decode_payload,
    metric_value,
    ms_time,
    non_finite,
    properties,
)
from edge_agent.connectors.sparkplug.reasons import SparkplugReason
from edge_agent.connectors.sparkplug.topics import NAMESPACE, SparkplugTopic, TopicError, parse_topic

log = structlog.get_logger(component="sparkplug")

SEQ_MODULO = 256
# A seq up to this far ahead of the expected one is a message that overtook others (it waits for them); further
# "ahead" is behind, modulo 256: a late or repeated message.
SEQ_AHEAD_MAX = 127
# Metrics that describe the Sparkplug session rather than the plant: never stored as tag values.
CONTROL_PREFIXES = ("Node Control/", "Device Control/")
BDSEQ = "bdSeq"
# A refused message's detail names at most this many of its bad metrics (it goes to logs and the audit entry).
DETAIL_METRICS_MAX = 5
GAP_REASONS = ("node_death", "device_death", "sequence_gap")
# A tag value's idempotency key: the metric's time in ms since the epoch as 13 hex digits (sorting as the time does
# until the year 10889), then the first 51 hex digits of SHA-256 over (source, group, node, device, bdSeq, seq,
# metric name, stamp) as `edge_agent.base.types.idempotency_key` hashes parts. Keys that grow with time go in at the end
# of the store's UNIQUE index, not onto random pages all over it: bench.sparkplug spent ~5 µs less CPU per metric.
KEY_TIME_DIGITS = 13
KEY_DIGEST_DIGITS = 64 - KEY_TIME_DIGITS
MS = timedelta(milliseconds=1)


@dataclass(slots=True)
class Inbound:
    """One received message; `token` comes back in `Outcome.done` once the state has dealt with it."""

    topic: str
    payload: bytes
    received: datetime
    token: Any = None


@dataclass(frozen=True, slots=True)
class Refusal:
    topic: str
    raw: bytes
    reason: SparkplugReason
    detail: str


@dataclass
class Outcome:
    records: list[Record] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    rebirths: list[tuple[str, str]] = field(default_factory=list)  # (group, edge node)
    audit: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    done: list[Any] = field(default_factory=list)
    suppressed_rebirths: int = 0

    def __bool__(self) -> bool:
        return bool(self.records or self.refused or self.rebirths or self.audit or self.done)


@dataclass(slots=True)
class Definition:
    """One metric of a BIRTH."""

    name: str
    datatype: int
    tag: str
    # True once a Record of this tag (the host's source, kind tag_value) passed pydantic's validation, at BIRTH: the
    # definition's values are then recorded through `_tag_record`, without validating the same strings again.
    checked: bool = False
    name_part: bytes = field(init=False)  # the name as the idempotency key hashes it (`_part`)

    def __post_init__(self) -> None:
        self.name_part = _part(self.name)


@dataclass
class NodeSession:
    """One edge node between its NBIRTH and its NDEATH."""

    group: str
    node: str
    bdseq: int | None
    expected_seq: int | None  # None: not known yet (a retained birth's seq is long past)
    # (device or None, alias) and (device or None, name) → the metric's definition.
    by_alias: dict[tuple[str | None, int], Definition] = field(default_factory=dict)
    by_name: dict[tuple[str | None, str], Definition] = field(default_factory=dict)
    devices: set[str] = field(default_factory=set)
    # Messages that overtook a missing seq, by their seq, until it arrives or the reorder timeout passes.
    waiting: dict[int, list[Inbound]] = field(default_factory=dict)
    deadline: float | None = None
    last_time: datetime | None = None  # time of the last message taken in order: where a seq gap starts

    def tags(self, device: str | None = None, *, every: bool = False) -> list[str]:
        """Tags of one device (None: the node's own metrics), or of the node and all its devices (`every`)."""
        return sorted(
            {
                d.tag
                for (dev, name), d in self.by_name.items()
                if (every or dev == device) and not name.startswith(CONTROL_PREFIXES)
            }
        )


def _seq_of(payload: Any) -> int | None:
    return payload.seq if payload.HasField("seq") else None


def _bdseq_of(payload: Any) -> int | None:
    for metric in payload.metrics:
        if metric.name == BDSEQ:
            value = metric.long_value if metric.HasField("long_value") else metric.int_value
            return int(value)
    return None


def _part(text: str) -> bytes:
    data = text.encode()
    return len(data).to_bytes(8, "big") + data


def key_prefix(*parts: str) -> Any:
    """The hash state after the message's parts, hashed once instead of once per metric (a third of the host's time
    per metric): each metric's key continues a copy of it with its name and stamp (`HostState._metric`)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(_part(part))
    return digest


_new = object.__new__
_set = object.__setattr__
_RECORD_FIELDS = frozenset(Record.model_fields)


def _valid_tag(source: str, tag: str) -> bool:
    """Whether a tag_value Record of `source` and `tag` passes validation (the fields `_tag_record` trusts)."""
    try:
        Record(source=source, kind="tag_value", key=tag, source_time=EPOCH, received_time=EPOCH, idempotency_key="-")
    except ValidationError:
        return False
    return True


def _tag_record(
    source: str,
    tag: str,
    when: datetime,
    received: datetime,
    value: Any,
    quality: str,
    key: str,
    historical: bool,
) -> Record:
    """The Record `Record(source=..., kind="tag_value", ...)` validates to, built without validating: a third of the
    host's time per metric went to validating the same strings again. The caller guarantees what validation checks:
    `source` and `tag` passed it together (`_valid_tag`, at BIRTH), `when` and `received` are datetimes whose tzinfo
    is UTC (what the UTC validator returns them as), `key` is 64 hex digits (`KEY_TIME_DIGITS`), `historical` a
    bool, `quality` one of "good" and "uncertain"; `value` is Any. tests/test_sparkplug_state.py checks every record
    equal to its revalidation, field for field."""
    record = _new(Record)
    _set(
        record,
        "__dict__",
        {
            "source": source,
            "kind": "tag_value",
            "key": tag,
            "source_time": when,
            "received_time": received,
            "value": value,
            "quality": quality,
            "raw": b"",
            "idempotency_key": key,
            "historical": historical,
        },
    )
    _set(record, "__pydantic_fields_set__", set(_RECORD_FIELDS))
    _set(record, "__pydantic_extra__", None)
    _set(record, "__pydantic_private__", None)
    return record


def _scope_key(group: str, node: str) -> str:
    """A data_gap key for a whole edge node: no "." (kept by every report scope, see docs/records.md)."""
    return f"{group}/{node}".replace(".", "_")


class HostState:
    def __init__(self, config: SparkplugConfig, times: PlausibleTimes, *, source: str = "sparkplug") -> None:
        self._source = source
        self._namer = TagNamer(config.naming)
        self._times = times
        self._reorder_s = config.reorder_timeout_ms / 1000
        self._request_rebirth = config.request_rebirth
        self._rebirth_interval = config.rebirth_min_interval_s
        self.nodes: dict[tuple[str, str], NodeSession] = {}
        # Open gaps of dead nodes and devices: (group, node) → {tag: (start, reason)}; closed by the next BIRTH
        # with the reason they opened with (a node death's device tags are closed by their DBIRTH).
        self.open_gaps: dict[tuple[str, str], dict[str, tuple[datetime, str]]] = {}
        self._last_rebirth: dict[tuple[str, str], float] = {}

    # --- entry points ----------------------------------------------------------------------------------------

    def handle(self, message: Inbound, now: float, out: Outcome) -> None:
        """Take one message. Never raises for bad input: it is refused into `out` instead."""
        if message.topic.startswith(f"{NAMESPACE}/STATE/"):
            out.done.append(message.token)  # host applications' STATE: the component reads its own
            return
        try:
            topic = parse_topic(message.topic)
        except TopicError as exc:
            self._refuse(out, message, SparkplugReason.INVALID_TOPIC, str(exc))
            out.done.append(message.token)
            return
        if topic.verb in ("NCMD", "DCMD"):
            out.done.append(message.token)  # another host's command: not plant data
            return
        try:
            payload = decode_payload(message.payload)
        except MetricRefused as exc:
            self._refuse(out, message, exc.reason, exc.detail)
            out.done.append(message.token)
            return
        key = (topic.group, topic.node)
        if topic.verb == "NBIRTH":
            self._node_birth(topic, payload, message, now, out)
        elif topic.verb == "NDEATH":
            self._node_death(topic, payload, message, now, out)
        else:
            session = self.nodes.get(key)
            if session is None:
                self._refuse(out, message, SparkplugReason.DATA_BEFORE_BIRTH, f"{topic.verb} before the node's NBIRTH")
                self._rebirth(key, now, out, "data_before_birth")
                out.done.append(message.token)
                return
            self._in_order(session, topic, payload, message, now, out)

    def tick(self, now: float, out: Outcome) -> None:
        """Give up on every seq gap whose reorder timeout has passed."""
        for session in list(self.nodes.values()):
            if session.deadline is not None and now >= session.deadline:
                self._give_up(session, now, out, rebirth=True)

    def next_deadline(self) -> float | None:
        deadlines = [s.deadline for s in self.nodes.values() if s.deadline is not None]
        return min(deadlines) if deadlines else None

    # --- seq ordering ----------------------------------------------------------------------------------------

    def _in_order(
        self, session: NodeSession, topic: SparkplugTopic, payload: Any, message: Inbound, now: float, out: Outcome
    ) -> None:
        seq = _seq_of(payload)
        if seq is None or topic.certificate or session.expected_seq is None:
            if seq is not None and not topic.certificate:
                session.expected_seq = (seq + 1) % SEQ_MODULO
            self._take(session, topic, payload, message, now, out)
            return
        if seq >= SEQ_MODULO:
            self._refuse(out, message, SparkplugReason.SCHEMA_MISMATCH, f"seq {seq} is beyond 255")
            out.done.append(message.token)
            return
        ahead = (seq - session.expected_seq) % SEQ_MODULO
        if ahead == 0:
            session.expected_seq = (seq + 1) % SEQ_MODULO
            self._take(session, topic, payload, message, now, out)
            self._release_ready(session, now, out)
        elif ahead <= SEQ_AHEAD_MAX:
            session.waiting.setdefault(seq, []).append(message)
            if session.deadline is None:
                session.deadline = now + self._reorder_s  # TCK host-reordering-start
            if self._reorder_s <= 0:
                self._give_up(session, now, out, rebirth=True)
        else:  # behind: a late or repeated message, stored as it is (a repeat's keys are stored already)
            self._take(session, topic, payload, message, now, out)

    def _release_ready(self, session: NodeSession, now: float, out: Outcome) -> None:
        """Take the waiting messages that are next in line; the timer stops once none waits (reordering-success)."""
        assert session.expected_seq is not None  # only called with a known seq
        while session.expected_seq in session.waiting:
            seq = session.expected_seq
            session.expected_seq = (seq + 1) % SEQ_MODULO
            for waiting in session.waiting.pop(seq):
                self._retake(session, waiting, now, out)
        session.deadline = None if not session.waiting else now + self._reorder_s

    def _give_up(self, session: NodeSession, now: float, out: Outcome, *, rebirth: bool) -> None:
        """The missing seqs are not coming: take what waits, in seq order, recording each hole."""
        waiting, session.waiting, session.deadline = session.waiting, {}, None
        if not waiting or session.expected_seq is None:
            return
        start_seq = session.expected_seq
        for seq in sorted(waiting, key=lambda s: (s - start_seq) % SEQ_MODULO):
            if seq != session.expected_seq:
                first = waiting[seq][0]
                self._sequence_gap(session, session.expected_seq, seq, first, out)
            session.expected_seq = (seq + 1) % SEQ_MODULO
            for message in waiting[seq]:
                self._retake(session, message, now, out)
        if rebirth:
            self._rebirth((session.group, session.node), now, out, "sequence_gap")

    def _sequence_gap(self, session: NodeSession, expected: int, got: int, message: Inbound, out: Outcome) -> None:
        end = self._message_time(message)
        start = session.last_time or end
        detail = (
            f"seq {expected}..{(got - 1) % SEQ_MODULO} never arrived (reorder timeout {self._reorder_s:g} s); "
            "this message's values are stored"
        )
        self._refuse(out, message, SparkplugReason.SEQUENCE_GAP, detail)
        self._gap(out, session.group, session.node, None, min(start, end), end, "sequence_gap")

    def _retake(self, session: NodeSession, message: Inbound, now: float, out: Outcome) -> None:
        topic = parse_topic(message.topic)  # it parsed on arrival
        self._take(session, topic, decode_payload(message.payload), message, now, out)

    def _message_time(self, message: Inbound) -> datetime:
        try:
            payload = decode_payload(message.payload)
            if payload.HasField("timestamp"):
                return ms_time(payload.timestamp)
        except MetricRefused:
            pass
        return message.received

    # --- births and deaths -----------------------------------------------------------------------------------

    def _node_birth(self, topic: SparkplugTopic, payload: Any, message: Inbound, now: float, out: Outcome) -> None:
        key = (topic.group, topic.node)
        old = self.nodes.get(key)
        if old is not None and topic.certificate:
            out.done.append(message.token)  # a retained birth never replaces a live session
            return
        if old is not None:
            # Messages that waited on the old session's seq arrived after its BIRTH: stored, with its names.
            self._give_up(old, now, out, rebirth=False)
        seq = _seq_of(payload)
        session = NodeSession(
            group=topic.group,
            node=topic.node,
            bdseq=_bdseq_of(payload),
            expected_seq=None if topic.certificate or seq is None else (seq + 1) % SEQ_MODULO,
        )
        self.nodes[key] = session
        self._define(session, None, payload, topic, message, out)
        self._close_gaps(key, None, session, message.received, out)
        self._take(session, topic, payload, message, now, out)

    def _node_death(self, topic: SparkplugTopic, payload: Any, message: Inbound, now: float, out: Outcome) -> None:
        key = (topic.group, topic.node)
        session = self.nodes.get(key)
        bdseq = _bdseq_of(payload)
        if session is None:
            out.done.append(message.token)  # a death of a node this host never saw born: nothing is alive to end
            return
        if bdseq is not None and session.bdseq is not None and bdseq != session.bdseq:
            detail = f"NDEATH bdSeq {bdseq} is not the live NBIRTH's {session.bdseq}: an older session's death"
            self._refuse(out, message, SparkplugReason.BDSEQ_MISMATCH, detail)
            out.done.append(message.token)
            return
        self._give_up(session, now, out, rebirth=False)
        gaps = self.open_gaps.setdefault(key, {})
        for tag in session.tags(every=True):
            start, reason = gaps.setdefault(tag, (message.received, "node_death"))
            self._gap(out, topic.group, topic.node, tag, start, None, reason)
        del self.nodes[key]
        out.done.append(message.token)

    def _device_death(self, session: NodeSession, device: str, message: Inbound, out: Outcome) -> None:
        gaps = self.open_gaps.setdefault((session.group, session.node), {})
        for tag in session.tags(device):
            start, reason = gaps.setdefault(tag, (message.received, "device_death"))
            self._gap(out, session.group, session.node, tag, start, None, reason)
        session.devices.discard(device)
        for index in [k for k in session.by_alias if k[0] == device]:
            del session.by_alias[index]
        for name in [k for k in session.by_name if k[0] == device]:
            del session.by_name[name]

    def _close_gaps(
        self, key: tuple[str, str], device: str | None, session: NodeSession, when: datetime, out: Outcome
    ) -> None:
        gaps = self.open_gaps.get(key)
        if not gaps:
            return
        for tag in session.tags(device):
            if (gap := gaps.pop(tag, None)) is not None:
                start, reason = gap
                self._gap(out, key[0], key[1], tag, start, max(start, when), reason)

    def _define(
        self,
        session: NodeSession,
        device: str | None,
        payload: Any,
        topic: SparkplugTopic,
        message: Inbound,
        out: Outcome,
    ) -> None:
        """Take a BIRTH's names, aliases and datatypes (and tags, by the naming rule)."""
        metrics = [m for m in payload.metrics if m.name and m.name != BDSEQ]
        names = [MetricName(session.node, device, m.name) for m in metrics]
        names += [
            MetricName(session.node, device, f"{m.name}/{member.name}")
            for m in metrics
            if m.datatype == pb.Template and not m.template_value.is_definition
            for member in m.template_value.metrics
        ]
        tags = self._namer.tags(names)
        entries = []
        for metric in metrics:
            tag = tags[MetricName(session.node, device, metric.name)]
            definition = Definition(metric.name, metric.datatype, tag, _valid_tag(self._source, tag))
            session.by_name[(device, metric.name)] = definition
            if metric.HasField("alias"):
                session.by_alias[(device, metric.alias)] = definition
            entry = {
                "name": metric.name,
                "alias": metric.alias if metric.HasField("alias") else None,
                "datatype": DATATYPE_NAMES.get(metric.datatype, str(metric.datatype)),
                "tag": definition.tag,
            }
            if props := properties(metric):
                entry["properties"] = props
            entries.append(entry)
        for name in names[len(metrics) :]:
            session.by_name[(device, name.name)] = Definition(name.name, pb.Unknown, tags[name])
        out.audit.append(
            (
                "sparkplug.birth",
                self._source,
                {
                    "group": topic.group,
                    "node": topic.node,
                    "device": device,
                    "bdseq": session.bdseq,
                    "seq": _seq_of(payload),
                    "certificate": topic.certificate,
                    "metrics": entries,
                },
            )
        )

    # --- data ------------------------------------------------------------------------------------------------

    def _take(
        self,
        session: NodeSession,
        topic: SparkplugTopic,
        payload: Any,
        message: Inbound,
        now: float,
        out: Outcome,
    ) -> None:
        """One message in its place in the node's sequence: its definitions (DBIRTH), its values, its deaths."""
        out.done.append(message.token)
        if payload.HasField("timestamp"):
            try:
                session.last_time = ms_time(payload.timestamp)
            except MetricRefused:
                session.last_time = message.received
        else:
            session.last_time = message.received
        device = topic.device
        if topic.verb == "DBIRTH":
            assert device is not None  # parse_topic: device verbs have one
            for stale in [k for k in session.by_name if k[0] == device]:
                del session.by_name[stale]
            for stale_alias in [k for k in session.by_alias if k[0] == device]:
                del session.by_alias[stale_alias]
            session.devices.add(device)
            self._define(session, device, payload, topic, message, out)
            self._close_gaps((session.group, session.node), device, session, message.received, out)
        elif topic.verb == "DDEATH":
            assert device is not None
            if device in session.devices:
                self._device_death(session, device, message, out)
            return
        elif device is not None and device not in session.devices:
            self._refuse(out, message, SparkplugReason.DATA_BEFORE_BIRTH, f"DDATA before device {device!r}'s DBIRTH")
            self._rebirth((session.group, session.node), now, out, "data_before_birth")
            return
        self._values(session, topic, payload, message, now, out)

    def _values(
        self, session: NodeSession, topic: SparkplugTopic, payload: Any, message: Inbound, now: float, out: Outcome
    ) -> None:
        device = topic.device
        seq = _seq_of(payload)
        # The idempotency key's parts common to every metric of the message, hashed once (`key_prefix`).
        prefix = key_prefix(self._source, session.group, session.node, device or "", str(session.bdseq), str(seq))
        default_ms = payload.timestamp if payload.HasField("timestamp") else None
        # Per timestamp (ms, or None: the receive time), the source time once checked and the key's stamp part and
        # time digits for it: a message's metrics mostly share one timestamp.
        times: dict[int | None, tuple[datetime, bytes, str]] = {}
        problems: list[tuple[SparkplugReason, str]] = []
        unknown_alias = False
        for metric in payload.metrics:
            try:
                if metric.HasField("alias") and not metric.name:
                    definition = session.by_alias.get((device, metric.alias))
                    if definition is None:
                        unknown_alias = True
                        problems.append((SparkplugReason.UNKNOWN_ALIAS, f"alias {metric.alias} not in the BIRTH"))
                        continue
                else:
                    if metric.name == BDSEQ or metric.name.startswith(CONTROL_PREFIXES):
                        continue
                    definition = session.by_name.get((device, metric.name))
                    if definition is None:
                        unknown_alias = True
                        problems.append((SparkplugReason.UNKNOWN_ALIAS, f"metric {metric.name!r} not in the BIRTH"))
                        continue
                if definition.name.startswith(CONTROL_PREFIXES):
                    continue
                self._metric(session, device, definition, metric, default_ms, prefix, times, message, out)
            except MetricRefused as exc:
                problems.append((exc.reason, f"{metric.name or f'alias {metric.alias}'}: {exc.detail}"))
        if problems:
            reason = SparkplugReason.UNKNOWN_ALIAS if unknown_alias else problems[0][0]
            details = "; ".join(d for _, d in problems[:DETAIL_METRICS_MAX])
            more = f" (+{len(problems) - DETAIL_METRICS_MAX} more)" if len(problems) > DETAIL_METRICS_MAX else ""
            self._refuse(out, message, reason, f"{len(problems)} metric(s) not stored: {details}{more}")
            if unknown_alias:
                self._rebirth((session.group, session.node), now, out, "unknown_alias")

    def _metric(
        self,
        session: NodeSession,
        device: str | None,
        definition: Definition,
        metric: Any,
        default_ms: int | None,
        prefix: Any,
        times: dict[int | None, tuple[datetime, bytes, str]],
        message: Inbound,
        out: Outcome,
    ) -> None:
        datatype = metric.datatype if metric.HasField("datatype") else definition.datatype
        ms = metric.timestamp if metric.HasField("timestamp") else default_ms
        if datatype == pb.Template:
            if metric.is_null or metric.template_value.is_definition:
                return
            # A template instance's members become metrics of their own ("Pump1/Vibration").
            for member in metric.template_value.metrics:
                if not member.name:
                    raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, "template member without a name")
                name = f"{definition.name}/{member.name}"
                tag = session.by_name.get((device, name))
                member_def = Definition(
                    name,
                    member.datatype,
                    tag.tag
                    if tag is not None
                    else "{}.{}".format(*self._namer.split(MetricName(session.node, device, name))),
                )
                member_ms = member.timestamp if member.HasField("timestamp") else ms
                self._metric(session, device, member_def, member, member_ms, prefix, times, message, out)
            return
        known = times.get(ms)
        if known is None:
            when = ms_time(ms) if ms is not None else message.received
            try:
                self._times.check_time(when, message.received)
            except ValueError as exc:
                raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"timestamp {exc}") from exc
            stamp_ms = ms if ms is not None else (when - EPOCH) // MS
            stamp = _part(str(ms) if ms is not None else when.isoformat())
            known = times[ms] = (when, stamp, f"{stamp_ms:0{KEY_TIME_DIGITS}x}")
        when, stamp_part, key_time = known
        value = metric_value(metric, datatype)
        quality = "uncertain" if non_finite(value) else "good"
        digest = prefix.copy()  # the key's hash (KEY_TIME_DIGITS above), its last parts encoded once
        digest.update(definition.name_part + stamp_part)
        key = key_time + digest.hexdigest()[:KEY_DIGEST_DIGITS]
        received = message.received
        if (
            definition.checked
            and type(when) is datetime
            and when.tzinfo is UTC
            and type(received) is datetime
            and received.tzinfo is UTC
        ):
            out.records.append(
                _tag_record(
                    self._source, definition.tag, when, received, value, quality, key, bool(metric.is_historical)
                )
            )
            return
        out.records.append(
            Record(
                source=self._source,
                kind="tag_value",
                key=definition.tag,
                source_time=when,
                received_time=received,
                value=value,
                quality=quality,
                raw=b"",
                idempotency_key=key,
                historical=bool(metric.is_historical),
            )
        )

    # --- helpers ---------------------------------------------------------------------------------------------

    def _refuse(self, out: Outcome, message: Inbound, reason: SparkplugReason, detail: str) -> None:
        out.refused.append(Refusal(message.topic, message.payload, reason, detail))

    def _rebirth(self, key: tuple[str, str], now: float, out: Outcome, why: str) -> None:
        if not self._request_rebirth:
            return
        last = self._last_rebirth.get(key)
        if last is not None and now - last < self._rebirth_interval:
            out.suppressed_rebirths += 1
            return
        self._last_rebirth[key] = now
        out.rebirths.append(key)
        out.audit.append(("sparkplug.rebirth", self._source, {"group": key[0], "node": key[1], "reason": why}))

    def _gap(
        self,
        out: Outcome,
        group: str,
        node: str,
        tag: str | None,
        start: datetime,
        end: datetime | None,
        reason: str,
    ) -> None:
        record = gap_record(self._source, group, node, tag, start, end, reason)
        out.records.append(record)
        out.audit.append(("sparkplug.gap", self._source, record.value))


def gap_record(
    source: str, group: str, node: str, tag: str | None, start: datetime, end: datetime | None, reason: str
) -> Record:
    """A `data_gap` record (docs/records.md): a tag of a dead node or device, or a whole node's seq gap (tag None,
    keyed by "<group>/<node>", which has no "." and so is kept by every report scope)."""
    if reason not in GAP_REASONS:
        raise ValueError(f"gap reason {reason!r} is not one of {GAP_REASONS}")
    start_iso = start.isoformat()
    end_iso = end.isoformat() if end is not None else None
    key = tag or _scope_key(group, node)
    return Record(
        source=source,
        kind="data_gap",
        key=key,
        source_time=start,
        value={"start": start_iso, "end": end_iso, "reason": reason, "source": f"{source}:{group}/{node}", "tag": tag},
        idempotency_key=idempotency_key(source, "data_gap", key, start_iso, end_iso or "", reason),
        historical=True,
    )


__all__ = ["Definition", "HostState", "Inbound", "NodeSession", "Outcome", "Refusal", "gap_record"]
