"""The topic rules shared by the report and ask services: who asked (the user level of a request topic) and where the
agent may publish a reply.

A reply topic comes from the requester (MQTT 5 Response Topic, or `reply_to`), so it is untrusted: the agent, which
may publish anywhere, must not be made to publish into its own ingest topics, a wildcard, `$SYS` or another user's
replies. Each service passes its requester's namespace, the filters it listens on and its topic length bound.
"""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.base.topic_filter import topic_matches


def reply_topic_refusal(topic: str, namespace: str, reserved: Sequence[str], *, max_bytes: int) -> str | None:
    """None when the agent may publish a reply on `topic`, else why not. `namespace` is the requester's reply
    namespace; `reserved` are the topic filters the agent listens on. Pure: the rule in one place, property-tested."""
    try:
        size = len(topic.encode("utf-8"))
    except UnicodeEncodeError:
        return "not encodable as UTF-8"
    if not 0 < size <= max_bytes:
        return f"{size} bytes; a reply topic has 1 to {max_bytes}"
    if "\0" in topic or "+" in topic or "#" in topic:
        return "holds a wildcard or NUL"
    if "" in topic.split("/"):
        return "has an empty level"
    if topic != namespace and not topic.startswith(namespace + "/"):
        return f"outside the requester's reply namespace {namespace}/..."
    if any(topic_matches(f, topic) for f in reserved):
        return "is a topic the agent listens on"
    return None


__all__ = ["reply_topic_refusal"]


def topic_user(topic: str, base: str) -> str | None:
    """`<base>/<user>` → user; `<base>` → None. Deeper topics are not a user and are refused by the caller."""
    if topic == base:
        return None
    rest = topic[len(base) + 1 :] if topic.startswith(base + "/") else ""
    return rest if rest and "/" not in rest else ""
