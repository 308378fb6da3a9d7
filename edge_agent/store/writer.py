"""Async batch writer: many producers, one commit per batch, each producer told when its records are durable."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog

from edge_agent.base.types import Record
from edge_agent.store.store import Inserted, Store

log = structlog.get_logger(component="store")


class RecordWriter:
    """Gathers records from edge_agent.connectors and commits them in batches of up to `max_rows` or every
    `max_delay_s`.

    `await writer.write(records)` says what was stored (`Inserted`: the count, and the records whose id is held by
    other content) only after the batch holding them is committed, so a caller that acknowledges upstream afterwards
    loses nothing on a crash. A batch that fails (StoreFullError on a full disk) raises that error to every waiter of
    the batch, none of whose records was written, and the loop goes on with the next batch. `failure` names the error
    of the latest commit until one succeeds (the store component's /readyz reason).
    """

    def __init__(self, store: Store, max_rows: int = 500, max_delay_s: float = 0.2, queue_max: int = 10000) -> None:
        self._store = store
        self._max_rows = max_rows
        self._max_delay_s = max_delay_s
        # Bounded: producers wait (backpressure) rather than growing memory when the disk is slow.
        self._queue: asyncio.Queue[tuple[Sequence[Record], asyncio.Future[Inserted]]] = asyncio.Queue(queue_max)
        self.failure: str | None = None

    async def write(self, records: Sequence[Record]) -> Inserted:
        future: asyncio.Future[Inserted] = asyncio.get_running_loop().create_future()
        await self._queue.put((records, future))
        return await future

    async def run(self) -> None:
        """Commit loop; run it as a task. On cancel, commits what it holds and what is queued before stopping."""
        batch: list[tuple[Sequence[Record], asyncio.Future[Inserted]]] = []
        loop = asyncio.get_running_loop()
        try:
            while True:
                batch = [await self._queue.get()]
                deadline = loop.time() + self._max_delay_s
                while sum(len(r) for r, _ in batch) < self._max_rows and (timeout := deadline - loop.time()) > 0:
                    try:
                        batch.append(await asyncio.wait_for(self._queue.get(), timeout))
                    except TimeoutError:
                        break
                await self._commit(batch)
                batch = []
        finally:
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            if batch:
                await asyncio.shield(self._commit(batch))

    async def _commit(self, batch: list[tuple[Sequence[Record], asyncio.Future[Inserted]]]) -> None:
        try:
            # Per producer, so each learns what became of *its* records.
            counts = await asyncio.to_thread(self._commit_sync, [records for records, _ in batch])
        except Exception as exc:  # every waiter must hear about a failed commit, or it would hang
            log.error("batch_commit_failed", error=str(exc), producers=len(batch))
            self.failure = f"store not writable: {exc}"
            for _, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        self.failure = None
        for (_, future), count in zip(batch, counts, strict=True):
            if not future.done():
                future.set_result(count)

    def _commit_sync(self, groups: list[Sequence[Record]]) -> list[Inserted]:
        return self._store.insert_records_grouped(groups)
