"""SQLite store in WAL mode: records, quarantine and outbox.

One connection guarded by a lock; asyncio callers go through `asyncio.to_thread` (see `writer.py`), so the event loop
never waits on disk. `synchronous=FULL` makes every commit durable before it returns: connectors acknowledge a
message only after that.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from edge_agent.store.migrations import migrate
from edge_agent.types import OutboxMessage, QuarantineItem, Record, StoredRecord, to_utc, utcnow

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def to_us(value: datetime) -> int:
    return (to_utc(value) - _EPOCH) // timedelta(microseconds=1)


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


_INSERT_RECORD = (
    "INSERT OR IGNORE INTO records (source, kind, key, source_time_us, received_time_us, value, quality, raw,"
    " idempotency_key, historical) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _record_row(r: Record) -> tuple[Any, ...]:
    return (
        r.source,
        r.kind,
        r.key,
        to_us(r.source_time),
        to_us(r.received_time),
        json.dumps(r.value, ensure_ascii=False, sort_keys=True),
        r.quality,
        r.raw,
        r.idempotency_key,
        int(r.historical),
    )


class StoreError(Exception):
    pass


class StoreFullError(StoreError):
    """The disk (or the database's page limit) is full: nothing was written. Retry once space returns."""


class Store:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self.schema_version = migrate(self._conn)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _write(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run one statement over many rows in one transaction; returns rows changed."""
        with self._transaction() as conn:
            before = conn.total_changes
            conn.executemany(sql, rows)
            return conn.total_changes - before

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    # --- records ---------------------------------------------------------------------------------------------

    def insert_records(self, records: Sequence[Record]) -> int:
        """Commit a batch; a record whose idempotency key is already stored is skipped. Returns rows inserted."""
        return self.insert_records_grouped([records])[0]

    def insert_records_grouped(self, groups: Sequence[Sequence[Record]]) -> list[int]:
        """Commit several producers' batches in one transaction (one fsync); returns rows inserted per group."""
        counts = []
        with self._transaction() as conn:
            for records in groups:
                before = conn.total_changes
                conn.executemany(_INSERT_RECORD, (_record_row(r) for r in records))
                counts.append(conn.total_changes - before)
        return counts

    def records(
        self,
        start: datetime | None = None,
        end: datetime | None = None,
        *,
        keys: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
        sources: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[StoredRecord]:
        """Records with start <= source_time < end, oldest first (ties by id)."""
        where, params = ["1=1"], []
        if start is not None:
            where.append("source_time_us >= ?")
            params.append(to_us(start))
        if end is not None:
            where.append("source_time_us < ?")
            params.append(to_us(end))
        for column, values in (("key", keys), ("kind", kinds), ("source", sources)):
            if values is not None:
                where.append(f"{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        sql = (
            "SELECT id, source, kind, key, source_time_us, received_time_us, value, quality, raw, idempotency_key,"
            f" historical FROM records WHERE {' AND '.join(where)} ORDER BY source_time_us, id"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [
            StoredRecord(
                id=row[0],
                source=row[1],
                kind=row[2],
                key=row[3],
                source_time=from_us(row[4]),
                received_time=from_us(row[5]),
                value=json.loads(row[6]) if row[6] is not None else None,
                quality=row[7],
                raw=row[8],
                idempotency_key=row[9],
                historical=bool(row[10]),
            )
            for row in self._query(sql, params)
        ]

    def record_count(self, source: str | None = None) -> int:
        if source is None:
            return self._query("SELECT COUNT(*) FROM records")[0][0]
        return self._query("SELECT COUNT(*) FROM records WHERE source = ?", (source,))[0][0]

    # --- quarantine ------------------------------------------------------------------------------------------

    def quarantine(self, source: str, topic: str, raw: bytes, reason: str, received_time: datetime | None = None) -> int:
        """Keep bad input with the reason it was refused; returns its id."""
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO quarantine (source, topic, raw, reason, received_time_us) VALUES (?, ?, ?, ?, ?)",
                (source, topic, raw, reason, to_us(received_time or utcnow())),
            )
            return int(cur.lastrowid)

    def quarantined(self, limit: int = 1000) -> list[QuarantineItem]:
        return [
            QuarantineItem(id=r[0], source=r[1], topic=r[2], raw=r[3], reason=r[4], received_time=from_us(r[5]))
            for r in self._query(
                "SELECT id, source, topic, raw, reason, received_time_us FROM quarantine ORDER BY id LIMIT ?", (limit,)
            )
        ]

    # --- outbox ----------------------------------------------------------------------------------------------

    def outbox_put(
        self, topic: str, payload: bytes, qos: int = 1, retain: bool = False, properties: dict[str, str] | None = None
    ) -> int:
        """Queue a message to publish; it stays until `outbox_ack`. Returns its id (publish order)."""
        with self._lock:
            cur = self._conn.execute(
                "INSERT INTO outbox (topic, payload, qos, retain, properties, created_time_us) VALUES (?, ?, ?, ?, ?, ?)",
                (topic, payload, qos, int(retain), json.dumps(properties or {}, sort_keys=True), to_us(utcnow())),
            )
            return int(cur.lastrowid)

    def outbox_pending(self, limit: int = 100, after_id: int = 0) -> list[OutboxMessage]:
        return [
            OutboxMessage(
                id=r[0],
                topic=r[1],
                payload=r[2],
                qos=r[3],
                retain=bool(r[4]),
                properties=json.loads(r[5]),
                created_time=from_us(r[6]),
            )
            for r in self._query(
                "SELECT id, topic, payload, qos, retain, properties, created_time_us FROM outbox WHERE id > ?"
                " ORDER BY id LIMIT ?",
                (after_id, limit),
            )
        ]

    def outbox_ack(self, message_id: int) -> None:
        self._write("DELETE FROM outbox WHERE id = ?", [(message_id,)])

    # --- housekeeping ----------------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        by_source = dict(self._query("SELECT source, COUNT(*) FROM records GROUP BY source ORDER BY source"))
        by_reason = dict(self._query("SELECT reason, COUNT(*) FROM quarantine GROUP BY reason ORDER BY reason"))
        return {
            "records": {"total": sum(by_source.values()), "by_source": by_source},
            "quarantined": {"total": sum(by_reason.values()), "by_reason": by_reason},
            "outbox_pending": self._query("SELECT COUNT(*) FROM outbox")[0][0],
            "schema_version": self.schema_version,
        }

    def apply_retention(self, max_age: timedelta, max_bytes: int, now: datetime | None = None) -> int:
        """Delete records received before now - max_age, then the oldest until the file fits max_bytes.

        Returns rows deleted. The outbox is never trimmed: an unpublished report is not ours to drop.
        """
        cutoff = to_us((now or utcnow()) - max_age)
        deleted = self._write("DELETE FROM records WHERE received_time_us < ?", [(cutoff,)])
        deleted += self._write("DELETE FROM quarantine WHERE received_time_us < ?", [(cutoff,)])
        # 256 rows per step: a short lock, and little overshoot below the limit.
        while self._used_bytes() > max_bytes:
            step = self._write(
                "DELETE FROM records WHERE id IN (SELECT id FROM records ORDER BY received_time_us, id LIMIT 256)",
                [()],
            )
            if step == 0:
                break
            deleted += step
        return deleted

    def _used_bytes(self) -> int:
        """Bytes in pages holding data (the file itself only shrinks on VACUUM)."""
        page_size, pages, free = (self._query(f"PRAGMA {p}")[0][0] for p in ("page_size", "page_count", "freelist_count"))
        return page_size * (pages - free)
