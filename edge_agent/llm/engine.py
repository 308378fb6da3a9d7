"""`open_engine(config)`: the engine `config.llm.backend` names, started on entry and stopped on exit."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from edge_agent.audit import AuditSink
from edge_agent.config import AgentConfig
from edge_agent.llm.local import LocalEngine
from edge_agent.llm.remote import RemoteEngine


@asynccontextmanager
async def open_engine(config: AgentConfig, audit: AuditSink | None = None) -> AsyncIterator[LocalEngine | RemoteEngine]:
    """`async with open_engine(config) as engine: await engine.generate(messages, params)`.

    Raises ModelVerificationError (a tampered or unprepared model) or EngineStartError before yielding.
    `audit` (an `AuditLog`) gets `model.loaded` / `draft.loaded` on every (re)start of a local engine.
    """
    engine: LocalEngine | RemoteEngine
    engine = RemoteEngine(config) if config.llm.backend == "remote" else LocalEngine(config, audit=audit)
    try:
        await engine.start()
        yield engine
    finally:
        await engine.aclose()
