"""The engine as a daemon component: ready once the model is loaded, and itself an `Engine` for the reports."""

from __future__ import annotations

import asyncio

import structlog
from prometheus_client import Gauge

from edge_agent.audit import AuditSink
from edge_agent.config import AgentConfig
from edge_agent.llm.engine import open_engine
from edge_agent.llm.local import LocalEngine
from edge_agent.llm.remote import RemoteEngine
from edge_agent.llm.types import ChatMessage, Completion, EngineError, GenerationParams

log = structlog.get_logger(component="engine")

# How often readiness follows the engine: 1 s, so a dead or hung engine shows on /readyz within
# llm.heartbeat_timeout_s + 2 s (the engine's own watchdog also polls each second).
LIVENESS_POLL_S = 1.0
ENGINE_ALIVE = Gauge("edge_agent_engine_alive", "1 while the engine process runs and answers its heartbeat")


class EngineComponent:
    """Satisfies `edge_agent.daemon.component.Component` (also `SlowToStart`, `StartsInBackground`) and
    `edge_agent.llm.Engine`.

    `run` loads the engine, sets `ready`, and keeps it until cancelled; `generate` waits for the engine (a report
    requested during start-up is answered once the model is loaded) and delegates to it.
    """

    name = "engine"
    # generate() waits for the engine itself, so intake need not (`StartsInBackground`).
    start_in_background = True

    def __init__(self, config: AgentConfig, audit: AuditSink | None = None) -> None:
        self.config = config
        self.audit = audit
        # Loading a model takes minutes, not daemon.ready_timeout_s (`SlowToStart`).
        self.ready_timeout_s = config.llm.start_timeout_s
        self._engine: LocalEngine | RemoteEngine | None = None
        self._available = asyncio.Event()
        # Why the engine is up but not usable (daemon.component.ExplainsNotReady: /readyz shows it), or None.
        self.not_ready_reason: str | None = None

    @property
    def engine(self) -> LocalEngine | RemoteEngine | None:
        return self._engine

    @property
    def ready(self) -> bool:
        return self._engine is not None and self._engine.loaded

    async def run(self, ready: asyncio.Event) -> None:
        async with open_engine(self.config, audit=self.audit) as engine:
            self._engine = engine
            self._available.set()
            ready.set()
            try:
                # Until cancelled: the engine restarts its own process; meanwhile (dead, hung and killed, or
                # loading again) the component is not ready, so /readyz names it.
                while True:
                    await asyncio.sleep(LIVENESS_POLL_S)
                    self._follow(engine, ready)
            finally:
                self._available.clear()
                self._engine = None

    def _follow(self, engine: LocalEngine | RemoteEngine, ready: asyncio.Event) -> None:
        """Mirror the engine's liveness into `ready`, `not_ready_reason` and edge_agent_engine_alive."""
        alive = engine.loaded
        ENGINE_ALIVE.set(1 if alive else 0)
        if alive and not ready.is_set():
            log.info("engine.ready_again")
            self.not_ready_reason = None
            ready.set()
        elif not alive and ready.is_set():
            reason = getattr(engine, "last_death", None) or "engine process not running"
            self.not_ready_reason = f"engine not running ({reason}); restarting"
            log.warning("engine.not_ready", reason=self.not_ready_reason)
            ready.clear()

    async def generate(self, messages: list[ChatMessage], params: GenerationParams) -> Completion:
        try:
            await asyncio.wait_for(self._available.wait(), self.config.llm.start_timeout_s)
        except TimeoutError as exc:
            raise EngineError(f"engine not loaded after {self.config.llm.start_timeout_s} s") from exc
        assert self._engine is not None
        return await self._engine.generate(messages, params)
