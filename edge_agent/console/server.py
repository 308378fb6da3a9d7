"""The console as one of the agent's components: uvicorn on `[console] host:port` with the TLS certificate and key,
inside the agent process, so it shares the agent's audit log and reads the same store and report repository."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import structlog

from edge_agent.config import AgentConfig
from edge_agent.console.app import build_app
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.console.context import ConsoleContext
from edge_agent.daemon import AgentStatus
from edge_agent.daemon.tls_server import serve_tls
from edge_agent.llm.types import Engine
from edge_agent.reports.document import ReportRepository
from edge_agent.store import Store

log = structlog.get_logger(component="console")


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
            assert console.tls_cert_file is not None and console.tls_key_file is not None  # config check's rule
            await serve_tls(
                build_app(self.context),
                host=console.host,
                port=console.port,
                cert_file=console.tls_cert_file,
                key_file=console.tls_key_file,
                ready=ready,
                listening=self._listening,
                what="console server",
            )
        finally:
            credentials.close()
            repo.close()

    def _listening(self, port: int) -> None:
        self.port = port
        log.info("console_listening", host=self._config.console.host, port=port, tls=True)
