"""`edge-agent audit archive`: the oldest entries moved into a signed bundle, the log left verifiable, exports and
readers refusing what left, and the cutover crash-safe at every step."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.ask.replay import ReplayError, find_answer
from edge_agent.audit import AuditIntegrityError, AuditLockedError, AuditLog
from edge_agent.audit.cutover import JOURNAL, NEW, settle
from edge_agent.audit.export import ExportError, export_bundle
from edge_agent.audit.files import ENTRIES, LATEST_CHECKPOINT, iter_lines
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.retention import ArchiveError, archive_log, record_archive
from edge_agent.audit.rollback import Citation, check_citations, judge_checkpoint, read_lines
from edge_agent.audit.verify import verify_bundle, verify_log
from edge_agent.audit.view import ARCHIVE_STATE, ARCHIVED_LEAVES, ArchivedError, ArchiveStateError, LogView

ORIGIN = "edge-agent/archive-site"
T0 = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)


class Clock:
    """One minute per entry, so time ranges pick exact seqs: entry n is at T0 + n + 1 minutes."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "audit", *args], capture_output=True, text=True, timeout=120
    )


def make_log(directory: Path, entries: int = 20) -> list[bytes]:
    """A log of `entries` entries: key.rotated (0), config.loaded (1), batches; a checkpoint every 5; signed at
    close. Returns the lines."""
    with AuditLog.open(directory, ORIGIN, clock=Clock()) as log:
        log.append("config.loaded", "agent", {"sha256": "0" * 64})
        for i in range(entries - 2):
            log.append("ingest.batch", "opcua", {"i": i})
            if log.size % 5 == 0:
                log.checkpoint()
    return list(iter_lines(directory / ENTRIES))


def all_leaves(directory: Path) -> list[bytes]:
    return read_lines(directory).leaves()


@pytest.fixture
def audit_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "audit"
    make_log(directory)
    return directory


