"""Where reports live: the `reports` table (store migration 2) and `<state_dir>/reports/<report_id>.json`, and
the requests accepted but not yet answered: the `report_queue` table (migration 3). Both are keyed by (requester,
request_id) since migration 5: each requester has its own request ids.

The table answers "have we seen this request_id" and lists reports; the JSON file is the document an auditor
receives (audit export copies it). Both are written on creation and on sign-off; the file is replaced atomically.
The repository opens its own connection to the store file (WAL allows several), so it never reaches into `Store`.
"""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict

from edge_agent.base.types import utcnow
from edge_agent.reports.errors import ReportError, ReportNotFound
from edge_agent.store import Store, to_us


def document_bytes(document: dict[str, Any]) -> bytes:
    """The stored and published form of a report document: sorted keys, 2-space indent, UTF-8, final newline."""
    return (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


class StoredReport(NamedTuple):
    """A report already made for a request: what was asked (to tell a reused request_id) and the document."""

    request_sha256: str
    document: dict[str, Any]


class PendingRequest(BaseModel):
    """An accepted request whose final reply (`done` or `failed`) is not in the outbox yet."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    request: dict[str, Any]  # the validated ReportRequest, as JSON
    request_sha256: str
    requested_by: str | None
    # The `now` its window was resolved against: resolving again after a restart gives the same window.
    accepted_time_us: int
    # Where replies go: {"topic", "correlation" (hex of the MQTT 5 Correlation Data), "correlation_id" (3.1.1)}.
    targets: list[dict[str, str | None]]
    audit_requested: int | None = None

    @property
    def request_id(self) -> str:
        return str(self.request["request_id"])


class ReportRepository:
    def __init__(self, store_path: Path, reports_dir: Path) -> None:
        Store(store_path).close()  # runs the migrations, reports table included
        self.reports_dir = reports_dir
        self.reports_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(store_path, check_same_thread=False, isolation_level=None, timeout=30)
            self._conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as exc:
            raise ReportError(f"cannot open report table in {store_path}: {exc}") from exc

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> ReportRepository:
        return cls(state_dir / "store.sqlite3", state_dir / "reports")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def path(self, report_id: str) -> Path:
        return self.reports_dir / f"{report_id}.json"

    def by_request_id(self, request_id: str, requester: str | None = None) -> StoredReport | None:
        """The report `requester` asked for as `request_id`, if any."""
        with self._lock:
            row = self._conn.execute(
                "SELECT request_sha256, document FROM reports WHERE requester = ? AND request_id = ?",
                (requester or "", request_id),
            ).fetchone()
        return StoredReport(row[0], json.loads(row[1])) if row else None

    def get(self, report_id: str) -> dict[str, Any]:
        with self._lock:
            row = self._conn.execute("SELECT document FROM reports WHERE report_id = ?", (report_id,)).fetchone()
        if row is None:
            raise ReportNotFound(report_id)
        return json.loads(row[0])

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT report_id, request_id, type, status, body_sha256, requested_by, created_time_us"
                " FROM reports ORDER BY created_time_us DESC LIMIT ?",
                (limit,),
            ).fetchall()
        keys = ("report_id", "request_id", "type", "status", "body_sha256", "requested_by", "created_time_us")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def insert(self, document: dict[str, Any], request_sha256: str) -> None:
        data = document_bytes(document)
        self._write_file(document["report_id"], data)
        now = to_us(utcnow())
        with self._lock:
            self._conn.execute(
                "INSERT INTO reports (report_id, requester, request_id, request_sha256, type, status, body_sha256,"
                " requested_by, created_time_us, updated_time_us, document) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    document["report_id"],
                    document.get("requested_by") or "",
                    document["request_id"],
                    request_sha256,
                    document["body"]["request"]["type"],
                    document["status"],
                    document["body_sha256"],
                    document.get("requested_by"),
                    now,
                    now,
                    data.decode("utf-8"),
                ),
            )

    def update(self, document: dict[str, Any]) -> None:
        data = document_bytes(document)
        self._write_file(document["report_id"], data)
        with self._lock:
            cur = self._conn.execute(
                "UPDATE reports SET status = ?, document = ?, updated_time_us = ? WHERE report_id = ?",
                (document["status"], data.decode("utf-8"), to_us(utcnow()), document["report_id"]),
            )
        if cur.rowcount != 1:
            raise ReportNotFound(document["report_id"])

    def hold(self, report_id: str, ranges: builtins.list[tuple[str | None, int, int]]) -> None:
        """Keep the records in `ranges` (kind or None, from_us, to_us source times) for `report_id`: retention and the
        insert caps never delete them (edge_agent.store, UNHELD). Replaces any earlier hold of the report."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute("DELETE FROM record_holds WHERE report_id = ?", (report_id,))
                self._conn.executemany(
                    "INSERT INTO record_holds (report_id, kind, from_us, to_us) VALUES (?, ?, ?, ?)",
                    [(report_id, kind, start, end) for kind, start, end in ranges],
                )
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    def trim_unapproved(self, max_age: timedelta, now: datetime | None = None) -> builtins.list[str]:
        """Delete the drafts and rejected reports created more than `max_age` ago (row, record holds and file) and
        return their ids, oldest first. Approved reports are never deleted: they, and the records their holds keep,
        are the evidence a sign-off stands on. Their decisions stay in the audit log; an export names a deleted
        report as missing."""
        cutoff = to_us((now or utcnow()) - max_age)
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                ids = [
                    row[0]
                    for row in self._conn.execute(
                        "SELECT report_id FROM reports WHERE status != 'approved' AND created_time_us < ?"
                        " ORDER BY created_time_us",
                        (cutoff,),
                    )
                ]
                for report_id in ids:
                    self._conn.execute("DELETE FROM record_holds WHERE report_id = ?", (report_id,))
                    self._conn.execute("DELETE FROM reports WHERE report_id = ?", (report_id,))
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
        for report_id in ids:  # after the commit: a crash between leaves a file no row names, never the reverse
            self.path(report_id).unlink(missing_ok=True)
        return ids

    def approved_without_hold(self) -> builtins.list[tuple[str, dict[str, Any]]]:
        """(report_id, document) of approved reports with no record hold: approved before holds existed."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT report_id, document FROM reports WHERE status = 'approved'"
                " AND report_id NOT IN (SELECT report_id FROM record_holds)"
            ).fetchall()
        return [(report_id, json.loads(document)) for report_id, document in rows]

    def claim_nonce(self, nonce: str, approver: str, report_id: str, signed_time_us: int) -> bool:
        """Record a signed sign-off's nonce; False when it was already recorded (a replay). Durable on return
        (synchronous=FULL), so a replay is refused after a restart too."""
        with self._lock:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO signoff_nonces (nonce, approver, report_id, signed_time_us, seen_time_us)"
                " VALUES (?, ?, ?, ?, ?)",
                (nonce, approver, report_id, signed_time_us, to_us(utcnow())),
            )
        return cur.rowcount == 1

    def queue_put(self, pending: PendingRequest) -> None:
        """Record an accepted request, or replace its entry (a repeat of it added a reply target)."""
        with self._lock:
            self._conn.execute(
                "INSERT INTO report_queue (requester, request_id, entry, accepted_time_us) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (requester, request_id) DO UPDATE SET entry = excluded.entry",
                (pending.requested_by or "", pending.request_id, pending.model_dump_json(), pending.accepted_time_us),
            )

    def queue_remove(self, request_id: str, requester: str | None = None) -> None:
        with self._lock:
            self._conn.execute(
                "DELETE FROM report_queue WHERE requester = ? AND request_id = ?", (requester or "", request_id)
            )

    def window_size(self, start: datetime, end: datetime) -> tuple[int, int]:
        """(records, bytes of their value and raw payload) with start <= source_time < end: what generating a
        report over the window would load, measured without loading it."""
        with self._lock:
            row = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(COALESCE(LENGTH(CAST(value AS BLOB)), 0) + LENGTH(raw)), 0)"
                " FROM records WHERE source_time_us >= ? AND source_time_us < ?",
                (to_us(start), to_us(end)),
            ).fetchone()
        return int(row[0]), int(row[1])

    def queue_all(self) -> builtins.list[PendingRequest]:  # `list` here is the method above
        """Every pending request, in the order they were accepted."""
        with self._lock:
            rows = self._conn.execute("SELECT entry FROM report_queue ORDER BY accepted_time_us, rowid").fetchall()
        return [PendingRequest.model_validate_json(row[0]) for row in rows]

    def _write_file(self, report_id: str, data: bytes) -> None:
        """Write-then-rename with fsyncs: a crash leaves the old file or the new one, never half of one."""
        target = self.path(report_id)
        tmp = target.with_suffix(".json.tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        fd = os.open(self.reports_dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
