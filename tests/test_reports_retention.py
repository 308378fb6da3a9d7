"""Report retention: drafts and rejections age out (row, holds, file); an approved report never does, whether
`edge-agent store retention` or the running agent's retention component trims them."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.app import AgentContext, build_components
from edge_agent.audit import AuditLog
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.daemon.supervisor import Supervisor
from edge_agent.reports.document import ReportRepository
from edge_agent.store import RecordWriter, Store
from tests.test_audit_bundle import generate

ORIGIN = "edge-agent/retention"


def holds(state: Path) -> list[str]:
    with sqlite3.connect(state / "store.sqlite3") as conn:
        return [row[0] for row in conn.execute("SELECT report_id FROM record_holds ORDER BY report_id")]


def make(state: Path, statuses: dict[str, str]) -> ReportRepository:
    """A report per id with its status, and a record hold on each."""
    repo = ReportRepository.for_state_dir(state)
    with AuditLog.open(state / "audit", ORIGIN) as log:
        for report_id, status in statuses.items():
            document = generate(log, repo, report_id, "Turno A sin novedades.")
            if status != "draft":
                repo.update({**document, "status": status})
            repo.hold(report_id, [(None, 0, 10)])
    return repo


class TestTrimUnapproved:
    def test_old_drafts_and_rejections_go_approved_stay(self, tmp_path: Path) -> None:
        repo = make(tmp_path, {"rpt-d": "draft", "rpt-r": "rejected", "rpt-a": "approved"})
        try:
            deleted = repo.trim_unapproved(timedelta(days=30), now=utcnow() + timedelta(days=31))
            assert sorted(deleted) == ["rpt-d", "rpt-r"]
            assert [r["report_id"] for r in repo.list()] == ["rpt-a"]
            assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["rpt-a.json"]
            assert holds(tmp_path) == ["rpt-a"]  # the approved report's records stay held
        finally:
            repo.close()

    def test_young_reports_stay(self, tmp_path: Path) -> None:
        repo = make(tmp_path, {"rpt-d": "draft"})
        try:
            assert repo.trim_unapproved(timedelta(days=30), now=utcnow() + timedelta(days=29)) == []
            assert (tmp_path / "reports" / "rpt-d.json").exists()
        finally:
            repo.close()

    @settings(max_examples=20, deadline=None)
    @given(st.lists(st.sampled_from(["draft", "rejected", "approved"]), max_size=6))
    def test_no_approved_report_is_ever_deleted(self, statuses: list[str]) -> None:
        """Whatever mix of statuses, exactly the unapproved ones go."""
        with tempfile.TemporaryDirectory() as tmp:
            repo = make(Path(tmp), {f"rpt-{i}": s for i, s in enumerate(statuses)})
            try:
                deleted = repo.trim_unapproved(timedelta(seconds=1), now=utcnow() + timedelta(days=1))
                kept = {r["report_id"] for r in repo.list()}
            finally:
                repo.close()
        assert sorted(deleted) == sorted(f"rpt-{i}" for i, s in enumerate(statuses) if s != "approved")
        assert kept == {f"rpt-{i}" for i, s in enumerate(statuses) if s == "approved"}


def test_store_retention_cli_trims_reports_when_configured(tmp_path: Path) -> None:
    """`edge-agent store retention` with reports.retention_days counts the reports it deleted (none this young)."""
    make(tmp_path / "state", {"rpt-d": "draft"}).close()
    config = tmp_path / "agent.toml"
    state = tmp_path / "state"
    config.write_text(f'[site]\nid = "r"\n[paths]\nstate_dir = "{state}"\n[reports]\nretention_days = 1.0\n')
    done = subprocess.run(
        [sys.executable, "-m", "edge_agent", "store", "retention", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["deleted"]["reports"] == 0


async def test_the_running_agents_retention_pass_trims_old_drafts_never_approved_reports(tmp_path: Path) -> None:
    """An ingest-only agent (no engine, no broker, so no report service) with reports.retention_days of half a
    second and a 50 ms retention interval: the draft and the rejection go, the approved report stays."""
    make(tmp_path, {"rpt-d": "draft", "rpt-r": "rejected", "rpt-a": "approved"}).close()
    config = AgentConfig.model_validate(
        {
            "site": {"id": "r"},
            "paths": {"state_dir": str(tmp_path)},
            "llm": {"enabled": False},
            "mqtt": {"enabled": False},
            "health": {"enabled": False},
            "reports": {"retention_days": 0.5 / 86400},
        }
    )
    with AuditLog.open(config.paths.audit_dir, ORIGIN) as audit, Store(config.paths.store_path) as store:
        supervisor = Supervisor(config.daemon, handle_signals=False)
        ctx = AgentContext(config, store, RecordWriter(store), audit, supervisor.status, retention_interval_s=0.05)
        for component in build_components(ctx):
            supervisor.add(component)
        run = asyncio.create_task(supervisor.run())
        try:
            async with asyncio.timeout(20):
                while (tmp_path / "reports" / "rpt-d.json").exists() or (tmp_path / "reports" / "rpt-r.json").exists():
                    await asyncio.sleep(0.05)
        finally:
            supervisor.request_stop("test done")
            assert await run == 0
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["rpt-a.json"]
    assert holds(tmp_path) == ["rpt-a"]