class TestArchive:
    def test_archive_then_verify(self, audit_dir: Path, tmp_path: Path) -> None:
        """Entries 0..11 leave entries.jsonl; verify checks the rest and names the bundle and the count archived."""
        before = all_leaves(audit_dir)
        result = archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        assert (result.first_seq, result.last_seq, result.first_kept) == (0, 11, 12)
        # 20 entries, + audit.export (20), + audit.archived (21).
        assert (result.checkpoint_size, result.archived_entry_seq) == (21, 21)
        assert result.bundle == tmp_path / "out" / "audit-archive-000000000000-000000000011.tar.xz"
        kept = list(iter_lines(audit_dir / ENTRIES))
        assert [json.loads(line)["seq"] for line in kept] == list(range(12, 22))
        assert all_leaves(audit_dir)[:20] == before
        verified = verify_log(audit_dir)
        assert verified.ok, verified.summary()
        assert verified.entries == 22 and verified.signed_size == 22
        archived = "12 entries (0..11) are archived in audit-archive-000000000000-000000000011.tar.xz"
        assert any(note.startswith(archived) for note in verified.notes)

    def test_the_audit_archived_entry_says_what_left(self, audit_dir: Path, tmp_path: Path) -> None:
        """The trail names the range, the bundle and its sha256, and the leaf file's sha256 — all as on disk."""
        result = archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        entry = json.loads(read_lines(audit_dir)[result.archived_entry_seq])
        assert entry["event"] == "audit.archived"
        assert entry["payload"] == {
            "first_seq": 0,
            "last_seq": 11,
            "bundle": result.bundle.name,
            "bundle_sha256": hashlib.sha256(result.bundle.read_bytes()).hexdigest(),
            "leaves_sha256": hashlib.sha256((audit_dir / ARCHIVED_LEAVES).read_bytes()).hexdigest(),
            "checkpoint_size": 21,
        }

    def test_the_first_kept_entry_chains_from_the_last_archived(self, audit_dir: Path, tmp_path: Path) -> None:
        """The kept chain starts at the last archived entry's hash, kept whole in archived.jsonl."""
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        view = LogView.read(audit_dir)
        first_kept = next(view.kept_lines())
        assert json.loads(first_kept)["prev_hash"] == json.loads(view.retained[11])["entry_hash"] == view.head_hash

    def test_archive_then_append_then_verify(self, audit_dir: Path, tmp_path: Path) -> None:
        """The agent opens the trimmed log, appends and signs; verify and a second archive follow on."""
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        with AuditLog.open(audit_dir, ORIGIN) as log:
            assert log.size == 22
            for i in range(6):
                log.append("ingest.batch", "opcua", {"after": i})
        assert verify_log(audit_dir).ok
        second = archive_log(audit_dir, ORIGIN, before=25, out=tmp_path / "out", reports_dir=None)
        assert (second.first_seq, second.last_seq) == (12, 24)
        verified = verify_log(audit_dir, strict=True)
        assert verified.ok, verified.summary()
        assert verified.entries == 30
        assert LogView.read(audit_dir).first_kept == 25

    def test_the_archive_bundle_verifies_with_verify_bundle(self, audit_dir: Path, tmp_path: Path) -> None:
        """The bundle is an ordinary export of entries 0..11, against the checkpoint its export signed."""
        key = read_verifiers(audit_dir)[-1]
        result = archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        run = cli("verify-bundle", str(result.bundle), "--pubkey", key.key_string())
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("OK: 12 entries") and "not yet covered" not in run.stdout
        assert verify_bundle(result.bundle, key).entries == 12

    def test_a_second_archive_bundle_verifies_too(self, audit_dir: Path, tmp_path: Path) -> None:
        """Archiving from an archived log exports first_kept..SEQ-1, starting mid-chain."""
        key = read_verifiers(audit_dir)[-1]
        archive_log(audit_dir, ORIGIN, before=6, out=tmp_path / "out", reports_dir=None)
        second = archive_log(audit_dir, ORIGIN, before=15, out=tmp_path / "out", reports_dir=None)
        checked = verify_bundle(second.bundle, key)
        assert checked.ok, checked.summary()
        assert checked.entries == 9


class TestRefusals:
    def test_seq_above_the_checkpointed_size_is_refused(self, tmp_path: Path) -> None:
        """Entries no checkpoint covers never leave: the error names the size, and nothing changes."""
        directory = tmp_path / "audit"
        make_log(directory)
        with AuditLog.open(directory, ORIGIN, clock=Clock()) as log:
            log.append("ingest.batch", "opcua", {"unsigned": True})
            with pytest.raises(ArchiveError, match="--before 21 is above the latest signed checkpoint's size 20"):
                record_archive(log, before=21, out=tmp_path / "out", reports_dir=None)
        assert not (tmp_path / "out").exists()
        assert not (directory / ARCHIVE_STATE).exists()
        assert len(list(iter_lines(directory / ENTRIES))) == 21

    def test_nothing_to_archive(self, audit_dir: Path, tmp_path: Path) -> None:
        """SEQ at or below the first kept entry is refused, naming what is already archived."""
        with pytest.raises(ArchiveError, match="nothing to archive"):
            archive_log(audit_dir, ORIGIN, before=0, out=tmp_path / "out", reports_dir=None)
        archive_log(audit_dir, ORIGIN, before=5, out=tmp_path / "out", reports_dir=None)
        with pytest.raises(ArchiveError, match="entries before 5 are already archived"):
            archive_log(audit_dir, ORIGIN, before=5, out=tmp_path / "out", reports_dir=None)

    def test_refused_while_the_agent_holds_the_log(self, audit_dir: Path, tmp_path: Path) -> None:
        """The CLI takes the log's lock like other offline commands and says to stop the agent."""
        with AuditLog.open(audit_dir, ORIGIN), pytest.raises(AuditLockedError):
            archive_log(audit_dir, ORIGIN, before=5, out=tmp_path / "out", reports_dir=None)


