"""Performance qualification: speed on this hardware against the criteria the plant configures (`[qualify]`).
`Measurements` is what the run measured; `evaluate` turns it into checks, purely, so a test can judge one run's
figures under other criteria."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from edge_agent.config import QualifyConfig
from edge_agent.llm.types import ChatMessage, Completion, Engine, GenerationParams
from edge_agent.qualify.check import Check, at_least, at_most, percentile
from edge_agent.qualify.requests import Answered
from edge_agent.qualify.sandbox import Sandbox
from edge_agent.sim.hostile import HostileClient, HostileMessage, Topics
from edge_agent.store import Store

INGEST_ASSET = "QUALIFY-INGEST"
INGEST_TIMEOUT_S = 300.0


class Speed(BaseModel):
    """One engine over the fixed prompts: tokens generated and seconds generating; with a draft, its drafting."""

    tokens: int = Field(ge=0)
    seconds: float = Field(ge=0)
    drafts: int = Field(0, ge=0)
    accepted: int = Field(0, ge=0)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    @property
    def tau(self) -> float:
        """Tokens emitted per target forward pass that verified a draft: 1 + accepted drafts per pass."""
        return 1 + self.accepted / self.drafts if self.drafts else 1.0

    @classmethod
    def of(cls, completions: Sequence[Completion]) -> Speed:
        return cls(
            tokens=sum(c.completion_tokens for c in completions),
            seconds=sum(c.timings.total_s for c in completions),
            drafts=sum(c.spec.drafts for c in completions if c.spec),
            accepted=sum(c.spec.accepted for c in completions if c.spec),
        )


class Measurements(BaseModel):
    plain: Speed
    draft: Speed | None
    latencies_s: dict[str, list[float]]
    ingest_messages: int
    ingest_seconds: float


async def generate_all(
    engine: Engine, prompts: Sequence[list[ChatMessage]], params: GenerationParams
) -> list[Completion]:
    return [await engine.generate(messages, params) for messages in prompts]


def latencies(answered: Sequence[Answered]) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for a in answered:
        found.setdefault(a.type, []).append(a.seconds if a.done else float("inf"))
    return found


def _ingest(sandbox: Sandbox, count: int) -> float:
    """Publish `count` MES events at QoS 1 on an ingest route and time them until all are in the store."""
    config = sandbox.config
    topics = Topics(config.site.id, "qualify-ingest")
    topic = f"plant/{config.site.id}/mes/qualify-ingest"
    now = datetime.now(UTC).isoformat()
    stream = [
        HostileMessage(
            "good",
            "mes",
            topic,
            json.dumps(
                {"id": f"qualify-ingest-{i}", "asset": INGEST_ASSET, "type": "qualify", "n": i, "ts": now}
            ).encode(),
            "stored",
        )
        for i in range(count)
    ]
    with Store(config.paths.store_path) as store:
        target = store.record_count() + count
        with HostileClient(config.mqtt.host, config.mqtt.port, topics, client_id="edge-agent-qualify-ingest") as client:
            started = time.monotonic()
            client.publish(stream)
            while store.record_count() < target:
                if time.monotonic() - started > INGEST_TIMEOUT_S:
                    return float("inf")
                time.sleep(0.01)
            return time.monotonic() - started


async def ingest_seconds(sandbox: Sandbox, count: int) -> float:
    return await asyncio.to_thread(_ingest, sandbox, count)


def evaluate(m: Measurements, criteria: QualifyConfig) -> list[Check]:
    speed = "the engine writes reports at the speed the plant accepted, on this hardware"
    checks = [
        at_least(
            "pq.tokens_per_s.plain",
            speed,
            "tokens/s without the draft",
            m.plain.tokens_per_s,
            criteria.plain_tokens_per_s_min,
            "tok/s",
        )
    ]
    if m.draft is not None:
        checks.append(
            at_least(
                "pq.tokens_per_s.draft",
                speed,
                "tokens/s with the draft",
                m.draft.tokens_per_s,
                criteria.draft_tokens_per_s_min,
                "tok/s",
            )
        )
        checks.append(
            at_least(
                "pq.tau",
                "the draft head predicts this plant's report text as well as it was measured to",
                "τ (tokens per target pass)",
                m.draft.tau,
                criteria.tau_min,
                "",
            )
        )
    for report_type, seconds in m.latencies_s.items():
        shows = f"a {report_type} request is answered within the time the plant accepted"
        checks.append(
            at_most(
                f"pq.latency.{report_type}.p50",
                shows,
                "median request-to-report time",
                percentile(seconds, 50),
                criteria.report_p50_max_s,
                "s",
            )
        )
        checks.append(
            at_most(
                f"pq.latency.{report_type}.p95",
                shows,
                f"p95 request-to-report time (nearest rank of {len(seconds)})",
                percentile(seconds, 95),
                criteria.report_p95_max_s,
                "s",
            )
        )
    checks.append(
        at_least(
            "pq.ingest",
            "MQTT ingest keeps up with the plant's data rate, stored durably",
            f"MES messages stored per second ({m.ingest_messages} at QoS 1)",
            m.ingest_messages / m.ingest_seconds if m.ingest_seconds else 0.0,
            criteria.ingest_min_per_s,
            "msg/s",
        )
    )
    return checks
