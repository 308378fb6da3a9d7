"""Payload parsers: MQTT payload bytes → one `Record`, or a `ParseError` naming the quarantine reason.

Shapes follow docs/records.md. Idempotency keys make a redelivered message land on the same row:
- JSON with a message id (default field `id`): SHA-256 over (kind, topic, id), so the same event republished on its
  topic is stored once, and a publisher on another topic (another site or asset: the topic is the publisher's
  namespace) cannot pre-empt it by reusing its ids. Keys of rows stored before this rule were SHA-256 over (kind, id):
  a message redelivered across that upgrade is stored a second time;
- otherwise SHA-256 over (topic, payload, timestamp text), the timestamp being the payload's own (`ts`, or a log
  line's leading time), never the receive time, which differs on redelivery. Two byte-identical payloads without
  an id or time on one topic are therefore one record: publishers that repeat messages should stamp them.

Every value is held to the domains of `InputLimits` (from `[mqtt]`): a decoded document passes
`edge_agent.base.values.check_json_domain`, a source time lies between `time_min` and the receive time plus
`time_max_future_s`. A parser raises nothing but ParseError, whatever the bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from edge_agent.base.types import Record, idempotency_key, to_utc
from edge_agent.base.values import PlausibleTimes, ValueDomainError, check_json_domain
from edge_agent.config.mqtt import MqttConfig
from edge_agent.connectors.mqtt import MqttError


class QuarantineReason(StrEnum):
    """Why a message was refused; the quarantine row's `reason` and the metric label."""

    INVALID_JSON = "invalid_json"
    INVALID_UTF8 = "invalid_utf8"
    SCHEMA_MISMATCH = "schema_mismatch"
    PAYLOAD_TOO_LARGE = "payload_too_large"
    UNKNOWN_ROUTE = "unknown_route"
    # The message's id is stored already with other content: the producer reused an id (an MES that restarted its
    # numbering), not a redelivery, which is the same bytes again and skipped. The newcomer is kept here.
    DUPLICATE_ID = "duplicate_id"
    # A route with an event mapping got an event type its `types` table does not list: stored under no type rather
    # than a guessed one. The detail names the plant's value; adding it to the mapping lets the next one in.
    UNMAPPED_EVENT_TYPE = "unmapped_event_type"
    # Not the payload's fault as far as we know: handling it raised something no parser rule names (a bug). The
    # message is kept and acked like any refused one, so one such message cannot stop ingest.
    INTERNAL_ERROR = "internal_error"


# A detail goes to logs and audit entries: it names the problem, it does not carry the payload.
DETAIL_MAX_CHARS = 300


class ParseError(MqttError):
    """A payload that cannot become a record. `reason` groups it; `detail` says what exactly was wrong.

    The detail is cut to DETAIL_MAX_CHARS and made encodable (lone surrogates escaped): it may quote the payload.
    """

    def __init__(self, reason: QuarantineReason, detail: str) -> None:
        if len(detail) > DETAIL_MAX_CHARS:
            detail = detail[:DETAIL_MAX_CHARS] + f"… ({len(detail)} chars)"
        detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class InputLimits(PlausibleTimes):
    """The value domains payloads are held to; the defaults are `[mqtt]`'s (docs/records.md, "Value domains")."""

    max_json_depth: int
    max_string_chars: int

    @classmethod
    def from_config(cls, config: MqttConfig) -> InputLimits:
        return cls(
            time_min=config.time_min,
            time_max_future=timedelta(seconds=config.time_max_future_s),
            max_json_depth=config.max_json_depth,
            max_string_chars=config.max_string_chars,
        )


DEFAULT_LIMITS = InputLimits.from_config(MqttConfig())


class Parser(Protocol):
    def parse(self, topic: str, payload: bytes, received_time: datetime) -> Record: ...


# Record fields a JSON route may map, and where the MES events of docs/records.md keep them.
DEFAULT_JSON_MAPPING: dict[str, str] = {"key": "asset", "source_time": "ts", "message_id": "id"}
MAPPABLE_FIELDS = frozenset({"key", "source_time", "message_id", "value"})
# What `lookup` returns for a path the document does not have (None is a present JSON null).
MISSING: Any = object()
# A route's rewrite of a decoded JSON object into our vocabulary (edge_agent.connectors.mqtt.mes_mapping); raises only
# ParseError.
Translate = Callable[[dict[str, Any]], dict[str, Any]]


