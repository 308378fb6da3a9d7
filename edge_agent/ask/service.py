"""AskService: the Component that answers questions and tool calls over MQTT (docs/ask.md).

Requests arrive on `edge/<site>/ask/request/<user>` (the level is the broker user: ACL `pattern write
edge/+/ask/request/%u`) with an MQTT 5 Response Topic and Correlation Data; the answer goes to that topic, only under
the user's own namespace `edge/<site>/ask/reply/<user>/...` (edge_agent.ask.topics), through the store outbox (QoS 1,
so it survives a broker outage). A request without a Response Topic, or naming one outside the namespace, is counted
(`unanswerable`) and dropped.

Admission, in order: per-user throttle (`ask.throttle` per 60 s: `throttled`), the payload (a malformed one is
refused `bad_request` naming the field and counted `invalid`, like a quarantined input), the queue (`ask.queue_max`:
`queue_full`; `ask.per_user_max` per user: `queue_share_full`). `ask.workers` workers each take the oldest request
whose user has none in progress (edge_agent.ask.work_queue: a user's answers come in the order asked) and has it
answered as every door answers one (edge_agent.ask.answerer): in a process of the worker's own (`ask.compute`,
edge_agent.ask.processes) or the ask's own threads, one per worker, at the time the request was accepted (so it
replays byte for byte, alone or beside others); an answer not ready within `ask.deadline_s` of being taken is
refused `deadline`. Every question gets one `ask.answered` audit entry and every tool call one `ask.tool_called`
(edge_agent.ask.trail) before its reply is written.

Isolation: nothing one message holds stops the service. Whatever handling one message raises is answered
`internal_error` where a reply topic is known, counted, logged with its traceback, and the next message is read.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog

from edge_agent.ask.answerer import Answerer, refusal
from edge_agent.ask.metrics import ANSWER_SECONDS, BROKER_CONNECTED, QUEUE_DEPTH, REQUESTS
from edge_agent.ask.processes import AnswerPool
from edge_agent.ask.request import QuestionRequest, ToolRequest, parse_ask
from edge_agent.ask.throttle import UserThrottle
from edge_agent.ask.topics import (
    ANONYMOUS,
    reply_namespace,
    reply_topic_refusal,
    request_topic,
    reserved_filters,
)
from edge_agent.ask.work_queue import AskQueue, Taken
from edge_agent.audit import AuditSink
from edge_agent.base.reply_topic import topic_user
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.daemon.mqtt_transport import ServiceClient, ServiceClientFactory, ServiceMessage
from edge_agent.llm.types import Engine
from edge_agent.reports.errors import RequestError
from edge_agent.store import Store

log = structlog.get_logger(component="ask")


@dataclass(frozen=True)
class ReplyTarget:
    topic: str
    correlation: bytes | None


@dataclass(frozen=True)
class Job:
    request: QuestionRequest | ToolRequest
    user: str | None
    target: ReplyTarget
    accepted_at: datetime


class AskService:
    """A `Component`: subscribe, admit, queue, answer `ask.workers` at a time, reply via the outbox."""

    name = "ask"

    def __init__(
        self,
        config: AgentConfig,
        store: Store,
        audit: AuditSink | None,
        client_id: str | None = None,
        outbox_wake: Callable[[], None] | None = None,
        *,
        mqtt_client: ServiceClientFactory,
        engine: Engine | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.audit = audit
        self.engine = engine  # reads questions when ask.planner = "model" (edge_agent.ask.answerer)
        self.client_id = client_id or f"{config.mqtt.client_id}-ask"
        self.request_topic = request_topic(config)
        self._reserved = reserved_filters(config)
        self._queue: AskQueue[Job] = AskQueue(config.ask.queue_max, config.ask.per_user_max)
        self.throttle = UserThrottle(config.ask.throttle)
        self._outbox_wake = outbox_wake
        self._mqtt_client = mqtt_client
        self.not_ready_reason: str | None = None

    async def run(self, ready: asyncio.Event) -> None:
        self.not_ready_reason = None
        async with self._mqtt_client(self.config.mqtt, client_id=self.client_id) as client:
            await client.wait_connected(timeout=self.config.daemon.ready_timeout_s)
            await client.subscribe(f"{self.request_topic}/#", qos=1)
            # The ask's own threads or processes: a computation past its deadline keeps one until it ends (it is not
            # stopped), never one of the threads the store's writers and the other components share.
            rules = self.config.ask
            pool = AnswerPool(self.config, self.store.path, rules.workers) if rules.compute == "processes" else None
            executor = ThreadPoolExecutor(rules.workers, thread_name_prefix="ask") if pool is None else None
            try:
                if pool is not None:
                    await pool.start()
                answerer = Answerer(self.config, self.store, self.audit, self.engine, executor, pool)
                async with asyncio.TaskGroup() as group:
                    for i in range(self.config.ask.workers):
                        group.create_task(self._worker(answerer), name=f"ask-worker-{i}")
                    group.create_task(self._watch_connection(client), name="ask-connection")
                    ready.set()
                    log.info("ask_ready", request_topic=self.request_topic, workers=self.config.ask.workers)
                    async for message in client.messages():
                        await self.handle(message)
                        await message.ack()
            finally:
                if executor is not None:
                    executor.shutdown(wait=False, cancel_futures=True)
                if pool is not None:
                    pool.shutdown()

    async def _watch_connection(self, client: ServiceClient) -> None:
        where = f"{self.config.mqtt.host}:{self.config.mqtt.port}"
        try:
            while True:
                BROKER_CONNECTED.set(1)
                self.not_ready_reason = None
                await client.wait_disconnected()
                BROKER_CONNECTED.set(0)
                self.not_ready_reason = f"ask service lost its broker connection to {where}; reconnecting"
                await client.wait_connected()
        finally:
            BROKER_CONNECTED.set(0)

    # --- admission ---------------------------------------------------------------------------------------------

    async def handle(self, message: ServiceMessage) -> None:
        """Admit or refuse one message. The isolation barrier: never raises (but for cancellation)."""
        target: ReplyTarget | None = None
        try:
            if message.retain:  # a retained question would be asked again on every resubscribe
                log.warning("retained_request_ignored", topic=message.topic)
                return
            user = topic_user(message.topic, self.request_topic)
            target = self._target(message, user)
            if target is None:
                REQUESTS.labels("unanswerable").inc()
                return
            if user == "":
                await self._refuse(target, "bad_request", f"publish to {self.request_topic}/<user>", "invalid")
                return
            if not self.throttle.allow(user or ANONYMOUS):
                detail = f"more than {self.config.ask.throttle} requests in 60 s (ask.throttle)"
                await self._refuse(target, "throttled", detail, "throttled")
                return
            try:
                request = parse_ask(message.payload)
            except RequestError as exc:
                log.info("ask_invalid", user=user, field=exc.field, reason=exc.reason)
                await self._refuse(target, "bad_request", f"{exc.field}: {exc.reason}", "invalid")
                return
            await self._admit(Job(request, user, target, utcnow()))
        except Exception as exc:
            REQUESTS.labels("internal_error").inc()
            log.exception("ask_handling_failed", topic=message.topic)
            if target is not None:
                try:
                    await self._reply(target, _internal_error(exc))
                except Exception:
                    log.exception("ask_error_reply_failed", topic=message.topic)

    def _target(self, message: ServiceMessage, user: str | None) -> ReplyTarget | None:
        topic = message.response_topic
        if not topic:
            log.warning("ask_without_response_topic", topic=message.topic)
            return None
        refusal = reply_topic_refusal(topic, reply_namespace(self.config, user or None), self._reserved)
        if refusal is not None:
            log.warning("reply_topic_refused", topic=message.topic, reply_topic=topic[:200], reason=refusal)
            return None
        return ReplyTarget(topic, message.correlation_data)

    async def _admit(self, job: Job) -> None:
        rules = self.config.ask
        who = job.user or ANONYMOUS
        refusal = self._queue.admit(who, job)
        if refusal == "queue_full":
            await self._refuse(job.target, refusal, f"{rules.queue_max} requests waiting (ask.queue_max)")
        elif refusal == "queue_share_full":
            detail = f"{rules.per_user_max} requests from {who} waiting (ask.per_user_max)"
            await self._refuse(job.target, refusal, detail)
        QUEUE_DEPTH.set(len(self._queue))

    # --- answering ---------------------------------------------------------------------------------------------

    async def _worker(self, answerer: Answerer) -> None:
        while True:
            taken: Taken[Job] = await self._queue.take()
            job = taken.job
            QUEUE_DEPTH.set(len(self._queue))
            try:
                await self._answer(job, answerer)
            except Exception as exc:  # the audit entry or the reply failed: this request is lost, not the service
                REQUESTS.labels("internal_error").inc()
                log.exception("ask_answer_failed", user=job.user)
                try:
                    await self._reply(job.target, _internal_error(exc))
                except Exception:
                    log.exception("ask_error_reply_failed", user=job.user)
            finally:
                self._queue.done(taken)

    async def _answer(self, job: Job, answerer: Answerer) -> None:
        started = time.monotonic()
        reply = await answerer.reply(job.request, user=job.user, now=job.accepted_at)
        ANSWER_SECONDS.observe(time.monotonic() - started)
        REQUESTS.labels("deadline" if reply.get("reason") == "deadline" else reply["status"]).inc()
        await self._reply(job.target, reply)

    # --- replies -----------------------------------------------------------------------------------------------

    async def _refuse(self, target: ReplyTarget, reason: str, detail: str, outcome: str | None = None) -> None:
        REQUESTS.labels(outcome or reason).inc()
        log.info("ask_refused", reason=reason, detail=detail)
        await self._reply(target, refusal(reason, detail))

    async def _reply(self, target: ReplyTarget, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        properties = {"content_type": "application/json"}
        if target.correlation is not None:
            properties["correlation_data"] = target.correlation.hex()
        await asyncio.to_thread(self.store.outbox_put, target.topic, data, 1, False, properties)
        if self._outbox_wake is not None:
            self._outbox_wake()


def _internal_error(exc: Exception) -> dict[str, Any]:
    return refusal("internal_error", type(exc).__name__)
