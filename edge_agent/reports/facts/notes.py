"""Facts from log lines: the operator notes, newest listed, the rest counted."""

from __future__ import annotations

from datetime import datetime

from edge_agent.base.types import StoredRecord
from edge_agent.reports.facts.builder import Builder, texts_of
from edge_agent.reports.request import iso
from edge_agent.reports.untrusted import looks_like_instruction


def note_facts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    lines = []
    for r in by_kind.get("log_line", []):
        # A bare string is the line's text, as a plain-text parser stores it.
        fields = r.value if isinstance(r.value, dict) else {"text": r.value}
        # Attributed by the ingest route (edge_agent/connectors/mqtt/authorship.py): `author` is what the broker
        # vouched for, and a
        # name the line claimed is only `claimed_author`. Records from before carry the line's claim as `author`.
        attributed = "author_from" in fields
        texts = texts_of(b, r, fields, ("text", "author", "claimed_author") if attributed else ("text", "author"))
        if texts is not None:
            lines.append((r, texts))
    listed = lines[max(0, len(lines) - list_max) :]
    for r, texts in listed:
        values = {
            "at": iso(r.source_time),
            "author": texts["author"],
            "area": r.key.rsplit("/", 1)[-1],
            "text": texts["text"],
            "flagged": looks_like_instruction(texts["text"]),
        }
        if "claimed_author" in texts:
            values["claimed_author"] = texts["claimed_author"] or None  # null: the line claimed no name
        b.add("operator_note", values, [r])
    if len(lines) > len(listed):
        unlisted = lines[: len(lines) - len(listed)]
        b.add("operator_notes_not_listed", {"count": len(unlisted)}, [r for r, _ in unlisted])
