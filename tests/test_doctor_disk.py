"""Doctor's disk check counts what no cap bounds (the audit log, the reports, the outbox) and warns before it fills."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from edge_agent.audit import AuditLog
from edge_agent.config import AgentConfig
from edge_agent.doctor.disk import (
    DISK_WARN_DAYS,
    MIB,
    OUTBOX_WARN_MIB,
    StateUsage,
    growth_verdict,
    measure_state,
    outbox_verdict,
)
from edge_agent.doctor.files import check_disk
from edge_agent.store import Store
from edge_agent.store.retention import OUTBOX_OVERHEAD


def usage(audit: int = 0, reports: int = 0, age_days: float | None = 10.0, outbox: int | None = 0) -> StateUsage:
    return StateUsage(audit, reports, 1, outbox, 0 if outbox is not None else None, age_days)


class TestMeasure:
    def test_counts_the_audit_log_the_reports_and_the_outbox(self, tmp_path: Path) -> None:
        """Bytes of the audit dir and of reports/*.json; the outbox's rows by the retention estimate."""
        with AuditLog.open(tmp_path / "audit", "edge-agent/disk") as log:
            log.append("agent.start", "agent", {})
        (tmp_path / "reports").mkdir()
        (tmp_path / "reports" / "rpt-1.json").write_bytes(b"x" * 1000)
        (tmp_path / "reports" / "rpt-2.json").write_bytes(b"y" * 24)
        with Store(tmp_path / "store.sqlite3") as store:
            store.outbox_put("t/reply", b"p" * 100)
        found = measure_state(tmp_path, tmp_path / "audit", now=datetime.now(UTC) + timedelta(days=2))
        audit = sum(p.stat().st_size for p in (tmp_path / "audit").rglob("*") if p.is_file())
        assert (found.audit, found.reports, found.report_files) == (audit, 1024, 2)
        # topic 7 + payload 100 + properties "{}" 2 + the row overhead
        assert (found.outbox, found.outbox_rows) == (7 + 100 + 2 + OUTBOX_OVERHEAD, 1)
        assert found.age_days is not None and 1.99 < found.age_days < 2.01

    def test_an_empty_state_dir_counts_nothing(self, tmp_path: Path) -> None:
        assert measure_state(tmp_path, tmp_path / "audit") == StateUsage(0, 0, 0, 0, 0, None)

    def test_check_disk_names_every_part(self, tmp_path: Path) -> None:
        """The finding carries the audit log, reports and outbox sizes beside the free space."""
        config = AgentConfig.model_validate({"site": {"id": "disk"}, "paths": {"state_dir": str(tmp_path)}})
        check = check_disk(config)
        assert "audit log 0.0 MiB, reports 0.0 MiB (0 files), outbox 0.0 MiB (0 replies)" in check.detail


class TestVerdicts:
    def test_growth_warns_when_the_disk_fills_within_the_threshold(self) -> None:
        """10 MiB of audit log over 10 days is 1 MiB/day: 20 MiB spare is 20 days (warn), 40 MiB is 40 (ok)."""
        assert growth_verdict(20 * MIB, usage(audit=10 * MIB)) == (
            "warn",
            "the audit log and reports grow 1.00 MiB/day: the disk fills in about 20 days",
        )
        assert growth_verdict(40 * MIB, usage(audit=8 * MIB, reports=2 * MIB))[0] == "ok"

    def test_a_young_log_is_measured_over_a_day(self) -> None:
        """An hour-old log's 1 MiB is 1 MiB/day, not 24."""
        assert "grow 1.00 MiB/day" in growth_verdict(100 * MIB, usage(audit=MIB, age_days=1 / 24))[1]

    def test_no_entries_is_no_growth(self) -> None:
        assert growth_verdict(0, usage(age_days=None))[0] == "ok"

    def test_the_outbox_warns_over_its_threshold(self) -> None:
        assert outbox_verdict(usage(outbox=OUTBOX_WARN_MIB * MIB)) is None
        over = outbox_verdict(usage(outbox=OUTBOX_WARN_MIB * MIB + 1))
        assert over is not None and over.startswith("the outbox holds 50 MiB of unpublished replies")
        assert outbox_verdict(usage(outbox=None)) == "the store's outbox could not be read"

    @given(
        st.integers(0, 1 << 50),
        st.integers(0, 1 << 40),
        st.integers(0, 1 << 40),
        st.one_of(st.none(), st.floats(0, 1e5)),
    )
    def test_growth_warns_exactly_when_days_left_are_under_the_threshold(
        self, spare: int, audit: int, reports: int, age: float | None
    ) -> None:
        status, _ = growth_verdict(spare, usage(audit, reports, age))
        if age is None or audit + reports == 0:
            assert status == "ok"
        else:
            days = spare / ((audit + reports) / max(age, 1.0))
            assert status == ("warn" if days < DISK_WARN_DAYS else "ok")
