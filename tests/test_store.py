"""Store: SQLite WAL, idempotent inserts, quarantine, outbox, retention, and survival of SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.base.types import Record, idempotency_key, utcnow
from edge_agent.config import StoreConfig
from edge_agent.daemon.storage import RETENTION_DELETED, RetentionComponent, retention_policy
from edge_agent.store import Inserted, MigrationError, RecordWriter, RetentionPolicy, Store, StoreError
from edge_agent.store.migrations import MIGRATIONS
from edge_agent.store.retention import OUTBOX, QUARANTINE, RECORDS
from edge_agent.store.rows import INSERT_RECORD, json_value, record_row

T0 = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)


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
        assert store.insert_records([rec(1), rec(2)]) == Inserted(2)
        assert store.insert_records([rec(2), rec(3)]) == Inserted(1)
        assert store.record_count() == 3

    def test_an_id_stored_with_other_content_is_reported_not_skipped(self, store: Store) -> None:
        """Same key, other bytes: not a redelivery. The batch learns which of its records were not taken for that."""
        store.insert_records([rec(1), rec(2)])
        reused = rec(2, raw=b"other", value=-2.0)  # rec(2)'s idempotency key, another message
        assert store.insert_records([rec(3), reused, rec(1)]) == Inserted(1, reused=(1,))
        assert [r.raw for r in store.records()] == [b"1", b"2", b"3"]

    def test_an_id_reused_within_one_batch_is_reported(self, store: Store) -> None:
        assert store.insert_records([rec(1), rec(1), rec(1, raw=b"x")]) == Inserted(1, reused=(2,))

    def test_records_without_bytes_compare_by_their_fields(self, store: Store) -> None:
        """An OPC UA record carries no raw bytes: its fields are its content. A field that differs is a reused id."""
        first = rec(1, raw=b"", value={"message": "high"})
        assert store.insert_records([first, first]) == Inserted(1)
        assert store.insert_records([rec(1, raw=b"", value={"message": "low"})]) == Inserted(0, reused=(0,))
        assert store.insert_records([rec(1, raw=b"", received_time=T0, historical=True)]).reused == (0,)
        same_fields = first.model_copy(update={"received_time": T0, "historical": True})
        assert store.insert_records([same_fields]) == Inserted(0)

    def test_query_by_window_and_key_is_time_ordered(self, store: Store) -> None:
        store.insert_records([rec(5), rec(1), rec(3, key="C-201.temp"), rec(2)])
        got = store.records(T0 + timedelta(seconds=1), T0 + timedelta(seconds=5), keys=["P-101.vibration"])
        assert [r.value for r in got] == [1.0, 2.0]
        assert got[0].source_time == T0 + timedelta(seconds=1)
        assert got[0].raw == b"1"

    def test_naive_times_are_taken_as_utc(self, store: Store) -> None:
        store.insert_records([rec(0, source_time=datetime(2026, 11, 29, 6, 0))])
        assert store.records()[0].source_time == T0

    def test_a_value_with_a_lone_surrogate_reads_back_equal(self, store: Store) -> None:
        """A JSON value holding a lone surrogate (what the escape "\\ud800" decodes to) is stored: no failed batch."""
        store.insert_records([rec(1, value={"text": "a\ud800b", "\udcff": 1}), rec(2)])
        assert [r.value for r in store.records()] == [{"text": "a\ud800b", "\udcff": 1}, 2.0]

    def test_light_rows_are_the_records_fields_in_the_same_order(self, store: Store) -> None:
        """`record_rows` returns what `records` does for the same arguments (a lone surrogate, a null and an object
        value, another kind under the key), as its id, kind, key, source time, value and quality."""
        store.insert_records(
            [rec(5), rec(1, value={"text": "a\ud800b"}), rec(3, key="C-201.temp"), rec(2, value=None, quality="bad")]
        )
        store.insert_records([rec(4, kind="data_gap", value=7)])
        window = (T0 + timedelta(seconds=1), T0 + timedelta(seconds=5))
        for start, end, keys in [(None, None, None), (*window, ["P-101.vibration"])]:
            for kinds, limit in [(None, None), (["tag_value"], None), (None, 3)]:
                full = store.records(start, end, keys=keys, kinds=kinds, limit=limit)
                rows = store.record_rows(start, end, keys=keys, kinds=kinds, limit=limit)
                assert rows == [(r.id, r.kind, r.key, r.source_time, r.value, r.quality) for r in full]
                assert [r.source_time.tzinfo for r in rows] == [UTC] * len(rows)

    @pytest.mark.parametrize(
        "text",
        ["3.14159", "3", "-0.0", "1e400", "NaN", "-Infinity", '{"a": [1, {"b": null}]}', '"x\\ud800"', "true", "null"]
        + [" 1", "1 ", "\t2\n", "[1] ", "1 2", "", "   ", "nul", "[1,", '{"a": 1}x', "12345678901234567890123"],
    )
    def test_a_stored_value_reads_as_json_loads_reads_it(self, text: str) -> None:
        """`json_value` (the store's reader of a value's text) gives what json.loads gives, or raises as it does."""
        try:
            expected: object = json.loads(text)
        except json.JSONDecodeError:
            with pytest.raises(json.JSONDecodeError):
                json_value(text)
            return
        assert repr(json_value(text)) == repr(expected)

    def test_grouped_insert_counts_new_rows_per_group(self, store: Store) -> None:
        assert store.insert_records_grouped([[rec(1)], [rec(1), rec(2)], []]) == [Inserted(1), Inserted(1), Inserted(0)]


class TestQuarantineAndOutbox:
    def test_quarantine_keeps_raw_bytes_and_reason(self, store: Store) -> None:
        qid = store.quarantine("mqtt", "plant/x/mes", b"\xff\xfe{", "invalid UTF-8 at byte 0")
        item = store.quarantined()[0]
        assert (item.id, item.raw, item.reason) == (qid, b"\xff\xfe{", "invalid UTF-8 at byte 0")
        assert store.stats()["quarantined"] == {"total": 1, "by_reason": {"invalid UTF-8 at byte 0": 1}}

    def test_quarantine_accepts_a_topic_with_a_lone_surrogate(self, store: Store) -> None:
        """A str SQLite cannot encode is kept with the surrogate escaped, not refused: bad input must land here."""
        store.quarantine("mqtt\ud800", "plant/\udcff/mes", b"x", "bad \udc80")
        item = store.quarantined()[0]
        assert (item.source, item.topic, item.reason) == ("mqtt\\ud800", "plant/\\udcff/mes", "bad \\udc80")

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
            assert [(m.topic, m.properties) for m in s.outbox_pending()] == [
                ("t", {"content_type": "application/json"})
            ]


class TestDeadLetters:
    def test_a_failure_below_the_limit_counts_an_attempt_and_keeps_the_row(self, store: Store) -> None:
        """outbox_fail under max_attempts returns the attempts so far; the row stays pending."""
        row_id = store.outbox_put("edge/s1/r", b"a")
        assert store.outbox_fail(row_id, "Not authorized", max_attempts=3) == 1
        assert store.outbox_fail(row_id, "Not authorized", max_attempts=3) == 2
        assert [m.id for m in store.outbox_pending()] == [row_id]
        assert store.dead_letters() == []

    def test_the_last_attempt_moves_the_row_with_its_reason(self, store: Store) -> None:
        """At max_attempts the row leaves the outbox and is a dead letter with its id, fields and last reason."""
        row_id = store.outbox_put("edge/s1/r", b"a", qos=1, retain=True, properties={"correlation_data": "0a"})
        store.outbox_fail(row_id, "Quota exceeded", max_attempts=2)
        assert store.outbox_fail(row_id, "Not authorized", max_attempts=2) == 2
        assert store.outbox_pending() == []
        [dead] = store.dead_letters()
        assert (dead.id, dead.topic, dead.payload, dead.qos, dead.retain, dead.properties) == (
            row_id,
            "edge/s1/r",
            b"a",
            1,
            True,
            {"correlation_data": "0a"},
        )
        assert (dead.attempts, dead.reason) == (2, "Not authorized")
        assert dead.failed_time >= dead.created_time
        assert store.stats()["dead_letter"] == 1

    def test_a_row_no_longer_in_the_outbox_counts_nothing(self, store: Store) -> None:
        """outbox_fail on an acknowledged row returns 0 and writes no dead letter."""
        row_id = store.outbox_put("edge/s1/r", b"a")
        store.outbox_ack(row_id)
        assert store.outbox_fail(row_id, "late refusal", max_attempts=1) == 0
        assert store.dead_letters() == []

    def test_an_outbox_id_is_never_reused_while_a_dead_letter_holds_it(self, store: Store) -> None:
        """With the outbox emptied, the next row's id is past every dead letter's (ids are kept in dead_letter)."""
        first = dead_letter(store)
        second = dead_letter(store)
        assert (first, second) == (1, 2)
        assert store.outbox_put("edge/s1/r", b"b") == 3

    def test_requeue_moves_dead_letters_back_whole_and_in_order(self, store: Store) -> None:
        """Requeued rows are pending again with their ids, fields and no attempts; unknown ids are ignored; a later
        failure counts from zero."""
        first = dead_letter(store)
        store.outbox_put("edge/s1/r", b"later")
        second = dead_letter(store)
        assert store.dead_letter_requeue([second, 99, first, first]) == [first, second]
        assert store.dead_letters() == []
        pending = store.outbox_pending()
        assert [m.id for m in pending] == [first, 2, second]
        assert store.outbox_fail(first, "Not authorized", max_attempts=3) == 1
        assert store.dead_letter_requeue([first]) == []  # pending, not dead

    @given(st.lists(st.integers(-5, 12), max_size=12))
    @settings(max_examples=60, deadline=None)
    def test_requeue_of_any_ids_keeps_every_row_in_exactly_one_table(self, ids: list[int]) -> None:
        """Property: whatever ids are asked for, each row ends in the outbox or in dead_letter, never both or
        neither, and exactly the asked dead letters moved."""
        with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s.db") as s:
            dead = [dead_letter(s) for _ in range(4)]
            s.outbox_put("edge/s1/r", b"pending")
            moved = s.dead_letter_requeue(ids)
            assert moved == sorted(set(ids) & set(dead))
            pending = {m.id for m in s.outbox_pending()}
            letters = {d.id for d in s.dead_letters()}
            assert not pending & letters and pending | letters == {*dead, 5}
            assert letters == set(dead) - set(moved)

    def test_a_topic_that_is_not_utf8_is_refused(self, store: Store) -> None:
        """outbox_put names a topic with a lone surrogate instead of storing something else."""
        with pytest.raises(StoreError, match="not valid UTF-8"):
            store.outbox_put("edge/s1/\udc80", b"x")
        assert store.outbox_pending() == []


class TestStats:
    def test_counts_by_source(self, store: Store) -> None:
        store.insert_records([rec(1), rec(2), rec(3, source="mqtt")])
        stats = store.stats()
        assert stats["records"] == {"total": 3, "by_source": {"mqtt": 1, "opcua-1": 2}}
        # 1: records, quarantine, outbox; 2: reports; 3: report_queue; 4: dead letters; 5: reports per requester;
        # 6: sign-off nonces; 7: record holds; 8: the (kind, source_time) index
        assert stats["schema_version"] == 8

    def test_stats_command_prints_json(self, tmp_path: Path) -> None:
        cfg = tmp_path / "a.toml"
        cfg.write_text(f'[site]\nid = "p"\n[paths]\nstate_dir = "{tmp_path}"\n')
        with Store(tmp_path / "store.sqlite3") as s:
            s.insert_records([rec(1)])
            s.quarantine("mqtt", "t", b"x", "bad")
        out = subprocess.run(
            [sys.executable, "-m", "edge_agent.cli", "store", "stats", "--config", str(cfg)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        data = json.loads(out)
        assert (data["records"]["total"], data["quarantined"]["total"], data["outbox_pending"]) == (1, 1, 0)

    def test_dead_letters_are_listed_and_requeued_from_the_command_line(self, tmp_path: Path) -> None:
        """`store dead-letters` lists what failed and why; `store requeue` puts them back (exit 1 naming an id that
        was not a dead letter, the others requeued all the same)."""
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[site]\nid = "p"\n[paths]\nstate_dir = "{tmp_path}"\n')
        with Store(tmp_path / "store.sqlite3") as s:
            row = dead_letter(s, reason="PUBLISH to 'edge/s1/r' is 2024 bytes, over the broker's 1024-byte maximum")

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "edge_agent.cli", "store", *args, "--config", str(cfg)]
            return subprocess.run(command, capture_output=True, text=True, check=False)

        listed = cli("dead-letters")
        assert listed.returncode == 0
        [entry] = json.loads(listed.stdout)
        assert (entry["id"], entry["topic"], entry["payload_bytes"], entry["attempts"]) == (row, "edge/s1/r", 1, 1)
        assert entry["reason"].endswith("over the broker's 1024-byte maximum")
        requeued = cli("requeue", str(row), "7")
        assert requeued.returncode == 1
        assert json.loads(requeued.stdout) == {"requeued": [row], "not_dead_letters": [7]}
        assert json.loads(cli("dead-letters").stdout) == []
        with Store(tmp_path / "store.sqlite3") as s:
            assert [m.id for m in s.outbox_pending()] == [row]


def policy(**caps: object) -> RetentionPolicy:
    """Generous caps (nothing trimmed) except those given."""
    fields: dict[str, object] = dict(
        max_age=timedelta(days=10**4),
        records_max_bytes=10**12,
        quarantine_max_bytes=10**12,
        dead_letter_max_bytes=10**12,
    )
    fields.update(caps)
    return RetentionPolicy(**fields)


def dead_letter(store: Store, topic: str = "edge/s1/r", reason: str = "Not authorized") -> int:
    """Queue a row and refuse it once with max_attempts 1: it moves to dead_letter. Returns its id."""
    row_id = store.outbox_put(topic, b"x")
    store.outbox_fail(row_id, reason, max_attempts=1)
    return row_id


class TestRetention:
    def test_old_records_are_deleted(self, store: Store) -> None:
        """Records received before now - max_age go; younger ones stay."""
        now = T0 + timedelta(days=10)
        store.insert_records([rec(1, received_time=T0), rec(2, received_time=now)])
        result = store.apply_retention(policy(max_age=timedelta(days=5)), now=now)
        assert result.deleted == {"records": 1, "quarantine": 0, "dead_letter": 0}
        assert [r.value for r in store.records()] == [2.0]

    def test_oldest_records_go_first_when_over_their_cap(self, store: Store) -> None:
        """Past records_max_bytes the oldest records go until the records' own estimate fits; the newest stay."""
        store.insert_records(
            [rec(i, raw=os.urandom(2000), received_time=T0 + timedelta(seconds=i)) for i in range(3000)]
        )
        store.apply_retention(policy(records_max_bytes=2 * 1024 * 1024), now=T0)
        remaining = store.records()
        assert 0 < len(remaining) < 3000
        assert [r.value for r in remaining] == [float(i) for i in range(3000 - len(remaining), 3000)]
        assert store.estimated_bytes(RECORDS) <= 2 * 1024 * 1024

    def test_a_quarantine_flood_deletes_no_record(self, store: Store) -> None:
        """A quarantine grown far past its cap is trimmed on its own: every record stays."""
        store.insert_records([rec(i, received_time=T0) for i in range(100)])
        for i in range(500):
            store.quarantine("mqtt", "plant/x/mes", os.urandom(4000), "bad JSON", T0 + timedelta(seconds=i))
        result = store.apply_retention(policy(records_max_bytes=10**6, quarantine_max_bytes=100_000), now=T0)
        assert store.record_count() == 100
        assert result.deleted["records"] == 0
        assert 0 < len(store.quarantined()) < 500
        assert store.estimated_bytes(QUARANTINE) <= 100_000

    def test_quarantine_keeps_its_newest_rows(self, store: Store) -> None:
        """Quarantine past its cap loses its oldest rows first."""
        for i in range(50):
            store.quarantine("mqtt", "t", os.urandom(1000), f"bad {i}", T0 + timedelta(seconds=i))
        store.apply_retention(policy(quarantine_max_bytes=10_000), now=T0)
        reasons = [item.reason for item in store.quarantined()]
        assert reasons == [f"bad {i}" for i in range(50 - len(reasons), 50)]

    def test_old_quarantine_rows_are_deleted(self, store: Store) -> None:
        """Quarantine rows older than max_age go, as records do."""
        store.quarantine("mqtt", "t", b"x", "old", T0)
        store.quarantine("mqtt", "t", b"x", "new", T0 + timedelta(days=10))
        store.apply_retention(policy(max_age=timedelta(days=5)), now=T0 + timedelta(days=10))
        assert [item.reason for item in store.quarantined()] == ["new"]

    def test_dead_letters_are_capped_on_their_own(self, store: Store) -> None:
        """Dead letters past their cap lose the oldest; records and the outbox are untouched."""
        store.insert_records([rec(1, received_time=T0)])
        ids = [dead_letter(store, reason=f"refused {i}") for i in range(20)]
        pending = store.outbox_put("edge/s1/r", b"pending")
        result = store.apply_retention(policy(dead_letter_max_bytes=500), now=T0)
        left = [d.id for d in store.dead_letters()]
        assert 0 < len(left) < 20
        assert left == ids[-len(left) :]
        assert result.deleted["dead_letter"] == 20 - len(left)
        assert store.record_count() == 1
        assert [m.id for m in store.outbox_pending()] == [pending]

    def test_the_outbox_is_never_trimmed_but_its_size_is_reported(self, store: Store) -> None:
        """However old and large, pending outbox rows stay; the result gives their count and estimated bytes."""
        for _ in range(10):
            store.outbox_put("edge/s1/r", b"x" * 1000)
        result = store.apply_retention(
            policy(max_age=timedelta(seconds=1), records_max_bytes=0, quarantine_max_bytes=0, dead_letter_max_bytes=0),
            now=T0 + timedelta(days=10**4),
        )
        assert len(store.outbox_pending()) == 10
        assert (result.outbox_rows, result.outbox_bytes) == (10, store.estimated_bytes(OUTBOX))
        assert result.outbox_bytes > 10 * 1000

    def test_reports_are_never_deleted(self, store: Store) -> None:
        """Retention leaves the reports table alone: reports are audit evidence."""
        store._write(
            "INSERT INTO reports (report_id, requester, request_id, request_sha256, type, status, body_sha256,"
            " created_time_us, updated_time_us, document) VALUES ('r1', '', 'q1', 'h', 'shift_summary', 'draft', 'b',"
            " 0, 0, '{}')",
            [()],
        )
        store.apply_retention(
            policy(max_age=timedelta(seconds=1), records_max_bytes=0, quarantine_max_bytes=0, dead_letter_max_bytes=0),
            now=T0,
        )
        assert store._query("SELECT report_id FROM reports") == [("r1",)]

    def test_retention_command_prints_rows_deleted_per_table(self, tmp_path: Path) -> None:
        """`edge-agent store retention` applies [store]'s caps and prints what each table lost and the outbox."""
        cfg = tmp_path / "a.toml"
        cfg.write_text(f'[site]\nid = "p"\n[paths]\nstate_dir = "{tmp_path}"\n[store]\nretention_days = 1.0\n')
        with Store(tmp_path / "store.sqlite3") as s:
            s.insert_records([rec(1, received_time=T0)])
        out = subprocess.run(
            [sys.executable, "-m", "edge_agent.cli", "store", "retention", "--config", str(cfg)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert json.loads(out) == {
            "deleted": {"records": 1, "quarantine": 0, "dead_letter": 0},
            "outbox_rows": 0,
            "outbox_bytes": 0,
        }


class TestEstimate:
    """`estimated_bytes` against the bytes SQLite's dbstat reports for the table and its indexes."""

    def actual_bytes(self, store: Store, table: str) -> int:
        return store._query(
            "SELECT SUM(pgsize) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)", (table,)
        )[0][0]

    def test_typical_records_are_within_a_tenth(self, store: Store) -> None:
        """10,000 records like the plant's (numbers, MES-like objects) take 1.0-1.1x their estimate."""
        store.insert_records(
            [
                rec(
                    i,
                    value={"text": "Se cambió el sello mecánico de P-101", "n": i} if i % 3 == 0 else float(i),
                    raw=json.dumps({"v": i, "ts": "2026-11-29T06:15:00Z"}).encode(),
                )
                for i in range(10_000)
            ]
        )
        ratio = self.actual_bytes(store, "records") / store.estimated_bytes(RECORDS)
        assert 1.0 <= ratio <= 1.1

    def test_quarantine_is_within_a_tenth(self, store: Store) -> None:
        """10,000 quarantined payloads of 0-300 bytes take 1.0-1.1x their estimate."""
        for i in range(10_000):
            store.quarantine("mqtt", "plant/l1/mes/downtime", os.urandom(i % 300), "invalid JSON: Expecting value")
        ratio = self.actual_bytes(store, "quarantine") / store.estimated_bytes(QUARANTINE)
        assert 1.0 <= ratio <= 1.1

    def test_an_empty_table_is_zero_bytes(self, store: Store) -> None:
        assert store.estimated_bytes(RECORDS) == 0


class TestMigrations:
    def test_newer_schema_is_refused(self, tmp_path: Path) -> None:
        path = tmp_path / "s.db"
        Store(path).close()
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
        with pytest.raises(Exception) as info:
            Store(path)
        assert isinstance(info.value.__cause__, MigrationError) or isinstance(info.value, MigrationError)
        assert "99" in str(info.value)

    @pytest.mark.parametrize("index_made_by_hand", [False, True])
    def test_a_schema_7_store_gains_the_kind_index_and_keeps_its_records(
        self, tmp_path: Path, index_made_by_hand: bool
    ) -> None:
        path = tmp_path / "s.db"
        old = [rec(1), rec(2, kind="alarm", key="P-101"), rec(3, key="C-201.temp")]
        conn = sqlite3.connect(path, isolation_level=None)
        for version, script in enumerate(MIGRATIONS[:7], start=1):
            conn.executescript(f"BEGIN; {script} PRAGMA user_version = {version}; COMMIT;")
        conn.executemany(INSERT_RECORD, [record_row(r) for r in old])
        if index_made_by_hand:
            conn.execute("CREATE INDEX records_kind_time ON records (kind, source_time_us)")
        conn.close()
        for _ in range(2):  # the second open finds version 8 and changes nothing
            with Store(path) as store:
                assert store.schema_version == 8
                assert [(r.kind, r.key, r.value) for r in store.records()] == [(r.kind, r.key, r.value) for r in old]
        conn = sqlite3.connect(path)
        indexes = conn.execute("SELECT name, sql FROM sqlite_master WHERE tbl_name = 'records' AND type = 'index'")
        assert [sql for name, sql in indexes if name == "records_kind_time"] == [
            "CREATE INDEX records_kind_time ON records (kind, source_time_us)"
        ]
        assert conn.execute("PRAGMA user_version").fetchone() == (8,)
        conn.close()


def query_plan(store: Store, read: Callable[[], object]) -> list[str]:
    """The query plan of the one SELECT `read` runs on the store's connection, as SQLite explains it."""
    ran: list[str] = []
    store._conn.set_trace_callback(ran.append)
    try:
        read()
    finally:
        store._conn.set_trace_callback(None)
    (select,) = [sql for sql in ran if sql.startswith("SELECT")]
    return [row[3] for row in store._conn.execute(f"EXPLAIN QUERY PLAN {select}")]


class TestQueryPlans:
    START, END = T0, T0 + timedelta(days=7)

    def test_a_window_of_one_kind_reads_through_the_kind_index(self, store: Store) -> None:
        plan = query_plan(store, lambda: store.records(self.START, self.END, kinds=["alarm"]))
        assert plan == [
            "SEARCH records USING INDEX records_kind_time (kind=? AND source_time_us>? AND source_time_us<?)"
        ]

    def test_kinds_before_a_time_read_through_the_kind_index(self, store: Store) -> None:
        plan = query_plan(store, lambda: store.records(None, self.END, kinds=["data_gap"]))
        assert plan == ["SEARCH records USING INDEX records_kind_time (kind=? AND source_time_us<?)"]

    def test_a_window_of_given_keys_reads_through_the_key_index_whatever_the_kinds(self, store: Store) -> None:
        plan = query_plan(store, lambda: store.records(self.START, self.END, keys=["P-101"], kinds=["tag_value"]))
        assert plan == ["SEARCH records USING INDEX records_key_time (key=? AND source_time_us>? AND source_time_us<?)"]

    def test_a_window_of_every_kind_reads_through_the_time_index(self, store: Store) -> None:
        plan = query_plan(store, lambda: store.records(self.START, self.END))
        assert plan == ["SEARCH records USING INDEX records_time (source_time_us>? AND source_time_us<?)"]


class TestRecordWriter:
    async def test_write_returns_after_commit_with_new_count(self, store: Store) -> None:
        writer = RecordWriter(store, max_rows=10, max_delay_s=0.05)
        task = asyncio.create_task(writer.run())
        try:
            counts = await asyncio.gather(writer.write([rec(1), rec(2)]), writer.write([rec(2), rec(3)]))
        finally:
            task.cancel()
        assert sorted(c.count for c in counts) == [1, 2]
        assert store.record_count() == 3

    async def test_cancel_commits_what_is_queued(self, store: Store) -> None:
        writer = RecordWriter(store, max_rows=1000, max_delay_s=5.0)
        task = asyncio.create_task(writer.run())
        pending = asyncio.create_task(writer.write([rec(7)]))
        await asyncio.sleep(0.05)
        task.cancel()
        assert await pending == Inserted(1)
        assert store.record_count() == 1


class TestRetentionComponent:
    async def test_applies_the_configured_caps_at_start(self, store: Store) -> None:
        """The component trims at once with [store]'s options and counts the rows deleted per table."""
        long_ago = utcnow() - timedelta(days=60)
        store.insert_records([rec(1, received_time=long_ago), rec(2)])
        store.quarantine("mqtt", "t", b"x", "bad", long_ago)
        before = RETENTION_DELETED.labels(table="records")._value.get()
        component = RetentionComponent(store, StoreConfig(retention_days=30), interval_s=3600)
        task = asyncio.create_task(component.run(asyncio.Event()))
        try:
            async with asyncio.timeout(10):
                # Each table is trimmed in its own transaction: wait for the quarantine's too.
                while store.record_count() != 1 or store.quarantined():
                    await asyncio.sleep(0.01)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert [r.value for r in store.records()] == [2.0]
        assert store.quarantined() == []
        assert RETENTION_DELETED.labels(table="records")._value.get() == before + 1

    def test_policy_comes_from_the_store_section(self) -> None:
        """retention_policy turns days and megabytes into the store's policy."""
        config = StoreConfig(retention_days=2, retention_max_mb=1, quarantine_max_mb=0.5, dead_letter_max_mb=2)
        assert retention_policy(config) == RetentionPolicy(
            max_age=timedelta(days=2),
            records_max_bytes=1024 * 1024,
            quarantine_max_bytes=512 * 1024,
            dead_letter_max_bytes=2 * 1024 * 1024,
        )


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
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[1]
    )
    committed = 0
    deadline = time.monotonic() + 30
    while committed < 300 and time.monotonic() < deadline:
        committed = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with Store(path) as s:
        assert s.record_count() >= committed
        assert s.record_count() % 10 == 0  # batches are atomic
