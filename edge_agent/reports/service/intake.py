"""Admitting report requests: validation, authorisation, rate limit, the queue and its shares, and the resume of
requests an earlier run accepted.

An accepted request is written to the store (`report_queue`) before its `accepted` reply and before the request
message is acknowledged, and removed only once its final reply is in the outbox. A request the agent accepted but
did not finish (stopped, killed, power lost) is generated when the service next starts, for the same window.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections import defaultdict, deque
from typing import Any

import structlog

from edge_agent.base.types import utcnow
from edge_agent.reports.document import PendingRequest, report_id_for
from edge_agent.reports.errors import RequestError
from edge_agent.reports.request import ReportRequest, ResolvedRequest, parse_request, request_sha256, resolve
from edge_agent.reports.service.generation import Generation
from edge_agent.reports.service.job import Job
from edge_agent.reports.service.metrics import QUEUE_DEPTH, REQUESTS
from edge_agent.reports.service.replies import ReplyTarget
from edge_agent.reports.service.throttling import Throttling
from edge_agent.reports.service.topics import ANONYMOUS, reply_namespace, reply_topic_refusal
from edge_agent.store import from_us, to_us

log = structlog.get_logger(component="reports")


class RateLimiter:
    """At most `per_minute` accepted requests per client in any sliding 60 s."""

    def __init__(self, per_minute: int) -> None:
        self.per_minute = per_minute
        self._seen: dict[str, deque[float]] = defaultdict(deque)

    def allow(self, client: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        seen = self._seen[client]
        while seen and now - seen[0] >= 60.0:
            seen.popleft()
        if len(seen) >= self.per_minute:
            return False
        seen.append(now)
        return True


class Intake(Generation, Throttling):
    """Requests in, jobs out: admits each request and runs the workers that take jobs from the queue."""

    _queue: asyncio.Queue[Job]
    _in_flight: dict[tuple[str, str], Job]
    _waiting: collections.Counter[str]  # queued jobs per requester (not yet taken)
    _limiter: RateLimiter

    async def _on_request(self, message: Any, user: str | None, target: ReplyTarget, request_id: str | None) -> None:
        try:
            request = parse_request(message.payload)
            if user == "":
                raise RequestError("<topic>", f"publish to {self.request_topic} or {self.request_topic}/<user>")
            await self._admit(request, user, target)
        except RequestError as exc:
            REQUESTS.labels("invalid").inc()
            self._strike(user)
            log.info("request_invalid", request_id=request_id, field=exc.field, reason=exc.reason)
            error = {"status": "error", "request_id": request_id, "field": exc.field, "reason": exc.reason}
            await self._reply([target], error)

    async def _admit(self, request: ReportRequest, user: str | None, target: ReplyTarget) -> None:
        rules = self.config.reports
        request_id = request.request_id
        if rules.requesters and user not in rules.requesters:
            reason = f"user {user!r} may not request reports" if user else "requests need an authenticated user"
            await self._refuse(target, request_id, "refused", reason)
            return
        digest = request_sha256(request)
        stored = await asyncio.to_thread(self.repo.by_request_id, request_id, user)
        job = self._in_flight.get((user or "", request_id))
        known = stored.request_sha256 if stored is not None else job.request_sha256 if job is not None else None
        if known is not None and known != digest:
            raise RequestError("request_id", "already used for a different request")
        # Repeats and joins count too: each makes the agent publish (a whole report, for a repeat).
        if not self._limiter.allow(user or ANONYMOUS):
            reason = f"rate limit: {rules.rate_limit_per_min} requests per minute per client"
            await self._refuse(target, request_id, "rate_limited", reason)
            return
        if stored is not None:
            REQUESTS.labels("repeat").inc()
            await self._reply_done([target], stored.document)
        elif job is not None:
            await self._join(job, request, target)
        else:
            await self._accept(request, user, target, digest)

    async def _join(self, job: Job, request: ReportRequest, target: ReplyTarget) -> None:
        """A repeat of a request still pending: its replies go to this target too (at most max_reply_targets)."""
        limit = self.config.reports.max_reply_targets
        if target not in job.targets:
            if len(job.targets) >= limit:
                reason = f"request {request.request_id} already has {limit} reply targets (reports.max_reply_targets)"
                await self._refuse(target, request.request_id, "refused", reason)
                return
            job.targets.append(target)
            await asyncio.to_thread(self.repo.queue_put, job.pending())
        REQUESTS.labels("joined").inc()
        if request.progress:
            accepted = {"status": "accepted", "request_id": request.request_id, "queue_position": self._queue.qsize()}
            await self._reply([target], accepted)

    async def _accept(self, request: ReportRequest, user: str | None, target: ReplyTarget, digest: str) -> None:
        rules = self.config.reports
        accepted_us = to_us(utcnow())
        job = Job(request, self._resolve(request, accepted_us), digest, user, accepted_us, [target])
        # Only this message loop adds to the queue and workers only take from it, so a queue found not full here
        # still has room after the awaits below. The job goes in last, so `accepted` is in the outbox before any
        # `generating` a worker writes.
        if self._queue.qsize() >= rules.queue_max:
            reason = f"queue full: {rules.queue_max} requests waiting"
            await self._refuse(target, request.request_id, "queue_full", reason)
            return
        requester = user or ANONYMOUS
        if self._waiting[requester] >= rules.requester_share:
            reason = f"queue share full: {rules.requester_share} requests from {requester} waiting"
            await self._refuse(target, request.request_id, "queue_share_full", reason)
            return
        if self.audit is not None:
            entry = await asyncio.to_thread(
                self.audit.append,
                "report.requested",
                f"operator:{user}" if user else "reports",
                {
                    "request_id": request.request_id,
                    "requested_by": user,
                    "report_id": report_id_for(self.config.site.id, request.request_id, user),
                    "request_sha256": digest,
                    "request": job.resolved.as_json(),
                    "reply_topic": target.topic,
                },
            )
            job.audit_requested = entry.seq
        # Durable before `accepted` goes out and before the request message is acknowledged.
        await asyncio.to_thread(self.repo.queue_put, job.pending())
        self._in_flight[job.key] = job
        REQUESTS.labels("accepted").inc()
        position = self._queue.qsize() + 1
        log.info("request_accepted", request_id=request.request_id, user=user, queue_position=position)
        if request.progress:
            accepted = {"status": "accepted", "request_id": request.request_id, "queue_position": position}
            await self._reply([target], accepted)
        self._enqueue(job)
        QUEUE_DEPTH.set(self._queue.qsize())

    def _resolve(self, request: ReportRequest, accepted_us: int) -> ResolvedRequest:
        rules = self.config.reports
        return resolve(
            request,
            shifts=rules.shifts,
            tz_name=self.config.site.timezone,
            # A str whose config pattern ^(es|en|pt)$ admits exactly the Language literals.
            default_language=rules.default_language,  # type: ignore[arg-type]
            now=from_us(accepted_us),
            review_days=rules.kpi.alarm_review_days,
        )

    async def _resume(self) -> None:
        """Queue the requests an earlier run accepted but did not answer, oldest first."""
        pending = await asyncio.to_thread(self.repo.queue_all)
        for entry in pending:
            try:
                await self._resume_one(entry)
            except Exception:  # one unreadable entry must not keep the service (and every other entry) down
                log.exception("request_resume_failed", request_id=entry.request_id, user=entry.requested_by)
        if pending:
            log.info("requests_resumed", count=len(pending), request_ids=[p.request_id for p in pending])
        QUEUE_DEPTH.set(self._queue.qsize())

    async def _resume_one(self, entry: PendingRequest) -> None:
        request = ReportRequest.model_validate(entry.request)
        # Reply topics accepted under an older, laxer rule are dropped: replies only go where they may now.
        namespace = reply_namespace(self.config, entry.requested_by)
        targets = [
            t
            for t in map(ReplyTarget.from_json, entry.targets)
            if reply_topic_refusal(t.topic, namespace, self._reserved) is None
        ]
        try:
            resolved = self._resolve(request, entry.accepted_time_us)
        except RequestError as exc:  # the site's shifts or timezone changed since it was accepted
            await self._reply_failed(targets, request.request_id, f"cannot resume: {exc.field}: {exc.reason}")
            await asyncio.to_thread(self.repo.queue_remove, request.request_id, entry.requested_by)
            return
        job = Job(
            request,
            resolved,
            entry.request_sha256,
            entry.requested_by,
            entry.accepted_time_us,
            targets,
            entry.audit_requested,
        )
        self._in_flight[job.key] = job
        self._enqueue(job)
        REQUESTS.labels("resumed").inc()

    def _enqueue(self, job: Job) -> None:
        self._waiting[job.requested_by or ANONYMOUS] += 1
        self._queue.put_nowait(job)

    def _taken(self, job: Job) -> None:
        requester = job.requested_by or ANONYMOUS
        self._waiting[requester] -= 1
        if self._waiting[requester] <= 0:
            del self._waiting[requester]  # one key per requester with queued work, not per requester ever seen

    async def _worker(self) -> None:
        while True:
            job = await self._queue.get()
            self._taken(job)
            QUEUE_DEPTH.set(self._queue.qsize())
            structlog.contextvars.bind_contextvars(request_id=job.request.request_id)
            try:
                await self._answer(job)
            except Exception:  # the final reply or the queue update failed: it stays pending for the next start
                log.exception("report_answer_failed", user=job.requested_by)
            finally:
                self._in_flight.pop(job.key, None)
                structlog.contextvars.unbind_contextvars("request_id")
                self._queue.task_done()