class TestExport:
    def test_export_of_an_archived_time_range_names_the_bundle(self, audit_dir: Path, tmp_path: Path) -> None:
        """A window holding only archived entries is refused, pointing at the bundle that is their export."""
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        with pytest.raises(ExportError, match="archived in audit-archive-000000000000-000000000011.tar.xz"):
            export_bundle(
                audit_dir,
                tmp_path / "b",
                reports_dir=None,
                start=T0 + timedelta(minutes=2),
                end=T0 + timedelta(minutes=5),
            )

    def test_export_of_archived_seqs_names_the_bundle(self, audit_dir: Path, tmp_path: Path) -> None:
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        with pytest.raises(ExportError, match=r"entries 3\.\.11 are archived in archive bundle audit-archive-0+-0+11"):
            export_bundle(audit_dir, tmp_path / "b", reports_dir=None, seqs=(3, 14))

    def test_export_of_the_kept_range_verifies(self, audit_dir: Path, tmp_path: Path) -> None:
        """The kept entries export with proofs built from the archived leaf hashes; the config in force at the
        window's start (archived entry 1, kept whole) travels with them and checks."""
        key = read_verifiers(audit_dir)[-1]
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        with AuditLog.open(audit_dir, ORIGIN) as log:
            result = export_bundle(audit_dir, tmp_path / "kept", reports_dir=None, log=log)
        assert (result.first_seq, result.last_seq) == (12, 22)
        assert json.loads((tmp_path / "kept" / "config_in_force.json").read_text())["seq"] == 1
        checked = verify_bundle(tmp_path / "kept", key)
        assert checked.ok, checked.summary()
        # The previous export (the archive's own, entry 20) is chained to by a consistency proof.
        assert result.previous_size == 21


class TestTamper:
    def test_a_changed_leaf_hash_file_fails_verify_naming_it(self, audit_dir: Path, tmp_path: Path) -> None:
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        path = audit_dir / ARCHIVED_LEAVES
        data = bytearray(path.read_bytes())
        data[40] ^= 1  # a bit of entry 1's leaf hash
        path.write_bytes(bytes(data))
        verified = verify_log(audit_dir)
        assert not verified.ok
        assert str(path) in str(verified.problem) and "changed" in str(verified.problem)

    def test_a_leaf_file_changed_with_its_recorded_digest_fails_on_the_checkpoints(
        self, audit_dir: Path, tmp_path: Path
    ) -> None:
        """Rewriting archive.json's digest to match does not help: the signed roots no longer come out."""
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        path = audit_dir / ARCHIVED_LEAVES
        data = bytearray(path.read_bytes())
        data[100] ^= 1  # entry 3's leaf hash (entry 1's is checked against its retained line first)
        path.write_bytes(bytes(data))
        state = json.loads((audit_dir / ARCHIVE_STATE).read_text())
        state["leaves_sha256"] = hashlib.sha256(bytes(data)).hexdigest()
        (audit_dir / ARCHIVE_STATE).write_text(json.dumps(state))
        verified = verify_log(audit_dir)
        assert not verified.ok
        assert "checkpoint of size 5" in str(verified.problem) and str(path) in str(verified.problem)

    def test_a_changed_retained_line_is_refused(self, audit_dir: Path, tmp_path: Path) -> None:
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        path = audit_dir / "archived.jsonl"
        path.write_bytes(path.read_bytes().replace(b'"agent"', b'"agenT"', 1))
        with pytest.raises(ArchiveStateError, match="entry 1 does not match its archived leaf hash"):
            LogView.read(audit_dir)
        assert "does not match its archived leaf hash" in str(verify_log(audit_dir).problem)

    def test_a_log_without_its_archive_files_is_refused(self, audit_dir: Path, tmp_path: Path) -> None:
        """entries.jsonl restored without archive.json and archived.leaves: the open names what is missing."""
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        (audit_dir / ARCHIVE_STATE).unlink()
        (audit_dir / ARCHIVED_LEAVES).unlink()
        with pytest.raises(AuditIntegrityError, match="starts at entry 12, not 0: entries are missing from its start"):
            AuditLog.open(audit_dir, ORIGIN)
        assert "line 1 holds seq 12, expected 0" in str(verify_log(audit_dir).problem)


