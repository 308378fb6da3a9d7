"""A full disk, simulated with SQLite's page limit: every write path raises StoreFullError and writes nothing, the
connection stays usable, the batch writer goes on, and everything writes again once space returns."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from edge_agent.base.types import Record
from edge_agent.store import RecordWriter, Store, StoreFullError
from tests.test_store import rec

# Large enough that a few rows need a page the capped file does not have (pages are 4 KiB).
BIG = 64 * 1024


def big_batch(start: int, n: int = 50) -> list[Record]:
    return [rec(i, raw=os.urandom(2000)) for i in range(start, start + n)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


def fill(store: Store) -> None:
    """Cap the file at its current size: the next write that needs a new page fails."""
    store.set_max_pages(store._query("PRAGMA page_count")[0][0])


class TestStoreFullError:
    def test_records_batch_raises_store_full_from_the_sqlite_error(self, store: Store) -> None:
        """The error is StoreFullError, caused by SQLite's SQLITE_FULL."""
        fill(store)
        with pytest.raises(StoreFullError) as info:
            store.insert_records(big_batch(0))
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)
        assert info.value.__cause__.sqlite_errorcode == sqlite3.SQLITE_FULL

    def test_a_failed_batch_writes_none_of_its_records(self, store: Store) -> None:
        """Rows that fitted before the page ran out are rolled back with the rest."""
        store.insert_records([rec(0)])
        fill(store)
        with pytest.raises(StoreFullError):
            store.insert_records([rec(1), *big_batch(2)])
        assert [r.value for r in store.records()] == [0.0]

    def test_quarantine_raises_store_full(self, store: Store) -> None:
        """Quarantining a payload with no room for it raises StoreFullError and stores nothing."""
        fill(store)
        with pytest.raises(StoreFullError):
            store.quarantine("mqtt", "plant/x/mes", os.urandom(BIG), "bad JSON")
        assert store.quarantined() == []

    def test_outbox_put_raises_store_full(self, store: Store) -> None:
        """Queueing a reply with no room for it raises StoreFullError and queues nothing."""
        fill(store)
        with pytest.raises(StoreFullError):
            store.outbox_put("edge/s1/r", os.urandom(BIG))
        assert store.outbox_pending() == []

    def test_a_dead_letter_move_that_does_not_fit_leaves_the_row_as_it_was(self, store: Store) -> None:
        """outbox_fail raising StoreFullError keeps the row in the outbox, its attempt uncounted, no dead letter."""
        row_id = store.outbox_put("edge/s1/r", os.urandom(BIG))
        fill(store)
        with pytest.raises(StoreFullError):
            store.outbox_fail(row_id, "Not authorized", max_attempts=1)
        assert [m.id for m in store.outbox_pending()] == [row_id]
        assert store.dead_letters() == []
        assert store._query("SELECT attempts FROM outbox")[0][0] == 0

    def test_reads_work_while_full(self, store: Store) -> None:
        """A full store still answers queries and stats."""
        store.insert_records([rec(0)])
        fill(store)
        with pytest.raises(StoreFullError):
            store.insert_records(big_batch(1))
        assert store.stats()["records"]["total"] == 1


class TestSpaceReturns:
    def test_everything_writes_again_and_nothing_was_half_written(self, store: Store) -> None:
        """After set_max_pages(None) every path writes, and the store holds exactly the retried rows once each."""
        store.outbox_put("edge/s1/r", os.urandom(BIG))  # row 1, refused later
        fill(store)
        batch = big_batch(0)
        for write in (
            lambda: store.insert_records(batch),
            lambda: store.quarantine("mqtt", "t", os.urandom(BIG), "bad"),
            lambda: store.outbox_put("edge/s1/r", os.urandom(BIG)),
            lambda: store.outbox_fail(1, "Not authorized", max_attempts=1),
        ):
            with pytest.raises(StoreFullError):
                write()
        store.set_max_pages(None)
        assert store.insert_records(batch).count == 50
        store.quarantine("mqtt", "t", os.urandom(BIG), "bad")
        queued = store.outbox_put("edge/s1/r", os.urandom(BIG))
        assert store.outbox_fail(1, "Not authorized", max_attempts=1) == 1
        assert store.record_count() == 50
        assert len(store.quarantined()) == 1
        assert [m.id for m in store.outbox_pending()] == [queued]
        assert [(d.id, d.attempts) for d in store.dead_letters()] == [(1, 1)]

    def test_none_restores_the_default_page_limit(self, store: Store) -> None:
        """set_max_pages(None) puts back the limit the connection opened with."""
        default = store._query("PRAGMA max_page_count")[0][0]
        store.set_max_pages(10)
        store.set_max_pages(None)
        assert store._query("PRAGMA max_page_count")[0][0] == default


class TestRecordWriterWhenFull:
    async def test_every_waiter_of_a_failed_batch_gets_store_full(self, store: Store) -> None:
        """Two producers in one batch both see StoreFullError, and neither's records are stored."""
        fill(store)
        writer = RecordWriter(store, max_rows=1000, max_delay_s=0.1)
        task = asyncio.create_task(writer.run())
        try:
            results = await asyncio.gather(
                writer.write(big_batch(0)), writer.write(big_batch(100)), return_exceptions=True
            )
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert [type(r) for r in results] == [StoreFullError, StoreFullError]
        assert store.record_count() == 0

    async def test_the_writer_keeps_running_and_commits_once_space_returns(self, store: Store) -> None:
        """After a failed batch the same writer commits the next batch, and the retried records are stored once."""
        fill(store)
        writer = RecordWriter(store, max_rows=1000, max_delay_s=0.05)
        task = asyncio.create_task(writer.run())
        try:
            batch = big_batch(0)
            with pytest.raises(StoreFullError):
                await writer.write(batch)
            store.set_max_pages(None)
            assert (await writer.write(batch)).count == 50
            assert not task.done()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert store.record_count() == 50
