"""The private agent the operational and performance checks run against: the plant's config pointed at a temporary
state dir and a private Mosquitto, the agent's own components (store writer, outbox, report service, MQTT ingest)
under its own supervisor, and an engine started once by the caller and shared. The live store, audit log and broker
are never opened.

The store is seeded with a simulated plant shift (edge_agent.sim), so every report type has data and the same
request gives the same records on any server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from edge_agent.app import AgentContext, build_components
from edge_agent.audit import AuditLog
from edge_agent.audit.component import origin_for
from edge_agent.base.broker import Broker
from edge_agent.config import AgentConfig
from edge_agent.config.mqtt import MqttConfig, RouteConfig
from edge_agent.daemon.supervisor import Supervisor
from edge_agent.llm.types import Engine
from edge_agent.sim.records import plant_records
from edge_agent.store import RecordWriter, Store

# The simulated shift: fixed, so the records (and the reports' facts) are the same on every run and server.
DATA_START = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)
DATA_HOURS = 8.0
DATA_SEED = 37
# Every sixth tick's tag values: a shift's statistics stay meaningful, the seeding takes a second.
TAG_EVERY = 6
# Far above what the checks send: a plant's limits would refuse the checks' own requests, not test anything.
UNTHROTTLED = 1_000_000


def window() -> dict[str, str]:
    end = DATA_START + timedelta(hours=DATA_HOURS)
    return {"start": DATA_START.isoformat(), "end": end.isoformat()}


def sandbox_config(plant: AgentConfig, state_dir: Path, broker: Broker) -> AgentConfig:
    """The plant's config with its state in `state_dir`, its MQTT on the private broker (MES and log routes only),
    no OPC UA, Sparkplug, health port or witnesses, and no request limits."""
    site = plant.site.id
    mqtt = MqttConfig(
        host=broker.host,
        port=broker.port,
        client_id=f"edge-agent-qualify-{site}",
        max_payload_bytes=plant.mqtt.max_payload_bytes,
        routes=[
            RouteConfig(topic=f"plant/{site}/mes/#", parser="json", kind="mes_event"),
            RouteConfig(topic=f"plant/{site}/log/#", parser="text", kind="log_line"),
        ],
    )
    # Validated rather than model_copy'd: a limit key renamed in ReportsConfig is an error here, not a limit left on.
    reports = type(plant.reports).model_validate(
        plant.reports.model_dump()
        | {
            "enabled": True,
            "rate_limit_per_min": UNTHROTTLED,
            "throttle_invalid_max": UNTHROTTLED,
            "queue_max": 64,
            "queue_max_per_requester": None,
        }
    )
    return plant.model_copy(
        update={
            "paths": plant.paths.model_copy(update={"state_dir": state_dir}),
            "mqtt": mqtt,
            "opcua": plant.opcua.model_copy(update={"sources": []}),
            "sparkplug": plant.sparkplug.model_copy(update={"enabled": False}),
            "health": plant.health.model_copy(update={"enabled": False}),
            "audit": plant.audit.model_copy(update={"witnesses": [], "require_witness": False}),
            "reports": reports,
        }
    )


def seed_store(config: AgentConfig) -> int:
    records = plant_records(
        DATA_SEED, DATA_START, DATA_HOURS, site=config.site.id, tag_every=TAG_EVERY, kpi_scenarios=True
    )
    with Store(config.paths.store_path) as store:
        store.insert_records(records)
    return len(records)


@dataclass
class Sandbox:
    config: AgentConfig
    broker: Broker
    store: Store
    audit: AuditLog
    supervisor: Supervisor

    def restarts(self) -> dict[str, int]:
        return {c.name: c.restarts for c in self.supervisor.status().components}


@asynccontextmanager
async def running_sandbox(plant: AgentConfig, workdir: Path, engine: Engine) -> AsyncIterator[Sandbox]:
    """Broker up, store seeded, every component ready; stopped in order on leaving (the audit log closed, so a
    bundle can be exported from it)."""
    (workdir / "broker").mkdir(parents=True)
    broker = Broker(workdir / "broker")
    broker.start()
    try:
        config = sandbox_config(plant, workdir / "state", broker)
        config.paths.state_dir.mkdir(mode=0o700)
        seed_store(config)
        audit = AuditLog.open(config.paths.audit_dir, origin=origin_for(config))
        try:
            with Store(config.paths.store_path) as store:
                writer = RecordWriter(
                    store, max_rows=config.store.batch_max_rows, max_delay_s=config.store.batch_max_delay_ms / 1000
                )
                supervisor = Supervisor(config.daemon, handle_signals=False)
                ctx = AgentContext(config, store, writer, audit, supervisor.status, engine=engine)
                for component in build_components(ctx):
                    supervisor.add(component)
                run = asyncio.create_task(supervisor.run(), name="qualify-agent")
                try:
                    await _until_ready(supervisor, run, config.daemon.ready_timeout_s)
                    yield Sandbox(config, broker, store, audit, supervisor)
                finally:
                    supervisor.request_stop("qualification done")
                    await run
                    if ctx.anchor is not None:
                        ctx.anchor.finish()
        finally:
            audit.close()
    finally:
        broker.stop()


async def _until_ready(supervisor: Supervisor, run: asyncio.Task[int], timeout_s: float) -> None:
    async with asyncio.timeout(timeout_s):
        while not supervisor.ready:
            if run.done():
                raise RuntimeError(f"the private agent stopped while starting (exit {run.result()})")
            await asyncio.sleep(0.1)
