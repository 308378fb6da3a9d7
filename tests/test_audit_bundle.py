"""Export bundles: offline round trip, consistency with the previous export, the signed manifest, report files
bound to the log, tampering inside a bundle, and the archive reader's refusals."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from edge_agent.audit import AuditLog, Signer, archive
from edge_agent.audit.archive import Limits, extract_bundle
from edge_agent.audit.binding import TrailEntry, bind_document, report_trails
from edge_agent.audit.bundle import BundleError
from edge_agent.audit.checkpoint import Checkpoint, SignedNote, sign_checkpoint
from edge_agent.audit.entry import TIME_FORMAT
from edge_agent.audit.export import ExportError, ExportResult, export_bundle
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.manifest import sign_manifest
from edge_agent.audit.verify import VerifyResult, verify_bundle
from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.reports.document import decide, new_document
from edge_agent.reports.document.repository import ReportRepository, document_bytes
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.narrative import Draft
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.signing import Verifier
from harness.shift import SHIFT_START, TZ, shift_records, stored

ORIGIN = "edge-agent/bundle-site"
T0 = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def draft(narrative: str) -> Draft:
    """A real report body for the hand-written shift (what build_draft makes, without the engine's attempts)."""
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=8), shift="A", timezone=TZ)
    request = ResolvedRequest(type="shift_summary", language="es", window=window, scope=Scope())
    facts = compute_facts(stored(shift_records()), request)
    body = {
        "request": request.as_json(),
        "facts": [f.model_dump(mode="json") for f in facts],
        "narrative": narrative,
        "prompt": {"template_version": "v1"},
    }
    body_bytes = canonical_json(body)
    return Draft(body=body, body_bytes=body_bytes, body_sha256=sha256_hex(body_bytes))


def generate(log: AuditLog, repo: ReportRepository, report_id: str, narrative: str) -> dict[str, Any]:
    """Record and store a generated draft as the report service does: the entry, then the document citing it."""
    made = draft(narrative)
    document = new_document(
        report_id=report_id,
        request_id=f"req-{report_id}",
        requested_by="planner",
        requested_at="2026-11-29T20:00:00Z",
        formats=["markdown", "html"],
        draft=made,
        audit_requested=None,
        audit_generated=None,
    )
    entry = log.append(
        "report.generated",
        "reports",
        {
            "report_id": report_id,
            "request_id": f"req-{report_id}",
            "body_sha256": made.body_sha256,
            "renderings_sha256": document["renderings_sha256"],
        },
    )
    document["audit"]["generated"] = entry.seq
    repo.insert(document, "0" * 64)
    return document


def reports_state(state: Path) -> None:
    """Entries 27-30 at the real clock (sign-off times are real): rpt-1 approved by alice, rpt-2 a draft,
    rpt-gone generated with no file."""
    repo = ReportRepository.for_state_dir(state)
    try:
        with AuditLog.open(state / "audit", ORIGIN) as log:
            generate(log, repo, "rpt-1", "Turno A sin novedades.")
            generate(log, repo, "rpt-2", "Turno A con una parada de 85 min.")
            decide(repo, log, report_id="rpt-1", decision="approve", by="alice", via="cli", comment="ok")
            log.append("report.generated", "reports", {"report_id": "rpt-gone", "body_sha256": "cc" * 32})
    finally:
        repo.close()


def build_state(state: Path) -> Path:
    """A state dir with 31 entries (two reports generated, one signed off, one whose file is gone) and the files."""
    with AuditLog.open(state / "audit", ORIGIN, checkpoint_every_entries=8, clock=Clock()) as log:
        log.append("model.loaded", "engine", {"manifest_sha256": "aa" * 32, "engine": "vllm 0.32.0"})
        for i in range(25):
            log.append("ingest.batch", "mqtt", {"count": 10, "first_id": i * 10})
    reports_state(state)
    return state


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return build_state(tmp_path / "state")


def export(state: Path, out: Path, **kw: object) -> ExportResult:
    with AuditLog.open(state / "audit", ORIGIN) as log:
        return export_bundle(state / "audit", out, reports_dir=state / "reports", log=log, **kw)