class TestCrash:
    @pytest.mark.parametrize("done", range(8))
    def test_a_crash_after_each_step_leaves_a_whole_log(self, audit_dir: Path, tmp_path: Path, done: int) -> None:
        """Stop the cutover after `done` steps (stage, commit, 4 renames, finish; 7 is all of them), reopen: before
        the commit the old log is back, after it the new one; either verifies and no entry is lost."""
        leaves = all_leaves(audit_dir)
        log = AuditLog.open(audit_dir, ORIGIN)
        _, cutover = record_archive(log, before=12, out=tmp_path / "out", reports_dir=None)
        expected = all_leaves(audit_dir)
        assert expected[:20] == leaves
        lock_fd = log.close_keeping_lock()
        steps = cutover.steps()
        assert [name for name, _ in steps][:2] == ["stage", "commit"] and len(steps) == 7
        for _, step in steps[:done]:
            step()
        os.close(lock_fd)  # the process died: its lock goes with it
        with AuditLog.open(audit_dir, ORIGIN) as reopened:
            assert reopened.size == 22
            assert reopened.blocked is None
        assert not (audit_dir / JOURNAL).exists()
        assert not list(audit_dir.glob(f"*{NEW}"))
        assert LogView.read(audit_dir).first_kept == (12 if done >= 2 else 0)
        assert all_leaves(audit_dir) == expected
        verified = verify_log(audit_dir)
        assert verified.ok, verified.summary()

    def test_a_torn_staged_file_without_the_journal_is_removed(self, audit_dir: Path) -> None:
        """A crash mid-stage leaves partial .new files and no journal: opening deletes them."""
        (audit_dir / (ENTRIES + NEW)).write_bytes(b'{"actor":"ag')
        (audit_dir / (ARCHIVED_LEAVES + NEW)).write_bytes(b"\x00" * 7)
        assert settle(audit_dir) == "undone"
        assert not list(audit_dir.glob(f"*{NEW}"))
        assert verify_log(audit_dir).ok

    def test_verify_names_an_unfinished_archive(self, audit_dir: Path, tmp_path: Path) -> None:
        log = AuditLog.open(audit_dir, ORIGIN)
        _, cutover = record_archive(log, before=12, out=tmp_path / "out", reports_dir=None)
        lock_fd = log.close_keeping_lock()
        cutover.stage()
        cutover.commit()
        os.close(lock_fd)
        assert "an archive step was interrupted" in str(verify_log(audit_dir).problem)


