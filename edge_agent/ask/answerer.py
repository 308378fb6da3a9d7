"""A question or a tool call answered as every door of the agent answers it (the MQTT service, the console's Ask
page, MCP over HTTPS): computed at the accepted time in a thread, refused `deadline` past `ask.deadline_s`, then
audited (one `ask.answered` or `ask.tool_called` entry, edge_agent.ask.trail) before the reply leaves.

A question is read by the model first when `ask.planner = "model"`, and only a question the code's rules do not
refuse first (a command or an injection never reaches the engine). An engine that is not loaded, fails, or does not
answer within `ask.model_timeout_s` (it may be writing a report: asks never wait on one for long) leaves the question
to the reference planner; the entry says which planned (`planner`) and what the model wrote (`engine`).

The computation runs in the door's own thread pool when it hands one in, or in its worker processes
(edge_agent.ask.processes) when it hands those in: a computation past its deadline is not stopped (SQLite reads
cannot be interrupted safely), its late result is dropped unrecorded, and it should hold an ask thread or process,
not a thread the store's writers share.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Executor
from datetime import datetime
from typing import Any, cast

import structlog

from edge_agent.ask.language import detect_language
from edge_agent.ask.model_planner import ModelReading, read_question
from edge_agent.ask.pipeline import AskAnswer, refused_answer
from edge_agent.ask.planner import MAX_QUESTION_CHARS
from edge_agent.ask.processes import AnswerPool, QuestionJob, ToolJob, ToolOutcome, compute
from edge_agent.ask.refusal import classify
from edge_agent.ask.request import QuestionRequest, ToolRequest
from edge_agent.ask.trail import record_answer, record_tool_call
from edge_agent.audit import AuditSink
from edge_agent.config import AgentConfig
from edge_agent.llm.types import Engine, EngineError
from edge_agent.store import Store

log = structlog.get_logger(component="ask")


def refusal(reason: str, detail: str, tool: str | None = None) -> dict[str, Any]:
    """A refused request's reply, as every door sends it (`tool` for a tool call's)."""
    reply: dict[str, Any] = {"status": "refused", "reason": reason, "detail": detail}
    return reply | ({"tool": tool} if tool is not None else {})


class Answerer:
    """Answers questions and tool calls over `store`, audited to `audit`; `engine` reads questions when the config
    asks for the model planner (None: the reference planner plans every question). Computed in `pool`'s processes
    when one is given, else in `executor`'s threads (None: the event loop's default)."""

    def __init__(
        self,
        config: AgentConfig,
        store: Store,
        audit: AuditSink | None,
        engine: Engine | None,
        executor: Executor | None = None,
        pool: AnswerPool | None = None,
    ) -> None:
        self.config, self.store, self.audit = config, store, audit
        self.engine = engine if config.ask.planner == "model" else None
        self._executor, self._pool = executor, pool

    async def reply(self, request: QuestionRequest | ToolRequest, *, user: str | None, now: datetime) -> dict[str, Any]:
        """The JSON reply to one request accepted at `now`, its audit entry written (`audit_seq` in it)."""
        if isinstance(request, QuestionRequest):
            answer = await self.answer(request.question, user=user, lang=request.lang, now=now)
            log.info("ask_answered", user=user, status=answer.status, reason=answer.reason, seq=answer.audit_seq)
            return answer.model_dump(mode="json")
        return await self.call_tool(request.tool, request.args, user=user, now=now)

    async def answer(self, question: str, *, user: str | None, lang: str | None, now: datetime) -> AskAnswer:
        """The answer computed at `now` (the accepted time) and its audit entry's seq in `audit_seq`."""
        reading: ModelReading | None = None
        try:
            async with asyncio.timeout(self.config.ask.deadline_s):
                reading = await self.read(question, lang)
                planned = reading.reading if reading is not None else None
                answer = cast(AskAnswer, await self._compute(QuestionJob(question, user, lang, now, planned)))
        except TimeoutError:
            answer = refused_answer(question, user=user, lang=lang, now=now, reason="deadline", config=self.config)
        if self.audit is None:
            return answer
        engine = reading.as_entry() if reading is not None else None
        seq = await asyncio.to_thread(record_answer, self.audit, answer, question, user, engine)
        return answer.model_copy(update={"audit_seq": seq})

    async def call_tool(self, tool: str, args: dict[str, Any], *, user: str | None, now: datetime) -> dict[str, Any]:
        """One tool's result at `now`, or its refusal, as the reply `{"status", "tool", …, "audit_seq"}`."""
        try:
            async with asyncio.timeout(self.config.ask.deadline_s):
                outcome = cast(ToolOutcome, await self._compute(ToolJob(tool, args, now)))
        except TimeoutError:
            outcome = (None, "deadline", f"no result within {self.config.ask.deadline_s:g} s (ask.deadline_s)")
        result, reason, detail = outcome
        seq: int | None = None
        if self.audit is not None:
            seq = await asyncio.to_thread(record_tool_call, self.audit, user, tool, args, result, reason)
        log.info("ask_tool_called", user=user, tool=tool, reason=reason, seq=seq)
        if result is not None:
            return {"status": "answered", "tool": tool, "result": result, "audit_seq": seq}
        assert reason is not None and detail is not None  # a tool refused names why (ToolError, the deadline)
        return refusal(reason, detail, tool) | {"audit_seq": seq}

    async def read(self, question: str, lang: str | None) -> ModelReading | None:
        """The model's reading of `question`, or None: no model planner, a question the rules refuse before any
        plan, or an engine not loaded, failing or late (logged; the reference planner plans)."""
        if self.engine is None or len(question) > MAX_QUESTION_CHARS or not _loaded(self.engine):
            return None
        if classify(question, lang if lang in ("es", "en", "pt") else detect_language(question)) is not None:
            return None
        try:
            async with asyncio.timeout(self.config.ask.model_timeout_s):
                reading = await read_question(self.engine, question)
        except (EngineError, TimeoutError) as exc:
            log.warning("ask_model_planner_failed", error=str(exc) or type(exc).__name__)
            return None
        if reading.rejected is not None:
            log.info("ask_model_reading_not_followed", why=reading.rejected)
        return reading

    async def _compute(self, job: QuestionJob | ToolJob) -> AskAnswer | ToolOutcome:
        if self._pool is not None:
            return await self._pool.compute(job)
        return await asyncio.get_running_loop().run_in_executor(self._executor, compute, self.config, self.store, job)


def _loaded(engine: Engine) -> bool:
    """Whether the engine can answer now: the agent's EngineComponent says `ready`, a bare engine `loaded`; an
    engine saying neither is taken as up (a test's handle)."""
    return bool(getattr(engine, "ready", getattr(engine, "loaded", True)))


__all__ = ["Answerer", "refusal"]
