"""The agent as a whole: which components run, in which order, built from one AgentConfig."""

from __future__ import annotations

import gc
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import structlog

from edge_agent import __version__
from edge_agent.ask.service import AskService
from edge_agent.audit import AuditLog
from edge_agent.audit.anchor import AuditAnchor, checkpoint_topic
from edge_agent.audit.component import AuditCheckpointer, open_audit_log, witness_targets
from edge_agent.audit.rollback import MARKER, Citation, refuse_missing_log
from edge_agent.config import AgentConfig
from edge_agent.config.identities import identity_table
from edge_agent.config.security import security_warnings
from edge_agent.connectors.mqtt import MqttClient
from edge_agent.connectors.mqtt.ingest import MqttIngest
from edge_agent.connectors.opcua import OpcuaSource
from edge_agent.connectors.sparkplug import SparkplugHost
from edge_agent.daemon.component import Component
from edge_agent.daemon.health import HealthServer
from edge_agent.daemon.sdnotify import SdNotifier
from edge_agent.daemon.storage import RETENTION_INTERVAL_S, RecordWriterComponent, RetentionComponent, RetentionPass
from edge_agent.daemon.supervisor import AgentStatus, Supervisor
from edge_agent.llm.types import Engine
from edge_agent.publish.outbox import OutboxPublisher
from edge_agent.publish.retained import read_retained
from edge_agent.reports.document import ReportRepository
from edge_agent.reports.errors import ReportError
from edge_agent.reports.service import ReportService
from edge_agent.store import RecordWriter, Store, StoreError

log = structlog.get_logger(component="agent")


@dataclass
class AgentContext:
    """What components are built from: opened once, shared, closed after the supervisor has stopped them all."""

    config: AgentConfig
    store: Store
    writer: RecordWriter
    audit: AuditLog
    status: Callable[[], AgentStatus]
    anchor: AuditAnchor | None = None
    # An engine started elsewhere (edge-agent qualify shares one between its checks); None: the agent starts its own.
    engine: Engine | None = None
    # Hourly in production (daemon/storage.py); tests shorten it to see a pass happen.
    retention_interval_s: float = RETENTION_INTERVAL_S
    # doctor's cheap checks for the console's Health page, handed in by `edge-agent run` (doctor sits beside app)
    doctor_checks: Callable[[], Sequence[Any]] | None = None


def build_components(ctx: AgentContext) -> list[Component]:
    """Components in start order. Stop runs in reverse: what comes last here (intake) is stopped first, and what
    everything else writes to (audit checkpoints, the store writer) is stopped after its writers."""
    config = ctx.config
    components: list[Component] = []
    if config.health.enabled:
        # First up, last down: probes can watch the whole start and stop.
        components.append(HealthServer(config.health, ctx.status))
    components.append(RecordWriterComponent(ctx.writer))
    components.append(
        RetentionComponent(ctx.store, config.store, ctx.retention_interval_s, passes=_report_retention(config))
    )
    components.append(AuditCheckpointer(ctx.audit, config.audit.checkpoint_every_s))
    engine = ctx.engine
    if engine is None and config.llm.enabled:
        from edge_agent.llm.component import EngineComponent  # only when used: an ingest-only agent never needs it

        engine = EngineComponent(config, audit=ctx.audit)  # starts in the background, with its own ready timeout
        components.append(engine)
    outbox = (
        OutboxPublisher(config.mqtt, ctx.store, max_attempts=config.store.outbox_max_attempts)
        if config.mqtt.enabled
        else None
    )
    if outbox is not None:
        components.append(outbox)
    ctx.anchor = _audit_anchor(ctx, outbox)
    if ctx.anchor is not None:
        components.append(ctx.anchor)
    if config.reports.enabled and engine is not None and outbox is not None:
        components.append(
            ReportService(config, ctx.store, engine, ctx.audit, outbox_wake=outbox.wake, mqtt_client=MqttClient)
        )
    elif config.reports.enabled:
        log.warning("reports_disabled", reason="reports need [llm] and [mqtt] enabled")
    if config.console.enabled:
        from edge_agent.console.server import ConsoleServer  # only when used: uvicorn and the WebAuthn library

        components.append(
            ConsoleServer(
                config,
                ctx.store,
                ctx.audit,
                readiness=ctx.status,
                doctor_checks=ctx.doctor_checks,
                engine=engine,
            )
        )
    if config.mcp.enabled:
        from edge_agent.ask.mcp_http import McpHttpServer  # only when used: uvicorn and the SDK's HTTP transport

        components.append(McpHttpServer(config, ctx.store, ctx.audit, engine))
    if config.ask.enabled and outbox is not None:
        ask = AskService(config, ctx.store, ctx.audit, outbox_wake=outbox.wake, mqtt_client=MqttClient, engine=engine)
        components.append(ask)
    # Intake last, so that it stops first.
    if config.mqtt.enabled:
        components.append(MqttIngest(config.mqtt, ctx.store, ctx.writer, ctx.audit))
    if config.sparkplug.enabled:  # its own session on the [mqtt] broker, whether or not [mqtt] ingest runs
        components.append(SparkplugHost(config.mqtt, config.sparkplug, ctx.store, ctx.writer, ctx.audit))
    for source in config.opcua.sources:
        components.append(
            OpcuaSource(source, ctx.writer, quarantine=ctx.store, pki_dir=config.paths.pki_dir, audit=ctx.audit)
        )
    return components


