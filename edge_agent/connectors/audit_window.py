"""Appending a connector's audit window: one `ingest.batch` / `quarantine` group of entries per interval, not one
entry per message, so the log stays small. Shared by the MQTT ingest and the Sparkplug host."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import structlog
from prometheus_client import Counter

from edge_agent.audit.sink import AuditSink

log = structlog.get_logger(component="audit")


async def append_window(
    audit: AuditSink | None, entries: Sequence[tuple[str, str, dict[str, Any]]], failures: Counter
) -> None:
    """Append one window's entries in a thread. The records they describe are stored already, so a broken audit
    disk is counted in `failures` and logged, never raised: it must not stop the plant's data."""
    if not entries or audit is None:
        return
    try:
        await asyncio.to_thread(audit.append_many, entries)
    except Exception as exc:
        failures.inc(len(entries))
        log.error("audit_append_failed", error=str(exc), entries=[event for event, _, _ in entries])
