"""The ask service's topics: where questions arrive, who sent them, and where answers may go.

The rules are the report service's (docs/reports.md, "Reply topics"): the level after the request topic is the broker
user (ACL `pattern write edge/+/ask/request/%u`), and an answer goes only under that user's own namespace
`edge/<site>/ask/reply/<user>[/...]` (ACL `pattern readwrite edge/+/ask/reply/%u/#`), never to a wildcard, `$SYS`,
a topic the agent listens on or another user's replies. A request without a user level uses `anonymous`.
"""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.base import reply_topic
from edge_agent.config import AgentConfig
from edge_agent.reports.request import MAX_TOPIC_BYTES

ANONYMOUS = "anonymous"


def request_topic(config: AgentConfig) -> str:
    return f"edge/{config.site.id}/ask/request"


def reply_namespace(config: AgentConfig, user: str | None) -> str:
    """`edge/<site>/ask/reply/<user>`: the only subtree answers to `user` may be published in."""
    return f"edge/{config.site.id}/ask/reply/{user or ANONYMOUS}"


def reserved_filters(config: AgentConfig) -> list[str]:
    """Topic filters the agent listens on: an answer there would be read back as a question or as plant data."""
    return [f"{request_topic(config)}/#", *(r.topic for r in config.mqtt.routes)]


def reply_topic_refusal(topic: str, namespace: str, reserved: Sequence[str]) -> str | None:
    """None when the agent may publish an answer on `topic`, else why not: the shared rule
    (edge_agent.base.reply_topic) bounded by MAX_TOPIC_BYTES (1024, the request models' bound)."""
    return reply_topic.reply_topic_refusal(topic, namespace, reserved, max_bytes=MAX_TOPIC_BYTES)
