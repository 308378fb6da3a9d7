"""Bytes caps enforced at insert (`Store.set_caps`): the oldest rows make room, never a record an approved report
holds (`record_holds`, written at approval), and when nothing may go the insert is refused whole (StoreFullError),
so the MQTT ingest waits on the real broker instead of dropping anything."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.base.types import Record, utcnow
from edge_agent.config import StoreConfig
from edge_agent.daemon.storage import RetentionComponent
from edge_agent.reports.document import ReportRepository, decide, hold_approved, new_document, report_id_for
from edge_agent.reports.narrative.generate import KPI_HISTORY, Draft, held_ranges
from edge_agent.reports.request import ResolvedWindow, iso
from edge_agent.store import RetentionPolicy, Store, StoreFullError, to_us
from edge_agent.store.retention import QUARANTINE, RECORDS
from tests.fixtures.broker import Broker
from tests.test_daemon import wait_until
from tests.test_mqtt_ingest import publish, running
from tests.test_store import T0, rec

WINDOW = ResolvedWindow(start=T0, end=T0 + timedelta(hours=8), shift="A", timezone="UTC")


def policy(records_max_bytes: int = 10**12, quarantine_max_bytes: int = 10**12) -> RetentionPolicy:
    return RetentionPolicy(
        max_age=timedelta(days=3650),
        records_max_bytes=records_max_bytes,
        quarantine_max_bytes=quarantine_max_bytes,
        dead_letter_max_bytes=10**12,
    )


def padded(i: int, size: int = 2000, hours: float = 0.0) -> Record:
    """Record i, `hours` after T0 plus i seconds, with `size` bytes of raw payload."""
    return rec(i, raw=os.urandom(size), source_time=T0 + timedelta(hours=hours, seconds=i))


def row_bytes(store: Store, record_id: int) -> int:
    return store._query(f"SELECT {RECORDS.size} FROM records WHERE id = ?", (record_id,))[0][0]


def ids(store: Store) -> set[int]:
    return {r.id for r in store.records()}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite3") as s:
        yield s


@pytest.fixture
def repo(store: Store, tmp_path: Path) -> Iterator[ReportRepository]:
    r = ReportRepository(store.path, tmp_path / "reports")
    yield r
    r.close()


def draft_with_window(repo: ReportRepository, request_id: str, window: ResolvedWindow = WINDOW) -> str:
    """A stored draft whose request has `window` (facts alone: the sign-off does not read the narrative)."""
    body: dict[str, Any] = {
        "schema": "edge-agent.report.body/2",
        "site": "demo",
        "narrative": None,
        "narrative_status": "empty",
        "sections": [],
        "request": {"type": "shift_summary", "window": window.as_json()},
        "facts": [],
    }
    data = canonical_json(body)
    document = new_document(
        report_id=report_id_for("demo", request_id, "operator"),
        request_id=request_id,
        requested_by="operator",
        requested_at=iso(T0),
        formats=["json"],
        draft=Draft(body=body, body_bytes=data, body_sha256=sha256_hex(data)),
        audit_requested=None,
        audit_generated=None,
    )
    repo.insert(document, "0" * 64)
    return str(document["report_id"])


class TestHeldRanges:
    def test_the_ranges_are_what_a_report_reads(self) -> None:
        """Data gaps of any age before the window, the KPI history of alarms and MES events, the whole window."""
        start, end = to_us(WINDOW.start), to_us(WINDOW.end)
        assert held_ranges(WINDOW) == [
            ("data_gap", -(2**63), start),
            ("alarm", to_us(WINDOW.start - KPI_HISTORY), start),
            ("mes_event", to_us(WINDOW.start - KPI_HISTORY), start),
            (None, start, end),
        ]

    def test_approving_holds_the_reports_records_and_rejecting_does_not(self, repo: ReportRepository) -> None:
        approved = draft_with_window(repo, "r-approve")
        rejected = draft_with_window(repo, "r-reject")
        decide(repo, None, report_id=approved, decision="approve", by="supervisor", via="cli")
        decide(repo, None, report_id=rejected, decision="reject", by="supervisor", via="cli")
        holds = repo._conn.execute("SELECT DISTINCT report_id FROM record_holds").fetchall()
        assert holds == [(approved,)]

    def test_reports_approved_before_holds_existed_are_held_at_start(self, repo: ReportRepository) -> None:
        """hold_approved (run when the report service starts) holds approved reports that have no hold yet."""
        report_id = draft_with_window(repo, "r-old")
        decide(repo, None, report_id=report_id, decision="approve", by="supervisor", via="cli")
        repo._conn.execute("DELETE FROM record_holds")  # as a store from before migration 7 has it
        assert hold_approved(repo) == 1
        assert hold_approved(repo) == 0
        assert repo._conn.execute("SELECT COUNT(*) FROM record_holds WHERE report_id = ?", (report_id,)).fetchone()[0]


class TestCapsAtInsert:
    def test_old_uncited_records_go_and_the_approved_reports_stay(self, store: Store, repo: ReportRepository) -> None:
        """Cap ~20 rows: records inside an approved report's window stay whatever their age; the oldest others go
        as new ones arrive, and the table never exceeds its cap after an insert."""
        report_id = draft_with_window(repo, "r-1")
        decide(repo, None, report_id=report_id, decision="approve", by="supervisor", via="cli")
        deleted: list[tuple[str, int]] = []
        store.on_cap_delete = lambda table, rows: deleted.append((table, rows))
        store.insert_records([padded(i, hours=-100) for i in range(5)])  # before the window and its KPI history
        held = [padded(i, hours=1) for i in range(100, 105)]  # inside the window
        store.insert_records(held)
        held_ids = ids(store) - {r.id for r in store.records(end=T0)}
        cap = 20 * row_bytes(store, min(ids(store)))
        store.set_caps(policy(records_max_bytes=cap))
        for n in range(10):
            store.insert_records([padded(1000 + 5 * n + i, hours=30) for i in range(5)])
            assert store.estimated_bytes(RECORDS) <= cap
        assert held_ids <= ids(store)
        assert store.records(end=T0) == []  # the old uncited ones went first
        assert len(ids(store)) <= 20 and sum(rows for _, rows in deleted) == 60 - len(ids(store))
        assert {table for table, _ in deleted} == {"records"}

    def test_when_only_held_records_remain_the_insert_is_refused_whole(
        self, store: Store, repo: ReportRepository
    ) -> None:
        """One uncited old row may go but is not enough: nothing is written, the row it would have deleted stays, and
        no deletion is told to the metric (the transaction rolled back)."""
        report_id = draft_with_window(repo, "r-1")
        decide(repo, None, report_id=report_id, decision="approve", by="supervisor", via="cli")
        store.insert_records([padded(99, hours=-100)])  # before the window and its KPI history: deletable
        store.insert_records([padded(i, hours=1) for i in range(10)])
        before = store.records()
        deleted: list[tuple[str, int]] = []
        store.on_cap_delete = lambda table, rows: deleted.append((table, rows))
        store.set_caps(policy(records_max_bytes=store.estimated_bytes(RECORDS) + 100))
        with pytest.raises(StoreFullError, match="no older row that no approved report holds"):
            store.insert_records([padded(50 + i, hours=30) for i in range(3)])
        assert store.records() == before
        assert deleted == []
        store.set_caps(policy(records_max_bytes=10**9))  # space returns (a larger cap): the same batch goes in
        assert store.insert_records([padded(50 + i, hours=30) for i in range(3)]).count == 3

    def test_age_retention_keeps_held_records_too(self, store: Store, repo: ReportRepository) -> None:
        report_id = draft_with_window(repo, "r-1")
        decide(repo, None, report_id=report_id, decision="approve", by="supervisor", via="cli")
        store.insert_records([padded(i, hours=1) for i in range(3)] + [padded(10 + i, hours=-100) for i in range(3)])
        result = store.apply_retention(policy(), now=T0 + timedelta(days=365 * 20))
        assert result.deleted["records"] == 3
        assert [r.value for r in store.records()] == [0.0, 1.0, 2.0]

    def test_quarantine_keeps_to_its_cap_at_insert(self, store: Store) -> None:
        store.set_caps(policy(quarantine_max_bytes=50_000))
        for i in range(40):
            store.quarantine("mqtt", "plant/x/mes", os.urandom(4000), f"bad {i}")
            assert store.estimated_bytes(QUARANTINE) <= 50_000
        reasons = [q.reason for q in store.quarantined()]
        assert reasons == [f"bad {i}" for i in range(40 - len(reasons), 40)] and 8 <= len(reasons) <= 12

    def test_a_quarantined_payload_larger_than_the_cap_is_refused(self, store: Store) -> None:
        store.set_caps(policy(quarantine_max_bytes=1000))
        with pytest.raises(StoreFullError, match="quarantine at their cap"):
            store.quarantine("mqtt", "plant/x/mes", os.urandom(4000), "bad")
        assert store.quarantined() == []

    def test_the_retention_component_sets_the_caps_and_counts_deletions(self, store: Store) -> None:
        """RetentionComponent (the daemon's) enforces `[store]` caps at insert and counts what they delete."""
        config = StoreConfig.model_validate({"retention_max_mb": 0.05})
        RetentionComponent(store, config)
        metric = {"table": "records"}
        before = REGISTRY.get_sample_value("edge_agent_store_cap_deleted_total", metric) or 0.0
        for n in range(10):
            store.insert_records([padded(10 * n + i, size=4000) for i in range(10)])
        assert store.estimated_bytes(RECORDS) <= 0.05 * 1024 * 1024
        deleted = 100 - store.record_count()
        assert deleted > 80
        assert REGISTRY.get_sample_value("edge_agent_store_cap_deleted_total", metric) == before + deleted


# Each batch: (payload sizes, hours after T0); held windows: (start hour, length in hours).
BATCHES = st.lists(
    st.tuples(st.lists(st.integers(0, 3000), min_size=1, max_size=6), st.sampled_from([-100.0, 1.0, 5.0, 30.0])),
    min_size=1,
    max_size=12,
)


class TestCapProperty:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(BATCHES, st.integers(2_000, 40_000), st.booleans())
    def test_an_insert_fits_the_cap_or_fails_whole_and_held_records_are_never_deleted(
        self, tmp_path_factory: pytest.TempPathFactory, batches: list[tuple[list[int], float]], cap: int, hold: bool
    ) -> None:
        """Any batches, any cap: an insert succeeds exactly when the held rows already stored plus the batch fit the
        cap, leaves the table within its cap, and deletes only unheld rows older than itself; a refused insert
        changes nothing."""
        tmp = tmp_path_factory.mktemp("caps")
        with Store(tmp / "store.sqlite3") as store:
            repo = ReportRepository(store.path, tmp / "reports")
            if hold:
                repo.hold("r", held_ranges(WINDOW))
            store.set_caps(policy(records_max_bytes=cap))
            n = 0
            for sizes, hours in batches:
                batch = [padded(n + i, size=s, hours=hours) for i, s in enumerate(sizes)]
                n += len(sizes)
                before = {r.id: r for r in store.records()}
                held_before = {i for i, r in before.items() if hold and WINDOW.start <= r.source_time < WINDOW.end}
                held_bytes = sum(row_bytes(store, i) for i in held_before)
                try:
                    store.insert_records(batch)
                except StoreFullError:
                    assert {r.id: r for r in store.records()} == before
                    max_id = max(before, default=0)
                    # the batch's own estimate: insert it without a cap into a scratch store
                    with Store(tmp / f"scratch-{n}.sqlite3") as scratch:
                        scratch.insert_records(batch)
                        batch_bytes = scratch.estimated_bytes(RECORDS)
                    assert held_bytes + batch_bytes > cap, (held_bytes, batch_bytes, cap, max_id)
                    continue
                after = ids(store)
                assert store.estimated_bytes(RECORDS) <= cap
                assert held_before <= after
                new = after - set(before)
                assert len(new) == len(batch)  # nothing of the batch itself was deleted
            repo.close()


@pytest.mark.broker
class TestIngestWaitsWhenOnlyHeldRecordsRemain:
    async def test_the_store_full_path_engages_and_nothing_is_lost(
        self, broker: Broker, tmp_path: Path, repo: ReportRepository, store: Store
    ) -> None:
        """A store at its cap holding only an approved report's records: MQTT messages are not stored or
        acknowledged (edge_agent_mqtt_store_full_total climbs, the ingest is not ready); once the cap is raised
        every one is stored exactly once."""
        from edge_agent.config import MqttConfig
        from edge_agent.connectors.mqtt.ingest import MqttIngest
        from edge_agent.store import RecordWriter

        report_id = draft_with_window(repo, "r-1")
        decide(repo, None, report_id=report_id, decision="approve", by="supervisor", via="cli")
        store.insert_records([padded(i, hours=1) for i in range(20)])
        held = store.records()
        store.set_caps(policy(records_max_bytes=store.estimated_bytes(RECORDS) + 500))
        config = MqttConfig.model_validate(
            {
                "host": broker.host,
                "port": broker.port,
                "client_id": "caps-agent",
                "routes": [{"topic": "plant/caps/mes/#", "parser": "json", "kind": "mes_event"}],
            }
        )
        writer = RecordWriter(store, max_rows=50, max_delay_s=0.05)
        ingest = MqttIngest(config, store, writer)
        full = "edge_agent_mqtt_store_full_total"
        full_before = REGISTRY.get_sample_value(full) or 0.0
        async with running(ingest, writer):
            messages = 30
            payloads = [
                {"id": f"caps-{i}", "asset": "P-1", "pad": "x" * 400, "ts": utcnow().isoformat()}
                for i in range(messages)
            ]
            await publish(broker, [("plant/caps/mes/x", json.dumps(p).encode()) for p in payloads])
            await wait_until(lambda: (REGISTRY.get_sample_value(full) or 0.0) >= full_before + 2, timeout=30)
            assert store.records() == held
            assert ingest._waiting_for_space > 0  # not ready while it waits
            store.set_caps(policy(records_max_bytes=10**9))
            await wait_until(lambda: store.record_count() == len(held) + messages, timeout=60)
            await wait_until(lambda: ingest._waiting_for_space == 0, timeout=30)
            stored = [r.value for r in store.records() if r.kind == "mes_event"]
            assert sorted(v["id"] for v in stored) == sorted(f"caps-{i}" for i in range(messages))
