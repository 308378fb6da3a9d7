"""records.jsonl, a bundle's evidence records (the format is in evidence.py): a stored record to its canonical line
and back, and the ascending id runs ("1-4,9,12-13") evidence.json lists them by."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from edge_agent.base.canonical import CanonicalJsonError, ascii_json, canonical_json
from edge_agent.base.types import StoredRecord

RECORDS = "records.jsonl"
FORMAT = "edge-agent-evidence/3"  # 2: idempotency_key only on KEYED_KINDS; 3: answers
# What verify-bundle reads: bundles an auditor already holds verify.
FORMATS = ("edge-agent-evidence/1", "edge-agent-evidence/2", FORMAT)
# The kinds whose idempotency_key a fact reads: the downtime pairing (reports/facts.py `_downtime`,
# reports/kpi/intervals.py `read_stops`) falls back to it for a stop with neither downtime_id nor id. No other fact
# reads it, and its 64 hex digits per record were 81 % of a day's bundle as .tar.gz (6.1 MB; docs/audit.md "Size").
KEYED_KINDS = frozenset({"mes_event"})
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


class EvidenceError(ValueError):
    """Evidence that cannot be read: a malformed line, id set or member, naming it."""


def record_json(record: StoredRecord) -> dict[str, Any]:
    keyed = {"idempotency_key": record.idempotency_key} if record.kind in KEYED_KINDS else {}
    return {
        "historical": record.historical,
        "id": record.id,
        **keyed,
        "key": record.key,
        "kind": record.kind,
        "quality": record.quality,
        "raw": base64.b64encode(record.raw).decode(),
        "received_time": record.received_time.astimezone(UTC).strftime(TIME_FORMAT),
        "source": record.source,
        "source_time": record.source_time.astimezone(UTC).strftime(TIME_FORMAT),
        "value": record.value,
    }


def record_line(record: StoredRecord) -> bytes:
    """One line of records.jsonl (without its newline)."""
    data = record_json(record)
    try:
        return canonical_json(data)
    except CanonicalJsonError:
        return ascii_json(data)  # NaN, an infinity or a lone surrogate, as the store holds them


def parse_record(line: bytes, number: int, version: str = FORMAT) -> StoredRecord:
    """A records.jsonl line of evidence format `version` back to the record; EvidenceError names the line and what
    is wrong. A record of format 2 without its idempotency_key (no fact reads it) gets `absent_key(id)` instead."""
    where = f"{RECORDS} line {number}"
    try:
        data = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise EvidenceError(f"{where}: not JSON: {exc}") from exc
    expected = _FIELDS if version == FORMATS[0] or _keyed(data) else _UNKEYED_FIELDS
    if not isinstance(data, dict) or set(data) != set(expected):
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise EvidenceError(f"{where}: the members are {found}, expected {list(expected)}")
    try:
        fields = {
            "idempotency_key": absent_key(data["id"]),
            **data,
            "raw": base64.b64decode(data["raw"], validate=True),
            "source_time": _time(data["source_time"]),
            "received_time": _time(data["received_time"]),
        }
        return StoredRecord.model_validate(fields, strict=False)
    except (TypeError, ValueError, binascii.Error, ValidationError) as exc:
        raise EvidenceError(f"{where}: {exc}") from exc


_FIELDS = (
    "historical",
    "id",
    "idempotency_key",
    "key",
    "kind",
    "quality",
    "raw",
    "received_time",
    "source",
    "source_time",
    "value",
)


_UNKEYED_FIELDS = tuple(f for f in _FIELDS if f != "idempotency_key")


def _keyed(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("kind"), str) and data["kind"] in KEYED_KINDS


def absent_key(record_id: Any) -> str:
    """What stands for the idempotency_key a record of format 2 does not carry: unique to the record, as the key is,
    and naming itself."""
    return f"not in the bundle: record {record_id}"


def _time(text: Any) -> datetime:
    if not isinstance(text, str):
        raise ValueError(f"time {text!r} is not a string")
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=UTC)


def encode_ids(ids: Iterable[int]) -> str:
    """Ascending runs: {1, 2, 3, 4, 9, 12, 13} → "1-4,9,12-13"; the empty set → ""."""
    runs: list[str] = []
    ordered = sorted(set(ids))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        runs.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(runs)


def decode_ids(text: Any, where: str, limit: int) -> list[int]:
    """`encode_ids`'s form back to ascending ids; EvidenceError for anything else (overlaps, descending runs) and
    for more than `limit` ids (a run like `1-999999999999` in an untrusted file is refused, not expanded)."""
    if not isinstance(text, str):
        raise EvidenceError(f"{where}: record ids {text!r} are not a string of runs")
    ids: list[int] = []
    for run in text.split(",") if text else []:
        lo, sep, hi = run.partition("-")
        if not lo.isdecimal() or (sep and not hi.isdecimal()):
            raise EvidenceError(f"{where}: {run!r} is not a record id or a run of them (A or A-B)")
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first or (ids and first <= ids[-1]):
            raise EvidenceError(f"{where}: run {run!r} is not above the run before it")
        if len(ids) + last - first + 1 > limit:
            raise EvidenceError(f"{where}: more than {limit} record ids, more than the bundle holds")
        ids.extend(range(first, last + 1))
    return ids
