"""The report service's topics: where requests and sign-offs arrive, who sent them, and where replies may go.

A reply topic comes from the requester (MQTT 5 Response Topic, or `reply_to`), so it is untrusted: the agent, which
may publish anywhere, must not be made to publish into its own ingest topics, a wildcard, `$SYS` or another user's
replies. Replies therefore go only under the requester's own namespace `<reply base>/<user>[/...]` — the part of the
tree the broker ACL `pattern readwrite edge/+/reports/reply/%u/#` lets that user read. A request without a user
level (a broker that does not enforce identity) uses the namespace `anonymous`.
"""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.base import reply_topic
from edge_agent.config import AgentConfig
from edge_agent.reports.request import MAX_TOPIC_BYTES

# The reply namespace of requests that name no user (published on the bare request or sign-off topic).
ANONYMOUS = "anonymous"


def request_topic(config: AgentConfig) -> str:
    return config.reports.request_topic or f"edge/{config.site.id}/reports/request"


def signoff_topic(config: AgentConfig) -> str:
    return config.reports.signoff_topic or f"edge/{config.site.id}/reports/signoff"


def reply_base(config: AgentConfig) -> str:
    return config.reports.reply_topic or f"edge/{config.site.id}/reports/reply"


def reply_namespace(config: AgentConfig, user: str | None) -> str:
    """`<reply base>/<user>`: the only subtree replies to `user` may be published in."""
    return f"{reply_base(config)}/{user or ANONYMOUS}"


def reserved_filters(config: AgentConfig) -> list[str]:
    """Topic filters the agent itself listens on: a reply there would be read back as a request, a sign-off or
    plant data."""
    return [f"{request_topic(config)}/#", f"{signoff_topic(config)}/#", *(r.topic for r in config.mqtt.routes)]


def reply_topic_refusal(topic: str, namespace: str, reserved: Sequence[str]) -> str | None:
    """None when the agent may publish a reply on `topic`, else why not: the shared rule
    (edge_agent.base.reply_topic) bounded by MAX_TOPIC_BYTES (1024, the request models' bound)."""
    return reply_topic.reply_topic_refusal(topic, namespace, reserved, max_bytes=MAX_TOPIC_BYTES)
