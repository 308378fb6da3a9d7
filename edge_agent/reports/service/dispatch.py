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

The service's parts are mixins, one job each: `intake` (admission, the queue, resume), `generation`, `signoffs`,
`replies` and `throttling`; this module holds the run loop and routes each message to its part.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Any

import structlog

from edge_agent.base.reply_topic import topic_user
from edge_agent.config import AgentConfig
from edge_agent.daemon.mqtt_transport import ServiceClient, ServiceClientFactory
from edge_agent.llm.types import Engine
from edge_agent.reports.document import ReportRepository, SignoffPolicy, hold_approved, mqtt_signoff_refusal
from edge_agent.reports.errors import SignoffError
from edge_agent.reports.request import reply_fields
from edge_agent.reports.service.intake import Intake, RateLimiter
from edge_agent.reports.service.job import Job
from edge_agent.reports.service.metrics import BROKER_CONNECTED, REQUESTS
from edge_agent.reports.service.replies import ReplyTarget
from edge_agent.reports.service.signoffs import Signoffs
from edge_agent.reports.service.throttle import Throttle
from edge_agent.reports.service.topics import (
    reply_namespace,
    reply_topic_refusal,
    request_topic,
    reserved_filters,
    signoff_topic,
)
from edge_agent.store import Store

log = structlog.get_logger(component="reports")


class ReportService(Intake, Signoffs):
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
        mqtt_client: ServiceClientFactory,
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
        self.signoff_policy = SignoffPolicy.from_config(config)
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

    async def _watch_connection(self, client: ServiceClient) -> None:
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
            user = topic_user(message.topic, self.signoff_topic if signoff else self.request_topic)
            if message.retain:
                # A retained request would be re-run on every resubscribe: never act on one.
                log.warning("retained_request_ignored", topic=message.topic)
                if signoff and not await self._throttled(user, "signoff", message.payload):
                    reason = "retained sign-off: the broker replays it on every subscribe, so it is never acted on"
                    retained = SignoffError(reason, "retained")
                    await self._refuse_signoff(retained, message, user, *self._attempted(message.payload))
                return
            if await self._throttled(user, "signoff" if signoff else "request", message.payload):
                return
            request_id, reply_to, correlation_id = reply_fields(message.payload)
            topic = message.response_topic or reply_to
            if topic:
                refusal = reply_topic_refusal(topic, reply_namespace(self.config, user), self._reserved)
                if refusal is not None:
                    log.warning(
                        "reply_topic_refused",
                        topic=message.topic,
                        reply_topic=topic[:200],
                        request_id=request_id,
                        reason=refusal,
                    )
                    if signoff:  # not decided: a sign-off that names a forbidden reply topic is refused whole
                        refused = SignoffError(f"reply topic {topic[:200]!r} refused: {refusal}", "reply_topic")
                        await self._refuse_signoff(refused, message, user, *self._attempted(message.payload))
                    else:
                        REQUESTS.labels("unanswerable").inc()
                        self._strike(user)
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
