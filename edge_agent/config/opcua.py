"""OPC UA sources: endpoints, security and the nodes to watch."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

from edge_agent.config.base import PLAUSIBLE_TIME_MIN, Section, UtcTime


class NodeConfig(Section):
    node_id: str = Field(min_length=1, description='e.g. "ns=2;s=P-101.Vibration"')
    tag: str = Field(min_length=1, description="tag name stored with each value")
    sampling_interval_ms: float = Field(1000.0, ge=0)
    queue_size: int = Field(10, ge=1)
    deadband_type: Literal["none", "absolute", "percent"] = "none"
    deadband_value: float = Field(0.0, ge=0)


class OpcuaSourceConfig(Section):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    endpoint: str = Field(pattern=r"^opc\.tcp://")
    security_policy: Literal["None", "Basic256Sha256"] = "None"
    security_mode: Literal["None", "Sign", "SignAndEncrypt"] = "None"
    client_cert: Path | None = None
    client_key: Path | None = None
    server_cert_sha256: str | None = Field(None, description="pin: hex SHA-256 of the server certificate (DER)")
    username: str | None = None
    password: SecretStr | None = None
    publishing_interval_ms: float = Field(500.0, gt=0)
    # Health watch: read ServerStatus.CurrentTime this often; a failed read means the session is gone.
    watchdog_interval_s: float = Field(2.0, gt=0)
    reconnect_min_s: float = Field(0.5, gt=0)
    reconnect_max_s: float = Field(30.0, gt=0)
    history_backfill: bool = True
    # The first connect after agent start also reads this much history (0: none); values already stored are
    # skipped by their idempotency key, so a restarted agent fills what it missed while it was down.
    history_backfill_initial_s: float = Field(0.0, ge=0)
    # A longer gap is backfilled only for its most recent part: bounds the work after a very long outage.
    history_backfill_max_s: float = Field(86400.0, gt=0)
    # Bounds one connect attempt: asyncua's connect can hang on a half-dead socket (opcua-asyncio #1660).
    connect_timeout_s: float = Field(10.0, gt=0)
    # Plausible source times, as [mqtt]'s: a device clock outside them would misplace a value in every report window
    # (and a far-future one would stop backfill for its tag, which starts at the newest time seen).
    time_min: UtcTime = PLAUSIBLE_TIME_MIN
    time_max_future_s: float = Field(86400.0, ge=0)
    nodes: list[NodeConfig] = Field(default_factory=list)
    events: bool = Field(True, description="subscribe to alarm and condition events from the Server object")


class OpcuaConfig(Section):
    sources: list[OpcuaSourceConfig] = Field(default_factory=list)
