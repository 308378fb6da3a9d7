"""Sparkplug B 3.0 topics: `spBv1.0/<group>/<verb>/<edge node>[/<device>]`, `spBv1.0/STATE/<host id>`, and the
retained births a Sparkplug-aware broker keeps under `$sparkplug/certificates/spBv1.0/...`."""

from __future__ import annotations

from dataclasses import dataclass

NAMESPACE = "spBv1.0"
CERTIFICATES = f"$sparkplug/certificates/{NAMESPACE}"
NODE_VERBS = frozenset({"NBIRTH", "NDEATH", "NDATA", "NCMD"})
DEVICE_VERBS = frozenset({"DBIRTH", "DDEATH", "DDATA", "DCMD"})


class TopicError(ValueError):
    """A topic in the Sparkplug namespace that is no Sparkplug topic."""


@dataclass(frozen=True, slots=True)
class SparkplugTopic:
    group: str
    verb: str
    node: str
    device: str | None
    # Read from a Sparkplug-aware broker's retained births ($sparkplug/certificates/...), not sent live.
    certificate: bool = False


def parse_topic(topic: str) -> SparkplugTopic:
    """The parts of a Sparkplug message topic; `TopicError` for anything else (STATE topics included)."""
    certificate = topic.startswith(CERTIFICATES + "/")
    rest = topic[len(CERTIFICATES) + 1 :] if certificate else topic
    parts = rest.split("/")
    if parts[0] != NAMESPACE and not certificate:
        raise TopicError(f"{topic!r} is outside {NAMESPACE}/")
    elements = parts if certificate else parts[1:]
    if len(elements) < 3 or any(not e for e in elements):
        raise TopicError(f"{topic!r}: expected {NAMESPACE}/<group>/<verb>/<edge node>[/<device>]")
    group, verb, node, *device = elements
    if verb in NODE_VERBS and not device:
        return SparkplugTopic(group, verb, node, None, certificate)
    if verb in DEVICE_VERBS and len(device) == 1:
        return SparkplugTopic(group, verb, node, device[0], certificate)
    raise TopicError(f"{topic!r}: {verb!r} with {len(device)} device element(s) is no Sparkplug verb form")


def state_topic(host_id: str) -> str:
    return f"{NAMESPACE}/STATE/{host_id}"


def ncmd_topic(group: str, node: str) -> str:
    return f"{NAMESPACE}/{group}/NCMD/{node}"


def subscriptions(group_ids: list[str]) -> list[str]:
    """Filters in the order they are subscribed: the retained births first (read before anything asks a node for a
    rebirth), then the live namespace."""
    if not group_ids:
        return [f"{CERTIFICATES}/#", f"{NAMESPACE}/#"]
    certificates = [f"{CERTIFICATES}/{g}/#" for g in group_ids]
    return certificates + [f"{NAMESPACE}/{g}/#" for g in group_ids]


__all__ = ["SparkplugTopic", "TopicError", "ncmd_topic", "parse_topic", "state_topic", "subscriptions"]
