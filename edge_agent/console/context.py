"""What the console is built from: the agent's own config, store, audit log and report repository (it runs inside
the agent process), its credential table, sessions and lock-out, and a clock tests can set."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from edge_agent.ask.throttle import UserThrottle
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.config.identities import IdentityTable, identity_table
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.console.auth.lockout import Lockout
from edge_agent.console.auth.sessions import Sessions
from edge_agent.daemon import AgentStatus
from edge_agent.llm.types import Engine
from edge_agent.reports.document import ReportRepository, SignoffPolicy
from edge_agent.store import Store


def session_secret(state_dir: Path) -> bytes:
    """The key that signs session cookies, `<state_dir>/console.secret` (0600), made on first use."""
    path = state_dir / "console.secret"
    if not path.exists():
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
    return path.read_bytes()


@dataclass
class ConsoleContext:
    config: AgentConfig
    store: Store | None
    audit: Any  # the agent's AuditLog (append): every enrolment, sign-in, failed sign-in and decision
    repo: ReportRepository
    credentials: CredentialStore
    now: Callable[[], datetime] = utcnow
    identities: IdentityTable = field(init=False)
    policy: SignoffPolicy = field(init=False)
    sessions: Sessions = field(init=False)
    lockout: Lockout = field(init=False)
    # The Ask page's per-person limit, `ask.throttle` questions in 60 s as over MQTT (edge_agent.ask.throttle).
    ask_throttle: UserThrottle = field(init=False)
    # The Health page's sources, handed in by the agent (None outside it): the supervisor's readiness, and the latest
    # doctor checks (objects with id, status, detail, fix: doctor sits above the console, so it is not imported).
    readiness: Callable[[], AgentStatus] | None = None
    doctor_checks: Callable[[], Sequence[Any]] | None = None
    # The agent's engine, which reads Ask questions when `ask.planner = "model"` (None: the reference planner).
    engine: Engine | None = None

    def __post_init__(self) -> None:
        console = self.config.console
        self.identities = identity_table(self.config)
        self.policy = SignoffPolicy.from_config(self.config)
        self.sessions = Sessions(
            session_secret(self.config.paths.state_dir), timedelta(seconds=console.session_max_age_s)
        )
        self.ask_throttle = UserThrottle(self.config.ask.throttle)
        self.lockout = Lockout(
            console.max_failed_signins,
            timedelta(seconds=console.failed_signin_window_s),
            timedelta(seconds=console.lockout_s),
        )
