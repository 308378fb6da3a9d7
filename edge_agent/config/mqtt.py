"""MQTT broker connection and ingest routes."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator

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

    @model_validator(mode="after")
    def _mapping_fields_known(self) -> RouteConfig:
        allowed = {"key", "source_time", "message_id", "value"}
        unknown = sorted(set(self.mapping) - allowed)
        if unknown:
            raise ValueError(f"mapping: unknown record field(s) {unknown}; allowed: {sorted(allowed)}")
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
