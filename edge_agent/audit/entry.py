"""One audit entry and its canonical encoding.

Each line of `entries.jsonl` is an entry in canonical JSON (`edge_agent.base.canonical`: sorted keys, no whitespace,
UTF-8 without `\\u` escapes, no NaN or infinity, floats as Python's shortest repr — plants should put exact
quantities in strings or integers), and `entry_hash` covers the same form:

* a JSON object with exactly the keys `actor`, `entry_hash`, `event`, `payload`, `prev_hash`, `seq`, `time`;
* `seq` an integer from 0; `time` UTC as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (always 27 characters);
  `prev_hash` and `entry_hash` 64 lowercase hex digits; the first entry's `prev_hash` is 64 zeros.

`entry_hash` = SHA-256 of the canonical JSON of the entry *without* the `entry_hash` member. Because the keys are
sorted and `actor` (a string, whose quotes are always escaped) is the only key before it, that body is exactly the
stored line with its first `"entry_hash":"<64 hex>",` removed — so an auditor can check it with `sed` and `sha256sum`
without a JSON library (see docs/audit.md).

The Merkle leaf of an entry is the stored line itself (without its newline): leaf hash = SHA-256(0x00 || line).
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from edge_agent.base.canonical import CanonicalJsonError, canonical_json

# A SHA-256 in lowercase hex.
HASH_HEX_LEN = 64
GENESIS_HASH = "0" * HASH_HEX_LEN
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
# `"entry_hash":"` — the marker whose first occurrence in a canonical line starts the entry_hash member.
ENTRY_HASH_MARKER = b'"entry_hash":"'
# The member is the marker, 64 hex digits, a closing quote and a comma.
ENTRY_HASH_MEMBER_LEN = len(ENTRY_HASH_MARKER) + HASH_HEX_LEN + 2
# The last members of a canonical line are `prev_hash`, `seq`, `time` (sorted keys): the last occurrence of this
# marker starts the top-level prev_hash's 64 hex digits ...
PREV_HASH_MARKER = b',"prev_hash":"'
# ... which this follows at once: prev_hash's closing quote, then the seq member up to its integer.
SEQ_MARKER = b'","seq":'

_HEX64 = r"^[0-9a-f]{64}$"
_HEX64_RE = re.compile(_HEX64)


class AuditError(Exception):
    """Root of every audit-trail error."""


class EntryFormatError(AuditError):
    """A payload that cannot be encoded canonically, or a stored line that is not a canonical entry."""


def format_time(value: datetime) -> str:
    if value.tzinfo is None:
        raise EntryFormatError(f"audit time {value!r} has no time zone; pass an aware UTC datetime")
    return value.astimezone(UTC).strftime(TIME_FORMAT)


def _canonical(value: Any) -> bytes:
    """`canonical_json`, failing as an EntryFormatError: a payload with no canonical form is the caller's error."""
    try:
        return canonical_json(value)
    except CanonicalJsonError as exc:
        raise EntryFormatError(f"audit payload is not canonical JSON: {exc}") from exc


class AuditEntry(BaseModel):
    """A link in the hash chain. Build new ones with `AuditEntry.create`; parse stored ones with `from_line`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seq: int = Field(ge=0)
    time: datetime
    actor: str = Field(min_length=1)
    event: str = Field(min_length=1)
    payload: dict[str, Any]
    prev_hash: str = Field(pattern=_HEX64)
    entry_hash: str = Field(pattern=_HEX64)

    @field_validator("time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("time must carry a time zone (UTC)")
        return value.astimezone(UTC)

    @staticmethod
    def body(seq: int, time: datetime, actor: str, event: str, payload: dict[str, Any], prev_hash: str) -> bytes:
        """Canonical JSON of everything but `entry_hash`: the bytes `entry_hash` is the SHA-256 of."""
        return _canonical(
            {
                "actor": actor,
                "event": event,
                "payload": payload,
                "prev_hash": prev_hash,
                "seq": seq,
                "time": format_time(time),
            }
        )

    @classmethod
    def create(
        cls, seq: int, time: datetime, actor: str, event: str, payload: dict[str, Any], prev_hash: str
    ) -> AuditEntry:
        return cls.create_with_line(seq, time, actor, event, payload, prev_hash)[0]

    @classmethod
    def create_with_line(
        cls, seq: int, time: datetime, actor: str, event: str, payload: dict[str, Any], prev_hash: str
    ) -> tuple[AuditEntry, bytes]:
        """A new entry and its stored line, encoding the body once (the append path's hot loop)."""
        if seq < 0 or not actor or not event or not _HEX64_RE.match(prev_hash):
            raise EntryFormatError(f"bad entry fields: seq={seq} actor={actor!r} event={event!r} prev={prev_hash!r}")
        body = cls.body(seq, time, actor, event, payload, prev_hash)
        digest = hashlib.sha256(body).hexdigest()
        # The stored payload is the one that was hashed: parsed back from the body (tuples became lists, etc.).
        data = json.loads(body)
        entry = cls.model_construct(
            seq=seq,
            time=time.astimezone(UTC),
            actor=actor,
            event=event,
            payload=data["payload"],
            prev_hash=prev_hash,
            entry_hash=digest,
        )
        # `actor` is the only member before `entry_hash` and cannot contain `,"event":` (its quotes are escaped),
        # so the member goes right before the first occurrence of it.
        at = body.index(b',"event":') + 1
        return entry, body[:at] + ENTRY_HASH_MARKER + digest.encode() + b'",' + body[at:]

    def to_line(self) -> bytes:
        """The stored form: canonical JSON of all seven members, no newline. This is also the Merkle leaf data."""
        return _canonical(
            {
                "actor": self.actor,
                "entry_hash": self.entry_hash,
                "event": self.event,
                "payload": self.payload,
                "prev_hash": self.prev_hash,
                "seq": self.seq,
                "time": format_time(self.time),
            }
        )

    @classmethod
    def from_line(cls, line: bytes) -> AuditEntry:
        """Parse a stored line; raises EntryFormatError unless it is valid, canonical and self-consistent."""
        try:
            data = json.loads(line)
            entry = cls.model_validate(data)
        except ValueError as exc:  # json.JSONDecodeError and pydantic.ValidationError are both ValueErrors
            raise EntryFormatError(f"not an audit entry: {exc}") from exc
        if entry.to_line() != line:
            raise EntryFormatError(f"entry {entry.seq} is not in canonical form")
        expected = hashlib.sha256(body_of_line(line)).hexdigest()
        if expected != entry.entry_hash:
            raise EntryFormatError(f"entry {entry.seq}: entry_hash {entry.entry_hash} != SHA-256 of body {expected}")
        return entry


def body_of_line(line: bytes) -> bytes:
    """The hashed body of a canonical stored line: the line without its first `"entry_hash":"…",` member."""
    start = line.find(ENTRY_HASH_MARKER)
    if start < 0:
        raise EntryFormatError("line has no entry_hash member")
    return line[:start] + line[start + ENTRY_HASH_MEMBER_LEN :]
