"""Identity, paths, logging, daemon, store and health sections."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from edge_agent.config.base import Section


class SiteConfig(Section):
    """Who this agent is: written into every record, report and audit entry."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$", description="site id, used in MQTT topics")
    name: str = ""
    area: str = ""
    timezone: str = "UTC"


class PathsConfig(Section):
    state_dir: Path = Path("/var/lib/edge-agent")

    @property
    def store_path(self) -> Path:
        return self.state_dir / "store.sqlite3"

    @property
    def audit_dir(self) -> Path:
        return self.state_dir / "audit"

    @property
    def pki_dir(self) -> Path:
        return self.state_dir / "pki"


class LoggingConfig(Section):
    level: Literal["debug", "info", "warning", "error"] = "info"
    # auto: JSON lines when stdout is not a TTY (journald), readable console otherwise.
    format: Literal["auto", "json", "console"] = "auto"


class DaemonConfig(Section):
    shutdown_grace_s: float = Field(20.0, gt=0, description="SIGTERM → exit budget; keep below TimeoutStopSec")
    restart_backoff_initial_s: float = Field(1.0, gt=0)
    restart_backoff_max_s: float = Field(60.0, gt=0)
    # Two minutes: long enough for a broker or OPC UA server that is slow after a plant reboot; the engine uses
    # llm.start_timeout_s instead, since loading a model takes longer.
    ready_timeout_s: float = Field(120.0, gt=0, description="a component not ready within this fails the start")
    # More than 5 restarts in 10 minutes is flapping (not ready until the window holds 5 or fewer): the rule systemd's
    # unit applies to the whole process (StartLimitBurst=5 in 10 min), one level down. With the default backoff
    # (1 s doubling to 60 s) a component that crashes at once on every start gets there in about a minute.
    flap_restarts: int = Field(5, ge=1, description="more restarts than this within flap_window_s is flapping")
    flap_window_s: float = Field(600.0, gt=0, description="the window flap_restarts is counted in")


class StoreConfig(Section):
    # 500 rows / 200 ms: one fsync per batch keeps ingest well above 10k rows/s on a slow disk while an
    # acknowledgement waits at most a fifth of a second.
    batch_max_rows: int = Field(500, ge=1)
    batch_max_delay_ms: int = Field(200, ge=0)
    # Each table is capped on its own (see edge_agent/store/retention.py), so a flood of bad input in quarantine never
    # deletes records. Records, quarantine and dead letters older than retention_days go.
    retention_days: float = Field(90.0, gt=0)
    retention_max_mb: float = Field(2048.0, gt=0, description="records' own estimated size; the oldest go beyond it")
    # 256 MB: a thousand payloads at mqtt.max_payload_bytes, or about a million typical bad lines; enough to diagnose
    # a flood, and bounded so one cannot fill the disk.
    quarantine_max_mb: float = Field(256.0, gt=0, description="quarantine's own estimated size; oldest go beyond it")
    # 64 MB: a refused reply is a report of tens of kB, so thousands stay for a person to inspect.
    dead_letter_max_mb: float = Field(64.0, gt=0, description="dead letters' own estimated size; oldest go beyond it")
    # 5 tries with the outbox's backoff (mqtt.reconnect_min_s doubling: 0.5 + 1 + 2 + 4 s by default) ride out a
    # broker's passing refusal (quota, server busy) within seconds; a topic an ACL forbids fails all five.
    outbox_max_attempts: int = Field(5, ge=1, description="broker refusals before an outbox row moves to dead_letter")


class HealthConfig(Section):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(9108, ge=0, le=65535)
