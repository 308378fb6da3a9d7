"""MQTT broker connection and ingest routes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, SecretStr, model_validator
from pydantic_core import PydanticCustomError

from edge_agent.base.mes_vocabulary import MES_EVENT_TYPES, MES_FIELDS, REQUIRED_FIELDS
from edge_agent.config.base import PLAUSIBLE_TIME_MIN, Section, UtcTime


class TlsConfig(Section):
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None
    check_hostname: bool = True

    @model_validator(mode="after")
    def _cert_and_key_together(self) -> TlsConfig:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("cert_file and key_file must be set together")
        return self


def _dotted_path(path: str) -> str:
    if not path or any(part == "" for part in path.split(".")):
        raise PydanticCustomError("dotted_path", "{path} is no dotted path (e.g. 'evento.tipo')", {"path": repr(path)})
    return path


def _known_type(name: str) -> str:
    if name not in MES_EVENT_TYPES:
        known = ", ".join(MES_EVENT_TYPES)
        raise PydanticCustomError(
            "unknown_event_type", "unknown event type {name}; known: {known}", {"name": repr(name), "known": known}
        )
    return name


def _known_field(name: str) -> str:
    if name not in MES_FIELDS:
        known = ", ".join(MES_FIELDS)
        raise PydanticCustomError(
            "unknown_field", "unknown field {name}; known: {known}", {"name": repr(name), "known": known}
        )
    return name


DottedPath = Annotated[str, AfterValidator(_dotted_path)]
MesEventType = Annotated[str, AfterValidator(_known_type)]
MesField = Annotated[str, AfterValidator(_known_field)]


class MesEventsConfig(Section):
    """A plant MES's event vocabulary → ours (edge_agent.base.mes_vocabulary), for one JSON route (docs/connect.md).

    Each message becomes `{"type": types[<value at type_path>], <field>: <value at fields[field]>, ...}`; a value
    at `type_path` that `types` does not list is quarantined as `unmapped_event_type`, never guessed.
    """

    # Where the plant's event type is in its payload, e.g. "evento.tipo".
    type_path: DottedPath
    # The plant's type value (matched exactly; an integer code as its decimal text) → our event type.
    types: dict[str, MesEventType] = Field(min_length=1)
    # Our field → the dotted path of the plant's value. Fields not listed are left out of the record.
    fields: dict[MesField, DottedPath] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _required_fields_mapped(self) -> MesEventsConfig:
        targets = sorted(set(self.types.values()), key=MES_EVENT_TYPES.index)
        unmapped = [
            f"{target} needs {field}"
            for target in targets
            for field in REQUIRED_FIELDS.get(target, ())
            if field not in self.fields
        ]
        if unmapped:
            raise PydanticCustomError(
                "required_field_unmapped", "fields: {needs} mapped to a path", {"needs": "; ".join(unmapped)}
            )
        return self


class RouteConfig(Section):
    """One topic filter and how its payloads become records."""

    topic: str = Field(min_length=1)
    parser: Literal["json", "text"] = "json"
    kind: str = Field("event", min_length=1, description="record kind, e.g. mes_event, log_line")
    qos: Literal[0, 1, 2] = 1
    # JSON routes: record field → JSON path in the payload (dotted). Missing optional fields are allowed.
    mapping: dict[str, str] = Field(default_factory=dict)
    # JSON routes: dotted paths that must be present, else the message is quarantined as schema_mismatch.
    required: list[str] = Field(default_factory=list)
    # MES routes: the plant's event types and field names → ours. Without it the payload is stored as it comes.
    events: MesEventsConfig | None = None
    # log_line routes: the topic level (0-based) the broker's ACL ties to the publishing user (`pattern write
    # plant/+/log/%u` → 3): a note's author is that level. Without it a note has no vouched author, and a name the
    # line claims is kept only as claimed_author (edge_agent/connectors/mqtt/authorship.py).
    author_from_topic_level: int | None = Field(None, ge=0, le=64)

    @model_validator(mode="after")
    def _mapping_fields_known(self) -> RouteConfig:
        allowed = {"key", "source_time", "message_id", "value"}
        unknown = sorted(set(self.mapping) - allowed)
        if unknown:
            raise ValueError(f"mapping: unknown record field(s) {unknown}; allowed: {sorted(allowed)}")
        return self

    @model_validator(mode="after")
    def _author_level_is_a_wildcard(self) -> RouteConfig:
        level = self.author_from_topic_level
        if level is None:
            return self
        if self.kind != "log_line":
            raise ValueError(f"author_from_topic_level: only for kind = 'log_line', not {self.kind!r}")
        levels = self.topic.split("/")
        hash_at = levels.index("#") if "#" in levels else None
        fixed = levels[level] if level < len(levels) and (hash_at is None or level < hash_at) else None
        if hash_at is None and level >= len(levels):
            raise ValueError(f"author_from_topic_level {level}: topic {self.topic!r} has only {len(levels)} levels")
        if fixed is not None and fixed != "+":
            # A fixed level names every message alike: it cannot be the user the broker's %u pattern ties it to.
            raise ValueError(
                f"author_from_topic_level {level}: level {fixed!r} of {self.topic!r} is fixed, not a '+' or '#' one"
            )
        return self

    @model_validator(mode="after")
    def _events_on_mes_json_routes(self) -> RouteConfig:
        if self.events is None:
            return self
        if self.parser != "json" or self.kind != "mes_event":
            raise ValueError(
                f"events: needs parser = 'json' and kind = 'mes_event', not {self.parser!r} and {self.kind!r}"
            )
        if self.mapping:
            # Both would say where asset, ts and id are: the mapped record has them under our names already.
            raise ValueError("events: excludes mapping; map asset, ts and id under events.fields")
        return self


class MqttConfig(Section):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(1883, ge=1, le=65535)
    protocol: Literal["5", "3.1.1"] = "5"
    client_id: str = "edge-agent"
    username: str | None = None
    password: SecretStr | None = None
    tls: TlsConfig | None = None
    keepalive_s: int = Field(30, ge=5)
    # A day: the broker keeps our QoS 1 backlog through a reboot or a long maintenance stop.
    session_expiry_s: int = Field(86400, ge=0)
    max_payload_bytes: int = Field(256 * 1024, ge=1)
    # The broker's maximum packet size, for what we publish. An MQTT 5 broker announces its own in CONNACK (the
    # smaller of the two applies); a 3.1.1 broker cannot, and drops a client that sends a larger packet.
    max_packet_bytes: int | None = Field(None, ge=16)
    # Bounded: when the store falls behind, paho's reader blocks instead of the process growing without limit.
    queue_max: int = Field(10000, ge=1)
    # ...and in payload bytes (None: the larger of 16 MiB and 4 x max_payload_bytes): 10 000 messages at the payload
    # limit would be 2.5 GiB. 16 MiB holds tens of thousands of typical messages (the count binds first) and at
    # least four of the largest, so one large message never stalls the reader.
    queue_max_bytes: int | None = Field(None, ge=1)
    reconnect_min_s: float = Field(0.5, gt=0)
    reconnect_max_s: float = Field(30.0, gt=0)
    # Value domains every payload is held to (schema_mismatch otherwise), see docs/records.md. No plant log predates
    # 2000; a time over a day ahead of ours is a wrong publisher clock (zone offsets reach only 14 h), not an event.
    time_min: UtcTime = PLAUSIBLE_TIME_MIN
    time_max_future_s: float = Field(86400.0, ge=0)
    # Real MES events nest 2-4 levels; 32 leaves room for any sane schema and refuses what is built to hurt.
    max_json_depth: int = Field(32, ge=1)
    # 64 Ki characters: longer than any operator note or MES text field, short enough for a report prompt.
    max_string_chars: int = Field(65536, ge=1)
    routes: list[RouteConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _queue_bytes_hold_a_message(self) -> MqttConfig:
        if self.queue_max_bytes is not None and self.queue_max_bytes < self.max_payload_bytes:
            raise ValueError(
                f"mqtt.queue_max_bytes ({self.queue_max_bytes}) is below mqtt.max_payload_bytes"
                f" ({self.max_payload_bytes}): the receive queue must hold one message of the largest size"
            )
        return self

    @property
    def receive_queue_bytes(self) -> int:
        """The receive queue's bound in payload bytes (`queue_max_bytes`, or its default)."""
        return self.queue_max_bytes or max(16 * 1024 * 1024, 4 * self.max_payload_bytes)
