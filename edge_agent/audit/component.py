"""The audit log as a supervised component: a signed checkpoint every `audit.checkpoint_every_s` and at shutdown.

The log itself is opened before the supervisor starts (`open_audit_log`) and closed after it stops, like the
store: every other component appends to it, so it must outlive them all. Appends also checkpoint every
`audit.checkpoint_every_entries` entries on their own (log.py); this timer covers quiet periods.
"""

from __future__ import annotations

import asyncio

import structlog
from prometheus_client import Gauge

from edge_agent.audit.checkpoint import CheckpointError
from edge_agent.audit.log import AuditLog, AuditWriteError
from edge_agent.audit.origin import log_origin
from edge_agent.audit.witness_client import WitnessTarget
from edge_agent.config import AgentConfig
from edge_agent.signing import CosignerKey

log = structlog.get_logger(component="audit")

SIGNED_SIZE = Gauge("edge_agent_audit_signed_size", "Entries covered by the latest signed audit checkpoint")
WRITABLE = Gauge("edge_agent_audit_writable", "0 while the latest audit checkpoint or append failed on disk, else 1")
UNSIGNED = Gauge("edge_agent_audit_unsigned_entries", "Audit entries not yet covered by a signed checkpoint")


def origin_for(config: AgentConfig) -> str:
    """The origin to open the config's audit log with: `[audit] origin`, else the one the log records, else the
    globally unique default for a new log, whose key is made with it (origin.py)."""
    return log_origin(config.paths.audit_dir, config.site.id, config.audit.origin)


def witness_targets(config: AgentConfig) -> list[WitnessTarget]:
    """The configured witnesses (their keys were validated with the config)."""
    return [WitnessTarget(w.url, CosignerKey.parse(w.key)) for w in config.audit.witnesses]


def open_audit_log(config: AgentConfig) -> AuditLog:
    """Open `<state_dir>/audit` with the configured origin and entry cadence (creates the key on first start)."""
    return AuditLog.open(
        config.paths.audit_dir, origin_for(config), checkpoint_every_entries=config.audit.checkpoint_every_entries
    )


class AuditCheckpointer:
    """Signs a checkpoint every `every_s` seconds when entries were added, and once more when cancelled.

    Not ready, naming the error, while the latest checkpoint or append failed on disk (a read-only or full audit
    dir); ready again after the next one that works (a failed checkpoint is retried every `every_s`).
    """

    name = "audit"

    def __init__(self, audit: AuditLog, every_s: float) -> None:
        self._audit = audit
        self._every_s = every_s
        WRITABLE.set_function(lambda: 0.0 if audit.failure else 1.0)

    @property
    def not_ready_reason(self) -> str | None:
        return self._audit.failure

    async def run(self, ready: asyncio.Event) -> None:
        ready.set()
        try:
            while True:
                await asyncio.sleep(self._every_s)
                await asyncio.to_thread(self._checkpoint)
        finally:
            # Orderly stop: sign what the others appended before they were stopped (they stop first).
            await asyncio.shield(asyncio.to_thread(self._checkpoint))

    def _checkpoint(self) -> None:
        last = self._audit.last_checkpoint
        if last is None or last.size != self._audit.size:
            try:
                self._audit.checkpoint()
            except CheckpointError as exc:
                # Refusing to sign is the point (the log no longer matches what was signed); keep appending.
                log.error("audit_checkpoint_refused", error=str(exc))
            except (OSError, AuditWriteError) as exc:  # `not_ready_reason` names it; the next tick tries again
                log.error("audit_checkpoint_failed", error=str(exc))
        last = self._audit.last_checkpoint
        signed = last.size if last else 0
        SIGNED_SIZE.set(signed)
        UNSIGNED.set(self._audit.size - signed)
