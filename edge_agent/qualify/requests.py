"""Report requests to the private agent as a plant client sends them: over MQTT 5 with a response topic, timed from
publish to the final reply. The client is the simulator's plain paho one (sim.hostile), not the agent's own."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from edge_agent.qualify.sandbox import window
from edge_agent.reports.request import ReportType
from edge_agent.sim.hostile import HostileClient, HostileMessage, Topics

# The asset asset_history is asked about: one the simulated plant has.
ASSET = "P-101"
REPORT_TYPES: tuple[ReportType, ...] = (
    "shift_summary",
    "alarm_summary",
    "downtime_analysis",
    "asset_history",
    "alarm_performance",
)
POLL_S = 0.02


@dataclass(frozen=True)
class Answered:
    type: str
    seconds: float
    reply: dict[str, Any]

    @property
    def done(self) -> bool:
        return self.reply.get("status") == "done"

    @property
    def body_sha256(self) -> str | None:
        return self.reply["report"]["body_sha256"] if self.done else None

    @property
    def report_id(self) -> str | None:
        return self.reply.get("report_id") if self.done else None


def payload(report_type: str, request_id: str) -> dict[str, Any]:
    request: dict[str, Any] = {"request_id": request_id, "type": report_type, "progress": False, "window": window()}
    if report_type == "asset_history":
        request["scope"] = {"assets": [ASSET]}
    return request


def ask(client: HostileClient, n: int, report_type: str, timeout_s: float) -> Answered:
    """Request one report (reply topic n of the client's namespace) and wait for its final reply."""
    topics = client.topics
    reply_topic = topics.reply(n)
    body = json.dumps(payload(report_type, f"{topics.run}-{n}")).encode()
    message = HostileMessage("valid", "request", topics.request, body, "answered", reply_topic, str(n).encode())
    started = time.monotonic()
    client.publish([message])
    deadline = started + timeout_s
    while time.monotonic() < deadline:
        replies = client.inbox.get(reply_topic)
        if replies:
            return Answered(report_type, time.monotonic() - started, json.loads(replies[0]))
        time.sleep(POLL_S)
    return Answered(report_type, timeout_s, {"status": "no reply", "timeout_s": timeout_s})


def ask_each(host: str, port: int, site: str, per_type: int, timeout_s: float) -> list[Answered]:
    """`per_type` requests of every report type, one at a time, types interleaved (each round one of each)."""
    topics = Topics(site, "qualify", user="qualify")
    answered: list[Answered] = []
    with HostileClient(host, port, topics, client_id="edge-agent-qualify-requester") as client:
        for round_ in range(per_type):
            for i, report_type in enumerate(REPORT_TYPES):
                answered.append(ask(client, round_ * len(REPORT_TYPES) + i + 1, report_type, timeout_s))
    return answered
