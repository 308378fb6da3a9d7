"""The agent as a whole: which components run, in which order, built from one AgentConfig."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import structlog

from edge_agent.config import AgentConfig
from edge_agent.daemon.component import Component
from edge_agent.daemon.health import HealthServer
from edge_agent.daemon.sdnotify import SdNotifier
from edge_agent.daemon.storage import RecordWriterComponent, RetentionComponent
from edge_agent.daemon.supervisor import AgentStatus, Supervisor
from edge_agent.store import RecordWriter, Store

log = structlog.get_logger(component="agent")


@dataclass
class AgentContext:
    """What components are built from: opened once, shared, closed after the supervisor has stopped them all."""

    config: AgentConfig
    store: Store
    writer: RecordWriter
    status: Callable[[], AgentStatus]


def build_components(ctx: AgentContext) -> list[Component]:
    """Components in start order. Stop runs in reverse: what comes last here (intake) is stopped first."""
    config = ctx.config
    components: list[Component] = []
    if config.health.enabled:
        # First up, last down: probes can watch the whole start and stop.
        components.append(HealthServer(config.health, ctx.status))
    components.append(RecordWriterComponent(ctx.writer))
    components.append(RetentionComponent(ctx.store, config.store))
    # Engine, outbox publisher and report service go here; connectors (intake) last, so they stop first.
    return components


async def run_agent(config: AgentConfig, notifier: SdNotifier | None = None) -> int:
    """Open the store, run every component under the supervisor until SIGTERM; returns the exit code."""
    with Store(config.paths.store_path) as store:
        writer = RecordWriter(
            store, max_rows=config.store.batch_max_rows, max_delay_s=config.store.batch_max_delay_ms / 1000
        )
        supervisor = Supervisor(config.daemon, notifier)
        ctx = AgentContext(config=config, store=store, writer=writer, status=supervisor.status)
        for component in build_components(ctx):
            supervisor.add(component)
        log.info("agent_starting", site=config.site.id, config_sha256=config.fingerprint(), store=str(store.path))
        return await supervisor.run()
