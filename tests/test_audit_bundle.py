"""Export bundles: offline round trip, consistency with the previous export, and tampering inside a bundle."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from edge_agent.audit import AuditLog, Signer
from edge_agent.audit.checkpoint import Checkpoint, SignedNote, sign_checkpoint
from edge_agent.audit.export import ExportError, ExportResult, export_bundle
from edge_agent.audit.keys import Verifier
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.verify import verify_bundle

ORIGIN = "edge-agent/bundle-site"
T0 = datetime(2026, 11, 29, 6, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


@pytest.fixture
def state(tmp_path: Path) -> Path:
    """A state dir with 30 entries (one report generated and signed off) and its report file."""
    state = tmp_path / "state"
    (state / "reports").mkdir(parents=True)
    (state / "reports" / "rpt-1.json").write_text('{"report_id": "rpt-1", "status": "approved"}\n')
    with AuditLog.open(state / "audit", ORIGIN, checkpoint_every_entries=8, clock=Clock()) as log:
        log.append("model.loaded", "engine", {"manifest_sha256": "aa" * 32, "engine": "vllm 0.32.0"})
        for i in range(25):
            log.append("ingest.batch", "mqtt", {"count": 10, "first_id": i * 10})
        log.append("report.generated", "reports", {"report_id": "rpt-1", "output_sha256": "bb" * 32})
        log.append("report.signed_off", "operator:alice", {"report_id": "rpt-1"})
        log.append("report.generated", "reports", {"report_id": "rpt-gone"})
    return state


def export(state: Path, out: Path, **kw: object) -> ExportResult:
    with AuditLog.open(state / "audit", ORIGIN, clock=Clock()) as log:
        return export_bundle(state / "audit", out, reports_dir=state / "reports", log=log, **kw)


def pubkey(state: Path) -> Verifier:
    return read_verifiers(state / "audit")[-1]


class TestRoundTrip:
    def test_bundle_verifies_offline_with_the_public_key(self, state: Path, tmp_path: Path) -> None:
        """Export, move the bundle away from the state dir, verify with only the bundle and the key."""
        result = export(state, tmp_path / "b1")
        assert result.verification.ok, result.verification.summary()
        trusted = pubkey(state)  # what the auditor was given by the plant, out of band
        moved = tmp_path / "elsewhere" / "bundle"
        shutil.move(tmp_path / "b1", moved)
        shutil.rmtree(state)
        check = verify_bundle(moved, trusted)
        assert check.ok, check.summary()
        assert (check.entries, check.signed_size, check.notes) == (31, 31, [])

    def test_without_a_key_the_bundle_is_only_self_consistent_and_says_so(self, state: Path, tmp_path: Path) -> None:
        """No --pubkey: the bundle's own pubkey.txt is used and a note warns that origin is not proven."""
        export(state, tmp_path / "b1")
        check = verify_bundle(tmp_path / "b1")
        assert check.ok
        assert any("trusted the bundle's own pubkey.txt" in note for note in check.notes)

    def test_bundle_holds_every_documented_file(self, state: Path, tmp_path: Path) -> None:
        """Entries, checkpoint, proofs, consistency, keys, reports, CSV, HTML and SHA256SUMS."""
        export(state, tmp_path / "b1")
        names = sorted(p.relative_to(tmp_path / "b1").as_posix() for p in (tmp_path / "b1").rglob("*") if p.is_file())
        assert names == [
            "SHA256SUMS", "checkpoint", "consistency.json", "entries.csv", "entries.jsonl", "inclusion.jsonl",
            "keys.txt", "manifest.json", "pubkey.txt", "reports/rpt-1.json", "summary.html",
        ]
        manifest = json.loads((tmp_path / "b1" / "manifest.json").read_text())
        assert manifest["reports"] == ["rpt-1"] and manifest["missing_reports"] == ["rpt-gone"]
        rows = list(csv.reader(open(tmp_path / "b1" / "entries.csv", encoding="utf-8")))
        assert rows[0] == ["seq", "time", "actor", "event", "payload", "prev_hash", "entry_hash"]
        assert len(rows) == 1 + 31
        run = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=tmp_path / "b1", capture_output=True)
        assert run.returncode == 0, run.stdout

    def test_export_is_recorded_in_the_log(self, state: Path, tmp_path: Path) -> None:
        """The export appends audit.export, and the bundle's checkpoint covers it."""
        result = export(state, tmp_path / "b1")
        last = json.loads((state / "audit" / "entries.jsonl").read_bytes().splitlines()[-1])
        assert last["event"] == "audit.export"
        assert last["payload"]["checkpoint_size"] == result.checkpoint_size == last["seq"] + 1

    def test_summary_shows_reports_fingerprints_and_verification(self, state: Path, tmp_path: Path) -> None:
        """The HTML names the signed-off report, the model fingerprint and the verification outcome."""
        export(state, tmp_path / "b1")
        html = (tmp_path / "b1" / "summary.html").read_text()
        assert "rpt-1" in html and "signed off" in html and "operator:alice" in html
        assert "aa" * 32 in html and "vllm 0.32.0" in html
        assert "OK: 31 entries" in html
        digest = hashlib.sha256((state / "reports" / "rpt-1.json").read_bytes()).hexdigest()
        assert digest in html

    def test_time_range_selects_a_contiguous_seq_range(self, state: Path, tmp_path: Path) -> None:
        """--from/--to pick entries by time; proofs still lead to the full tree's checkpoint."""
        result = export(state, tmp_path / "b1", start=T0 + timedelta(minutes=5), end=T0 + timedelta(minutes=9))
        assert (result.first_seq, result.last_seq) == (4, 8)
        check = verify_bundle(tmp_path / "b1", pubkey(state))
        assert check.ok, check.summary()
        assert check.entries == 5

    def test_empty_range_is_an_error(self, state: Path, tmp_path: Path) -> None:
        """A range with no entries says so rather than writing an empty bundle."""
        with pytest.raises(ExportError, match="no entries between"):
            export(state, tmp_path / "b1", start=T0 + timedelta(days=3))

    def test_second_export_proves_consistency_with_the_first(self, state: Path, tmp_path: Path) -> None:
        """The next bundle carries the previous export's checkpoint and a proof that this tree extends it."""
        first = export(state, tmp_path / "b1")
        with AuditLog.open(state / "audit", ORIGIN, clock=Clock()) as log:
            log.append("agent.stop", "agent", {})
        second = export(state, tmp_path / "b2.tar.gz")
        assert second.previous_size == first.checkpoint_size
        check = verify_bundle(tmp_path / "b2.tar.gz", pubkey(state))
        assert check.ok, check.summary()
        assert f"extends the previous export's checkpoint of size {first.checkpoint_size}" in check.notes

    def test_cli_verify_bundle_offline(self, state: Path, tmp_path: Path) -> None:
        """`edge-agent audit verify-bundle PATH --pubkey FILE` needs no config and exits 0."""
        export(state, tmp_path / "b1.tar.gz")
        key_file = tmp_path / "trusted.pub"
        key_file.write_text(pubkey(state).key_string() + "\n")
        run = subprocess.run(
            [sys.executable, "-m", "edge_agent", "audit", "verify-bundle", str(tmp_path / "b1.tar.gz"),
             "--pubkey", str(key_file)],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("OK: 31 entries")


class TestBundleTampering:
    @pytest.fixture
    def bundle(self, state: Path, tmp_path: Path) -> Path:
        export(state, tmp_path / "b1")
        return tmp_path / "b1"

    def test_altered_entry_is_located(self, bundle: Path, state: Path) -> None:
        """Changing entry 12's payload in the bundle names entry 12."""
        lines = (bundle / "entries.jsonl").read_bytes().splitlines()
        lines[12] = lines[12].replace(b'"count":10', b'"count":11')
        (bundle / "entries.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
        check = verify_bundle(bundle, pubkey(state))
        assert check.problem is not None and check.problem.seq == 12

    def test_altered_entry_with_recomputed_hashes_fails_inclusion(self, bundle: Path, state: Path) -> None:
        """Even with the chain and the proof file's leaf hash redone, the entry is not in the signed tree."""
        from edge_agent.audit.entry import AuditEntry
        from edge_agent.audit.merkle import leaf_hash

        lines = (bundle / "entries.jsonl").read_bytes().splitlines()
        entries = [AuditEntry.from_line(x) for x in lines]
        redone = entries[:30]
        e = entries[30]
        redone.append(AuditEntry.create(e.seq, e.time, "operator:mallory", e.event, e.payload, e.prev_hash))
        (bundle / "entries.jsonl").write_bytes(b"".join(x.to_line() + b"\n" for x in redone))
        proofs = [json.loads(x) for x in (bundle / "inclusion.jsonl").read_text().splitlines()]
        proofs[30]["leaf_hash"] = leaf_hash(redone[30].to_line()).hex()
        (bundle / "inclusion.jsonl").write_text("".join(json.dumps(p) + "\n" for p in proofs))
        check = verify_bundle(bundle, pubkey(state))
        assert check.problem is not None and check.problem.seq == 30
        assert "not included in the signed tree" in check.problem.reason

    def test_checkpoint_resigned_with_another_key_is_rejected(self, bundle: Path, state: Path) -> None:
        """A bundle whose checkpoint was re-signed by someone else fails against the plant's key."""
        body = Checkpoint.parse_body(SignedNote.parse((bundle / "checkpoint").read_bytes()).text)
        (bundle / "checkpoint").write_bytes(sign_checkpoint(body, [Signer.generate(ORIGIN)]))
        check = verify_bundle(bundle, pubkey(state))
        assert check.problem is not None and "no signature from a trusted key" in check.problem.reason

    def test_altered_report_file_is_caught_by_the_sums(self, bundle: Path, state: Path) -> None:
        """Reports are not in the tree; SHA256SUMS still flags a changed one."""
        (bundle / "reports" / "rpt-1.json").write_text('{"report_id": "rpt-1", "status": "rejected"}\n')
        check = verify_bundle(bundle, pubkey(state))
        assert check.problem is not None
        assert "reports/rpt-1.json: SHA-256 differs" in check.problem.reason

    def test_cli_exits_one_naming_the_entry(self, bundle: Path, state: Path, tmp_path: Path) -> None:
        """`audit verify-bundle` on an altered bundle exits 1 with the entry on stderr."""
        lines = (bundle / "entries.jsonl").read_bytes().splitlines()
        lines[3] = lines[3].replace(b'"count":10', b'"count":99')
        (bundle / "entries.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
        run = subprocess.run(
            [sys.executable, "-m", "edge_agent", "audit", "verify-bundle", str(bundle),
             "--pubkey", pubkey(state).key_string()],
            capture_output=True, text=True, timeout=120,
        )
        assert run.returncode == 1
        assert "FAILED: entry 3:" in run.stderr
