"""ReportService: the Component that answers report requests and sign-offs over MQTT.

Requests arrive on `<request_topic>/#` (default `edge/<site>/reports/request/#`); the level after the request topic
is the authenticated user (broker ACL `pattern write edge/+/reports/request/%u`), absent when the broker does not
enforce it. Replies go to the MQTT 5 Response Topic with its Correlation Data, or to the payload's `reply_to` with
its `correlation_id` (MQTT 3.1.1). Every reply is written to the store outbox and published by the OutboxPublisher
(QoS 1), so a reply survives a broker outage or an agent restart.

Replies, in order: `accepted` (queue position) → `generating` → `done` (the report) or `failed` (reason); or one of
`error` (invalid request, naming the field) and `refused` (queue full, rate limit, not authorised). A request with
`"progress": false` gets only the final reply (one-shot clients such as mosquitto_rr read one message). Replies go
only under the requester's own reply namespace (`topics.reply_topic_refusal`); a request naming any other reply
topic is dropped unanswered.

Isolation: nothing one message holds stops the service. Whatever handling one request or sign-off raises is
answered (`internal_error: <type>`) where a reply topic is known, counted, logged with its traceback and
acknowledged, and the next message is read; a generation that raises anything answers `failed`.

An accepted request is written to the store (`report_queue`) before its `accepted` reply and before the request
message is acknowledged, and removed only once its final reply is in the outbox. A request the agent accepted but
did not finish (stopped, killed, power lost) is generated when the service next starts, for the same window.
"""

from __future__ import annotations

import asyncio
import collections
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from prometheus_client import Counter, Gauge, Histogram

from edge_agent.base.canonical import sha256_hex
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.llm.types import Engine, EngineError
from edge_agent.reports.document import (
    UNSIGNED_REFUSAL,
    PendingRequest,
    ReportRepository,
    SignoffPolicy,
    authorise,
    check_signed,
    decide,
    hold_approved,
    mqtt_signoff_refusal,
    new_document,
    parse_signoff,
    record_refusal,
    report_id_for,
)
from edge_agent.reports.errors import ReportError, RequestError, SignoffError, WindowTooLarge
from edge_agent.reports.narrative import build_draft, report_records
from edge_agent.reports.request import (
    ReportRequest,
    ResolvedRequest,
    iso,
    parse_request,
    reply_fields,
    request_sha256,
    resolve,
)
from edge_agent.reports.service.throttle import Throttle, Verdict
from edge_agent.reports.service.topics import (
    ANONYMOUS,
    reply_namespace,
    reply_topic_refusal,
    request_topic,
    reserved_filters,
    signoff_topic,
    topic_user,
)
from edge_agent.reports.service.transport import ReportClient, ReportClientFactory
from edge_agent.store import Store, from_us, to_us

log = structlog.get_logger(component="reports")

REQUESTS = Counter("edge_agent_report_requests_total", "Report requests by outcome", ["outcome"])
GENERATION_SECONDS = Histogram(
    "edge_agent_report_generation_seconds", "Request dequeued → report stored", buckets=(1, 2, 5, 10, 20, 40, 80, 160)
)
BROKER_CONNECTED = Gauge(
    "edge_agent_reports_broker_connected", "1 while the report service's own broker connection is up, else 0"
)
QUEUE_DEPTH = Gauge("edge_agent_report_queue_depth", "Report requests waiting")
NARRATIVES = Counter("edge_agent_report_narratives_total", "Generated reports by narrative status", ["status"])
SIGNOFFS = Counter(
    "edge_agent_report_signoffs_total", "Sign-off messages by outcome (a refusal by its code)", ["outcome"]
)
THROTTLED = Counter(
    "edge_agent_report_throttled_total",
    "Requests and sign-offs dropped unread from a user over reports.throttle_invalid_max",
    ["kind"],
)
THROTTLE_EPISODES = Counter(
    "edge_agent_report_throttle_episodes_total", "Windows in which a user was throttled (one audit entry each)"
)


