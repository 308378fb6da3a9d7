"""SQLite store in WAL mode: records, quarantine, outbox and dead letters.

One connection guarded by a lock; asyncio callers go through `asyncio.to_thread` (see `writer.py`), so the event loop
never waits on disk. `synchronous=FULL` makes every commit durable before it returns: connectors acknowledge a
message only after that.

Every write is one transaction. A failed write raises `StoreError` (`StoreFullError` for a full disk or page limit)
with that transaction rolled back and the connection usable: the caller retries later, nothing is half-written.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from edge_agent.base.types import Record, StoredRecord, utcnow
from edge_agent.store.errors import StoreError, StoreFullError, is_full
from edge_agent.store.migrations import migrate
from edge_agent.store.reads import StoreReads
from edge_agent.store.retention import (
    OUTBOX,
    QUARANTINE,
    RECORDS,
    TRIM_STEP,
    TRIMMED,
    RetentionPolicy,
    RetentionResult,
    Table,
    deletable,
)
from edge_agent.store.rows import (
    INSERT_RECORD,
    OUTBOX_COLUMNS,
    record_row,
    reused_positions,
    storable,
    to_us,
)

# The connection's page cache (SQLite's default is 2 MiB): inserts land at random places in the idempotency key's
# index, so a cache that holds more of it re-reads fewer pages per row (bench.sparkplug: ~2 µs of ~11 per row).
# An upper bound, filled as pages are read; nothing about durability changes.
CACHE_KIB = 32 * 1024
# WAL pages before a commit checkpoints them into the database (SQLite's default: 1000). A 5000-row batch dirties
# thousands of that index's pages, so at 1000 nearly every commit also checkpointed (copy, and fsync the database);
# at 10 000 (~40 MiB of WAL) a page changed by several commits is copied once. Each commit still fsyncs the WAL
# before it returns (synchronous=FULL), which is what makes it durable; a crash replays the WAL on open.
WAL_CHECKPOINT_PAGES = 10_000


@dataclass(frozen=True)
class Inserted:
    """What one producer's batch did: `count` rows newly stored, and `reused`, the positions in the batch of records
    whose idempotency key the store holds with other content (stored before, or earlier in the batch). The rest that
    were not stored are redeliveries. A producer quarantines the `reused` ones: skipping them would lose them."""

    count: int
    reused: tuple[int, ...] = ()


class Store(StoreReads):
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._caps: dict[Table, int] = {}
        self._sizes: dict[Table, int] = {}
        # Told (table, rows) after an insert deleted rows to stay under the cap: a metric in edge_agent.daemon.storage.
        self.on_cap_delete: Callable[[str, int], None] | None = None
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
            self._conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._default_max_pages: int = self._conn.execute("PRAGMA max_page_count").fetchone()[0]
            self.schema_version = migrate(self._conn)
        except sqlite3.Error as exc:
            error = StoreFullError if is_full(exc) else StoreError
            raise error(f"cannot open store {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def refuse_writes(self) -> None:
        """From now on this connection only reads: any write raises (SQLite's `query_only`). For a process that
        must not change what another process stores (the ask's workers)."""
        with self._lock:
            self._conn.execute("PRAGMA query_only = ON")

    def set_caps(self, policy: RetentionPolicy | None) -> None:
        """Hold records and quarantine to their bytes caps at every insert, not only when retention runs: an insert
        that would take a table over its cap deletes that table's oldest rows first (never records an approved
        report holds), in the insert's own transaction. When not enough can go, the insert raises StoreFullError
        and nothing is written. None: no caps at insert."""
        with self._lock:
            self._caps = {} if policy is None else {t: policy.max_bytes(t) for t in (RECORDS, QUARANTINE)}
            self._sizes.clear()

    def _measured(self, table: Table) -> int | None:
        """The capped table's estimated bytes, kept up to date by inserts and retention; None when not capped."""
        if table not in self._caps:
            return None
        if table not in self._sizes:
            self._sizes[table] = self.estimated_bytes(table)
        return self._sizes[table]

    def _make_room(self, conn: sqlite3.Connection, table: Table, before_id: int) -> tuple[int, int]:
        """Inside an insert's transaction: delete the oldest deletable rows older than the insert (id <= before_id)
        until the table fits its cap; its new size and the rows deleted. StoreFullError (all rolled back) when it
        cannot fit."""
        cap, total = self._caps[table], self._sizes[table]
        total += conn.execute(
            f"SELECT IFNULL(SUM({table.size}), 0) FROM {table.name} WHERE id > ?", (before_id,)
        ).fetchone()[0]
        deleted = 0
        while total > cap:
            oldest = conn.execute(
                f"SELECT id, {table.size} FROM {table.name} WHERE id <= ? AND {deletable(table)}"
                f" ORDER BY {table.time_column}, id LIMIT {TRIM_STEP}",
                (before_id,),
            ).fetchall()
            if not oldest:
                held = " that no approved report holds" if table is RECORDS else ""
                raise StoreFullError(
                    f"store {self.path}: {table.name} at their cap ({cap} bytes) and no older row{held} is left to"
                    " delete; nothing written"
                )
            victims = []
            for row_id, size in oldest:
                if total <= cap:
                    break
                victims.append((row_id,))
                total -= size
            conn.executemany(f"DELETE FROM {table.name} WHERE id = ?", victims)
            deleted += len(victims)
        return total, deleted

    def _room_made(self, table: Table, size: int, deleted: int) -> None:
        """After the insert's commit: the table's new size, and the deletions told (a rolled-back one never is)."""
        self._sizes[table] = size
        if deleted and self.on_cap_delete is not None:
            self.on_cap_delete(table.name, deleted)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set_max_pages(self, pages: int | None) -> None:
        """Simulate a full disk in tests and benchmarks: cap the file at `pages` pages (PRAGMA max_page_count; a cap
        below the current size holds it at its current size, so the next page it needs fails). None restores the
        default. Applies to this connection only."""
        with self._lock:
            limit = self._default_max_pages if pages is None else int(pages)
            self._conn.execute(f"PRAGMA max_page_count = {limit}")

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    # SQLite rolls back by itself after some errors (SQLITE_FULL among them); a second ROLLBACK
                    # would fail and hide the real error.
                    if self._conn.in_transaction:
                        self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                if is_full(exc):
                    raise StoreFullError(f"store {self.path} is full, nothing written: {exc}") from exc
                raise StoreError(f"store {self.path}: write failed, nothing written: {exc}") from exc

    def _write(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run one statement over many rows in one transaction; returns rows changed."""
        with self._transaction() as conn:
            before = conn.total_changes
            conn.executemany(sql, rows)
            return conn.total_changes - before

    # --- records ---------------------------------------------------------------------------------------------

    def insert_records(self, records: Sequence[Record]) -> Inserted:
        """Commit a batch; a record whose idempotency key is already stored is not inserted (see `Inserted`)."""
        return self.insert_records_grouped([records])[0]

    def insert_records_grouped(self, groups: Sequence[Sequence[Record]]) -> list[Inserted]:
        """Commit several producers' batches in one transaction (one fsync); says per group what was stored."""
        results = []
        capped = self._measured(RECORDS) is not None
        with self._transaction() as conn:
            before_id = conn.execute("SELECT IFNULL(MAX(id), 0) FROM records").fetchone()[0] if capped else 0
            for records in groups:
                before = conn.total_changes
                conn.executemany(INSERT_RECORD, (record_row(r) for r in records))
                count = conn.total_changes - before
                # Only a batch with keys stored already pays for the read, and inside the transaction: no writer can
                # come between the insert and what it is compared with.
                reused = reused_positions(conn, records) if count < len(records) else ()
                results.append(Inserted(count, reused))
            room = self._make_room(conn, RECORDS, before_id) if capped else None
        if room is not None:
            self._room_made(RECORDS, *room)
        return results

    def insert_stored_records(self, records: Sequence[StoredRecord]) -> None:
        """Records as another store held them, their ids kept (an audit bundle's evidence, to recompute from)."""
        sql = INSERT_RECORD.replace("INSERT OR IGNORE INTO records (", "INSERT INTO records (id, ").replace(
            "VALUES (", "VALUES (?, "
        )
        with self._transaction() as conn:
            conn.executemany(sql, ((r.id, *record_row(r)) for r in records))

    # --- quarantine ------------------------------------------------------------------------------------------

    def quarantine(
        self, source: str, topic: str, raw: bytes, reason: str, received_time: datetime | None = None
    ) -> int:
        """Keep bad input with the reason it was refused; returns its id. Any str is accepted (see `storable`): the
        one place bad input goes must not fail on it."""
        capped = self._measured(QUARANTINE) is not None
        with self._transaction() as conn:
            cur = conn.execute(
                "INSERT INTO quarantine (source, topic, raw, reason, received_time_us) VALUES (?, ?, ?, ?, ?)",
                (storable(source), storable(topic), bytes(raw), storable(reason), to_us(received_time or utcnow())),
            )
            row_id = int(cur.lastrowid)  # type: ignore[arg-type]  # never None after an INSERT
            room = self._make_room(conn, QUARANTINE, row_id - 1) if capped else None
        if room is not None:
            self._room_made(QUARANTINE, *room)
        return row_id

    # --- outbox ----------------------------------------------------------------------------------------------

    def outbox_put(
        self, topic: str, payload: bytes, qos: int = 1, retain: bool = False, properties: dict[str, str] | None = None
    ) -> int:
        """Queue a message to publish; it stays until `outbox_ack` (or `outbox_fail` moves it to the dead letters).
        Returns its id (publish order). A topic that is not UTF-8 (a lone surrogate) is refused with StoreError."""
        try:
            topic.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StoreError(f"outbox topic {topic!r} is not valid UTF-8") from exc
        with self._transaction() as conn:
            # Past every dead letter's id too: a dead letter keeps its outbox id, so an id must never come back.
            cur = conn.execute(
                "INSERT INTO outbox (id, topic, payload, qos, retain, properties, created_time_us) VALUES"
                " (1 + MAX((SELECT IFNULL(MAX(id), 0) FROM outbox), (SELECT IFNULL(MAX(id), 0) FROM dead_letter)),"
                " ?, ?, ?, ?, ?, ?)",
                (topic, payload, qos, int(retain), json.dumps(properties or {}, sort_keys=True), to_us(utcnow())),
            )
            return int(cur.lastrowid)  # type: ignore[arg-type]  # never None after an INSERT

    def outbox_ack(self, message_id: int) -> None:
        self._write("DELETE FROM outbox WHERE id = ?", [(message_id,)])

    def outbox_fail(self, message_id: int, reason: str, max_attempts: int) -> int:
        """Count one failed publish of an outbox row. At `max_attempts` the row moves to dead_letter with `reason`,
        in the same transaction (never in both tables, never in neither). Returns its attempts so far, 0 when the
        row is no longer in the outbox."""
        with self._transaction() as conn:
            row = conn.execute(
                "UPDATE outbox SET attempts = attempts + 1 WHERE id = ? RETURNING attempts", (message_id,)
            ).fetchall()
            if not row:
                return 0
            attempts = int(row[0][0])
            if attempts >= max_attempts:
                conn.execute(
                    "INSERT INTO dead_letter (id, topic, payload, qos, retain, properties, created_time_us,"
                    " failed_time_us, attempts, reason) SELECT id, topic, payload, qos, retain, properties,"
                    " created_time_us, ?, attempts, ? FROM outbox WHERE id = ?",
                    (to_us(utcnow()), storable(reason), message_id),
                )
                conn.execute("DELETE FROM outbox WHERE id = ?", (message_id,))
            return attempts

    def dead_letter_requeue(self, message_ids: Sequence[int]) -> list[int]:
        """Move these dead letters back into the outbox with no attempts counted, in one transaction: once the cause
        is mended (an ACL, the broker's packet limit) they are published again, each at its own id, so in its old
        place in the publish order. Returns the ids that were dead letters, ascending; others are ignored."""
        moved: list[int] = []
        with self._transaction() as conn:
            for message_id in sorted(set(message_ids)):
                cur = conn.execute(
                    f"INSERT INTO outbox ({OUTBOX_COLUMNS}, attempts) SELECT {OUTBOX_COLUMNS}, 0 FROM dead_letter"
                    " WHERE id = ?",
                    (message_id,),
                )
                if cur.rowcount:
                    conn.execute("DELETE FROM dead_letter WHERE id = ?", (message_id,))
                    moved.append(message_id)
        return moved

    # --- housekeeping ----------------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        by_source = dict(self._query("SELECT source, COUNT(*) FROM records GROUP BY source ORDER BY source"))
        by_reason = dict(self._query("SELECT reason, COUNT(*) FROM quarantine GROUP BY reason ORDER BY reason"))
        return {
            "records": {"total": sum(by_source.values()), "by_source": by_source},
            "quarantined": {"total": sum(by_reason.values()), "by_reason": by_reason},
            "outbox_pending": self._query("SELECT COUNT(*) FROM outbox")[0][0],
            "dead_letter": self._query("SELECT COUNT(*) FROM dead_letter")[0][0],
            "estimated_bytes": {table.name: self.estimated_bytes(table) for table in (*TRIMMED, OUTBOX)},
            "schema_version": self.schema_version,
        }

    def apply_retention(self, policy: RetentionPolicy, now: datetime | None = None) -> RetentionResult:
        """Trim records, quarantine and dead letters, each by its own age and bytes cap (the oldest go first), so no
        table's rows are ever deleted to make room for another's. The outbox is never trimmed: an unpublished
        reply is not ours to drop; its size is in the result. Reports are never touched (audit evidence)."""
        cutoff = to_us((now or utcnow()) - policy.max_age)
        deleted = {table.name: self._trim(table, cutoff, policy.max_bytes(table)) for table in TRIMMED}
        return RetentionResult(
            deleted=deleted,
            outbox_rows=self._query("SELECT COUNT(*) FROM outbox")[0][0],
            outbox_bytes=self.estimated_bytes(OUTBOX),
        )

    def _trim(self, table: Table, cutoff_us: int, max_bytes: int) -> int:
        """Delete `table`'s rows older than cutoff_us, then its oldest until its estimated bytes fit max_bytes; never
        records an approved report holds."""
        deleted = 0
        while step := self._write(
            f"DELETE FROM {table.name} WHERE id IN (SELECT id FROM {table.name} WHERE {table.time_column} < ?"
            f" AND {deletable(table)} LIMIT {TRIM_STEP})",
            [(cutoff_us,)],
        ):
            deleted += step
        excess = self.estimated_bytes(table) - max_bytes
        try:
            return deleted + self._trim_bytes(table, excess)
        finally:
            if table in self._caps:
                # Re-based on this run's measurement (inserts during the scan may be missed until the next run).
                self._sizes[table] = self.estimated_bytes(table)

    def _trim_bytes(self, table: Table, excess: int) -> int:
        deleted = 0
        while excess > 0:
            with self._transaction() as conn:
                oldest = conn.execute(
                    f"SELECT id, {table.size} FROM {table.name} WHERE {deletable(table)}"
                    f" ORDER BY {table.time_column}, id LIMIT {TRIM_STEP}"
                ).fetchall()
                victims = []
                for row_id, size in oldest:
                    if excess <= 0:
                        break
                    victims.append((row_id,))
                    excess -= size
                conn.executemany(f"DELETE FROM {table.name} WHERE id = ?", victims)
            if not oldest:
                break
            deleted += len(victims)
        return deleted