def _decode(payload: bytes) -> str:
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ParseError(QuarantineReason.INVALID_UTF8, f"byte {exc.start}: {exc.reason}") from exc


def _reject_constant(name: str) -> Any:
    # NaN/Infinity are not JSON (RFC 8259) and would not survive a round trip through the store's JSON column.
    raise ValueError(f"{name} is not valid JSON")


def lookup(document: Mapping[str, Any], path: str) -> Any:
    """Dotted path into nested objects: 'machine.asset' → document['machine']['asset']; MISSING if absent."""
    node: Any = document
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return MISSING
        node = node[part]
    return node


def parse_time(text: str) -> datetime:
    """ISO-8601 (`2026-11-29T06:15:00Z`, offsets, fractions) → aware UTC; naive times are UTC.

    ValueError if not a time, or not one UTC can hold (`0001-01-01T00:00:00+01:00`, `9999-12-31T23:59:59-01:00`).
    """
    parsed = datetime.fromisoformat(text.strip())
    try:
        return to_utc(parsed)
    except OverflowError as exc:
        raise ValueError(f"{text!r} is outside the representable time range") from exc


class JsonParser:
    """JSON object → record of `kind`; `mapping` (record field → dotted JSON path) overrides DEFAULT_JSON_MAPPING.

    key: the mapped field (string or number), else the topic. source_time: the mapped ISO-8601 string, else the
    receive time. value: the mapped sub-object, else the whole object. `required` paths must be present.
    With `translate` (a route's event mapping) the payload's object, once checked, is first rewritten into our
    vocabulary, and the fields above are read from that; the raw bytes stay the payload's.
    """

    def __init__(
        self,
        kind: str,
        mapping: Mapping[str, str],
        required: list[str],
        source: str = "mqtt",
        limits: InputLimits = DEFAULT_LIMITS,
        translate: Translate | None = None,
    ) -> None:
        unknown = set(mapping) - MAPPABLE_FIELDS
        if unknown:
            raise ValueError(f"unknown mapping field(s) {sorted(unknown)}; allowed: {sorted(MAPPABLE_FIELDS)}")
        self.kind = kind
        self.source = source
        self.mapping = {**DEFAULT_JSON_MAPPING, **mapping}
        self.required = list(required)
        self.limits = limits
        self.translate = translate

    def parse(self, topic: str, payload: bytes, received_time: datetime) -> Record:
        text = _decode(payload)
        try:
            document = json.loads(text, parse_constant=_reject_constant)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError; so is a >4300-digit integer
            raise ParseError(QuarantineReason.INVALID_JSON, str(exc)) from exc
        except RecursionError as exc:  # ~1000 levels: the decoder's own stack gives out before our depth check runs
            raise ParseError(
                QuarantineReason.SCHEMA_MISMATCH,
                f"(document): nesting deeper than max_json_depth {self.limits.max_json_depth}",
            ) from exc
        try:
            check_json_domain(
                document, max_depth=self.limits.max_json_depth, max_string_chars=self.limits.max_string_chars
            )
        except ValueDomainError as exc:
            raise ParseError(QuarantineReason.SCHEMA_MISMATCH, str(exc)) from exc
        if not isinstance(document, dict):
            raise ParseError(QuarantineReason.SCHEMA_MISMATCH, f"expected a JSON object, got {type(document).__name__}")
        missing = [path for path in self.required if lookup(document, path) is MISSING]
        if missing:
            raise ParseError(QuarantineReason.SCHEMA_MISMATCH, f"missing required field(s) {missing}")
        if self.translate is not None:
            document = self.translate(document)

        key = self._scalar(document, "key", topic)
        message_id = self._scalar(document, "message_id", None)
        raw_time = lookup(document, self.mapping["source_time"])
        if raw_time is MISSING:
            source_time, time_text = received_time, ""
        elif isinstance(raw_time, str):
            try:
                source_time = parse_time(raw_time)
                self.limits.check_time(source_time, received_time)
            except ValueError as exc:
                raise ParseError(QuarantineReason.SCHEMA_MISMATCH, f"{self.mapping['source_time']}: {exc}") from exc
            time_text = raw_time
        else:
            raise ParseError(
                QuarantineReason.SCHEMA_MISMATCH,
                f"{self.mapping['source_time']!r} must be an ISO-8601 string, got {type(raw_time).__name__}",
            )
        value: Any = document
        if "value" in self.mapping:
            value = lookup(document, self.mapping["value"])
            if value is MISSING:
                raise ParseError(QuarantineReason.SCHEMA_MISMATCH, f"value field {self.mapping['value']!r} is missing")
        ikey = (
            idempotency_key(self.kind, topic, message_id)
            if message_id is not None
            else idempotency_key(topic, payload, time_text)
        )
        return Record(
            source=self.source,
            kind=self.kind,
            key=key,
            source_time=source_time,
            received_time=received_time,
            value=value,
            raw=payload,
            idempotency_key=ikey,
        )

    def _scalar(self, document: Mapping[str, Any], field: str, default: str | None) -> str | None:
        path = self.mapping.get(field)
        found = MISSING if path is None else lookup(document, path)
        if found is MISSING or found is None:
            return default
        # bool is an int subclass, but `true` is no asset name or message id.
        if isinstance(found, bool) or not isinstance(found, (str, int)) or found == "":
            raise ParseError(
                QuarantineReason.SCHEMA_MISMATCH, f"{path!r} must be a non-empty string or integer, got {found!r}"
            )
        return str(found)


