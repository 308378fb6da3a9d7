"""Sparkplug B payloads: bytes → `Payload` messages, and one metric's value → a value the store holds.

The message classes come from Eclipse Tahu's `sparkplug_b.proto` (kept beside this module, EPL-2.0 header intact),
compiled for the `protobuf` runtime by grpcio-tools' bundled protoc (libprotoc 35.1, grpcio-tools 1.85.1):

    pip install grpcio-tools==1.85.1   # in any scratch venv
    cd edge_agent/connectors/sparkplug && python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. sparkplug_b.proto

The generated module checks at import that the runtime is at least the gencode's 7.35.1 (pyproject's `protobuf`).

Nothing here raises anything but `MetricRefused` for bad input; `decode_payload` raises it for bytes that are no
Payload. Values follow docs/records.md's OPC UA rules where the two meet: non-finite floats as the strings "NaN",
"Infinity", "-Infinity" (quality uncertain), integers beyond signed 64 bits as decimal strings, DateTime as ISO-8601
UTC, bytes as hex.
"""

from __future__ import annotations

import math
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.message import DecodeError

from edge_agent.connectors.sparkplug import sparkplug_b_pb2 as pb
from edge_agent.connectors.sparkplug.reasons import SparkplugReason

Payload = pb.Payload
Metric = pb.Payload.Metric

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# DataType numbers (sparkplug_b.proto `DataType`), by name: the same numbers the wire carries.
DATATYPE_NAMES: dict[int, str] = {number: name for name, number in pb.DataType.items()}
INTS_SIGNED: dict[int, int] = {pb.Int8: 8, pb.Int16: 16, pb.Int32: 32, pb.Int64: 64}
INTS_UNSIGNED: dict[int, int] = {pb.UInt8: 8, pb.UInt16: 16, pb.UInt32: 32, pb.UInt64: 64}
# Arrays travel packed little-endian in bytes_value (spec 3.0 §6.4.17): struct format of one element.
PACKED_ARRAYS: dict[int, str] = {
    pb.Int8Array: "b",
    pb.Int16Array: "h",
    pb.Int32Array: "i",
    pb.Int64Array: "q",
    pb.UInt8Array: "B",
    pb.UInt16Array: "H",
    pb.UInt32Array: "I",
    pb.UInt64Array: "Q",
    pb.FloatArray: "f",
    pb.DoubleArray: "d",
}


class MetricRefused(Exception):
    """A payload or one metric that cannot become records. `reason` is the quarantine reason; `detail` says why."""

    def __init__(self, reason: SparkplugReason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def decode_payload(raw: bytes) -> Any:
    """The Payload in `raw`; `MetricRefused(invalid_payload)` for bytes that are no Sparkplug B payload."""
    try:
        return Payload.FromString(raw)
    except (DecodeError, RuntimeWarning, ValueError) as exc:  # upb raises DecodeError; be generous about the rest
        raise MetricRefused(SparkplugReason.INVALID_PAYLOAD, f"not a Sparkplug B payload: {exc}") from exc


def ms_time(ms: int) -> datetime:
    """A Sparkplug timestamp (ms since the epoch, UTC) as a datetime; `MetricRefused` when no datetime holds it."""
    try:
        return EPOCH + timedelta(milliseconds=ms)
    except OverflowError as exc:
        raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"timestamp {ms} ms is beyond year 9999") from exc


