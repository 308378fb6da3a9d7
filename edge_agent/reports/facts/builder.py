"""The facts' shared builder: the `Fact` model, rounding, and the record parsers both the report facts and the KPI
facts use, so that a record is read (and a bad one skipped, with its reason) by one rule wherever it is counted."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.base.types import StoredRecord, ids_sha256

# 50 ids: enough to point at every record behind a small fact and at the extremes of a large one, while a
# shift of 1 Hz samples does not turn the report into megabytes of ids (the hash covers the rest).
RECORD_IDS_MAX = 50
DECIMALS = 2
# 1e15: beyond it a float no longer holds two decimals (2^53 ≈ 9.007e15), so a rounded figure would be made up.
MEASURED_ABS_MAX = 1e15
# OPC UA alarms & conditions severities are 1..1000 (Part 9); a missing one reads as 0.
SEVERITY_MAX = 1000


class FactRecord(Protocol):
    """What the builder, the tag facts and the record selection (`compute.in_scope`) read of a record: a
    `StoredRecord`, or the store's lighter `StoredRow` (`Store.record_rows`) for a reader of many tag values."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def source_time(self) -> datetime: ...
    @property
    def value(self) -> Any: ...
    @property
    def quality(self) -> str: ...


class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: str
    subject: str = ""
    values: dict[str, Any]
    ids: list[str] = Field(default_factory=list, description="asset, tag, line, work-order ids this fact names")
    record_ids: list[int]
    record_count: int
    record_ids_sha256: str


def rounded_mean(values: Sequence[float], decimals: int = DECIMALS) -> float | int:
    """The mean of the values as recorded (each its shortest repr), rounded as `round_value` rounds: a float sum
    drifts off a half (58.0, 58.04, 58.11 and 58.03 sum to a mean of 58.044999…, stated 58.04). Summed exactly in
    decimal only near a half, where it can matter: 4 ms for a day of one tag every 10 s, against 0.3 ms in floats."""
    mean = math.fsum(values) / len(values)
    scaled = abs(mean) * 10**decimals
    if abs(scaled - math.floor(scaled) - 0.5) > 1e-6:
        return round_value(mean, decimals)
    return round_value(sum((Decimal(repr(float(v))) for v in values), Decimal(0)) / len(values), decimals)


def round_value(value: float | Decimal, decimals: int = DECIMALS) -> float | int:
    """Half away from zero (what people expect, unlike Python's banker's rounding); integers stay integers. A float
    is taken as its shortest repr (the value as recorded), a Decimal as it is (`exact_mean`)."""
    if isinstance(value, bool):
        raise TypeError("a bool is not a measured value")
    if isinstance(value, int):
        return value
    exact = value if isinstance(value, Decimal) else Decimal(repr(float(value)))
    if not exact.is_finite():
        raise ValueError(f"{value!r} is not a finite number")
    quantum = Decimal(1).scaleb(-decimals)
    # Digits for the integer part and every decimal asked for: the default 28 raises on 1e30 or on 40 decimals.
    context = Context(prec=max(exact.adjusted(), 0) + decimals + 2, rounding=ROUND_HALF_UP)
    return float(exact.quantize(quantum, context=context))


class Builder:
    def __init__(self) -> None:
        self.facts: list[Fact] = []
        # Per fact, every record id behind it (what `record_ids_sha256` hashes): the evidence an export carries.
        self.sources: list[frozenset[int]] = []
        self.skipped: dict[int, tuple[FactRecord, str]] = {}

    def add(
        self,
        kind: str,
        values: dict[str, Any],
        records: Sequence[FactRecord],
        *,
        subject: str = "",
        ids: Iterable[str] = (),
        key_records: Sequence[FactRecord] = (),
    ) -> None:
        ordered: list[int] = []
        for r in [*key_records, *records]:
            if r.id not in ordered:
                ordered.append(r.id)
            if len(ordered) >= RECORD_IDS_MAX:
                break
        all_ids = frozenset({r.id for r in records} | {r.id for r in key_records})
        self.sources.append(all_ids)
        self.facts.append(
            Fact(
                id="",  # numbered in `numbered()`, once the order is final
                kind=kind,
                subject=subject,
                values=values,
                ids=sorted({i for i in (subject, *ids) if i}),
                record_ids=ordered,
                record_count=len(all_ids),
                record_ids_sha256=ids_sha256(all_ids),
            )
        )

    def skip(self, record: FactRecord, reason: str) -> None:
        """A record a section reads but cannot use; the first reason given for it is the one reported."""
        self.skipped.setdefault(record.id, (record, reason))

    def numbered(self) -> list[Fact]:
        return [f.model_copy(update={"id": f"F{i:02d}"}) for i, f in enumerate(self.facts, start=1)]

    def move(self, index: int, to: int) -> None:
        """Move the fact at `index` (and its record ids) to position `to`."""
        self.facts.insert(to, self.facts.pop(index))
        self.sources.insert(to, self.sources.pop(index))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def measure_problem(value: Any) -> str | None:
    """Why `value` cannot be a measured figure (a reason code), or None when it can."""
    if not is_number(value):
        return "not_a_number"
    if isinstance(value, float) and not math.isfinite(value):
        return "not_finite"
    if abs(value) > MEASURED_ABS_MAX:
        return "out_of_range"
    return None


def _text(value: Any) -> str | None:
    """A record field shown as text: strings and numbers as written, null as empty; None when it is neither."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if is_number(value):
        return str(value)
    return None


def texts_of(b: Builder, r: StoredRecord, fields: dict[str, Any], names: Sequence[str]) -> dict[str, str] | None:
    """The named fields as text, or None (skipped, naming the first bad field) when one is not text."""
    out = {}
    for name in names:
        text = _text(fields.get(name))
        if text is None:
            b.skip(r, f"bad_{name}")
            return None
        out[name] = text
    return out


class Alarm(NamedTuple):
    record: StoredRecord
    condition: str
    message: str
    severity: int
    active: bool


def severity_of(value: Any) -> int | None:
    """OPC UA severity as an integer in 0..1000 (`700`, `700.0`, `"700"`), 0 when missing; None when it is not."""
    if value is None:
        return 0
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) <= 4:
        value = int(value.strip())
    # The range test comes first: it is False for NaN, infinities and integers too large for a float.
    if is_number(value) and 0 <= value <= SEVERITY_MAX and float(value).is_integer():
        return int(value)
    return None


def parse_alarm(b: Builder, r: StoredRecord) -> Alarm | None:
    # A bare value (not an object) is the alarm's message, as some servers send only a text.
    fields = r.value if isinstance(r.value, dict) else {"message": r.value}
    texts = texts_of(b, r, fields, ("condition", "message"))
    if texts is None:
        return None
    severity = severity_of(fields.get("severity"))
    if severity is None:
        b.skip(r, "bad_severity")
        return None
    active = fields.get("active", True)
    if active is not None and not isinstance(active, bool):
        b.skip(r, "bad_active")
        return None
    return Alarm(r, texts["condition"], texts["message"], severity, active is not False)
