"""OPC UA values and events as records: the isolation barrier, and the `data_gap` record.

`convert_value`, `convert_event` and `convert_history_event` never raise: each returns a `Record`, or a `Refused`
saying what to quarantine and why (`schema_mismatch` for a value outside its domain, `internal_error` for anything
nobody foresaw), so one bad value never fails its batch. docs/records.md lists the rules.
"""

from __future__ import annotations

import math
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from asyncua import ua
from asyncua.common.events import Event

from edge_agent.base.canonical import canonical_json
from edge_agent.base.types import Record, idempotency_key, to_utc, utcnow
from edge_agent.base.values import PlausibleTimes
from edge_agent.config import OpcuaSourceConfig
from edge_agent.connectors.mqtt.parsers import QuarantineReason
from edge_agent.connectors.opcua.security import OpcuaError

# Quarantine reasons: the MQTT side's vocabulary, so both connectors' rows and metrics read alike.
SCHEMA_MISMATCH = QuarantineReason.SCHEMA_MISMATCH.value
INTERNAL_ERROR = QuarantineReason.INTERNAL_ERROR.value
DUPLICATE_ID = QuarantineReason.DUPLICATE_ID.value
# Integers JSON readers and SQLite keep exactly.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# OPC UA's DateTime 0: "no timestamp".
NULL_TIME = ua.uatypes.FILETIME_EPOCH_AS_UTC_DATETIME
# A source's plausible source times (`[[opcua.sources]]` time_min, time_max_future_s); these are their defaults.
DEFAULT_TIMES = PlausibleTimes(
    time_min=OpcuaSourceConfig.model_fields["time_min"].default,
    time_max_future=timedelta(seconds=OpcuaSourceConfig.model_fields["time_max_future_s"].default),
)
# Event Severity is 1..1000 (OPC 10000-5 BaseEventType); 0 stands for "not given".
SEVERITY_MAX = 1000
# StatusCode info bits (OPC 10000-4 §7.39.1): InfoType DataValue, and its Overflow bit.
_INFO_TYPE_MASK = 0x0C00
_INFO_TYPE_DATA_VALUE = 0x0400
_OVERFLOW_BIT = 0x0080


def quality_of(status: ua.StatusCode | None) -> str:
    """docs/records.md quality from the status code's severity bits (good / uncertain / bad)."""
    if status is None or status.is_good():
        return "good"
    return "uncertain" if status.is_uncertain() else "bad"


def overflowed(status: ua.StatusCode | None) -> bool:
    """The Overflow info bit (OPC 10000-4 §7.39.1): the server dropped values of this item before this one."""
    if status is None:
        return False
    return status.value & _INFO_TYPE_MASK == _INFO_TYPE_DATA_VALUE and bool(status.value & _OVERFLOW_BIT)


class ValueRefused(OpcuaError):
    """One OPC UA value or event that cannot become a record. `reason` is the quarantine reason; `detail` says why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Refused:
    """What a quarantine row keeps of a refused value or event, and why it was refused."""

    topic: str  # opcua/<source>/<tag>, or opcua/<source>/events
    raw: bytes  # the DataValue's OPC UA binary encoding where it has one, else its repr (UTF-8, escaped)
    reason: str
    detail: str


def _text(text: str, what: str) -> str:
    """A string that UTF-8 (the store, hashes, reports) can carry: a lone surrogate is refused, NUL is kept."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueRefused(SCHEMA_MISMATCH, f"{what}: lone surrogate at index {exc.start}") from exc
    return text


def _utc(when: datetime, what: str) -> datetime:
    try:
        return to_utc(when)
    except (OverflowError, ValueError) as exc:  # year 1 with a positive offset, year 9999 with a negative one
        raise ValueRefused(SCHEMA_MISMATCH, f"{what} {when!r} cannot be expressed in UTC") from exc


def _plausible(when: datetime, what: str, times: PlausibleTimes) -> datetime:
    """A source time within the source's plausible times; one outside would misplace the value."""
    utc = _utc(when, what)
    try:
        times.check_time(utc, utcnow())
    except ValueError as exc:
        raise ValueRefused(SCHEMA_MISMATCH, f"{what} {exc}") from exc
    return utc


