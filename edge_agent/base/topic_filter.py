"""MQTT topic filter matching (MQTT 5 §4.7), shared by the ingest routes and the report service's reserved topics."""

from __future__ import annotations


def topic_matches(topic_filter: str, topic: str) -> bool:
    """MQTT matching: `+` one level, `#` any number of levels (including none: `a/#` matches `a`); a wildcard in
    the first level does not match topics starting with `$` (broker-internal, e.g. `$SYS/...`)."""
    if topic.startswith("$") and topic_filter[:1] in ("+", "#"):
        return False
    filter_levels = topic_filter.split("/")
    topic_levels = topic.split("/")
    for i, level in enumerate(filter_levels):
        if level == "#":
            return True
        if i >= len(topic_levels):
            return False
        if level != "+" and level != topic_levels[i]:
            return False
    return len(filter_levels) == len(topic_levels)


__all__ = ["topic_matches"]