async def run_agent(
    config: AgentConfig,
    notifier: SdNotifier | None = None,
    config_path: Path | None = None,
    doctor_checks: Callable[[], Sequence[Any]] | None = None,
) -> int:
    """Open the audit log and store, run every component under the supervisor until SIGTERM; returns the exit code.

    The audit log records the start (with the config's fingerprint and its security warnings, `config.security`)
    and the stop (exit code, reason, restarts per component), so every stretch of the agent's life is accounted for:
    a start without a stop before it is a crash.
    """
    refuse_missing_log(config.paths.audit_dir, _store_has_data(config.paths.store_path))
    audit = open_audit_log(config)
    try:
        with Store(config.paths.store_path) as store:
            writer = RecordWriter(
                store, max_rows=config.store.batch_max_rows, max_delay_s=config.store.batch_max_delay_ms / 1000
            )
            supervisor = Supervisor(config.daemon, notifier)
            ctx = AgentContext(
                config=config,
                store=store,
                writer=writer,
                audit=audit,
                status=supervisor.status,
                doctor_checks=doctor_checks,
            )
            for component in build_components(ctx):
                supervisor.add(component)
            _record_start(audit, config, config_path, supervisor)
            # Start-up's objects (modules, config, schemas) live as long as the process: left out of full garbage
            # collections, which hold the GIL for the whole heap, a collection costs what a report's records cost.
            # Measured: a 100 000-record window's longest collection 0.12 s -> 0.06 s.
            gc.collect()
            gc.freeze()
            log.info("startup_heap_frozen", objects=gc.get_freeze_count())
            exit_code: int | None = None
            try:
                exit_code = await supervisor.run()
            finally:
                _record_stop(audit, supervisor, exit_code)
                if ctx.anchor is not None:
                    ctx.anchor.finish()  # the last checkpoint: queued for the broker, cosigned by the witnesses
            return exit_code
    finally:
        audit.close()


def _report_retention(config: AgentConfig) -> list[RetentionPass]:
    """Drafts and rejections older than reports.retention_days (0: every report is kept), trimmed on the retention
    component's tick. Handed in from here because daemon sits below reports (tests/test_layering.py); not on the
    report service's own tick because that service runs only with [llm] and [mqtt] on, and drafts left by an
    earlier configuration must age out on an ingest-only agent too."""
    if config.reports.retention_days <= 0:
        return []
    state_dir, max_age = config.paths.state_dir, timedelta(days=config.reports.retention_days)

    def trim_reports() -> dict[str, int]:
        try:
            repo = ReportRepository.for_state_dir(state_dir)
            try:
                return {"reports": len(repo.trim_unapproved(max_age))}
            finally:
                repo.close()
        except (ReportError, sqlite3.Error, OSError) as exc:
            raise StoreError(f"report retention: {exc}") from exc

    return [trim_reports]


