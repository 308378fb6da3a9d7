"""The records the agent would store for a simulated run, computed offline: no broker, no OPC UA server.

Each kind goes through the connector function that stores it live, so the records are exactly what ingest would
produce: tag values through `edge_agent.connectors.opcua.records.tag_record`, alarm transitions (as the OPC UA events
the
simulator's server fires) through `alarm_record`, MES events and operator log lines (as `encode_mes`/`encode_log`
put them on the wire) through the `json` and `text` parsers of the demo's MQTT routes, gaps through `gap_record`.
Records are numbered 1..n in source-time order and received when they happened, so a run is the same every time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from asyncua import ua
from asyncua.common.events import Event

from edge_agent.base.types import Record, StoredRecord, idempotency_key, to_utc
from edge_agent.connectors.mqtt.parsers import JsonParser, TextParser
from edge_agent.connectors.opcua.records import alarm_record, gap_record, tag_record
from edge_agent.sim.messages import encode_log, encode_mes
from edge_agent.sim.plant import AlarmEvent, LogLine, Plant, iso

# The demo's names: its `[[opcua.sources]]` is "sim", and MQTT ingest stores under its default source "mqtt".
OPCUA_SOURCE = "sim"
MQTT_SOURCE = "mqtt"
_MES = JsonParser("mes_event", {}, [], source=MQTT_SOURCE)
_LOG = TextParser("log_line", source=MQTT_SOURCE)


@dataclass(frozen=True)
class Gap:
    """An interval [start, end) the agent holds nothing for: the values of `tag` (None: the source's alarms and
    events) are lost, and the connector records a `data_gap` with `reason` (one of `records.GAP_REASONS`)."""

    start: datetime
    end: datetime
    tag: str | None
    reason: str

    def __post_init__(self) -> None:
        if self.start.tzinfo is None or self.end.tzinfo is None or self.end <= self.start:
            raise ValueError(f"a gap needs aware times with end after start, got {self.start!r} .. {self.end!r}")

    def loses(self, record: Record) -> bool:
        if not self.start <= record.source_time < self.end:
            return False
        if self.tag is None:
            return record.kind == "alarm"
        return record.kind == "tag_value" and record.key == self.tag


def _event(alarm: AlarmEvent, site: str) -> Event:
    """The fields of the AlarmConditionType event the simulator's server fires for `alarm` (`PlantServer.fire_alarm`),
    with a deterministic EventId (the server's is a random uuid4 hex, sent as its UTF-8 bytes). The condition is part
    of it: a flood's conditions of one asset clear at one instant, and the store keeps one record per EventId."""
    event = Event()
    event_id = idempotency_key(site, alarm.asset, alarm.condition, iso(alarm.time), str(alarm.active))[:32]
    event.add_property("EventId", event_id.encode(), ua.VariantType.ByteString)
    event.add_property("Time", alarm.time, ua.VariantType.DateTime)
    event.add_property("ReceiveTime", alarm.time, ua.VariantType.DateTime)
    event.add_property("SourceName", alarm.asset, ua.VariantType.String)
    event.add_property("Message", ua.LocalizedText(alarm.message), ua.VariantType.LocalizedText)
    event.add_property("Severity", alarm.severity, ua.VariantType.UInt16)
    event.add_property("ConditionName", alarm.condition, ua.VariantType.String)
    event.add_property("ActiveState/Id", alarm.active, ua.VariantType.Boolean)
    return event


def _tag_value(tag: str, value: float | bool, when: datetime) -> Record:
    variant = ua.Variant(value, ua.VariantType.Boolean if isinstance(value, bool) else ua.VariantType.Double)
    # asyncua annotates its DateTime marker subclass; any datetime encodes.
    dv = ua.DataValue(variant, SourceTimestamp=when, ServerTimestamp=when)  # type: ignore[arg-type]
    return tag_record(OPCUA_SOURCE, tag, dv, historical=False)


def _log_line(site: str, line: LogLine) -> Record:
    message = encode_log(site, line)
    return _LOG.parse(message.topic, message.payload, line.time)


def _simulated(
    seed: int, start: datetime, hours: float, tick_s: float, site: str, tag_every: int, kpi_scenarios: bool = False
) -> Iterator[Record]:
    plant = Plant(seed, start, tick_s, site, kpi_scenarios=kpi_scenarios)
    end = to_utc(start) + timedelta(hours=hours)
    index = 0
    while True:
        tick = plant.step()
        if tick.time >= end:
            return
        if index % tag_every == 0:
            yield from (_tag_value(tag, value, tick.time) for tag, value in tick.values.items())
        yield from (alarm_record(OPCUA_SOURCE, _event(alarm, site)) for alarm in tick.alarms)
        for event in tick.mes:
            message = encode_mes(site, event)
            yield _MES.parse(message.topic, message.payload, tick.time)
        yield from (_log_line(site, line) for line in tick.logs)
        index += 1


def plant_records(
    seed: int,
    start: datetime,
    hours: float,
    tick_s: float = 10.0,
    site: str = "demo",
    tag_every: int = 1,
    *,
    notes: Sequence[LogLine] = (),
    gaps: Sequence[Gap] = (),
    kpi_scenarios: bool = False,
) -> list[StoredRecord]:
    """The stored records of `hours` of the plant from `start`, ids 1..n in source-time order.

    `tag_every` keeps every n-th tick's tag values (a long window stays light); `notes` are extra operator log lines
    published besides the plant's own; each of `gaps` drops what it loses and adds its `data_gap` record;
    `kpi_scenarios` adds what the plant KPIs need (`Plant(kpi_scenarios=True)`), leaving the rest as it was.
    """
    if tag_every < 1:
        raise ValueError(f"tag_every must be at least 1, got {tag_every}")
    if hours < 0 or tick_s <= 0:
        raise ValueError(f"hours must be >= 0 and tick_s > 0, got hours={hours}, tick_s={tick_s}")
    # (receive time, record): live records arrive when they happen, a gap record at the reconnect that found it.
    simulated = _simulated(seed, start, hours, tick_s, site, tag_every, kpi_scenarios)
    received = [(r.source_time, r) for r in simulated if not any(g.loses(r) for g in gaps)]
    received += [(to_utc(line.time), _log_line(site, line)) for line in notes]
    received += [(to_utc(g.end), gap_record(OPCUA_SOURCE, g.tag, g.start, g.end, g.reason)) for g in gaps]
    # Stable: within one instant, the order the plant produced them (values, alarms, MES events, notes).
    received.sort(key=lambda pair: pair[1].source_time)
    # Every field was validated when the connector function built the record; the id and receive time are ours.
    return [
        StoredRecord.model_construct(**{**dict(r), "received_time": when, "id": i})
        for i, (when, r) in enumerate(received, start=1)
    ]


__all__ = ["MQTT_SOURCE", "OPCUA_SOURCE", "Gap", "plant_records"]
