"""The console as one of the agent's components: uvicorn on `[console] host:port` with the TLS certificate and key,
inside the agent process, so it shares the agent's audit log and reads the same store and report repository."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator, Sequence
from typing import Any

import structlog
import uvicorn

from edge_agent.config import AgentConfig
from edge_agent.console.app import build_app
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.console.context import ConsoleContext
from edge_agent.daemon import AgentStatus
from edge_agent.llm.types import Engine
from edge_agent.reports.document import ReportRepository
from edge_agent.store import Store

log = structlog.get_logger(component="console")


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield  # the agent's supervisor owns SIGTERM and SIGINT


class ConsoleServer:
    """A component: ready once listening over TLS; `port` is the bound port (useful when configured as 0)."""

    name = "console"

    def __init__(
        self,
        config: AgentConfig,
        store: Store | None,
        audit: Any,
        *,
        readiness: Callable[[], AgentStatus] | None = None,
        doctor_checks: Callable[[], Sequence[Any]] | None = None,
        engine: Engine | None = None,
    ) -> None:
        self._config, self._store, self._audit, self._engine = config, store, audit, engine
        # The Health page's sources: the supervisor's status (what /readyz serves) and doctor's cheap checks.
        self._readiness, self._doctor_checks = readiness, doctor_checks
        self.port: int | None = None
        self.context: ConsoleContext | None = None

    async def run(self, ready: asyncio.Event) -> None:
        config, console = self._config, self._config.console
        repo = ReportRepository.for_state_dir(config.paths.state_dir)
        credentials = CredentialStore.for_state_dir(config.paths.state_dir)
        try:
            self.context = ConsoleContext(
                config,
                self._store,
                self._audit,
                repo,
                credentials,
                readiness=self._readiness,
                doctor_checks=self._doctor_checks,
                engine=self._engine,
            )
            server = _Server(
                uvicorn.Config(
                    build_app(self.context),
                    host=console.host,
                    port=console.port,
                    lifespan="off",
                    log_config=None,
                    access_log=False,
                    server_header=False,
                    ssl_certfile=str(console.tls_cert_file),
                    ssl_keyfile=str(console.tls_key_file),
                )
            )
            task = asyncio.create_task(server.serve())
            try:
                while not server.started:
                    if task.done():
                        task.result()  # a bind or certificate failure: raised as the component's crash
                        raise RuntimeError("the console server stopped before it listened")
                    await asyncio.sleep(0.05)
                self.port = server.servers[0].sockets[0].getsockname()[1]
                log.info("console_listening", host=console.host, port=self.port, tls=True)
                ready.set()
                await asyncio.shield(task)
            finally:
                server.should_exit = True
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        finally:
            credentials.close()
            repo.close()