def _stamp(*candidates: Any) -> datetime | None:
    """The first candidate that is a timestamp: OPC UA's DateTime 0 (1601-01-01) means none (OPC 10000-6 §5.2.2.5)."""
    for when in candidates:
        if when is None:
            continue
        if not isinstance(when, datetime):
            raise ValueRefused(SCHEMA_MISMATCH, f"timestamp {when!r} is a {type(when).__name__}, not a DateTime")
        if _utc(when, "timestamp") > NULL_TIME:
            return when
    return None


def plain_value(value: Any) -> Any:
    """A JSON-storable form of an OPC UA value.

    Non-finite floats become the strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers; `tag_record`
    marks such a value uncertain). Integers beyond signed 64 bits (a UInt64 near its top) become exact decimal
    strings: JSON readers and SQLite would round them. A lone surrogate in a string is refused (`ValueRefused`).
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        number = int(value)  # an IntEnum (OPC UA enumerations) is stored as its number
        return number if INT64_MIN <= number <= INT64_MAX else str(number)
    if isinstance(value, float):
        real = float(value)
        if math.isnan(real):
            return "NaN"
        return real if math.isfinite(real) else ("Infinity" if real > 0 else "-Infinity")
    if isinstance(value, str):
        return _text(str(value), "string")
    if isinstance(value, datetime):
        return _utc(value, "DateTime value").isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, ua.LocalizedText):
        return _text(value.Text, "LocalizedText") if value.Text is not None else None
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return _text(str(value), type(value).__name__)


def _non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, (list, tuple)) and any(_non_finite(v) for v in value)


def tag_record(
    source: str, tag: str, dv: ua.DataValue, *, historical: bool, times: PlausibleTimes = DEFAULT_TIMES
) -> Record:
    """One data value as a `tag_value` record. The key is (source, tag, source time, value): live and history agree.

    Raises `ValueRefused` for a value no record can hold faithfully (see `plain_value`, `_plausible`).
    """
    when = _plausible(_stamp(dv.SourceTimestamp, dv.ServerTimestamp) or utcnow(), "source time", times)
    raw = dv.Value.Value if dv.Value is not None else None
    value = plain_value(raw)
    quality = quality_of(dv.StatusCode)
    if quality == "good" and _non_finite(raw):
        quality = "uncertain"  # the server vouches for it, but a non-number is no measurement
    stamp = when.isoformat(timespec="microseconds")
    return Record(
        source=source,
        kind="tag_value",
        key=tag,
        source_time=when,
        value=value,
        quality=quality,
        idempotency_key=idempotency_key(source, "tag_value", tag, stamp, repr(value)),
        historical=historical,
    )


def alarm_record(
    source: str, event: Event, *, historical: bool = False, times: PlausibleTimes = DEFAULT_TIMES
) -> Record:
    """One alarm/condition event as an `alarm` record keyed by its asset (SourceName), deduplicated by EventId.

    The key is the same live and from HistoryRead (same select clauses, same EventId). Raises `ValueRefused` for a
    field no record can hold (a Severity that is no integer, a Time that is no DateTime or is implausible).
    """
    fields = event.get_event_props_as_fields_dict()

    def field_value(name: str) -> Any:
        variant = fields.get(name)
        return variant.Value if variant is not None else None

    raw_id = field_value("EventId")
    event_id = raw_id.hex() if isinstance(raw_id, bytes) else str(plain_value(raw_id) or "")
    when = _plausible(_stamp(field_value("Time"), field_value("ReceiveTime")) or utcnow(), "event Time", times)
    severity = field_value("Severity")
    if severity is not None and (
        isinstance(severity, bool) or not isinstance(severity, int) or not 0 <= severity <= SEVERITY_MAX
    ):
        raise ValueRefused(SCHEMA_MISMATCH, f"event Severity {severity!r} is not an integer in 0..{SEVERITY_MAX}")
    active = field_value("ActiveState/Id")
    if active is not None and not isinstance(active, bool):
        raise ValueRefused(SCHEMA_MISMATCH, f"event ActiveState/Id {active!r} is not a Boolean")
    asset = str(plain_value(field_value("SourceName")) or "") or "unknown"
    message = str(plain_value(field_value("Message")) or "")
    value = {
        "event_id": event_id,
        "message": message,
        "severity": int(severity or 0),
        "condition": str(plain_value(field_value("ConditionName")) or ""),
        "active": active,
    }
    key = (
        idempotency_key(source, "alarm", event_id)
        if event_id
        else idempotency_key(source, "alarm", asset, when.isoformat(), message)
    )
    return Record(
        source=source,
        kind="alarm",
        key=asset,
        source_time=when,
        value=value,
        idempotency_key=key,
        historical=historical,
    )


def _describe(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # an exception whose str() fails still has a type name
        return type(exc).__name__


def _evidence(item: Any) -> bytes:
    """The refused item as bytes: OPC UA binary where it encodes (decodable later with asyncua), else its repr."""
    if isinstance(item, (ua.DataValue, ua.HistoryEventFieldList)):
        with suppress(Exception):  # an odd value may not encode: its repr is the evidence then
            return ua.ua_binary.struct_to_binary(item)
    try:
        return repr(item).encode("utf-8", "backslashreplace")
    except Exception as exc:
        return f"<unrepresentable {type(item).__name__}: {_describe(exc)}>".encode("utf-8", "backslashreplace")


def convert_value(
    source: str, tag: str, dv: ua.DataValue, *, historical: bool, times: PlausibleTimes = DEFAULT_TIMES
) -> Record | Refused:
    """The isolation barrier for one data value: a record, or what to quarantine. Never raises."""
    try:
        return tag_record(source, tag, dv, historical=historical, times=times)
    except ValueRefused as exc:
        return Refused(f"opcua/{source}/{tag}", _evidence(dv), exc.reason, exc.detail)
    except Exception as exc:  # nobody foresaw this value: it is kept aside, the values around it go on
        return Refused(f"opcua/{source}/{tag}", _evidence(dv), INTERNAL_ERROR, _describe(exc))


def convert_event(
    source: str, event: Event, *, historical: bool, times: PlausibleTimes = DEFAULT_TIMES
) -> Record | Refused:
    """The isolation barrier for one event: a record, or what to quarantine. Never raises."""
    try:
        return alarm_record(source, event, historical=historical, times=times)
    except ValueRefused as exc:
        return Refused(f"opcua/{source}/events", _evidence(_fields_of(event)), exc.reason, exc.detail)
    except Exception as exc:  # nobody foresaw this event: it is kept aside, the values around it go on
        return Refused(f"opcua/{source}/events", _evidence(_fields_of(event)), INTERNAL_ERROR, _describe(exc))


def convert_history_event(
    source: str,
    clauses: list[ua.SimpleAttributeOperand],
    fields: ua.HistoryEventFieldList,
    times: PlausibleTimes = DEFAULT_TIMES,
) -> Record | Refused:
    """The isolation barrier for one event read back with HistoryRead (`historical=True`). Never raises."""
    try:
        event = Event.from_event_fields(clauses, list(fields.EventFields))
    except Exception as exc:  # fields that do not match the select clauses: the field list is the evidence
        return Refused(f"opcua/{source}/events", _evidence(fields), INTERNAL_ERROR, _describe(exc))
    return convert_event(source, event, historical=True, times=times)


def reused_id(source: str, record: Record) -> Refused:
    """What to quarantine for a record the store did not take because its key is held by other content: an alarm
    whose EventId the server gave an earlier, different event (a server that restarted a counter). The record,
    as canonical JSON, is the evidence: the event object is gone by the time the store answers."""
    topic = f"opcua/{source}/events" if record.kind == "alarm" else f"opcua/{source}/{record.key}"
    detail = f"a record with this {record.kind}'s id is stored with other content ({record.key})"
    return Refused(topic, canonical_json(record.model_dump(mode="json")), DUPLICATE_ID, detail)


def _fields_of(event: Event) -> Any:
    try:
        return event.get_event_props_as_fields_dict()
    except Exception:  # the fields themselves are what is broken: the object is the evidence
        return event


GAP_REASONS = ("history_unavailable", "queue_overflow", "outage_exceeds_history", "event_history_unavailable")


def gap_record(source: str, tag: str | None, start: datetime, end: datetime | None, reason: str) -> Record:
    """A `data_gap` record: an interval for which the store holds no data and the server's history could not fill."""
    if reason not in GAP_REASONS:
        raise ValueError(f"gap reason {reason!r} is not one of {GAP_REASONS}")
    start_iso = to_utc(start).isoformat()
    end_iso = to_utc(end).isoformat() if end is not None else None
    return Record(
        source=source,
        kind="data_gap",
        key=tag or source,
        source_time=start,
        value={"start": start_iso, "end": end_iso, "reason": reason, "source": source, "tag": tag},
        idempotency_key=idempotency_key(source, "data_gap", tag or "", start_iso, end_iso or "", reason),
        historical=True,
    )