def _signed(value: int, bits: int) -> int:
    """Two's complement: an Int32 of -12 arrives as 4294967284 in the uint32 field (some encoders sign-extend an
    Int8 to 32 bits, others send its 8 bits): the low `bits` bits, sign-extended."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _integer(number: int) -> int | str:
    return number if INT64_MIN <= number <= INT64_MAX else str(number)


def _real(value: float) -> float | str:
    if math.isnan(value):
        return "NaN"
    return value if math.isfinite(value) else ("Infinity" if value > 0 else "-Infinity")


def _text(value: str, what: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:  # protobuf checks UTF-8 on parse; kept for values built in memory
        raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"{what}: lone surrogate") from exc
    return value


def _field(metric: Any, datatype: int, *expected: str) -> Any:
    which = metric.WhichOneof("value")
    if which not in expected:
        name = DATATYPE_NAMES.get(datatype, datatype)
        raise MetricRefused(
            SparkplugReason.SCHEMA_MISMATCH,
            f"a {name} value in {which or 'no value field'}, not {' or '.join(expected)}",
        )
    return getattr(metric, which)


def _array(datatype: int, data: bytes) -> list[Any]:
    name = DATATYPE_NAMES[datatype]
    if datatype in PACKED_ARRAYS:
        code = PACKED_ARRAYS[datatype]
        size = struct.calcsize(code)
        if len(data) % size:
            raise MetricRefused(
                SparkplugReason.SCHEMA_MISMATCH, f"{name} of {len(data)} bytes, not a multiple of {size}"
            )
        items = struct.unpack(f"<{len(data) // size}{code}", data)
        return [_real(v) if code in "fd" else _integer(v) for v in items]
    if datatype == pb.BooleanArray:  # a uint32 count, then the bits, most significant first
        if len(data) < 4:
            raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, "BooleanArray without its 4-byte count")
        (count,) = struct.unpack("<I", data[:4])
        if count > (len(data) - 4) * 8:
            raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"BooleanArray of {count} in {len(data) - 4} bytes")
        return [bool(data[4 + i // 8] >> (7 - i % 8) & 1) for i in range(count)]
    if datatype == pb.StringArray:  # NUL-terminated UTF-8 strings
        if data and not data.endswith(b"\x00"):
            raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, "StringArray not NUL-terminated")
        try:
            return [part.decode("utf-8") for part in data.split(b"\x00")[:-1]]
        except UnicodeDecodeError as exc:
            raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"StringArray not UTF-8: {exc}") from exc
    if datatype == pb.DateTimeArray:
        if len(data) % 8:
            raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"DateTimeArray of {len(data)} bytes")
        return [ms_time(ms).isoformat() for ms in struct.unpack(f"<{len(data) // 8}q", data)]
    raise AssertionError(f"not an array type: {name}")  # callers only pass array types


def _dataset(data: Any) -> dict[str, Any]:
    """A DataSet as a structured value: columns, their type names, rows of plain values (spec 3.0 §6.4.7)."""
    columns = [_text(c, "DataSet column") for c in data.columns]
    types = list(data.types)
    if len(types) != len(columns) or (data.HasField("num_of_columns") and data.num_of_columns != len(columns)):
        raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, "DataSet columns, types and num_of_columns disagree")
    rows = []
    for r, row in enumerate(data.rows):
        if len(row.elements) != len(columns):
            raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"DataSet row {r} has {len(row.elements)} values")
        rows.append(
            [scalar_value(element, types[c], f"DataSet row {r} column {c}") for c, element in enumerate(row.elements)]
        )
    return {"columns": columns, "types": [DATATYPE_NAMES.get(t, str(t)) for t in types], "rows": rows}


def scalar_value(holder: Any, datatype: int, what: str = "value") -> Any:
    """The plain value of a scalar datatype in a Metric, DataSetValue or PropertyValue (same oneof field names)."""
    try:
        if datatype in INTS_SIGNED:
            bits = INTS_SIGNED[datatype]
            return _signed(
                _field(holder, datatype, "long_value" if bits == 64 else "int_value", "int_value", "long_value"), bits
            )
        if datatype in INTS_UNSIGNED:
            bits = INTS_UNSIGNED[datatype]
            number = _field(holder, datatype, "int_value", "long_value")
            if number >> bits:
                raise MetricRefused(SparkplugReason.SCHEMA_MISMATCH, f"{number} is beyond {DATATYPE_NAMES[datatype]}")
            return _integer(number)
        if datatype == pb.Float:
            return _real(_field(holder, datatype, "float_value"))
        if datatype == pb.Double:
            return _real(_field(holder, datatype, "double_value", "float_value"))
        if datatype == pb.Boolean:
            return bool(_field(holder, datatype, "boolean_value"))
        if datatype in (pb.String, pb.Text, pb.UUID):
            return _text(_field(holder, datatype, "string_value"), what)
        if datatype == pb.DateTime:
            return ms_time(_field(holder, datatype, "long_value")).isoformat()
    except MetricRefused as exc:
        raise MetricRefused(exc.reason, f"{what}: {exc.detail}") from exc
    name = DATATYPE_NAMES.get(datatype, str(datatype))
    raise MetricRefused(SparkplugReason.UNSUPPORTED_DATATYPE, f"{what}: datatype {name} is no scalar here")


def metric_value(metric: Any, datatype: int) -> Any:
    """The plain value of one metric of `datatype` (from its BIRTH when the metric itself does not say).

    Template values are handled by the caller (their members become metrics of their own); every other type is
    here: scalars, arrays (lists), Bytes and File (hex), DataSet (a structured value). `is_null` gives None.
    """
    if metric.is_null:
        return None
    if datatype == pb.Double and metric.WhichOneof("value") == "double_value":  # the common case, as scalar_value
        return _real(metric.double_value)
    if datatype in PACKED_ARRAYS or datatype in (pb.BooleanArray, pb.StringArray, pb.DateTimeArray):
        return _array(datatype, _field(metric, datatype, "bytes_value"))
    if datatype in (pb.Bytes, pb.File):
        return _field(metric, datatype, "bytes_value").hex()
    if datatype == pb.DataSet:
        return _dataset(_field(metric, datatype, "dataset_value"))
    return scalar_value(metric, datatype)


def non_finite(value: Any) -> bool:
    """A value holding NaN or ±Infinity (stored as strings): quality `uncertain`, as OPC UA's are."""
    if isinstance(value, str):
        return value in ("NaN", "Infinity", "-Infinity")
    return isinstance(value, list) and any(non_finite(v) for v in value)


def properties(metric: Any) -> dict[str, Any]:
    """A metric's PropertySet (engineering units, limits, ...) as plain data; properties that do not decode are
    left out. Sparkplug names the unit `engUnit` (Ignition) or `engUnits`."""
    out: dict[str, Any] = {}
    if not metric.HasField("properties"):
        return out
    props = metric.properties
    for key, value in zip(props.keys, props.values, strict=False):
        if value.is_null:
            out[key] = None
            continue
        try:
            out[key] = scalar_value(value, value.type, f"property {key}")
        except MetricRefused:
            continue  # a PropertySet, an odd type: not worth refusing the metric over
    return out


def rebirth_request(now_ms: int) -> bytes:
    """The NCMD payload of a Rebirth Request: metric 'Node Control/Rebirth' = true (TCK ncmd-rebirth-name/value)."""
    payload = Payload(timestamp=now_ms)
    metric = payload.metrics.add()
    metric.name = "Node Control/Rebirth"
    metric.timestamp = now_ms
    metric.datatype = pb.Boolean
    metric.boolean_value = True
    return payload.SerializeToString()


__all__ = [
    "DATATYPE_NAMES",
    "Metric",
    "MetricRefused",
    "Payload",
    "decode_payload",
    "metric_value",
    "ms_time",
    "non_finite",
    "properties",
    "rebirth_request",
    "scalar_value",
]
