"""One TOML file, validated by pydantic; `EDGE_AGENT__SECTION__KEY` environment variables override it, and a secret
may be read from the file its `*_file` key names (edge_agent.config.secret_files)."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, SecretStr, ValidationError

from edge_agent.base.canonical import ascii_json, sha256_hex
from edge_agent.config.ask import AskConfig
from edge_agent.config.audit import AuditConfig
from edge_agent.config.base import Section
from edge_agent.config.console import ConsoleConfig
from edge_agent.config.core import (
    DaemonConfig,
    HealthConfig,
    LoggingConfig,
    PathsConfig,
    SiteConfig,
    StoreConfig,
)
from edge_agent.config.environment import ENV_PREFIX, apply_env
from edge_agent.config.identities import Identities
from edge_agent.config.llm import LlmConfig, SpeculativeConfig
from edge_agent.config.mcp import McpConfig
from edge_agent.config.mqtt import MqttConfig, RouteConfig, TlsConfig
from edge_agent.config.opcua import NodeConfig, OpcuaConfig, OpcuaSourceConfig
from edge_agent.config.qualify import QualifyConfig
from edge_agent.config.reports import ReportsConfig, ShiftConfig
from edge_agent.config.secret_files import read_secret_files
from edge_agent.config.sim import SimConfig
from edge_agent.config.sparkplug import SparkplugConfig
from edge_agent.config.urls import redact_url


class AgentConfig(Section):
    site: SiteConfig
    paths: PathsConfig = Field(default_factory=PathsConfig)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)
    daemon: DaemonConfig = Field(default_factory=DaemonConfig)
    store: StoreConfig = Field(default_factory=StoreConfig)
    health: HealthConfig = Field(default_factory=HealthConfig)
    mqtt: MqttConfig = Field(default_factory=MqttConfig)
    opcua: OpcuaConfig = Field(default_factory=OpcuaConfig)
    llm: LlmConfig = Field(default_factory=LlmConfig)
    reports: ReportsConfig = Field(default_factory=ReportsConfig)
    ask: AskConfig = Field(default_factory=AskConfig)
    audit: AuditConfig = Field(default_factory=AuditConfig)
    console: ConsoleConfig = Field(default_factory=ConsoleConfig)
    mcp: McpConfig = Field(default_factory=McpConfig)
    sim: SimConfig = Field(default_factory=SimConfig)
    sparkplug: SparkplugConfig = Field(default_factory=SparkplugConfig)
    qualify: QualifyConfig = Field(default_factory=QualifyConfig)
    # Last: its check reads mqtt and reports (edge_agent/config/identities.py).
    identities: Identities = Field(default_factory=list)
    # Key path → the file each secret was read from (`*_file` keys); set by load_config.
    _secret_files: dict[str, Path] = PrivateAttr(default_factory=dict)

    @property
    def secret_files(self) -> dict[str, Path]:
        """Key path (e.g. "mqtt.password") → the file that secret was read from, for each `*_file` key."""
        return dict(self._secret_files)

    def masked(self) -> dict[str, Any]:
        """The effective config as plain data, secrets shown as '***'."""
        return _mask(self.model_dump(mode="python"))

    def fingerprint(self) -> str:
        """SHA-256 of the effective config (secrets masked) in the ASCII form of `edge_agent.base.canonical`, which
        logged fingerprints already hold: what the audit log records."""
        return sha256_hex(ascii_json(self.masked()))


class ConfigError(Exception):
    """A config file that cannot be used. `problems` holds (key path, reason) for every bad key."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  {path}: {reason}" for path, reason in problems)
        super().__init__(f"{source}: {len(problems)} problem(s)\n{lines}")


def load_config(path: Path | str, environ: Mapping[str, str] | None = None) -> AgentConfig:
    """Read, merge env overrides into, read the `*_file` secrets of, and validate one config file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(str(path), [("<file>", "not found")]) from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), [("<file>", f"not valid TOML: {exc}")]) from exc
    problems: list[tuple[str, str]] = []
    environ = os.environ if environ is None else environ
    apply_env(data, environ, problems)
    secret_files = read_secret_files(data, AgentConfig, environ, problems)
    try:
        config = AgentConfig.model_validate(data)
    except ValidationError as exc:
        problems.extend((_key_path(err["loc"]), err["msg"]) for err in exc.errors())
        raise ConfigError(str(path), sorted(problems)) from exc
    if problems:
        raise ConfigError(str(path), problems)
    config._secret_files = secret_files
    return config


def _key_path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts[-1] = f"{parts[-1]}[{item}]" if parts else f"[{item}]"
        else:
            parts.append(str(item))
    return ".".join(parts) or "<root>"


def _mask(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return "***"
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, str):
        return redact_url(value)  # credentials in a URL (llm.remote_url, a witness url) are secrets too
    return value


__all__ = [
    "AgentConfig",
    "AskConfig",
    "AuditConfig",
    "ConfigError",
    "ConsoleConfig",
    "DaemonConfig",
    "ENV_PREFIX",
    "HealthConfig",
    "LlmConfig",
    "LoggingConfig",
    "MqttConfig",
    "NodeConfig",
    "OpcuaConfig",
    "OpcuaSourceConfig",
    "PathsConfig",
    "QualifyConfig",
    "ReportsConfig",
    "RouteConfig",
    "ShiftConfig",
    "SimConfig",
    "SiteConfig",
    "SpeculativeConfig",
    "StoreConfig",
    "TlsConfig",
    "load_config",
]
