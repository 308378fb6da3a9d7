"""Where and how the report service answers: reply targets and replies, each written to the store outbox.

Every reply is written to the store outbox and published by the OutboxPublisher (QoS 1), so a reply survives a broker
outage or an agent restart. A reply goes to the MQTT 5 Response Topic with its Correlation Data, or to the payload's
`reply_to` with its `correlation_id` echoed in the payload (MQTT 3.1.1).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import structlog

from edge_agent.reports.service.metrics import REQUESTS
from edge_agent.reports.service.state import ServiceState

log = structlog.get_logger(component="reports")


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


class Replies(ServiceState):
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

    async def _reply_failed(self, targets: list[ReplyTarget], request_id: str, reason: str) -> None:
        REQUESTS.labels("failed").inc()
        log.error("report_failed", request_id=request_id, error=reason)
        await self._reply(targets, {"status": "failed", "request_id": request_id, "reason": reason})
