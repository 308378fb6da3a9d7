"""What a connector refused in one audit window, for its `quarantine` audit entry (MQTT and OPC UA alike)."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# A flood of bad input must not make one audit entry huge: the first items are listed, the rest only counted.
QUARANTINE_AUDIT_ITEMS = 100


@dataclass
class QuarantineTally:
    by_reason: Counter[str] = field(default_factory=Counter)
    items: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.by_reason)

    def add(self, topic: str, reason: str, detail: str, raw: bytes) -> None:
        self.by_reason[reason] += 1
        if len(self.items) < QUARANTINE_AUDIT_ITEMS:
            item = {"topic": topic, "reason": reason, "detail": detail, "bytes": len(raw)}
            self.items.append(item | {"sha256": hashlib.sha256(raw).hexdigest()})

    def entry(self, source: str) -> dict[str, Any]:
        """The `quarantine` entry's payload: counts by reason, the first items, how many were left unlisted."""
        count = sum(self.by_reason.values())
        return {
            "source": source,
            "count": count,
            "by_reason": dict(sorted(self.by_reason.items())),
            "items": self.items,
            "items_omitted": count - len(self.items),
        }


__all__ = ["QUARANTINE_AUDIT_ITEMS", "QuarantineTally"]
