"""The store as supervised components: the batch writer's commit loop, and periodic retention."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import structlog
from prometheus_client import Counter

from edge_agent.config import StoreConfig
from edge_agent.store import RecordWriter, Store

log = structlog.get_logger(component="store")

RETENTION_DELETED = Counter("edge_agent_store_retention_deleted", "Rows deleted by retention")

# Retention is measured in days and megabytes; checking hourly keeps the overshoot small for negligible work.
RETENTION_INTERVAL_S = 3600.0


class RecordWriterComponent:
    """Runs `RecordWriter.run`; ready at once (the store is opened before the supervisor starts).

    Cancelled last but one (only the health server outlives it), after every producer has stopped: the writer
    then commits whatever is still queued, so nothing accepted before SIGTERM is lost.
    """

    name = "store"

    def __init__(self, writer: RecordWriter) -> None:
        self.writer = writer

    async def run(self, ready: asyncio.Event) -> None:
        ready.set()
        await self.writer.run()


class RetentionComponent:
    """Applies `store.retention_days` / `retention_max_mb` at start and then every `interval_s`."""

    name = "retention"

    def __init__(self, store: Store, config: StoreConfig, interval_s: float = RETENTION_INTERVAL_S) -> None:
        self._store = store
        self._config = config
        self._interval_s = interval_s

    async def run(self, ready: asyncio.Event) -> None:
        ready.set()
        while True:
            deleted = await asyncio.to_thread(
                self._store.apply_retention,
                timedelta(days=self._config.retention_days),
                int(self._config.retention_max_mb * 1024 * 1024),
            )
            RETENTION_DELETED.inc(deleted)
            if deleted:
                log.info("retention_applied", deleted=deleted)
            await asyncio.sleep(self._interval_s)