def pubkey(state: Path) -> Verifier:
    return read_verifiers(state / "audit")[-1]


def entry_time(state: Path, seq: int) -> datetime:
    line = (state / "audit" / "entries.jsonl").read_bytes().splitlines()[seq]
    return datetime.strptime(json.loads(line)["time"], TIME_FORMAT).replace(tzinfo=UTC)


def reason(check: VerifyResult) -> str:
    assert check.problem is not None, "the bundle verified"
    return str(check.problem)


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
        assert (check.entries, check.signed_size) == (32, 32)
        assert check.notes[1:] == [
            "report rpt-gone is not in this bundle: the plant had no file for it at export",
            "no config.security entry is in force for this export's window: whether unsigned sign-off was allowed"
            " is not recorded",
            "entry 29: the decision on report rpt-1 by operator:alice was recorded unsigned",
        ]
        assert check.notes[0].startswith("no consistency proof: the log's first export")

    def test_without_a_key_the_bundle_is_only_self_consistent_and_says_so(self, state: Path, tmp_path: Path) -> None:
        """No --pubkey: the bundle's own pubkey.txt is used and a note warns that origin is not proven."""
        export(state, tmp_path / "b1")
        check = verify_bundle(tmp_path / "b1")
        assert check.ok
        assert any("trusted the bundle's own pubkey.txt" in note for note in check.notes)

    def test_bundle_holds_every_documented_file(self, state: Path, tmp_path: Path) -> None:
        """Entries, checkpoint, proofs, consistency, keys, reports with renderings, CSV, HTML, sums, signed manifest."""
        export(state, tmp_path / "b1")
        names = sorted(p.relative_to(tmp_path / "b1").as_posix() for p in (tmp_path / "b1").rglob("*") if p.is_file())
        assert names == [
            "SHA256SUMS",
            "checkpoint",
            "consistency.json",
            "entries.csv",
            "entries.jsonl",
            "inclusion.jsonl",
            "keys.txt",
            "manifest.json",
            "manifest.sig",
            "pubkey.txt",
            "reports/rpt-1.html",
            "reports/rpt-1.json",
            "reports/rpt-1.md",
            "reports/rpt-2.html",
            "reports/rpt-2.json",
            "reports/rpt-2.md",
            "summary.html",
        ]
        manifest = json.loads((tmp_path / "b1" / "manifest.json").read_text())
        assert (manifest["reports"], manifest["missing_reports"], manifest["unbound_reports"]) == (
            ["rpt-1", "rpt-2"],
            ["rpt-gone"],
            {},
        )
        rows = list(csv.reader(open(tmp_path / "b1" / "entries.csv", encoding="utf-8")))
        assert rows[0] == ["seq", "time", "actor", "event", "payload", "prev_hash", "entry_hash"]
        assert len(rows) == 1 + 32
        run = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=tmp_path / "b1", capture_output=True)
        assert run.returncode == 0, run.stdout

    def test_report_files_are_byte_for_byte_the_plants(self, state: Path, tmp_path: Path) -> None:
        """reports/<id>.json is the stored document; <id>.md and <id>.html are its renderings as UTF-8."""
        export(state, tmp_path / "b1")
        stored_doc = (state / "reports" / "rpt-1.json").read_bytes()
        assert (tmp_path / "b1" / "reports" / "rpt-1.json").read_bytes() == stored_doc
        renderings = json.loads(stored_doc)["renderings"]
        assert (tmp_path / "b1" / "reports" / "rpt-1.md").read_text(encoding="utf-8") == renderings["markdown"]
        assert (tmp_path / "b1" / "reports" / "rpt-1.html").read_text(encoding="utf-8") == renderings["html"]
        assert renderings["markdown"].startswith("# Resumen de turno\n\n**Aprobado por alice**\n")

    def test_export_is_recorded_in_the_log(self, state: Path, tmp_path: Path) -> None:
        """The export appends audit.export, and the bundle's checkpoint covers it."""
        result = export(state, tmp_path / "b1")
        last = json.loads((state / "audit" / "entries.jsonl").read_bytes().splitlines()[-1])
        assert last["event"] == "audit.export"
        assert last["payload"]["checkpoint_size"] == result.checkpoint_size == last["seq"] + 1

    def test_summary_shows_reports_fingerprints_and_verification(self, state: Path, tmp_path: Path) -> None:
        """The HTML names the signed-off report, the model fingerprint, a missing report and the verification."""
        export(state, tmp_path / "b1")
        html = (tmp_path / "b1" / "summary.html").read_text()
        assert "rpt-1" in html and "signed off" in html and "operator:alice" in html
        assert "aa" * 32 in html and "vllm 0.32.0" in html
        assert "OK: 32 entries" in html
        assert "not in bundle: the plant had no file for it" in html
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
            export(state, tmp_path / "b1", start=T0 + timedelta(days=300))

    def test_second_export_proves_consistency_with_the_first(self, state: Path, tmp_path: Path) -> None:
        """The next bundle carries the previous export's checkpoint and a proof that this tree extends it."""
        first = export(state, tmp_path / "b1")
        with AuditLog.open(state / "audit", ORIGIN) as log:
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
            [
                sys.executable,
                "-m",
                "edge_agent",
                "audit",
                "verify-bundle",
                str(tmp_path / "b1.tar.gz"),
                "--pubkey",
                str(key_file),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("OK: 32 entries")


class TestSignedManifest:
    def test_manifest_lists_every_other_file_with_its_size_and_hash(self, state: Path, tmp_path: Path) -> None:
        """Every file but manifest.json and manifest.sig is listed with its size and SHA-256."""
        export(state, tmp_path / "b1")
        manifest = json.loads((tmp_path / "b1" / "manifest.json").read_text())
        on_disk = sorted(p for p in (tmp_path / "b1").rglob("*") if p.is_file())
        expected = [
            {
                "path": p.relative_to(tmp_path / "b1").as_posix(),
                "size": p.stat().st_size,
                "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
            }
            for p in on_disk
            if p.name not in ("manifest.json", "manifest.sig")
        ]
        assert manifest["files"] == expected

    def test_manifest_names_the_checkpoint_it_belongs_to(self, state: Path, tmp_path: Path) -> None:
        """The manifest's checkpoint is the bundle checkpoint's origin, size and base64 root."""
        export(state, tmp_path / "b1")
        manifest = json.loads((tmp_path / "b1" / "manifest.json").read_text())
        origin, size, root = (tmp_path / "b1" / "checkpoint").read_text().split("\n")[:3]
        assert manifest["checkpoint"] == {"origin": origin, "size": int(size), "root": root}

    def test_signature_is_a_note_by_the_checkpoint_key_over_its_hash(self, state: Path, tmp_path: Path) -> None:
        """manifest.sig is a signed note: origin, the note type, SHA-256 of manifest.json; the plant's key signs it."""
        export(state, tmp_path / "b1")
        note = SignedNote.parse((tmp_path / "b1" / "manifest.sig").read_bytes())
        assert note.verified_by([pubkey(state)]) == [pubkey(state)]
        digest = hashlib.sha256((tmp_path / "b1" / "manifest.json").read_bytes()).hexdigest()
        assert note.text == f"{ORIGIN}\nedge-agent-audit-bundle/2 manifest\n{digest}\n".encode()


class TestReportBinding:
    def test_report_signed_off_after_the_range_is_left_out_with_the_reason(self, state: Path, tmp_path: Path) -> None:
        """An approved report whose sign-off falls after --to is not exported; the manifest says why."""
        result = export(state, tmp_path / "b1", end=entry_time(state, 28))
        assert (result.reports, result.missing_reports) == (["rpt-2"], [])
        assert result.unbound_reports == {
            "rpt-1": "it is approved, but no report.signed_off entry in this bundle records that"
            " (it cites entry 29, which is not in this bundle)"
        }
        check = verify_bundle(tmp_path / "b1", pubkey(state))
        assert check.ok, check.summary()
        assert check.notes[1:] == [
            "report rpt-1 is not in this bundle: its file does not bind: it is approved, but no report.signed_off"
            " entry in this bundle records that (it cites entry 29, which is not in this bundle)",
            "no config.security entry is in force for this export's window: whether unsigned sign-off was allowed"
            " is not recorded",
        ]

    def test_report_file_edited_at_the_plant_is_not_exported(self, state: Path, tmp_path: Path) -> None:
        """A stored draft edited to "approved" is left out of the bundle with the reason, not vouched for."""
        path = state / "reports" / "rpt-2.json"
        path.write_bytes(document_bytes(json.loads(path.read_bytes()) | {"status": "approved"}))
        result = export(state, tmp_path / "b1")
        assert result.reports == ["rpt-1"]
        assert result.unbound_reports == {
            "rpt-2": "it is approved, but no report.signed_off entry in this bundle records that"
        }
        assert verify_bundle(tmp_path / "b1", pubkey(state)).ok

    def test_document_must_cite_the_logged_request_entry(self, state: Path, tmp_path: Path) -> None:
        """With a report.requested entry in the bundle, the document's audit.requested must be its seq."""
        export(state, tmp_path / "b1")
        document = json.loads((tmp_path / "b1" / "reports" / "rpt-2.json").read_bytes())
        trail = report_trails((tmp_path / "b1" / "entries.jsonl").read_bytes().splitlines())["rpt-2"]
        trail.requested.append(TrailEntry(5, T0, "reports", "report.requested", {"report_id": "rpt-2"}))
        assert bind_document("rpt-2", document, trail) == (
            "it cites entry None as its report.requested, the log has entry 5"
        )
        assert bind_document("rpt-2", document | {"audit": document["audit"] | {"requested": 5}}, trail) is None


class TestBundleTampering:
    @pytest.fixture
    def bundle(self, state: Path, tmp_path: Path) -> Path:
        export(state, tmp_path / "b1")
        return tmp_path / "b1"

    @staticmethod
    def edit_report(bundle: Path, report_id: str, **changes: Any) -> None:
        path = bundle / "reports" / f"{report_id}.json"
        path.write_bytes(document_bytes(json.loads(path.read_bytes()) | changes))

    @staticmethod
    def regenerate_sums(bundle: Path) -> None:
        rows = [
            f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(bundle).as_posix()}\n"
            for p in sorted(bundle.rglob("*"))
            if p.is_file() and p.name not in ("SHA256SUMS", "manifest.json", "manifest.sig")
        ]
        (bundle / "SHA256SUMS").write_text("".join(rows))

    def test_assessor_case_draft_edited_to_approved_with_sums_regenerated(self, bundle: Path, state: Path) -> None:
        """The assessor's case: `"status": "draft"` → `"approved"`, SHA256SUMS redone; verify-bundle names the
        report and why, and exits 1."""
        self.edit_report(bundle, "rpt-2", status="approved")
        self.regenerate_sums(bundle)
        assert subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=bundle).returncode == 0
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "edge_agent",
                "audit",
                "verify-bundle",
                str(bundle),
                "--pubkey",
                pubkey(state).key_string(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 1
        assert run.stderr.strip().splitlines()[-1] == (
            "audit verify-bundle: FAILED: report rpt-2 (reports/rpt-2.json): it is approved, but no"
            " report.signed_off entry in this bundle records that"
        )

    def test_edited_body_with_its_hash_restated(self, bundle: Path, state: Path) -> None:
        """A changed narrative, with body_sha256 recomputed in the file, no longer matches the logged hash."""
        document = json.loads((bundle / "reports" / "rpt-2.json").read_bytes())
        body = document["body"] | {"narrative": "Turno A sin paradas."}
        digest = sha256_hex(canonical_json(body))
        self.edit_report(bundle, "rpt-2", body=body, body_sha256=digest)
        logged = document["body_sha256"]
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            f"report rpt-2 (reports/rpt-2.json): its body hashes to {digest}, entry 28 (report.generated) logged"
            f" {logged}"
        )

    def test_edited_body_without_its_hash(self, bundle: Path, state: Path) -> None:
        """A changed body that keeps the old body_sha256 contradicts itself."""
        document = json.loads((bundle / "reports" / "rpt-1.json").read_bytes())
        body = document["body"] | {"narrative": "Turno A sin paradas."}
        self.edit_report(bundle, "rpt-1", body=body)
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            f"report rpt-1 (reports/rpt-1.json): its body hashes to {sha256_hex(canonical_json(body))}, not to the"
            f" body_sha256 {document['body_sha256']} it states"
        )

    def test_edited_rendering_file(self, bundle: Path, state: Path) -> None:
        """A rendering file that differs from its document is named."""
        path = bundle / "reports" / "rpt-1.md"
        path.write_text(path.read_text().replace("alice", "mallory"))
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "report rpt-1: reports/rpt-1.md is not its markdown rendering (missing or changed)"
        )

    def test_edited_rendering_in_the_document_with_its_hash_restated(self, bundle: Path, state: Path) -> None:
        """A rendering changed inside the document, hash restated, disagrees with the hash the sign-off logged."""
        document = json.loads((bundle / "reports" / "rpt-2.json").read_bytes())
        text = document["renderings"]["html"].replace("Turno A", "Turno B")
        hashes = document["renderings_sha256"] | {"html": sha256_hex(text)}
        self.edit_report(bundle, "rpt-2", renderings=document["renderings"] | {"html": text}, renderings_sha256=hashes)
        (bundle / "reports" / "rpt-2.html").write_text(text)
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            f"report rpt-2 (reports/rpt-2.json): its renderings_sha256 {hashes} != {document['renderings_sha256']}"
            " logged by entry 28"
        )

    def test_signoff_block_naming_someone_else(self, bundle: Path, state: Path) -> None:
        """The approver in the file must be the operator who made the sign-off entry."""
        document = json.loads((bundle / "reports" / "rpt-1.json").read_bytes())
        self.edit_report(bundle, "rpt-1", signoff=document["signoff"] | {"by": "mallory"})
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "report rpt-1 (reports/rpt-1.json): its sign-off block names 'mallory', entry 29 was made by"
            " 'operator:alice'"
        )

    def test_approved_report_turned_into_a_draft(self, bundle: Path, state: Path) -> None:
        """A draft must have no decision entry after it."""
        self.edit_report(bundle, "rpt-1", status="draft", signoff=None)
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "report rpt-1 (reports/rpt-1.json): it is a draft, but entry 29 (report.signed_off) decided it"
        )

    def test_removed_report(self, bundle: Path, state: Path) -> None:
        """A report the entries name, removed with its renderings, is named with the entry."""
        for suffix in (".json", ".md", ".html"):
            (bundle / "reports" / f"rpt-2{suffix}").unlink()
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "entry 28 names report rpt-2, which is not in this bundle, and the manifest does not say why"
        )

    def test_removed_file(self, bundle: Path, state: Path) -> None:
        """A file the signed manifest lists is missing."""
        (bundle / "entries.csv").unlink()
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "entries.csv is in the signed manifest but missing from the bundle (removed after export)"
        )

    def test_added_file(self, bundle: Path, state: Path) -> None:
        """A file the signed manifest does not list is refused."""
        (bundle / "README.txt").write_text("trust me\n")
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "README.txt is not in the signed manifest (added after export)"
        )

    def test_changed_file_the_log_does_not_cover(self, bundle: Path, state: Path) -> None:
        """summary.html is covered by the signed manifest only; a change is named."""
        path = bundle / "summary.html"
        path.write_text(path.read_text().replace("operator:alice", "operator:bob"))
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "summary.html: SHA-256 differs from the signed manifest (changed after export)"
        )

    def test_manifest_resigned_with_another_key(self, bundle: Path, state: Path) -> None:
        """A manifest redone over an added file and signed by another key fails against the plant's key."""
        (bundle / "README.txt").write_text("trust me\n")
        manifest = json.loads((bundle / "manifest.json").read_text())
        manifest["files"].append({"path": "README.txt", "size": 9, "sha256": sha256_hex(b"trust me\n")})
        data = (json.dumps(manifest, indent=2) + "\n").encode()
        (bundle / "manifest.json").write_bytes(data)
        (bundle / "manifest.sig").write_bytes(sign_manifest(data, ORIGIN, Signer.generate(ORIGIN)))
        assert reason(verify_bundle(bundle, pubkey(state))).startswith(
            "manifest.sig: no signature from a trusted key: signed by edge-agent/bundle-site/"
        )

    def test_manifest_edited_without_resigning(self, bundle: Path, state: Path) -> None:
        """Any change to manifest.json breaks its signature."""
        path = bundle / "manifest.json"
        path.write_text(path.read_text().replace('"missing_reports": [', '"missing_reports": [\n    "rpt-2",'))
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "manifest.json is not the manifest manifest.sig signs (changed after export, or another log's)"
        )

    def test_missing_signature(self, bundle: Path, state: Path) -> None:
        """Without manifest.sig nothing vouches for the files."""
        (bundle / "manifest.sig").unlink()
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "manifest.sig is missing: nothing vouches for the bundle's files"
        )

    def test_symlink_in_a_directory_bundle(self, bundle: Path, state: Path, tmp_path: Path) -> None:
        """A directory bundle holding a symlink is refused before anything is read through it."""
        (bundle / "entries.csv").unlink()
        (bundle / "entries.csv").symlink_to(tmp_path / "state" / "audit" / "entries.jsonl")
        assert reason(verify_bundle(bundle, pubkey(state))) == (
            "entries.csv is a symlink; a bundle holds only files and directories"
        )

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
        redone = entries[:31]
        e = entries[31]
        redone.append(AuditEntry.create(e.seq, e.time, "operator:mallory", e.event, e.payload, e.prev_hash))
        (bundle / "entries.jsonl").write_bytes(b"".join(x.to_line() + b"\n" for x in redone))
        proofs = [json.loads(x) for x in (bundle / "inclusion.jsonl").read_text().splitlines()]
        proofs[31]["leaf_hash"] = leaf_hash(redone[31].to_line()).hex()
        (bundle / "inclusion.jsonl").write_text("".join(json.dumps(p) + "\n" for p in proofs))
        check = verify_bundle(bundle, pubkey(state))
        assert check.problem is not None and check.problem.seq == 31
        assert "not included in the signed tree" in check.problem.reason

    def test_checkpoint_resigned_with_another_key_is_rejected(self, bundle: Path, state: Path) -> None:
        """A bundle whose checkpoint was re-signed by someone else fails against the plant's key."""
        body = Checkpoint.parse_body(SignedNote.parse((bundle / "checkpoint").read_bytes()).text)
        (bundle / "checkpoint").write_bytes(sign_checkpoint(body, [Signer.generate(ORIGIN)]))
        check = verify_bundle(bundle, pubkey(state))
        assert check.problem is not None and "no signature from a trusted key" in check.problem.reason

    def test_cli_exits_one_naming_the_entry(self, bundle: Path, state: Path, tmp_path: Path) -> None:
        """`audit verify-bundle` on an altered bundle exits 1 with the entry on stderr."""
        lines = (bundle / "entries.jsonl").read_bytes().splitlines()
        lines[3] = lines[3].replace(b'"count":10', b'"count":99')
        (bundle / "entries.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "edge_agent",
                "audit",
                "verify-bundle",
                str(bundle),
                "--pubkey",
                pubkey(state).key_string(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 1
        assert "FAILED: entry 3:" in run.stderr


def member(
    name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, linkname: str = ""
) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, len(data) if kind == tarfile.REGTYPE else 0, linkname
    return info, data


def write_tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode, format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def write_raw_tar(path: Path, header: bytes) -> Path:
    """A gzip'd archive of one hand-made header and the end-of-archive blocks, with no data after the header."""
    with gzip.open(path, "wb") as f:
        f.write(header + b"\0" * 1024)
    return path


class TestArchiveReader:
    def refusal(self, archive: Path, tmp_path: Path, limits: Limits = Limits()) -> str:
        dest = tmp_path / "dest"
        dest.mkdir()
        with pytest.raises(BundleError) as caught:
            extract_bundle(archive, dest, limits)
        return str(caught.value)

    def test_exported_archive_extracts_to_its_bundle_directory(self, state: Path, tmp_path: Path) -> None:
        """The exporter's .tar.gz extracts to dest/<name> holding the manifest and its signature."""
        export(state, tmp_path / "b1.tar.gz")
        (tmp_path / "dest").mkdir()
        root = extract_bundle(tmp_path / "b1.tar.gz", tmp_path / "dest")
        assert root == tmp_path / "dest" / "b1"
        assert (root / "manifest.json").is_file() and (root / "manifest.sig").is_file()

    def test_exported_tar_xz_verifies(self, state: Path, tmp_path: Path) -> None:
        """`--out *.tar.xz` writes an xz archive of the same tree, which verify-bundle reads."""
        export(state, tmp_path / "b1.tar.xz")
        assert (tmp_path / "b1.tar.xz").read_bytes()[:6] == b"\xfd7zXZ\x00"
        check = verify_bundle(tmp_path / "b1.tar.xz", pubkey(state))
        assert check.ok, check.summary()

    def test_xz_asking_for_more_decoder_memory_than_the_limit_is_refused(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An xz header's dictionary over XZ_MEMLIMIT (here lowered to 1 MiB; preset 6 asks for 8) is refused before
        the memory is taken."""
        monkeypatch.setattr(archive, "XZ_MEMLIMIT", 1 << 20)
        path = write_tar(tmp_path / "a.tar.xz", [member("b/x", b"1")], mode="w:xz")
        assert self.refusal(path, tmp_path) == f"{path} is not a readable bundle archive: Memory usage limit exceeded"

    def test_truncated_xz_is_refused(self, state: Path, tmp_path: Path) -> None:
        """A .tar.xz cut short (a mail client's partial attachment) is refused as unreadable, not read as a shorter
        bundle."""
        export(state, tmp_path / "b1.tar.xz")
        whole = (tmp_path / "b1.tar.xz").read_bytes()
        (tmp_path / "cut.tar.xz").write_bytes(whole[: len(whole) // 2])
        refusal = self.refusal(tmp_path / "cut.tar.xz", tmp_path)
        assert (
            refusal
            == f"{tmp_path / 'cut.tar.xz'} is not a readable bundle archive: the xz stream ends before its end marker"
        )

    def test_plain_tar_is_read_too(self, state: Path, tmp_path: Path) -> None:
        """An uncompressed tar of a bundle (an auditor re-packing it) verifies."""
        export(state, tmp_path / "b1")
        with tarfile.open(tmp_path / "b1.tar", "w") as tar:
            tar.add(tmp_path / "b1", arcname="b1")
        check = verify_bundle(tmp_path / "b1.tar", pubkey(state))
        assert check.ok, check.summary()

    def test_path_traversal_member_is_refused_and_nothing_escapes(self, tmp_path: Path) -> None:
        """`b/../../evil` is refused by name, and no file appears outside the extraction directory."""
        archive = write_tar(tmp_path / "a.tar.gz", [member("b/x", b"1"), member("b/../../evil", b"2")])
        check = verify_bundle(archive)
        assert reason(check) == "archive member 'b/../../evil' has a '..' component"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz"]

    def test_absolute_member_is_refused(self, tmp_path: Path) -> None:
        """A member named by an absolute path is refused."""
        target = tmp_path / "outside"
        archive = write_tar(tmp_path / "a.tar.gz", [member(f"{target}/evil", b"2")])
        assert self.refusal(archive, tmp_path) == f"archive member '{target}/evil' is an absolute path"
        assert not target.exists()

    def test_symlink_member_is_refused(self, tmp_path: Path) -> None:
        """A symlink member is refused even when it points inside."""
        archive = write_tar(tmp_path / "a.tar.gz", [member("b/link", kind=tarfile.SYMTYPE, linkname="x")])
        assert self.refusal(archive, tmp_path) == (
            "archive member 'b/link' is a symlink; a bundle holds only files and directories"
        )

    def test_hardlink_member_is_refused(self, tmp_path: Path) -> None:
        """A hard link member is refused."""
        archive = write_tar(
            tmp_path / "a.tar.gz", [member("b/x", b"1"), member("b/y", kind=tarfile.LNKTYPE, linkname="b/x")]
        )
        assert self.refusal(archive, tmp_path) == (
            "archive member 'b/y' is a hard link; a bundle holds only files and directories"
        )

    def test_device_member_is_refused(self, tmp_path: Path) -> None:
        """A character device member is refused."""
        archive = write_tar(tmp_path / "a.tar.gz", [member("b/null", kind=tarfile.CHRTYPE)])
        assert self.refusal(archive, tmp_path) == (
            "archive member 'b/null' is not a regular file; a bundle holds only files and directories"
        )

    def test_duplicate_member_is_refused(self, tmp_path: Path) -> None:
        """The same name twice (a later copy would silently replace the first) is refused."""
        archive = write_tar(tmp_path / "a.tar.gz", [member("b/x", b"1"), member("b/x", b"2")])
        assert self.refusal(archive, tmp_path) == "archive member 'b/x' appears more than once"

    def test_member_outside_the_bundle_directory_is_refused(self, tmp_path: Path) -> None:
        """Every member lives under the one top-level directory."""
        archive = write_tar(tmp_path / "a.tar.gz", [member("b/x", b"1"), member("c/y", b"2")])
        assert self.refusal(archive, tmp_path) == "archive member 'c/y' is outside the bundle directory 'b'"

    def test_oversized_member_is_refused_from_its_header(self, tmp_path: Path) -> None:
        """A header declaring 5 GiB is refused before any of it is read or written."""
        info = tarfile.TarInfo("b/big")
        info.size = 5 << 30
        archive = write_raw_tar(tmp_path / "a.tar.gz", info.tobuf(tarfile.GNU_FORMAT))
        assert self.refusal(archive, tmp_path) == (
            "archive member 'b/big' is 5368709120 bytes, over 4294967296 (tar bomb?)"
        )

    def test_total_size_is_bounded(self, tmp_path: Path) -> None:
        """Members that together exceed the total limit stop at the one that crosses it."""
        archive = write_tar(tmp_path / "a.tar.gz", [member("b/one", b"x" * 60), member("b/two", b"y" * 60)])
        assert self.refusal(archive, tmp_path, Limits(total_bytes=100)) == (
            "archive members exceed 100 bytes at 'b/two' (tar bomb?)"
        )

    def test_member_count_is_bounded(self, tmp_path: Path) -> None:
        """More members than the limit are refused."""
        archive = write_tar(tmp_path / "a.tar.gz", [member(f"b/{i}", b"") for i in range(3)])
        assert self.refusal(archive, tmp_path, Limits(members=2)) == "archive holds more than 2 members (tar bomb?)"

    def test_huge_header_record_is_refused(self, tmp_path: Path) -> None:
        """A pax header declaring 2 MiB (tarfile would read it into memory) is refused."""
        info = tarfile.TarInfo("././@PaxHeader")
        info.type, info.size = tarfile.XHDTYPE, 2 << 20
        archive = write_raw_tar(tmp_path / "a.tar.gz", info.tobuf(tarfile.USTAR_FORMAT))
        assert self.refusal(archive, tmp_path) == "archive asks for a 2097152-byte record at offset 512 (tar bomb?)"

    def test_not_an_archive(self, tmp_path: Path) -> None:
        """Bytes that are not a tar say so, naming the file."""
        (tmp_path / "a.tar.gz").write_bytes(b"\x1f\x8bnot really gzip")
        assert self.refusal(tmp_path / "a.tar.gz", tmp_path).startswith(
            f"{tmp_path / 'a.tar.gz'} is not a readable bundle archive: "
        )
