"""The attributes ReportService sets up that its parts (intake, generation, sign-offs, replies, throttling) share.

Each part is a mixin of `ReportService` (edge_agent/reports/service/dispatch.py), which sets these in `__init__`; a
part reads them from here so that mypy checks it alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from edge_agent.config import AgentConfig
from edge_agent.llm.types import Engine
from edge_agent.reports.document import ReportRepository, SignoffPolicy
from edge_agent.reports.service.throttle import Throttle
from edge_agent.store import Store


class ServiceState:
    config: AgentConfig
    store: Store
    engine: Engine
    audit: Any | None
    repo: ReportRepository
    request_topic: str
    signoff_topic: str
    # Topic filters the agent listens on (topics.reserved_filters): never a reply topic.
    _reserved: list[str]
    signoff_policy: SignoffPolicy
    signoff_refusal: str | None
    throttle: Throttle
    _outbox_wake: Callable[[], None] | None
