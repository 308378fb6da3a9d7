"""Answers computed in worker processes (`ask.compute = "processes"`), so questions use more than one core.

An answer is Python code (the refusals, the planner, the tools' aggregation and the writer) under one interpreter
lock: the ask's threads compute one answer at a time however many cores the box has. Each worker process opens the
store itself, read-only (SQLite's `query_only`), with the agent's config, and computes exactly what a thread would
(`compute`), so an answer is byte-equal whichever computed it. The audit entry and the reply stay in the agent.

Workers are spawned, not forked: the agent holds vLLM's and torch's threads, which a fork would copy mid-state. A
worker that dies (killed for memory) breaks the pool: the question it was computing is answered `internal_error`
and the next one gets a fresh pool.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from edge_agent.ask.pipeline import AskAnswer, answer_at, context_for
from edge_agent.ask.planner import Reading
from edge_agent.ask.tools import ToolError, run_tool
from edge_agent.config import AgentConfig
from edge_agent.store import Store

log = structlog.get_logger(component="ask")
# A tool's result (JSON), or None with the reason code and detail it was refused with.
ToolOutcome = tuple[dict[str, Any] | None, str | None, str | None]


@dataclass(frozen=True)
class QuestionJob:
    question: str
    user: str | None
    lang: str | None
    now: datetime
    reading: Reading | None


@dataclass(frozen=True)
class ToolJob:
    tool: str
    args: dict[str, Any]
    now: datetime


def compute(config: AgentConfig, store: Store, job: QuestionJob | ToolJob) -> AskAnswer | ToolOutcome:
    """One question's answer, or one tool's outcome, over `store` at the job's time: what a thread or a worker
    process computes."""
    if isinstance(job, QuestionJob):
        return answer_at(config, store, job.question, user=job.user, lang=job.lang, now=job.now, reading=job.reading)
    try:
        output = run_tool(context_for(config, store, job.now), job.tool, job.args)
    except ToolError as exc:
        return (None, exc.reason, exc.detail)
    return (output.model_dump(mode="json"), None, None)


# The worker process's own config and store, set once by `_start`.
_worker: tuple[AgentConfig, Store] | None = None


def _start(config: AgentConfig, store_path: Path) -> None:
    global _worker
    store = Store(store_path)
    store.refuse_writes()
    _worker = (config, store)
    threading.Thread(target=_exit_with_parent, name="ask-parent-watch", daemon=True).start()


def _exit_with_parent() -> None:
    """A worker outlives a killed agent blocked on its queue forever: it ends when its parent does."""
    parent = multiprocessing.parent_process()
    if parent is not None:
        parent.join()
        os._exit(0)


def _compute_here(job: QuestionJob | ToolJob) -> AskAnswer | ToolOutcome:
    assert _worker is not None, "the pool's initializer opens the store"
    return compute(*_worker, job)


def _ready() -> int:
    return multiprocessing.current_process().pid or 0


class AnswerPool:
    """`size` worker processes computing answers over the store at `store_path`, started by `start()`."""

    def __init__(self, config: AgentConfig, store_path: Path, size: int) -> None:
        self.config, self.store_path, self.size = config, store_path, size
        self._pool: ProcessPoolExecutor | None = None

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.size,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start,
            initargs=(self.config, self.store_path),
        )

    async def start(self) -> None:
        """Spawn every worker and wait until each has its store open (about 2 s on 2 cores): the first questions
        are not kept waiting for it."""
        self._pool = self._new_pool()
        loop = asyncio.get_running_loop()
        await asyncio.gather(*(loop.run_in_executor(self._pool, _ready) for _ in range(self.size)))

    async def compute(self, job: QuestionJob | ToolJob) -> AskAnswer | ToolOutcome:
        """The job computed in a worker. Raises BrokenProcessPool when a worker died under it; the pool is then
        replaced for the next job."""
        pool = self._pool = self._pool or self._new_pool()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, _compute_here, job)
        except BrokenProcessPool:
            log.error("ask_worker_died", processes=self.size)
            if self._pool is pool:
                self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


__all__ = ["AnswerPool", "QuestionJob", "ToolJob", "ToolOutcome", "compute"]
