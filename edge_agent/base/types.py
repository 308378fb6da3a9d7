"""Types shared across subsystems: what connectors hand to the store, and what the store hands back."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# The languages the agent writes and reads: reports, answers and the names of tags.
Language = Literal["es", "en", "pt"]


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC (OPC UA and most MES payloads are); aware ones are converted."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Record(BaseModel):
    """One observation from the plant: a tag value, an MES event, or a log line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(min_length=1, description="connector instance, e.g. 'mqtt' or an OPC UA source name")
    kind: str = Field(min_length=1, description="tag_value, alarm, mes_event, log_line, ...")
    key: str = Field(min_length=1, description="tag, asset or topic the record is about")
    source_time: datetime
    received_time: datetime = Field(default_factory=utcnow)
    value: Any = None
    quality: str = "good"
    raw: bytes = b""
    idempotency_key: str = Field(min_length=1)
    historical: bool = False

    @field_validator("source_time", "received_time")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return to_utc(value)


def ids_sha256(record_ids: Iterable[int]) -> str:
    """A report fact's `record_ids_sha256`: SHA-256 of its record ids, distinct, ascending, in decimal, joined by
    commas (`1,2,17`), as UTF-8. Here, below the reports that make it and the audit bundles that check it."""
    return hashlib.sha256(",".join(str(i) for i in sorted(set(record_ids))).encode()).hexdigest()


def idempotency_key(*parts: str | bytes) -> str:
    """A stable key from the parts that identify one message, so a redelivery is stored once."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class StoredRecord(Record):
    id: int


class QuarantineItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int
    source: str
    topic: str
    raw: bytes
    reason: str
    received_time: datetime


class OutboxMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int
    topic: str
    payload: bytes
    qos: int
    retain: bool
    # MQTT 5 properties we set on replies: {"correlation_data": hex, "content_type": ...}
    properties: dict[str, str] = Field(default_factory=dict)
    created_time: datetime