@dataclass(frozen=True)
class ReplyTarget:
    topic: str
    correlation: bytes | None
    # MQTT 3.1.1 requesters cannot read the Correlation Data property: their `correlation_id` is echoed in the payload.
    correlation_id: str | None = None

    def as_json(self) -> dict[str, str | None]:
        correlation = self.correlation.hex() if self.correlation is not None else None
        return {"topic": self.topic, "correlation": correlation, "correlation_id": self.correlation_id}

    @classmethod
    def from_json(cls, data: dict[str, str | None]) -> ReplyTarget:
        correlation = data["correlation"]
        return cls(
            str(data["topic"]), bytes.fromhex(correlation) if correlation is not None else None, data["correlation_id"]
        )


@dataclass
class Job:
    request: ReportRequest
    resolved: ResolvedRequest
    request_sha256: str
    requested_by: str | None
    accepted_time_us: int
    targets: list[ReplyTarget]
    audit_requested: int | None = None
    enqueued: float = field(default_factory=time.monotonic)

    @property
    def key(self) -> tuple[str, str]:
        """(requester, request_id): request ids are scoped per requester ('' when the broker names no user)."""
        return self.requested_by or "", self.request.request_id

    @property
    def requested_at(self) -> str:
        return iso(from_us(self.accepted_time_us))

    def pending(self) -> PendingRequest:
        return PendingRequest(
            request=self.request.model_dump(mode="json"),
            request_sha256=self.request_sha256,
            requested_by=self.requested_by,
            accepted_time_us=self.accepted_time_us,
            targets=[t.as_json() for t in self.targets],
            audit_requested=self.audit_requested,
        )


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