class TestReaders:
    def test_replay_of_an_archived_entry_names_the_bundle(self, audit_dir: Path, tmp_path: Path) -> None:
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        with pytest.raises(ReplayError, match="entry 4 is archived in archive bundle audit-archive-"):
            find_answer(read_lines(audit_dir), "4")

    def test_lines_by_seq(self, audit_dir: Path, tmp_path: Path) -> None:
        """len counts every entry; kept and retained lines come by seq; any other archived one raises."""
        original = list(iter_lines(audit_dir / ENTRIES))
        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        lines = read_lines(audit_dir)
        assert len(lines) == 22 and len(lines[:7]) == 7
        assert lines[0] == original[0] and lines[1] == original[1]  # key.rotated, config.loaded: retained
        assert lines[11] == original[11] and lines[12] == original[12]  # the last archived, the first kept
        with pytest.raises(ArchivedError) as raised:
            lines[5]
        assert raised.value.bundle == "audit-archive-000000000000-000000000011.tar.xz"
        assert [seq for seq, _ in lines.numbered(14)] == [0, 1, 11, 12, 13]
        assert lines.leaves(12) == [leaf_hash(line) for line in original[:12]]

    def test_rollback_checks_read_through_the_archive(self, audit_dir: Path, tmp_path: Path) -> None:
        """An old checkpoint kept outside still matches; a citation of an archived entry is not a finding; one
        beyond the log still is."""
        old_note = (audit_dir / LATEST_CHECKPOINT).read_bytes()  # size 20, wholly archived below
        archive_log(audit_dir, ORIGIN, before=20, out=tmp_path / "out", reports_dir=None)
        lines = read_lines(audit_dir)
        verdict = judge_checkpoint(lines, old_note, ORIGIN, read_verifiers(audit_dir), "published checkpoint")
        assert verdict.kind == "consistent"
        citations = [Citation("rpt-1", "generated", 7), Citation("rpt-2", "generated", 40)]
        assert [f.key for f in check_citations(lines, citations)] == ["store:rpt-2:generated:40"]

    def test_the_console_audit_page_says_what_was_archived(self, audit_dir: Path, tmp_path: Path) -> None:
        from edge_agent.console.views.audit import audit_data

        archive_log(audit_dir, ORIGIN, before=12, out=tmp_path / "out", reports_dir=None)
        with AuditLog.open(audit_dir, ORIGIN) as log:
            data = audit_data(log, audit_dir)
        assert data["size"] == 22
        assert data["archived"] == {"entries": 12, "bundles": ["audit-archive-000000000000-000000000011.tar.xz"]}


class TestCli:
    def test_archive_command(self, tmp_path: Path) -> None:
        """`edge-agent audit archive` prints what left and where; `audit verify` then names the archive."""
        config = tmp_path / "edge-agent.toml"
        config.write_text(
            f'[site]\nid = "cli-site"\n\n[paths]\nstate_dir = "{tmp_path / "state"}"\n\n[audit]\norigin = "{ORIGIN}"\n',
            encoding="utf-8",
        )
        make_log(tmp_path / "state" / "audit")
        run = cli("archive", "--config", str(config), "--before", "12", "--out", str(tmp_path / "out"))
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert out["archived"] == {"first_seq": 0, "last_seq": 11, "entries": 12}
        assert out["first_kept"] == 12 and Path(out["bundle"]).is_file()
        verify = cli("verify", "--config", str(config))
        assert verify.returncode == 0, verify.stderr
        assert "12 entries (0..11) are archived" in verify.stdout
        refused = cli("archive", "--config", str(config), "--before", "99", "--out", str(tmp_path / "out"))
        assert refused.returncode == 1
        assert "--before 99 is above the latest signed checkpoint's size 22" in refused.stderr
        # A new log over the old one's archive files would not be one log: init says to move them away first.
        (tmp_path / "state" / "audit" / ENTRIES).unlink()
        init = cli("init", "--config", str(config), "--new-log", "--reason", "disk lost")
        assert init.returncode == 1
        assert "archive.json is the old log's (entries it archived): move it, archived.leaves" in init.stderr


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.one_of(st.integers(), st.integers(min_value=-3, max_value=25), st.just(2**63)))
def test_any_seq_archives_or_is_refused_never_breaking_the_log(before: int) -> None:
    """Any --before: a clear ArchiveError and an unchanged log, or an archive; the log verifies either way with
    every entry's leaf hash where it was."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "audit"
        make_log(directory, entries=12)
        leaves = all_leaves(directory)
        try:
            archive_log(directory, ORIGIN, before=before, out=Path(tmp) / "out", reports_dir=None)
        except ArchiveError as exc:
            assert str(exc).startswith("--before")
            assert not (directory / ARCHIVE_STATE).exists()
            assert all_leaves(directory) == leaves
        else:
            assert 0 < before <= 12
            assert LogView.read(directory).first_kept == before
            assert all_leaves(directory)[:12] == leaves
        verified = verify_log(directory)
        assert verified.ok, verified.summary()
