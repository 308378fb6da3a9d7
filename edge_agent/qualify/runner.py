"""One qualification: IQ, then the private agent for OQ and PQ on engines started once and shared by every check,
then the log and bundle self-tests on the private agent's stopped state; the document with every check."""

from __future__ import annotations

import asyncio
import os
import platform
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from edge_agent import __version__
from edge_agent.config import AgentConfig
from edge_agent.llm.types import Engine, EngineError
from edge_agent.qualify import oq
from edge_agent.qualify.check import Check, Measure, all_passed, split
from edge_agent.qualify.iq import installation_checks
from edge_agent.qualify.pq import Measurements, Speed, evaluate, generate_all, ingest_seconds, latencies
from edge_agent.qualify.prompts import section_messages
from edge_agent.qualify.report import Qualification
from edge_agent.qualify.requests import ask_each
from edge_agent.qualify.sandbox import Sandbox, running_sandbox
from edge_agent.reports.document import ReplayResult, replay_with_engine
from edge_agent.reports.narrative import generation_params
from edge_agent.sim.hostile import HostileClient, HostileOutcome, Topics, hostile_stream, settle

# One round: a sample of every class of bad input on every channel (the bench runs 40).
HOSTILE_ROUNDS = 1
HOSTILE_SEED = 37
# A report of a few sections on a slow CPU; a request not answered by then counts as infinitely late.
REQUEST_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Engines:
    """The configured engine (with its draft head when speculative decoding is on) and, only then, the same engine
    without the draft, for the comparison and the plain tokens/s."""

    configured: Engine
    plain: Engine | None


def without_draft(config: AgentConfig) -> AgentConfig:
    speculative = config.llm.speculative.model_copy(update={"enabled": False})
    return config.model_copy(update={"llm": config.llm.model_copy(update={"speculative": speculative})})


async def start_engines(config: AgentConfig, stack: AsyncExitStack) -> Engines:
    from edge_agent.llm.engine import open_engine

    configured = await stack.enter_async_context(open_engine(config))
    if not config.llm.speculative.enabled:
        return Engines(configured, None)
    return Engines(configured, await stack.enter_async_context(open_engine(without_draft(config))))


def _hostile(sandbox: Sandbox) -> HostileOutcome:
    config = sandbox.config
    topics = Topics(config.site.id, "qualify-hostile")
    stream = hostile_stream(
        topics, seed=HOSTILE_SEED, rounds=HOSTILE_ROUNDS, max_payload_bytes=config.mqtt.max_payload_bytes
    )
    with HostileClient(config.mqtt.host, config.mqtt.port, topics) as client:
        client.publish(stream)
        return settle(client, config.paths.store_path, stream)


async def qualify(
    config_path: Path, config: AgentConfig, engines: Engines, workdir: Path, *, unit: Path, euid: int | None = None
) -> Qualification:
    """Every check, in order; `workdir` (empty, private) holds the private agent's state, broker and bundles."""
    started = datetime.now(UTC)
    records = installation_checks(config, unit, os.geteuid() if euid is None else euid)
    records.append(oq.settings(config))
    async with running_sandbox(config, workdir / "sandbox", engines.configured) as sandbox:
        private = sandbox.config
        answered = await asyncio.to_thread(
            ask_each,
            private.mqtt.host,
            private.mqtt.port,
            private.site.id,
            config.qualify.reports_per_type,
            REQUEST_TIMEOUT_S,
        )
        outcome = await asyncio.to_thread(_hostile, sandbox)
        ingest_s = await ingest_seconds(sandbox, config.qualify.ingest_messages)
        done = [a for a in answered if a.report_id is not None]
        if done:
            replayed = await replay_with_engine(private, done[0].report_id or "", engines.configured)
        else:
            replayed = ReplayResult("-", False, "-", refused="no request was answered with a report")
        prompts = section_messages(private, answered)
        params = generation_params(private.reports, seed=0)
        drafted = await generate_all(engines.configured, prompts, params)
        plain = await generate_all(engines.plain, prompts, params) if engines.plain is not None else drafted
        restarts = sandbox.restarts()
    records += [
        oq.check_determinism(answered),
        oq.compare_draft(plain, drafted if engines.plain is not None else None, config.llm.dtype),
        oq.check_replay(replayed),
        oq.tamper_self_test(private.paths.audit_dir, workdir),
        oq.check_hostile(outcome, restarts),
        oq.bundle_self_test(private, workdir),
    ]
    measurements = Measurements(
        plain=Speed.of(plain),
        draft=Speed.of(drafted) if engines.plain is not None else None,
        latencies_s=latencies(answered),
        ingest_messages=config.qualify.ingest_messages,
        ingest_seconds=ingest_s,
    )
    records += evaluate(measurements, config.qualify)
    return document(config_path, config, started, records, measurements)


def document(
    config_path: Path,
    config: AgentConfig,
    started: datetime,
    records: Sequence[Check | Measure],
    measurements: Measurements | None,
) -> Qualification:
    checks, measures = split(records)
    return Qualification(
        agent_version=__version__,
        site=config.site.id,
        host=platform.node(),
        config_path=str(config_path),
        config_sha256=config.fingerprint(),
        started=started,
        finished=datetime.now(UTC),
        passed=all_passed(checks),
        checks=checks,
        measures=measures,
        measurements=measurements,
    )


async def qualify_install(config_path: Path, config: AgentConfig, workdir: Path, *, unit: Path) -> Qualification:
    """Start the configured engines once, then every check; an engine that refuses to start fails the
    qualification with the installation checks that say why, instead of ending it without a record."""
    started = datetime.now(UTC)
    async with AsyncExitStack() as stack:
        try:
            engines = await start_engines(config, stack)
        except EngineError as exc:
            records = installation_checks(config, unit, os.geteuid())
            records.append(
                Check(
                    id="oq.engine_start",
                    shows="the configured engine starts on this server",
                    criterion="the engine (and the one without the draft) start and verify their model files",
                    measured=f"{type(exc).__name__}: {exc}",
                    passed=False,
                )
            )
            return document(config_path, config, started, records, None)
        return await qualify(config_path, config, engines, workdir, unit=unit)