class ReportService:
    """A `Component`: subscribe, validate, queue, generate one (by default) at a time, reply via the outbox."""

    name = "reports"

    def __init__(
        self,
        config: AgentConfig,
        store: Store,
        engine: Engine,
        audit: Any | None,
        repository: ReportRepository | None = None,
        client_id: str | None = None,
        outbox_wake: Callable[[], None] | None = None,
        *,
        mqtt_client: ReportClientFactory,
    ) -> None:
        self.config = config
        self.store = store
        self.engine = engine
        self.audit = audit
        self.repo = repository or ReportRepository(store.path, config.paths.state_dir / "reports")
        self.client_id = client_id or f"{config.mqtt.client_id}-reports"
        self.request_topic = request_topic(config)
        self.signoff_topic = signoff_topic(config)
        self._reserved = reserved_filters(config)
        # Set when MQTT sign-off cannot be trusted (anonymous broker connection): every sign-off is refused with it.
        self.signoff_refusal = mqtt_signoff_refusal(config.mqtt)
        self.signoff_policy = SignoffPolicy.from_config(config.reports)
        # Unbounded: `queue_max` is enforced when admitting, so requests resumed at start-up always fit.
        self._queue: asyncio.Queue[Job] = asyncio.Queue()
        self._in_flight: dict[tuple[str, str], Job] = {}
        self._waiting: collections.Counter[str] = collections.Counter()  # queued jobs per requester (not yet taken)
        self._limiter = RateLimiter(config.reports.rate_limit_per_min)
        self.throttle = Throttle(config.reports.throttle_invalid_max, config.reports.throttle_window_s)
        # OutboxPublisher.wake: publish a reply now rather than at the publisher's next poll.
        self._outbox_wake = outbox_wake
        # Given by the composition root (edge_agent.connectors.mqtt.MqttClient): reports do not import the connectors.
        self._mqtt_client = mqtt_client
        # Set while the service's own broker connection is down: /readyz names it (requests wait at the broker).
        self.not_ready_reason: str | None = None

    # --- component ---------------------------------------------------------------------------------------------

    async def run(self, ready: asyncio.Event) -> None:
        self.not_ready_reason = None
        held = await asyncio.to_thread(hold_approved, self.repo)
        if held:
            log.info("approved_reports_held", reports=held)
        if self.signoff_refusal is not None and self.config.reports.allow_unsigned_signoff:
            log.warning("mqtt_signoff_disabled", reason=self.signoff_refusal)
        async with self._mqtt_client(self.config.mqtt, client_id=self.client_id) as client:
            await client.wait_connected(timeout=self.config.daemon.ready_timeout_s)
            await client.subscribe(f"{self.request_topic}/#", qos=1)
            await client.subscribe(f"{self.signoff_topic}/#", qos=1)
            await self._resume()
            async with asyncio.TaskGroup() as group:
                for i in range(self.config.reports.concurrency):
                    group.create_task(self._worker(), name=f"reports-worker-{i}")
                group.create_task(self._watch_connection(client), name="reports-connection")
                ready.set()
                log.info("reports_ready", request_topic=self.request_topic, signoff_topic=self.signoff_topic)
                async for message in client.messages():
                    await self.handle(message)
                    await message.ack()

    async def _watch_connection(self, client: ReportClient) -> None:
        """Mirror the broker connection into `not_ready_reason` and edge_agent_reports_broker_connected."""
        where = f"{self.config.mqtt.host}:{self.config.mqtt.port}"
        try:
            while True:
                BROKER_CONNECTED.set(1)
                self.not_ready_reason = None
                await client.wait_disconnected()
                BROKER_CONNECTED.set(0)
                self.not_ready_reason = f"report service lost its broker connection to {where}; reconnecting"
                await client.wait_connected()
        finally:
            BROKER_CONNECTED.set(0)

    async def handle(self, message: Any) -> None:
        """Answer one request or sign-off message. The isolation barrier: never raises (but for cancellation)."""
        signoff = message.topic == self.signoff_topic or message.topic.startswith(self.signoff_topic + "/")
        target: ReplyTarget | None = None
        request_id: str | None = None
        try:
            if message.retain:
                # A retained request would be re-run on every resubscribe: never act on one.
                log.warning("retained_request_ignored", topic=message.topic)
                return
            user = topic_user(message.topic, self.signoff_topic if signoff else self.request_topic)
            if await self._throttled(user, "signoff" if signoff else "request"):
                return
            request_id, reply_to, correlation_id = reply_fields(message.payload)
            topic = message.response_topic or reply_to
            if topic:
                refusal = reply_topic_refusal(topic, reply_namespace(self.config, user), self._reserved)
                if refusal is not None:
                    REQUESTS.labels("unanswerable").inc()
                    self._strike(user)
                    log.warning(
                        "reply_topic_refused",
                        topic=message.topic,
                        reply_topic=topic[:200],
                        request_id=request_id,
                        reason=refusal,
                    )
                    return
                correlation = message.correlation_data
                if correlation is None and correlation_id is not None:
                    correlation = correlation_id.encode("utf-8")
                target = ReplyTarget(topic, correlation, correlation_id)
            if signoff:
                # A sign-off without a reply topic is still decided: the decision matters, the reply is a courtesy.
                await self._on_signoff(message, user, [target] if target is not None else [])
            elif target is None:
                REQUESTS.labels("unanswerable").inc()
                self._strike(user)
                log.warning("request_without_reply_topic", topic=message.topic, request_id=request_id)
            else:
                await self._on_request(message, user, target, request_id)
        except Exception as exc:
            REQUESTS.labels("internal_error").inc()
            log.exception("message_handling_failed", topic=message.topic, request_id=request_id)
            if target is not None:
                reason = f"internal_error: {type(exc).__name__}"
                error = {"status": "error", "reason": reason} | ({} if signoff else {"request_id": request_id})
                try:
                    await self._reply([target], error)
                except Exception:
                    log.exception("error_reply_failed", topic=message.topic, request_id=request_id)

    # --- throttle ---------------------------------------------------------------------------------------------

    def _strike(self, user: str | None) -> None:
        self.throttle.strike(user or ANONYMOUS)

    async def _throttled(self, user: str | None, kind: str) -> bool:
        """True when `user` is over its invalid-message limit: the message is dropped unread, counted, and the first
        such drop of the user's window is logged and audited (`report.requester_throttled`)."""
        who = user or ANONYMOUS
        verdict = self.throttle.check(who)
        if verdict is Verdict.HANDLE:
            return False
        THROTTLED.labels(kind).inc()
        if verdict is Verdict.FIRST_DROP:
            THROTTLE_EPISODES.inc()
            rules = self.config.reports
            until_s = round(self.throttle.until(who) or 0.0, 1)
            log.warning(
                "requester_throttled",
                user=who,
                limit=rules.throttle_invalid_max,
                window_s=rules.throttle_window_s,
                dropped_for_s=until_s,
            )
            if self.audit is not None:
                await asyncio.to_thread(
                    self.audit.append,
                    "report.requester_throttled",
                    "reports",
                    {
                        "broker_user": user,
                        "limit": rules.throttle_invalid_max,
                        "window_s": rules.throttle_window_s,
                        "dropped_for_s": until_s,
                    },
                )
        return True

    # --- replies ----------------------------------------------------------------------------------------------

    async def _reply(self, targets: list[ReplyTarget], payload: dict[str, Any]) -> None:
        for target in targets:
            echo = {"correlation_id": target.correlation_id} if target.correlation_id is not None else {}
            data = json.dumps(payload | echo, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            await self._reply_bytes(target, data.encode("utf-8"))

    async def _reply_bytes(self, target: ReplyTarget, data: bytes) -> None:
        properties = {"content_type": "application/json"}
        if target.correlation is not None:
            properties["correlation_data"] = target.correlation.hex()
        await asyncio.to_thread(self.store.outbox_put, target.topic, data, 1, False, properties)
        if self._outbox_wake is not None:
            self._outbox_wake()

    async def _reply_done(self, targets: list[ReplyTarget], document: dict[str, Any]) -> None:
        head = {"status": "done", "request_id": document["request_id"], "report_id": document["report_id"]}
        await self._reply(targets, head | {"report": document})

    async def _refuse(self, target: ReplyTarget, request_id: str, outcome: str, reason: str) -> None:
        REQUESTS.labels(outcome).inc()
        log.info("request_refused", request_id=request_id, outcome=outcome, reason=reason)
        await self._reply([target], {"status": "refused", "request_id": request_id, "reason": reason})

    # --- requests ---------------------------------------------------------------------------------------------

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

    async def _answer(self, job: Job) -> None:
        """Reply `done` with the report (generated now, or stored by a run that stopped before this point) or
        `failed`; then the request is no longer pending. Cancelled part-way, it stays pending for the next start."""
        request_id = job.request.request_id
        try:
            stored = await asyncio.to_thread(self.repo.by_request_id, request_id, job.requested_by)
            if stored is not None:
                await self._reply_done(job.targets, stored.document)
            else:
                await self._generate(job)
        except (ReportError, EngineError, OSError) as exc:
            await self._reply_failed(job.targets, request_id, str(exc))
        except Exception as exc:
            log.exception("report_generation_failed", user=job.requested_by)
            await self._reply_failed(job.targets, request_id, f"internal_error: {type(exc).__name__}")
        await asyncio.to_thread(self.repo.queue_remove, request_id, job.requested_by)

    async def _reply_failed(self, targets: list[ReplyTarget], request_id: str, reason: str) -> None:
        REQUESTS.labels("failed").inc()
        log.error("report_failed", request_id=request_id, error=reason)
        await self._reply(targets, {"status": "failed", "request_id": request_id, "reason": reason})

    async def _check_window(self, job: Job) -> None:
        """Refuse a window too large to load on this box (WindowTooLarge), measured off the event loop."""
        rules, window = self.config.reports, job.resolved.window
        rows, size = await asyncio.to_thread(self.repo.window_size, window.start, window.end)
        if rows > rules.max_window_rows or size > rules.max_window_bytes:
            raise WindowTooLarge(rows, size, rules.max_window_rows, rules.max_window_bytes)

    async def _generate(self, job: Job) -> None:
        started = time.monotonic()
        request_id = job.request.request_id
        await self._check_window(job)
        if job.request.progress:
            await self._reply(job.targets, {"status": "generating", "request_id": request_id})
        window = job.resolved.window
        records = await asyncio.to_thread(report_records, self.store, window)
        # build_draft computes the facts and the prompt in a thread: a large window never stalls the event loop.
        draft = await build_draft(
            job.resolved,
            records,
            self.engine,
            site_id=self.config.site.id,
            config=self.config.reports,
            seed=self.config.llm.seed,
        )
        report_id = report_id_for(self.config.site.id, request_id, job.requested_by)
        # Built before its entry, so the entry logs the renderings' hashes (audit bundles bind them to the log).
        document = new_document(
            report_id=report_id,
            request_id=request_id,
            requested_by=job.requested_by,
            requested_at=job.requested_at,
            formats=list(job.request.formats),
            draft=draft,
            audit_requested=job.audit_requested,
            audit_generated=None,
        )
        if self.audit is not None:
            entry = await asyncio.to_thread(
                self.audit.append,
                "report.generated",
                "reports",
                {
                    "report_id": report_id,
                    "request_id": request_id,
                    "body_sha256": draft.body_sha256,
                    "narrative_status": draft.narrative_status,
                    **draft.provenance.model_dump(mode="json"),
                    "renderings_sha256": document["renderings_sha256"],
                },
            )
            document["audit"]["generated"] = entry.seq
        await asyncio.to_thread(self.repo.insert, document, job.request_sha256)
        NARRATIVES.labels(draft.narrative_status).inc()
        GENERATION_SECONDS.observe(time.monotonic() - started)
        log.info("report_generated", report_id=report_id, narrative_status=draft.narrative_status)
        await self._reply_done(job.targets, document)

    # --- sign-off ---------------------------------------------------------------------------------------------

    async def _on_signoff(self, message: Any, user: str | None, targets: list[ReplyTarget]) -> None:
        rules = self.config.reports
        report_id: str | None = None
        claimed: str | None = None
        try:
            request = parse_signoff(message.payload)
            report_id, claimed = request.report_id, request.by
            approval = None
            if request.approval is not None:
                approval = check_signed(
                    request.approval,
                    self.signoff_policy,
                    now=utcnow(),
                    report_id=request.report_id,
                    decision=request.decision,
                    comment=request.comment,
                    claimed=request.by,
                )
                by = approval.statement.by
            elif not rules.allow_unsigned_signoff:
                raise SignoffError(UNSIGNED_REFUSAL, "unsigned")
            elif self.signoff_refusal is not None:
                raise SignoffError(self.signoff_refusal, "anonymous_broker")
            else:
                by = authorise(user or None, request.by, rules.approvers)
            document = await asyncio.to_thread(
                decide,
                self.repo,
                self.audit,
                report_id=request.report_id,
                decision=request.decision,
                by=by,
                via="mqtt",
                comment=request.comment,
                four_eyes=rules.four_eyes,
                approval=approval,
                approval_json=request.approval,
            )
        except RequestError as exc:
            await self._refuse_signoff(SignoffError(f"{exc.field}: {exc.reason}", "invalid"), message, user, None, None)
            await self._reply(targets, {"status": "error", "field": exc.field, "reason": exc.reason})
            return
        except SignoffError as exc:
            await self._refuse_signoff(exc, message, user, report_id, claimed)
            await self._reply(targets, {"status": "refused", "reason": str(exc)})
            return
        SIGNOFFS.labels(document["status"]).inc()
        log.info("report_signed_off", report_id=document["report_id"], status=document["status"], by=by)
        await self._reply(
            targets,
            {
                "status": document["status"],
                "report_id": document["report_id"],
                "by": by,
                "audit_seq": document["audit"]["signoff"],
            },
        )

    async def _refuse_signoff(
        self, error: SignoffError, message: Any, user: str | None, report_id: str | None, claimed: str | None
    ) -> None:
        """Count, log and audit (`report.signoff_refused`) one refused sign-off attempt; a strike for the throttle."""
        SIGNOFFS.labels(f"refused_{error.code}").inc()
        self._strike(user)
        log.warning("signoff_refused", user=user, code=error.code, error=str(error))
        await asyncio.to_thread(
            record_refusal,
            self.audit,
            error,
            via="mqtt",
            user=user,
            report_id=report_id,
            by=claimed,
            payload_sha256=sha256_hex(message.payload),
        )
