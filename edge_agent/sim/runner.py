"""Runs the simulated plant: ticks of `Plant` go to the OPC UA server and, as MES/log messages, to the broker."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import structlog

from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.sim.clock import SimClock
from edge_agent.sim.messages import Malformer, Message, encode_log, encode_mes
from edge_agent.sim.opcua_server import PlantServer
from edge_agent.sim.plant import Plant, Tick
from edge_agent.sim.publisher import MqttPublisher
from edge_agent.sim.sparkplug import SimEdgeNode

log = structlog.get_logger(component="sim")

# Progress is logged this often (wall seconds): enough to watch a replay, few lines in a long run.
PROGRESS_EVERY_S = 10.0


@dataclass
class SimStats:
    ticks: int = 0
    values: int = 0
    alarms: int = 0
    mes_events: int = 0
    log_lines: int = 0
    malformed: Counter[str] = field(default_factory=Counter)
    first_time: datetime | None = None
    last_time: datetime | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "ticks": self.ticks,
            "values": self.values,
            "alarms": self.alarms,
            "mes_events": self.mes_events,
            "log_lines": self.log_lines,
            "malformed": dict(sorted(self.malformed.items())),
            "first_time": self.first_time.isoformat() if self.first_time else None,
            "last_time": self.last_time.isoformat() if self.last_time else None,
        }


def tick_messages(site: str, tick: Tick, malformer: Malformer) -> list[Message]:
    """The MQTT messages one tick produces, each good one possibly followed by a malformed sibling."""
    out: list[Message] = []
    for good in [encode_mes(site, e) for e in tick.mes] + [encode_log(site, line) for line in tick.logs]:
        out.append(good)
        bad = malformer.sibling(good)
        if bad is not None:
            out.append(bad)
    return out


def aligned_start(now: datetime, backfill_hours: float, tick_s: float) -> datetime:
    """Start of the simulated clock: now - backfill, rounded down to a whole tick so timestamps look like a PLC's."""
    start = now - timedelta(hours=backfill_hours)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    ticks = (start - epoch).total_seconds() // tick_s
    return epoch + timedelta(seconds=ticks * tick_s)


async def run_sim(
    config: AgentConfig,
    *,
    seed: int | None = None,
    malformed_share: float | None = None,
    duration_s: float | None = None,
    speed: float | None = None,
    server: PlantServer | None = None,
    ready: asyncio.Event | None = None,
    sparkplug: bool | None = None,
) -> SimStats:
    """Serve and publish the plant until `duration_s` wall seconds have passed (or forever, until cancelled)."""
    sim = config.sim
    seed = sim.seed if seed is None else seed
    speed = sim.speed if speed is None else speed
    share = sim.malformed_share if malformed_share is None else malformed_share
    start = aligned_start(utcnow(), sim.backfill_hours, sim.tick_s)
    plant = Plant(seed, start, sim.tick_s, site=config.site.id, line=sim.line, kpi_scenarios=sim.kpi_scenarios)
    malformer = Malformer(seed, share, sim.oversize_bytes)
    if server is None:
        server = PlantServer(
            sim.opcua_endpoint,
            sim.namespace_uri,
            line=sim.line,
            security=sim.security,
            pki_dir=config.paths.state_dir / "sim-pki",
            history_period=timedelta(hours=max(sim.history_hours, sim.backfill_hours + 1)),
        )
    stats = SimStats()
    publisher = MqttPublisher(config.mqtt, client_id=f"edge-agent-sim-{config.site.id}") if sim.publish_mqtt else None
    edge = (
        SimEdgeNode(config.mqtt, sim.sparkplug_group, f"{sim.line}-edge")
        if (sim.sparkplug if sparkplug is None else sparkplug)
        else None
    )
    async with server:
        if server.identity is not None:
            log.info("sim_server_certificate", sha256=server.identity.thumbprint_sha256)
        if publisher is not None:
            await publisher.__aenter__()
        try:
            log.info(
                "sim_started",
                endpoint=server.endpoint,
                seed=seed,
                start=start.isoformat(),
                speed=speed,
                malformed_share=share,
            )
            if ready is not None:
                ready.set()
            # Started only now: `duration_s` and the catch-up count from when the plant is actually served.
            clock = SimClock(start, speed)
            await _loop(config.site.id, plant, clock, server, publisher, malformer, stats, duration_s, edge)
        finally:
            if edge is not None:
                await asyncio.to_thread(edge.stop, utcnow())
            if publisher is not None:
                await publisher.__aexit__(None, None, None)
    log.info("sim_stopped", **stats.as_dict())
    return stats


async def _loop(
    site: str,
    plant: Plant,
    clock: SimClock,
    server: PlantServer,
    publisher: MqttPublisher | None,
    malformer: Malformer,
    stats: SimStats,
    duration_s: float | None,
    edge: SimEdgeNode | None = None,
) -> None:
    next_progress = time.monotonic() + PROGRESS_EVERY_S
    caught_up = False
    while duration_s is None or clock.elapsed() < duration_s:
        tick = plant.step()
        if not caught_up and tick.time >= clock.wall_start + timedelta(seconds=clock.elapsed()):
            # The backfill is replayed: a demo waits for this line before asking for a report on past shifts.
            caught_up = True
            log.info("sim_caught_up", sim_time=tick.time.isoformat(), ticks=stats.ticks, mes_events=stats.mes_events)
        wait = clock.elapsed_at(tick.time) - clock.elapsed()
        # Behind schedule (catching up): yield anyway so clients and the server's own tasks keep running.
        await asyncio.sleep(max(wait, 0.0))
        if duration_s is not None and clock.elapsed() >= duration_s:
            break
        await server.write(tick.values, tick.time)
        for alarm in tick.alarms:
            await server.fire_alarm(alarm)
        messages = tick_messages(site, tick, malformer)
        if publisher is not None:
            await publisher.publish_many(messages)
        if edge is not None:
            await asyncio.to_thread(_sparkplug_tick, edge, tick)
        stats.ticks += 1
        stats.values += len(tick.values)
        stats.alarms += len(tick.alarms)
        stats.mes_events += len(tick.mes)
        stats.log_lines += len(tick.logs)
        stats.malformed.update(m.malformed for m in messages if m.malformed)
        stats.first_time = stats.first_time or tick.time
        stats.last_time = tick.time
        if time.monotonic() >= next_progress:
            next_progress += PROGRESS_EVERY_S
            log.info("sim_progress", sim_time=tick.time.isoformat(), ticks=stats.ticks, mes_events=stats.mes_events)


def _sparkplug_tick(edge: SimEdgeNode, tick: Tick) -> None:
    """The edge node births on the first tick (its devices and their first values), then publishes each tick.

    The first tick's values go out in the births only: a DDATA of the same values at the same time would store each
    tag's first value twice."""
    if edge.ticks == 0 and not edge.encoder.aliases:
        devices: dict[str, dict[str, float | bool]] = {}
        for tag, value in tick.values.items():
            device, _, measurement = tag.partition(".")
            devices.setdefault(device, {})[measurement] = value
        edge.start(devices, tick.time)
        edge.publish_tick({}, tick.time)  # counts the tick for the scripted events; its values are in the births
        return
    edge.publish_tick(tick.values, tick.time)
