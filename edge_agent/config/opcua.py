"""OPC UA sources: endpoints, security and the nodes to watch."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from edge_agent.config.base import PLAUSIBLE_TIME_MIN, Section, UtcTime


class NodeConfig(Section):
    """One node to watch. Its values are stored under `tag`, which reads `ASSET.measurement`: reports take the asset
    from the part before the first ".". Name it by `tag`, or by `asset` and `measurement`, which make the tag
    `f"{asset}.{measurement}"`; either way `tag` holds the name every consumer reads."""

    node_id: str = Field(min_length=1, description='e.g. "ns=2;s=P-101.Vibration"')
    tag: str = Field(min_length=1, description='stored key of each value, "ASSET.measurement"')
    asset: str | None = Field(None, min_length=1, description='with measurement, instead of tag; no "."')
    measurement: str | None = Field(None, min_length=1, description="with asset, instead of tag")
    sampling_interval_ms: float = Field(1000.0, ge=0)
    queue_size: int = Field(10, ge=1)
    deadband_type: Literal["none", "absolute", "percent"] = "none"
    deadband_value: float = Field(0.0, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _tag_from_asset(cls, data: Any) -> Any:
        """asset + measurement → tag. A tag beside them is accepted only when it is theirs: that is how the effective
        config (`config check`) prints such a node, so it validates again."""
        if not isinstance(data, dict) or (data.get("asset") is None and data.get("measurement") is None):
            return data
        asset, measurement = data.get("asset"), data.get("measurement")
        if asset is None or measurement is None:
            raise ValueError("asset and measurement go together: set both, or neither and tag instead")
        if not isinstance(asset, str) or not isinstance(measurement, str):
            return data  # the field validation names the wrong type
        derived = f"{asset}.{measurement}"
        tag = data.get("tag")
        if tag is not None and tag != derived:
            raise ValueError(
                f"name the node by tag or by asset + measurement, not both: tag {tag!r} but asset + measurement"
                f" make {derived!r}"
            )
        return {**data, "tag": derived}

    @field_validator("tag")
    @classmethod
    def _tag_reads_asset_measurement(cls, tag: str) -> str:
        asset, dot, measurement = tag.partition(".")
        if not (asset and dot and measurement):
            raise ValueError(
                f"tag {tag!r} must read ASSET.measurement (reports take the asset from the part before the first"
                ' "."), e.g. "P-101.vibration_mm_s"; or set asset and measurement instead'
            )
        return tag

    @field_validator("asset")
    @classmethod
    def _asset_without_dot(cls, asset: str | None) -> str | None:
        if asset is not None and "." in asset:
            raise ValueError(
                f'asset {asset!r} contains ".": reports would read the asset as {asset.split(".", 1)[0]!r}'
                ' (the part of the tag before the first "."); use another character, e.g. "_" or "-"'
            )
        return asset


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
