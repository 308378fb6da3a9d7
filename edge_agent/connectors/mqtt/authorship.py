"""Who said it: an operator note's author is the broker user the topic vouches for, never the name the line claims.

MQTT does not tell a subscriber who published a message. A plant's broker ACL can: `pattern write plant/+/log/%u`
lets each user publish log lines only on the topic level that is its own user name. A log-line route with
`author_from_topic_level = N` takes that level (0-based) of the topic as the note's author.

Every log-line record an ingest route stores passes through `attribute`, which rewrites the author members of its
value whatever the payload held:

* `author`: the vouched name, present only when the route vouches and the topic has that level;
* `claimed_author`: the name the line (`juan.perez: …`) or the JSON payload (`author`) claimed, when it claimed one;
* `author_from`: `"topic level N"` when `author` is vouched, else null. Its presence marks the record as attributed:
  the report facts take `author` only from such a record (records stored before this existed carry the line's
  claim as `author`, without `author_from`).

A payload cannot set any of the three: they are removed from what the parser produced before they are written.
"""

from __future__ import annotations

from typing import Any

from edge_agent.base.types import Record

NOTE_KIND = "log_line"
_AUTHOR_MEMBERS = ("author", "claimed_author", "author_from")


def vouched_author(topic: str, level: int | None) -> str | None:
    """The topic's level `level` (0-based), or None when the route does not vouch or the topic has no such level."""
    if level is None:
        return None
    levels = topic.split("/")
    return levels[level] if level < len(levels) and levels[level] else None


def attribute(record: Record, topic: str, level: int | None) -> Record:
    """The record with its author members set from the topic (see the module docstring); other kinds unchanged."""
    if record.kind != NOTE_KIND:
        return record
    fields: dict[str, Any] = dict(record.value) if isinstance(record.value, dict) else {"text": record.value}
    claimed = fields.get("author")
    if claimed is None:
        claimed = fields.get("claimed_author")
    for member in _AUTHOR_MEMBERS:
        fields.pop(member, None)
    author = vouched_author(topic, level)
    if author is not None:
        fields["author"] = author
    if claimed is not None:
        fields["claimed_author"] = claimed
    fields["author_from"] = f"topic level {level}" if author is not None else None
    return record.model_copy(update={"value": fields})


__all__ = ["NOTE_KIND", "attribute", "vouched_author"]
