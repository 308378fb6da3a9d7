"""`edge-agent audit pubkey|rotate-key|export` as an operator runs them."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from edge_agent.audit import AuditLog
from edge_agent.audit.verify import verify_bundle, verify_log
from edge_agent.signing import Verifier


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "audit", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "edge-agent.toml"
    path.write_text(
        f'[site]\nid = "cli-site"\n\n[paths]\nstate_dir = "{tmp_path / "state"}"\n\n'
        '[audit]\norigin = "edge-agent/cli-origin"\n',
        encoding="utf-8",
    )
    return path


def test_pubkey_creates_the_key_on_first_use_and_prints_the_verifier_key(config: Path, tmp_path: Path) -> None:
    """First run creates the log and key; the printed line is the note verifier key named by audit.origin."""
    run = cli("pubkey", "--config", str(config))
    assert run.returncode == 0, run.stderr
    key = Verifier.parse(run.stdout)  # stdout is exactly the key line: `audit pubkey > plant.pub` works
    assert run.stdout == key.key_string() + "\n"
    assert key.name == "edge-agent/cli-origin"
    again = cli("pubkey", "--config", str(config))
    assert again.stdout == run.stdout


def test_rotate_key_then_verify_with_the_new_key(config: Path, tmp_path: Path) -> None:
    """rotate-key prints both keys; the log verifies against the new one."""
    cli("pubkey", "--config", str(config))
    run = cli("rotate-key", "--config", str(config), "--actor", "operator:maria")
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["previous"] != out["key"] and out["seq"] == 1
    assert verify_log(tmp_path / "state" / "audit", pubkey=Verifier.parse(out["key"])).ok


def test_rotate_key_refuses_while_the_agent_holds_the_log(config: Path, tmp_path: Path) -> None:
    """With the log open elsewhere, rotation is refused with a clear message and exit 1."""
    with AuditLog.open(tmp_path / "state" / "audit", "edge-agent/cli-origin"):
        run = cli("rotate-key", "--config", str(config))
    assert run.returncode == 1
    assert "stop the agent first" in run.stderr


def test_export_recorded_when_the_log_is_free(config: Path, tmp_path: Path) -> None:
    """Export with the agent stopped records audit.export and writes a verifiable .tar.gz."""
    with AuditLog.open(tmp_path / "state" / "audit", "edge-agent/cli-origin") as log:
        log.append("agent.start", "agent", {})
        key = log.verifier
    out = tmp_path / "bundle.tar.gz"
    run = cli("export", "--config", str(config), "--out", str(out), "--actor", "operator:auditor")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["recorded_in_log"] is True and summary["entries"] == 3
    assert summary["verification"].startswith("OK: 3 entries")
    assert verify_bundle(out, key).ok


def test_export_while_the_agent_runs_uses_its_latest_checkpoint(config: Path, tmp_path: Path) -> None:
    """With the log held, export proves against the agent's last checkpoint and says it was not recorded."""
    with AuditLog.open(tmp_path / "state" / "audit", "edge-agent/cli-origin") as log:
        log.append("agent.start", "agent", {})
        log.checkpoint()
        log.append("ingest.batch", "mqtt", {"count": 1})  # not yet signed: not exported
        run = cli("export", "--config", str(config), "--out", str(tmp_path / "b"))
        key = log.verifier
    assert run.returncode == 0, run.stderr
    assert "not recorded in it" in run.stderr
    summary = json.loads(run.stdout)
    assert (summary["recorded_in_log"], summary["entries"], summary["checkpoint_size"]) == (False, 2, 2)
    assert verify_bundle(tmp_path / "b", key).ok


def test_export_lists_reports_it_cannot_vouch_for(config: Path, tmp_path: Path) -> None:
    """A report file that does not bind to its entries is left out, and the export's JSON says why."""
    with AuditLog.open(tmp_path / "state" / "audit", "edge-agent/cli-origin") as log:
        log.append("report.generated", "reports", {"report_id": "rpt-x", "body_sha256": "ab" * 32})
    (tmp_path / "state" / "reports").mkdir()
    (tmp_path / "state" / "reports" / "rpt-x.json").write_text('{"report_id": "rpt-x", "status": "approved"}\n')
    run = cli("export", "--config", str(config), "--out", str(tmp_path / "b"))
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert (summary["reports"], summary["missing_reports"]) == ([], [])
    assert summary["unbound_reports"] == {"rpt-x": "not a report document: request_id: Field required"}


def test_verify_bundle_refuses_an_unsafe_archive_naming_the_member(tmp_path: Path) -> None:
    """A .tar.gz with a path-traversal member exits 1 naming it, and writes nothing next to the archive."""
    with tarfile.open(tmp_path / "evil.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("b/../../evil")
        tar.addfile(info, io.BytesIO(b""))
    run = cli("verify-bundle", str(tmp_path / "evil.tar.gz"))
    assert run.returncode == 1
    assert run.stderr.strip() == "audit verify-bundle: FAILED: archive member 'b/../../evil' has a '..' component"
    assert [p.name for p in tmp_path.iterdir()] == ["evil.tar.gz"]
