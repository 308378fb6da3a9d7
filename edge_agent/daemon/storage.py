"""The store as supervised components: the batch writer's commit loop, and periodic retention."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta

import structlog
from prometheus_client import Counter, Gauge

from edge_agent.config import StoreConfig
from edge_agent.store import RecordWriter, RetentionPolicy, Store, StoreError

log = structlog.get_logger(component="store")

RETENTION_DELETED = Counter("edge_agent_store_retention_deleted", "Rows deleted by retention", ["table"])
RETENTION_FAILURES = Counter("edge_agent_store_retention_failures_total", "Retention runs that failed (retried)")
WRITABLE = Gauge("edge_agent_store_writable", "0 after a failed commit (e.g. a full disk) until one succeeds, else 1")
CAP_DELETED = Counter(
    "edge_agent_store_cap_deleted", "Rows deleted at insert to keep a table under its bytes cap", ["table"]
)
OUTBOX_BYTES = Gauge("edge_agent_store_outbox_bytes", "Estimated bytes of unpublished outbox rows (never trimmed)")

# Retention is measured in days and megabytes; checking hourly keeps the overshoot small for negligible work.
RETENTION_INTERVAL_S = 3600.0

_MB = 1024 * 1024

# A retention pass over what the store does not own (the reports' drafts): deletes what has aged out and returns the
# rows deleted per table; StoreError when it fails. The composition root (app.py) hands these in.
RetentionPass = Callable[[], Mapping[str, int]]


def retention_policy(config: StoreConfig) -> RetentionPolicy:
    """The `[store]` retention options as the store's policy."""
    return RetentionPolicy(
        max_age=timedelta(days=config.retention_days),
        records_max_bytes=int(config.retention_max_mb * _MB),
        quarantine_max_bytes=int(config.quarantine_max_mb * _MB),
        dead_letter_max_bytes=int(config.dead_letter_max_mb * _MB),
    )


class RecordWriterComponent:
    """Runs `RecordWriter.run`; ready at once (the store is opened before the supervisor starts), and not ready,
    naming the error, from a failed commit (a full disk) until the next one succeeds: the producers retry theirs, so
    a commit follows soon after space returns.

    Cancelled last but one (only the health server outlives it), after every producer has stopped: the writer
    then commits whatever is still queued, so nothing accepted before SIGTERM is lost.
    """

    name = "store"

    def __init__(self, writer: RecordWriter) -> None:
        self.writer = writer
        WRITABLE.set_function(lambda: 0.0 if writer.failure else 1.0)

    @property
    def not_ready_reason(self) -> str | None:
        return self.writer.failure

    async def run(self, ready: asyncio.Event) -> None:
        ready.set()
        await self.writer.run()


class RetentionComponent:
    """Applies the `[store]` retention caps at start and then every `interval_s`, followed by each of `passes`
    (RetentionPass); from its construction the store also holds records and quarantine to their bytes caps at every
    insert (`Store.set_caps`).

    A failed run (a full disk can refuse even a delete) is logged and counted and tried again at the next interval:
    retention is what frees space, so it must outlive the condition it exists for. Each pass fails on its own.
    """

    name = "retention"

    def __init__(
        self,
        store: Store,
        config: StoreConfig,
        interval_s: float = RETENTION_INTERVAL_S,
        passes: Sequence[RetentionPass] = (),
    ) -> None:
        self._store = store
        self._policy = retention_policy(config)
        self._interval_s = interval_s
        self._passes = tuple(passes)
        store.set_caps(self._policy)
        store.on_cap_delete = lambda table, rows: CAP_DELETED.labels(table=table).inc(rows)

    async def run(self, ready: asyncio.Event) -> None:
        ready.set()
        while True:
            try:
                result = await asyncio.to_thread(self._store.apply_retention, self._policy)
            except StoreError as exc:
                self._failed(exc)
            else:
                self._count(result.deleted)
                OUTBOX_BYTES.set(result.outbox_bytes)
                if result.total_deleted:
                    log.info("retention_applied", deleted=result.deleted, outbox_rows=result.outbox_rows)
            for retention_pass in self._passes:
                try:
                    deleted = await asyncio.to_thread(retention_pass)
                except StoreError as exc:
                    self._failed(exc)
                else:
                    self._count(deleted)
                    if any(deleted.values()):
                        log.info("retention_applied", deleted=dict(deleted))
            await asyncio.sleep(self._interval_s)

    def _count(self, deleted: Mapping[str, int]) -> None:
        for table, rows in deleted.items():
            RETENTION_DELETED.labels(table=table).inc(rows)

    def _failed(self, exc: StoreError) -> None:
        RETENTION_FAILURES.inc()
        log.error("retention_failed", error=str(exc), retry_in_s=self._interval_s)