# Optional leading ISO-8601 time (date, T or space, hh:mm[:ss[.frac]], optional Z/offset), then whitespace.
_LEADING_TIME = re.compile(
    r"^(?P<time>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)\s+(?P<rest>.*)$", re.S
)
# Optional `author:` prefix: one token (letters, digits, . _ - @), no spaces, so "Nota bene: ..." stays text.
# The colon must end the line or be followed by whitespace, so "http://host" is not an author.
_AUTHOR = re.compile(r"^(?P<author>[\w.@-]{1,64}):(?:\s+|$)(?P<text>.*)$", re.S)


class TextParser:
    """A plain-text log line → record of `kind` keyed by the topic; value `{"text", "author"?}` (docs/records.md).

    The text is untrusted operator input: it is stored as data, never interpreted. A leading token shaped like a
    time that is not one (month 13), or not a plausible one (before time_min, beyond the receive time plus
    time_max_future_s, year 1 with an offset), is not taken as the line's time: the whole line is kept as text,
    timed on receipt, so an operator's note is never lost to a mistyped stamp.
    """

    def __init__(self, kind: str, source: str = "mqtt", limits: InputLimits = DEFAULT_LIMITS) -> None:
        self.kind = kind
        self.source = source
        self.limits = limits

    def parse(self, topic: str, payload: bytes, received_time: datetime) -> Record:
        line = _decode(payload).strip()
        if not line:
            raise ParseError(QuarantineReason.SCHEMA_MISMATCH, "empty log line")
        if len(line) > self.limits.max_string_chars:
            raise ParseError(
                QuarantineReason.SCHEMA_MISMATCH,
                f"text: line of {len(line)} characters exceeds max_string_chars {self.limits.max_string_chars}",
            )
        source_time, time_text = received_time, ""
        match = _LEADING_TIME.match(line)
        if match:
            try:
                stamped = parse_time(match["time"])
                self.limits.check_time(stamped, received_time)
                source_time, time_text, line = stamped, match["time"], match["rest"].strip()
            except ValueError:
                pass  # not a (plausible) time: keep the whole line as text, lose nothing
        value: dict[str, str] = {"text": line}
        author = _AUTHOR.match(line)
        if author:
            value = {"text": author["text"].strip(), "author": author["author"]}
        if not value["text"]:
            raise ParseError(QuarantineReason.SCHEMA_MISMATCH, "log line has no text after its time/author prefix")
        return Record(
            source=self.source,
            kind=self.kind,
            key=topic,
            source_time=source_time,
            received_time=received_time,
            value=value,
            raw=payload,
            idempotency_key=idempotency_key(topic, payload, time_text),
        )


__all__ = [
    "DEFAULT_JSON_MAPPING",
    "DEFAULT_LIMITS",
    "InputLimits",
    "JsonParser",
    "MAPPABLE_FIELDS",
    "MISSING",
    "ParseError",
    "Parser",
    "QuarantineReason",
    "TextParser",
    "Translate",
    "lookup",
    "parse_time",
]
