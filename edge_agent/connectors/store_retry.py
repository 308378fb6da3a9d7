"""Waiting out a full store: a connector's write is retried with jittered backoff, nothing acknowledged meanwhile.
Shared by the MQTT ingest and the Sparkplug host."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from structlog.typing import FilteringBoundLogger

from edge_agent.base.backoff import backoff_delay
from edge_agent.store import StoreFullError

T = TypeVar("T")

# A full store is retried soon (space often returns in seconds: retention, an operator's cleanup), then at most every
# 5 s: a long outage costs a log line and a counter tick per group every few seconds, and recovery is seen within 5 s.
STORE_FULL_RETRY_MIN_S = 0.2
STORE_FULL_RETRY_MAX_S = 5.0


async def until_stored(
    write: Callable[[], Awaitable[T]],
    log: FilteringBoundLogger,
    *,
    on_full: Callable[[], None] | None = None,
    waiting: Callable[[bool], None] | None = None,
) -> T:
    """Run a store write; while the store is full, retry it after a jittered backoff. `on_full` is called at every
    full attempt (a counter), `waiting(True)` once the first one fails and `waiting(False)` when the write is done or
    abandoned (a component's readiness). Each failed attempt is logged on the connector's `log` as `store_full`."""
    attempts = 0
    try:
        while True:
            try:
                return await write()
            except StoreFullError as exc:
                if attempts == 0 and waiting is not None:
                    waiting(True)
                if on_full is not None:
                    on_full()
                delay = backoff_delay(attempts, STORE_FULL_RETRY_MIN_S, STORE_FULL_RETRY_MAX_S)
                log.error("store_full", error=str(exc), attempt=attempts + 1, retry_in_s=round(delay, 3))
                attempts += 1
                await asyncio.sleep(delay)
    finally:
        if attempts and waiting is not None:
            waiting(False)
