"""How the store's rows are written and read: times as integer microseconds, values as JSON text, what makes two
records the same, and the outbox and dead letter rows as messages."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from edge_agent.base.types import OutboxMessage, QuarantineItem, Record, StoredRecord, to_utc

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
# A decoder as json.loads' own (its defaults), called without its whitespace checks (`json_value`).
_DECODER = json.JSONDecoder()


def to_us(value: datetime) -> int:
    if value.tzinfo is UTC:  # a Record's times are (its validator makes them so): to_utc would return it as it is
        return (value - _EPOCH) // _US
    return (to_utc(value) - _EPOCH) // _US


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def json_value(text: str | None) -> Any:
    """A stored value's JSON text as json.loads reads it (None: no value). The text the store writes (`_json_text`)
    starts and ends with its value, so one call of the decoder's scanner reads it (0.3 µs for a number against 1 µs:
    a day of one tag every 30 s is 2 880 of them); any other text goes through json.loads itself."""
    if text is None:
        return None
    if type(text) is str:
        try:
            value, end = _DECODER.raw_decode(text)
        except json.JSONDecodeError:  # no value at its first character (leading whitespace, nothing): json.loads says
            pass
        else:
            if end == len(text):
                return value
    return json.loads(text)


def storable(text: str) -> str:
    """`text` as SQLite can store it (UTF-8): a lone surrogate, which a JSON escape like "\\ud800" decodes to, is
    kept as its backslash escape instead of failing the whole transaction."""
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")


def _json_text(value: Any) -> str:
    kind = type(value)
    # The text json.dumps gives a finite float, an int and None (its C encoder calls float.__repr__ and
    # int.__repr__), without its encoder's setup per value: most tag values are numbers.
    if kind is float and value - value == 0.0:
        return float.__repr__(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: JSON's own \u escapes keep them, and read back equal
        return json.dumps(value, ensure_ascii=True, sort_keys=True)
    return text


INSERT_RECORD = (
    "INSERT OR IGNORE INTO records (source, kind, key, source_time_us, received_time_us, value, quality, raw,"
    " idempotency_key, historical) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def record_row(r: Record) -> tuple[Any, ...]:
    # Record's str fields are UTF-8 already (pydantic refuses a lone surrogate in a str); only `value` may hold one.
    return (
        r.source,
        r.kind,
        r.key,
        to_us(r.source_time),
        to_us(r.received_time),
        _json_text(r.value),
        r.quality,
        r.raw,
        r.idempotency_key,
        int(r.historical),
    )


# What makes two records under one idempotency key the same record: the bytes received, where there are any (the
# fields are derived from them and from when they arrived), else the record's fields. Equal: a redelivery, skipped;
# different: an id reused for other content (an MES or a server that restarted its numbering), which must not vanish.
Content = bytes | tuple[str, str, str, int, str | None]


def content(source: str, kind: str, key: str, source_time_us: int, value: str | None, raw: bytes) -> Content:
    return bytes(raw) if raw else (source, kind, key, source_time_us, value)


def record_content(r: Record) -> Content:
    source, kind, key, source_time_us, _, value, _, raw, _, _ = record_row(r)
    return content(source, kind, key, source_time_us, value, raw)


def reused_positions(conn: sqlite3.Connection, records: Sequence[Record]) -> tuple[int, ...]:
    """The positions in `records` of those whose idempotency key the store holds with other content (see `Content`)."""
    stored: dict[str, Content] = {}
    keys = list(dict.fromkeys(r.idempotency_key for r in records))
    for i in range(0, len(keys), 500):  # well under SQLite's bound on a statement's parameters
        chunk = keys[i : i + 500]
        sql = (
            "SELECT idempotency_key, source, kind, key, source_time_us, value, raw FROM records"
            f" WHERE idempotency_key IN ({','.join('?' * len(chunk))})"
        )
        stored.update((row[0], content(*row[1:])) for row in conn.execute(sql, chunk))
    return tuple(i for i, r in enumerate(records) if stored.get(r.idempotency_key) != record_content(r))


RECORD_COLUMNS = (
    "id, source, kind, key, source_time_us, received_time_us, value, quality, raw, idempotency_key, historical"
)


def stored_record(row: Sequence[Any]) -> StoredRecord:
    """A row of RECORD_COLUMNS as a StoredRecord."""
    return StoredRecord(
        id=row[0],
        source=row[1],
        kind=row[2],
        key=row[3],
        source_time=from_us(row[4]),
        received_time=from_us(row[5]),
        value=json_value(row[6]),
        quality=row[7],
        raw=row[8],
        idempotency_key=row[9],
        historical=bool(row[10]),
    )


class StoredRow(NamedTuple):
    """A stored record's fields that a reader of many tag values needs (the report facts' `FactRecord`): its id,
    kind, key, source time, value and quality, without the rest (its source, received time, raw bytes, idempotency
    key) or a StoredRecord's validation: a third of the cost of one or less (about 1.5 µs a row against 5.5; a day of
    one tag every 30 s is 2 880 rows)."""

    id: int
    kind: str
    key: str
    source_time: datetime
    value: Any
    quality: str


ROW_COLUMNS = "id, kind, key, source_time_us, value, quality"


def stored_row(row: Sequence[Any]) -> StoredRow:
    """A row of ROW_COLUMNS as a StoredRow: each field as `stored_record` reads it."""
    return StoredRow(row[0], row[1], row[2], from_us(row[3]), json_value(row[4]), row[5])


QUARANTINE_COLUMNS = "id, source, topic, raw, reason, received_time_us"


def quarantine_item(row: Sequence[Any]) -> QuarantineItem:
    """A row of QUARANTINE_COLUMNS as a QuarantineItem."""
    return QuarantineItem(
        id=row[0], source=row[1], topic=row[2], raw=row[3], reason=row[4], received_time=from_us(row[5])
    )


class DeadLetter(OutboxMessage):
    """An outbox row (same id) the broker refused `attempts` times (or could never accept); `reason` is the last
    refusal."""

    failed_time: datetime
    attempts: int
    reason: str


# The outbox row's columns, shared by the outbox and dead_letter tables (migration 4 copies one into the other).
OUTBOX_COLUMNS = "id, topic, payload, qos, retain, properties, created_time_us"


def outbox_fields(row: Sequence[Any]) -> dict[str, Any]:
    """A row's first seven values (OUTBOX_COLUMNS), as OutboxMessage fields."""
    return {
        "id": row[0],
        "topic": row[1],
        "payload": row[2],
        "qos": row[3],
        "retain": bool(row[4]),
        "properties": json.loads(row[5]),
        "created_time": from_us(row[6]),
    }