def _record_start(audit: AuditLog, config: AgentConfig, config_path: Path | None, supervisor: Supervisor) -> None:
    fingerprint = config.fingerprint()
    start = {
        "version": __version__,
        "pid": os.getpid(),
        "site": config.site.id,
        "config_sha256": fingerprint,
        "components": [c.name for c in supervisor.status().components],
    }
    # The identity table four-eyes and signatures rely on, as `audit verify-bundle` reads it: name, broker_user,
    # approver_keys (OpenSSH form).
    identities = identity_table(config).as_audit()
    loaded = {"sha256": fingerprint, "path": str(config_path) if config_path else None, "identities": identities}
    warnings = security_warnings(config, os.environ)
    for warning in warnings:
        log.warning("security_warning", code=warning.code, detail=warning.message)
    # Written even when empty: the trail then shows the check ran and found nothing, not that it was skipped.
    security = {"warnings": [w.model_dump() for w in warnings]}
    audit.append_many(
        [("config.loaded", "agent", loaded), ("config.security", "agent", security), ("agent.start", "agent", start)]
    )
    log.info("agent_starting", site=config.site.id, config_sha256=fingerprint, audit_seq=audit.size - 1)


def _record_stop(audit: AuditLog, supervisor: Supervisor, exit_code: int | None) -> None:
    restarts = {c.name: c.restarts for c in supervisor.status().components}
    audit.append(
        "agent.stop", "agent", {"exit_code": exit_code, "reason": supervisor.stop_reason, "restarts": restarts}
    )


def _audit_anchor(ctx: AgentContext, outbox: OutboxPublisher | None) -> AuditAnchor | None:
    """Checkpoints leave the box: retained on edge/<site>/audit/checkpoint through the outbox, and to the witnesses.
    None when there is nothing to anchor to and nothing to check (no broker, no witness, no report, no marker)."""
    config, store = ctx.config, ctx.store
    witnesses = witness_targets(config)
    citations = _store_citations(config.paths.store_path)
    if outbox is None and not witnesses and not citations and not (config.paths.audit_dir / MARKER).exists():
        return None
    topic = checkpoint_topic(config.site.id)

    def publish(note: bytes) -> None:
        store.outbox_put(topic, note, 1, True)
        if outbox is not None:
            outbox.wake()

    async def read_published() -> bytes | None:
        return await read_retained(config.mqtt, topic, f"{config.mqtt.client_id}-audit")

    return AuditAnchor(
        ctx.audit,
        publish=publish if outbox is not None else None,
        read_published=read_published if outbox is not None else None,
        citations=lambda: _store_citations(config.paths.store_path),
        witnesses=witnesses,
        require_witness=config.audit.require_witness,
    )


def _store_citations(path: Path) -> list[Citation]:
    """Every audit seq a stored report cites (its document's `audit`: requested, generated, signoff)."""
    if not path.exists():
        return []
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'reports'").fetchone():
            return []
        rows = conn.execute("SELECT report_id, document FROM reports").fetchall()
    cited = []
    for report_id, document in rows:
        audit = json.loads(document).get("audit") or {}
        for field in ("requested", "generated", "signoff"):
            if isinstance(audit.get(field), int):
                cited.append(Citation(report_id, field, audit[field]))
    return cited


def _store_has_data(path: Path) -> bool:
    """Records or reports in the store (read-only; no store file: none)."""
    if not path.exists():
        return False
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return any(
            conn.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0]  # noqa: S608 (fixed table names)
            for t in ("records", "reports")
            if t in tables
        )
