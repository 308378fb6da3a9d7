"""The agent answering a call in its own process: what the MCP server over HTTPS, which runs inside `edge-agent run`,
hands `edge_agent.ask.mcp.build_server` in place of the MQTT round trip the stdio server makes.

A call is held to the ask service's rules and leaves the same trace: the payload is read by `parse_ask` (the wire
rules of every ask request), the caller is throttled by `ask.throttle` per 60 s, and the request is answered as every
door answers one (edge_agent.ask.answerer: at the accepted time within `ask.deadline_s`, one `ask.answered` or
`ask.tool_called` entry naming the caller before the reply, shaped as the service's replies are).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import structlog

from edge_agent.ask.answerer import Answerer, refusal
from edge_agent.ask.request import parse_ask
from edge_agent.ask.throttle import UserThrottle
from edge_agent.audit import AuditSink
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.llm.types import Engine
from edge_agent.reports.errors import RequestError
from edge_agent.store import Store

log = structlog.get_logger(component="mcp")


class LocalAgent:
    """Answers questions and tool calls over `store`, audited to `audit`, at most `max_concurrent` at once."""

    def __init__(
        self,
        config: AgentConfig,
        store: Store,
        audit: AuditSink | None,
        max_concurrent: int,
        engine: Engine | None = None,
    ) -> None:
        self.config, self.store, self.audit = config, store, audit
        self.throttle = UserThrottle(config.ask.throttle)
        self._slots = asyncio.Semaphore(max_concurrent)
        self._answerer = Answerer(config, store, audit, engine)

    async def call(self, payload: dict[str, Any], user: str) -> dict[str, Any]:
        """The reply to one request from `user`: never raises but for cancellation."""
        if not self.throttle.allow(user):
            return refusal("throttled", f"more than {self.config.ask.throttle} requests in 60 s (ask.throttle)")
        try:
            request = parse_ask(json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        except (RequestError, ValueError) as exc:
            field, reason = (exc.field, exc.reason) if isinstance(exc, RequestError) else ("<payload>", str(exc))
            return refusal("bad_request", f"{field}: {reason}")
        try:
            async with self._slots:
                return await self._answerer.reply(request, user=user, now=utcnow())
        except Exception as exc:  # the audit entry failed: this call is lost, not the server
            log.exception("mcp_call_failed", user=user)
            return refusal("internal_error", type(exc).__name__)


__all__ = ["LocalAgent"]
