"""Store: SQLite WAL, idempotent inserts, quarantine, outbox, retention, and survival of SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from edge_agent.store import MigrationError, RecordWriter, Store
from edge_agent.types import Record, idempotency_key

T0 = datetime(2026, 11, 29, 6, 0, tzinfo=timezone.utc)


def rec(i: int, key: str = "P-101.vibration", **kw: object) -> Record:
    fields = dict(
        source="opcua-1",
        kind="tag_value",
        key=key,
        source_time=T0 + timedelta(seconds=i),
        value=float(i),
        raw=str(i).encode(),
        idempotency_key=idempotency_key("opcua-1", key, str(i)),
    )
    fields.update(kw)
    return Record(**fields)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


class TestRecords:
    def test_file_is_in_wal_mode(self, store: Store) -> None:
        assert store._query("PRAGMA journal_mode")[0][0] == "wal"

    def test_redelivered_record_is_stored_once(self, store: Store) -> None:
        """The idempotency key makes a QoS 1 redelivery a no-op."""
        assert store.insert_records([rec(1), rec(2)]) == 2
        assert store.insert_records([rec(2), rec(3)]) == 1
        assert store.record_count() == 3

    def test_query_by_window_and_key_is_time_ordered(self, store: Store) -> None:
        store.insert_records([rec(5), rec(1), rec(3, key="C-201.temp"), rec(2)])
        got = store.records(T0 + timedelta(seconds=1), T0 + timedelta(seconds=5), keys=["P-101.vibration"])
        assert [r.value for r in got] == [1.0, 2.0]
        assert got[0].source_time == T0 + timedelta(seconds=1)
        assert got[0].raw == b"1"

    def test_naive_times_are_taken_as_utc(self, store: Store) -> None:
        store.insert_records([rec(0, source_time=datetime(2026, 11, 29, 6, 0))])
        assert store.records()[0].source_time == T0

    def test_grouped_insert_counts_new_rows_per_group(self, store: Store) -> None:
        assert store.insert_records_grouped([[rec(1)], [rec(1), rec(2)], []]) == [1, 1, 0]


class TestQuarantineAndOutbox:
    def test_quarantine_keeps_raw_bytes_and_reason(self, store: Store) -> None:
        qid = store.quarantine("mqtt", "plant/x/mes", b"\xff\xfe{", "invalid UTF-8 at byte 0")
        item = store.quarantined()[0]
        assert (item.id, item.raw, item.reason) == (qid, b"\xff\xfe{", "invalid UTF-8 at byte 0")
        assert store.stats()["quarantined"] == {"total": 1, "by_reason": {"invalid UTF-8 at byte 0": 1}}

    def test_outbox_keeps_order_until_acknowledged(self, store: Store) -> None:
        a = store.outbox_put("edge/r/1", b"a", properties={"correlation_data": "00ff"})
        b = store.outbox_put("edge/r/2", b"b")
        assert [m.id for m in store.outbox_pending()] == [a, b]
        store.outbox_ack(a)
        pending = store.outbox_pending()
        assert [(m.id, m.payload) for m in pending] == [(b, b"b")]
        assert store.outbox_pending(after_id=b) == []
        assert store.stats()["outbox_pending"] == 1

    def test_outbox_survives_reopen(self, tmp_path: Path) -> None:
        with Store(tmp_path / "s.db") as s:
            s.outbox_put("t", b"x", properties={"content_type": "application/json"})
        with Store(tmp_path / "s.db") as s:
            assert [(m.topic, m.properties) for m in s.outbox_pending()] == [("t", {"content_type": "application/json"})]


class TestStats:
    def test_counts_by_source(self, store: Store) -> None:
        store.insert_records([rec(1), rec(2), rec(3, source="mqtt")])
        stats = store.stats()
        assert stats["records"] == {"total": 3, "by_source": {"mqtt": 1, "opcua-1": 2}}
        assert stats["schema_version"] == 3  # 1: records, quarantine, outbox; 2: reports; 3: report_queue

    def test_stats_command_prints_json(self, tmp_path: Path) -> None:
        cfg = tmp_path / "a.toml"
        cfg.write_text(f'[site]\nid = "p"\n[paths]\nstate_dir = "{tmp_path}"\n')
        with Store(tmp_path / "store.sqlite3") as s:
            s.insert_records([rec(1)])
            s.quarantine("mqtt", "t", b"x", "bad")
        out = subprocess.run(
            [sys.executable, "-m", "edge_agent.cli", "store", "stats", "--config", str(cfg)],
            capture_output=True, text=True, check=True,
        ).stdout
        import json

        data = json.loads(out)
        assert (data["records"]["total"], data["quarantined"]["total"], data["outbox_pending"]) == (1, 1, 0)


class TestRetention:
    def test_old_records_are_deleted(self, store: Store) -> None:
        now = T0 + timedelta(days=10)
        store.insert_records([rec(1, received_time=T0), rec(2, received_time=now)])
        assert store.apply_retention(timedelta(days=5), 10**9, now=now) == 1
        assert [r.value for r in store.records()] == [2.0]

    def test_oldest_records_go_first_when_over_size(self, store: Store) -> None:
        store.insert_records([rec(i, raw=os.urandom(2000), received_time=T0 + timedelta(seconds=i)) for i in range(3000)])
        store.apply_retention(timedelta(days=10**4), 2 * 1024 * 1024, now=T0)
        remaining = store.records()
        assert 0 < len(remaining) < 3000
        assert remaining[-1].value == 2999.0  # newest kept
        assert store._used_bytes() <= 2 * 1024 * 1024


class TestMigrations:
    def test_newer_schema_is_refused(self, tmp_path: Path) -> None:
        import sqlite3

        path = tmp_path / "s.db"
        Store(path).close()
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
        with pytest.raises(Exception) as info:
            Store(path)
        assert isinstance(info.value.__cause__, MigrationError) or isinstance(info.value, MigrationError)
        assert "99" in str(info.value)


class TestRecordWriter:
    async def test_write_returns_after_commit_with_new_count(self, store: Store) -> None:
        writer = RecordWriter(store, max_rows=10, max_delay_s=0.05)
        task = asyncio.create_task(writer.run())
        try:
            counts = await asyncio.gather(writer.write([rec(1), rec(2)]), writer.write([rec(2), rec(3)]))
        finally:
            task.cancel()
        assert sorted(counts) == [1, 2]
        assert store.record_count() == 3

    async def test_cancel_commits_what_is_queued(self, store: Store) -> None:
        writer = RecordWriter(store, max_rows=1000, max_delay_s=5.0)
        task = asyncio.create_task(writer.run())
        pending = asyncio.create_task(writer.write([rec(7)]))
        await asyncio.sleep(0.05)
        task.cancel()
        assert await pending == 1
        assert store.record_count() == 1


def test_rows_committed_before_sigkill_survive(tmp_path: Path) -> None:
    """A writer killed with SIGKILL mid-stream leaves every row it reported committed."""
    path = tmp_path / "store.sqlite3"
    script = textwrap.dedent(
        f"""
        import sys
        from tests.test_store import rec
        from edge_agent.store import Store
        s = Store({str(path)!r})
        i = 0
        while True:
            s.insert_records([rec(i * 10 + j) for j in range(10)])
            i += 1
            print(i * 10, flush=True)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1])
    committed = 0
    deadline = time.monotonic() + 30
    while committed < 300 and time.monotonic() < deadline:
        committed = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store(path) as s:
        assert s.record_count() >= committed
        assert s.record_count() % 10 == 0  # batches are atomic
