"""What a component needs of the audit log: somewhere to append entries. `AuditLog` is the one implementation;
components take this protocol so they depend on the two calls, not on the log's files, keys and checkpoints."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from edge_agent.audit.entry import AuditEntry


class AuditSink(Protocol):
    def append(self, event: str, actor: str, payload: dict[str, Any] | None = None) -> AuditEntry:
        """Add one entry; returns once it is durable."""
        ...

    def append_many(self, items: Sequence[tuple[str, str, dict[str, Any]]]) -> Sequence[AuditEntry]:
        """Add several (event, actor, payload) entries at once: all or none become durable."""
        ...
