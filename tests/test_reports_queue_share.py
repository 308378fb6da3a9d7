"""The per-requester share of the report queue (`reports.queue_max_per_requester`), on the real broker."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from edge_agent.config import AgentConfig
from harness.reports_service import REQUEST_TOPIC, agent_config, mosquitto_rr, running_service
from tests.fixtures.broker import Broker
from tests.test_daemon import wait_until


def request(request_id: str) -> dict[str, Any]:
    return {"request_id": request_id, "type": "shift_summary", "window": {"shift": "A", "date": "2026-11-29"}}


async def ask(broker: Broker, user: str, request_id: str) -> dict[str, Any]:
    """One request from `user` (the topic's user level) with progress, so the first reply is accepted or refused."""
    payload = request(request_id) | {"progress": True}
    reply = f"edge/demo/reports/reply/{user}/rr"
    return await mosquitto_rr(broker, payload, topic=f"{REQUEST_TOPIC}/{user}", reply=reply, timeout=30)


def refusals(outcome: str) -> float:
    return REGISTRY.get_sample_value("edge_agent_report_requests_total", {"outcome": outcome}) or 0.0


class TestShareDefault:
    @pytest.mark.parametrize(("queue_max", "share"), [(1, 1), (2, 1), (7, 4), (8, 4)])
    def test_default_share_is_half_the_queue_rounded_up(self, queue_max: int, share: int) -> None:
        """Unset, a requester's share is ceil(queue_max / 2)."""
        config = AgentConfig.model_validate({"site": {"id": "s"}, "reports": {"queue_max": queue_max}})
        assert config.reports.requester_share == share

    def test_a_configured_share_wins(self) -> None:
        """queue_max_per_requester set: that number, whatever queue_max is."""
        config = AgentConfig.model_validate({"site": {"id": "s"}, "reports": {"queue_max_per_requester": 3}})
        assert config.reports.requester_share == 3


@pytest.mark.broker
class TestQueueShare:
    async def test_one_requester_is_refused_beyond_its_share_while_another_is_accepted(
        self, broker: Broker, tmp_path: Path
    ) -> None:
        """queue_max 4 (share 2), the one worker held on alice's first request: alice's next two wait, her third is
        refused naming the share, and bob's is still accepted."""
        config = agent_config(tmp_path, broker, queue_max=4)
        async with running_service(config, engine=None) as running:
            service = running.service
            release = asyncio.Event()

            async def held(job: Any) -> None:
                await release.wait()

            service._generate = held  # type: ignore[method-assign]  # the worker stays busy with the first job
            try:
                assert (await ask(broker, "alice", "a-1"))["status"] == "accepted"
                await wait_until(lambda: service._queue.qsize() == 0, timeout=10)  # taken by the worker
                assert [(await ask(broker, "alice", f"a-{i}"))["status"] for i in (2, 3)] == ["accepted", "accepted"]
                before = refusals("queue_share_full")
                refused = await ask(broker, "alice", "a-4")
                assert refused == {
                    "status": "refused",
                    "request_id": "a-4",
                    "reason": "queue share full: 2 requests from alice waiting",
                }
                assert refusals("queue_share_full") == before + 1
                accepted = await ask(broker, "bob", "b-1")
                assert (accepted["status"], accepted["queue_position"]) == ("accepted", 3)
            finally:
                release.set()
