"""The append-only log: durable appends, the chain across reopen, checkpoints, keys, torn-tail repair."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from edge_agent.audit import (
    AuditEntry,
    AuditIntegrityError,
    AuditKeyError,
    AuditLockedError,
    AuditLog,
    AuditWriteError,
    CheckpointError,
    EntryFormatError,
)
from edge_agent.audit.checkpoint import Checkpoint, SignedNote
from edge_agent.audit.entry import GENESIS_HASH, body_of_line
from edge_agent.audit.log import read_verifiers, signed_notes
from edge_agent.audit.verify import verify_log
from edge_agent.signing import Verifier

ORIGIN = "edge-agent/test-site"
T0 = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)


class Clock:
    """A deterministic UTC clock: each call is one second later."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def open_log(directory: Path, every: int | None = None) -> AuditLog:
    return AuditLog.open(directory, ORIGIN, checkpoint_every_entries=every, clock=Clock())


def lines(directory: Path) -> list[bytes]:
    return (directory / "entries.jsonl").read_bytes().splitlines()


class TestEntry:
    def test_entry_hash_is_sha256_of_the_line_without_the_entry_hash_member(self) -> None:
        """The documented recipe: drop `"entry_hash":"…",` from the stored line and hash the rest."""
        entry = AuditEntry.create(3, T0, "mqtt", "ingest.batch", {"count": 2, "name": "bomba ñ"}, GENESIS_HASH)
        line = entry.to_line()
        assert hashlib.sha256(body_of_line(line)).hexdigest() == entry.entry_hash
        assert body_of_line(line) == AuditEntry.body(3, T0, "mqtt", "ingest.batch", entry.payload, GENESIS_HASH)
        assert line.startswith(b'{"actor":"mqtt","entry_hash":"')
        assert line.endswith(b'"seq":3,"time":"2026-11-29T06:00:00.000000Z"}')
        assert "bomba ñ".encode() in line

    def test_actor_imitating_the_members_cannot_shift_the_hash_recipe(self) -> None:
        """An actor or payload spelling `","event":"` or `"entry_hash":"` still yields a line whose recipe holds."""
        actor = 'x","entry_hash":"' + "0" * 64 + '","event":"y'
        entry = AuditEntry.create(0, T0, actor, "e", {"entry_hash": "1" * 64}, GENESIS_HASH)
        line = entry.to_line()
        assert hashlib.sha256(body_of_line(line)).hexdigest() == entry.entry_hash
        assert AuditEntry.from_line(line) == entry

    def test_stored_line_parses_back_to_the_same_entry(self) -> None:
        """from_line(to_line(e)) == e, and the line is canonical."""
        entry = AuditEntry.create(0, T0, "a", "e.x", {"z": [1, 2.5, None], "a": {"b": True}}, GENESIS_HASH)
        assert AuditEntry.from_line(entry.to_line()) == entry

    def test_non_json_payload_is_refused(self) -> None:
        """A payload that has no canonical JSON form is an error before anything is written."""
        with pytest.raises(EntryFormatError, match="not canonical JSON"):
            AuditEntry.create(0, T0, "a", "e", {"when": T0}, GENESIS_HASH)
        with pytest.raises(EntryFormatError):
            AuditEntry.create(0, T0, "a", "e", {"x": float("nan")}, GENESIS_HASH)


class TestAppend:
    def test_first_open_creates_a_0600_key_and_records_it(self, tmp_path: Path) -> None:
        """Entry 0 is key.rotated naming the new key; the key file is private."""
        with open_log(tmp_path) as log:
            key = log.verifier.key_string()
        assert stat.S_IMODE((tmp_path / "signing.key").stat().st_mode) == 0o600
        first = json.loads(lines(tmp_path)[0])
        assert (first["seq"], first["event"], first["actor"]) == (0, "key.rotated", "audit")
        assert first["payload"] == {"previous": None, "key": key}
        assert first["prev_hash"] == GENESIS_HASH
        assert [v.key_string() for v in read_verifiers(tmp_path)] == [key]

    def test_entries_chain_by_prev_hash_across_reopen(self, tmp_path: Path) -> None:
        """seq continues and prev_hash links to the last entry after a reopen."""
        with open_log(tmp_path) as log:
            a = log.append("agent.start", "agent", {"version": "1"})
        with open_log(tmp_path) as log:
            b = log.append("agent.stop", "agent", {})
        assert (a.seq, b.seq) == (1, 2)
        assert b.prev_hash == a.entry_hash
        assert [json.loads(x)["seq"] for x in lines(tmp_path)] == [0, 1, 2]

    def test_append_returns_only_after_fsync_of_its_line(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The file holds the whole line when fsync runs, and fsync runs before append returns."""
        with open_log(tmp_path) as log:
            seen: list[int] = []
            real_fsync = os.fsync

            def watching_fsync(fd: int) -> None:
                seen.append(os.fstat(fd).st_size)
                real_fsync(fd)

            monkeypatch.setattr(os, "fsync", watching_fsync)
            log.append("ingest.batch", "mqtt", {"count": 1})
            monkeypatch.setattr(os, "fsync", real_fsync)
            assert seen and seen[0] == (tmp_path / "entries.jsonl").stat().st_size

    def test_append_many_writes_all_with_one_fsync(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Group commit: a batch costs one fsync and chains like single appends."""
        with open_log(tmp_path) as log:
            calls: list[int] = []
            real_fsync = os.fsync
            monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd))[1])
            entries = log.append_many([("ingest.batch", "mqtt", {"i": i}) for i in range(5)])
            monkeypatch.setattr(os, "fsync", real_fsync)
        assert len(calls) == 1
        assert [e.seq for e in entries] == [1, 2, 3, 4, 5]
        assert all(b.prev_hash == a.entry_hash for a, b in pairwise(entries))

    def test_concurrent_appends_from_threads_form_one_chain(self, tmp_path: Path) -> None:
        """8 threads × 25 appends: 201 entries, no seq twice, chain intact."""
        with open_log(tmp_path) as log:

            def work(n: int) -> None:
                for i in range(25):
                    log.append("ingest.batch", f"worker-{n}", {"i": i})

            threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert log.size == 201
        result = verify_log(tmp_path)
        assert result.ok, result.summary()
        assert result.entries == 201

    def test_concurrent_appends_share_fsyncs(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Group commit: 8 threads appending one entry at a time need fewer fsyncs than entries."""
        with open_log(tmp_path) as log:
            calls: list[int] = []
            real_fsync = os.fsync
            monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd))[1])
            barrier = threading.Barrier(8)

            def work(n: int) -> None:
                barrier.wait()
                for i in range(10):
                    log.append("ingest.batch", f"worker-{n}", {"i": i})

            threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            monkeypatch.setattr(os, "fsync", real_fsync)
            assert log.size == 81
        assert len(calls) < 80
        assert verify_log(tmp_path).ok

    def test_appends_checkpoints_and_rotation_interleaved_from_threads_verify(self, tmp_path: Path) -> None:
        """Writers (single and grouped appends) race a thread that checkpoints nonstop; then a rotation; all
        verifies."""
        import random

        log = open_log(tmp_path, every=7)
        stop = threading.Event()

        def writer(n: int) -> None:
            rng = random.Random(n)
            for i in range(30):
                k = rng.randint(1, 4)
                if k == 1:
                    log.append("ingest.batch", f"w{n}", {"i": i})
                else:
                    log.append_many([("ingest.batch", f"w{n}", {"i": i, "k": j}) for j in range(k)])

        def checkpointer() -> None:
            while not stop.is_set():
                log.checkpoint()

        cp = threading.Thread(target=checkpointer)
        cp.start()
        writers = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in writers:
            t.start()
        for t in writers:
            t.join()
        stop.set()
        cp.join()
        log.rotate_key("operator:alice")
        log.close()
        result = verify_log(tmp_path, strict=True)
        assert result.ok, result.summary()
        assert result.signed_size == result.entries == log.size

    def test_bad_event_name_is_refused(self, tmp_path: Path) -> None:
        """Event names are dotted lowercase; nothing is written for a bad one."""
        with open_log(tmp_path) as log:
            with pytest.raises(EntryFormatError, match="'Report Generated'"):
                log.append("Report Generated", "reports", {})
            assert log.size == 1

    def test_failed_write_leaves_no_partial_entry(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An I/O error (here from fsync) truncates back to the last durable entry; the next append chains from it."""
        with open_log(tmp_path) as log:
            size_before = (tmp_path / "entries.jsonl").stat().st_size
            real_fsync = os.fsync

            def failing_fsync(fd: int) -> None:
                monkeypatch.setattr(os, "fsync", real_fsync)
                raise OSError(28, "No space left on device")

            monkeypatch.setattr(os, "fsync", failing_fsync)
            with pytest.raises(AuditWriteError, match="No space left"):
                log.append("ingest.batch", "mqtt", {"count": 1})
            assert (tmp_path / "entries.jsonl").stat().st_size == size_before
            entry = log.append("ingest.batch", "mqtt", {"count": 2})
            assert entry.seq == 1
        assert verify_log(tmp_path).ok

    def test_second_open_of_the_same_log_is_refused(self, tmp_path: Path) -> None:
        """Only one process (or handle) may append: a second gets AuditLockedError."""
        with open_log(tmp_path):
            with pytest.raises(AuditLockedError, match="open in another process"):
                open_log(tmp_path)
        open_log(tmp_path).close()


class TestCheckpoints:
    def test_checkpoint_every_n_entries_and_at_close(self, tmp_path: Path) -> None:
        """With N=4: size 1 at creation, then 5 and 9 (4 entries later each), and 10 at close."""
        with open_log(tmp_path, every=4) as log:
            for i in range(9):
                log.append("ingest.batch", "mqtt", {"i": i})
        assert [size for size, _ in signed_notes(tmp_path)] == [1, 5, 9, 10]
        latest = SignedNote.parse((tmp_path / "checkpoint").read_bytes())
        assert Checkpoint.parse_body(latest.text).size == 10

    def test_checkpoint_root_is_the_merkle_root_of_the_lines(self, tmp_path: Path) -> None:
        """The signed root equals RFC 6962 MTH over the stored lines as leaves."""
        from edge_agent.audit.merkle import leaf_hash, root

        with open_log(tmp_path) as log:
            for i in range(6):
                log.append("ingest.batch", "mqtt", {"i": i})
            note = log.checkpoint()
        cp = Checkpoint.parse_body(SignedNote.parse(note).text)
        assert cp.size == 7
        assert cp.root == root([leaf_hash(x) for x in lines(tmp_path)])

    def test_never_signs_a_tree_inconsistent_with_the_last_checkpoint(self, tmp_path: Path) -> None:
        """After an entry under a checkpoint is altered on disk, reopen records the problem and refuses to sign."""
        with open_log(tmp_path) as log:
            for i in range(4):
                log.append("ingest.batch", "mqtt", {"i": i})
        data = lines(tmp_path)
        data[2] = data[2].replace(b'"i":1', b'"i":7')
        (tmp_path / "entries.jsonl").write_bytes(b"\n".join(data) + b"\n")
        with capture_logs() as logs:
            log = open_log(tmp_path)
        try:
            with pytest.raises(CheckpointError, match="no longer match the signed checkpoint of size 5"):
                log.checkpoint()
            assert any(e["event"] == "audit_log_inconsistent" for e in logs)
            last = json.loads(lines(tmp_path)[-1])
            assert (last["event"], last["payload"]["kind"]) == ("error", "checkpoint_mismatch")
        finally:
            log.close()
        assert [size for size, _ in signed_notes(tmp_path)] == [1, 5]


class TestKeys:
    def test_rotation_is_an_entry_and_the_handover_checkpoint_has_both_signatures(self, tmp_path: Path) -> None:
        """rotate_key records previous and new key; the covering checkpoint verifies with either."""
        with open_log(tmp_path) as log:
            old = log.verifier
            entry = log.rotate_key("operator:alice")
            new = log.verifier
            log.append("agent.stop", "agent", {})
        assert entry.payload == {"previous": old.key_string(), "key": new.key_string()}
        assert entry.actor == "operator:alice"
        handover = SignedNote.parse(dict(signed_notes(tmp_path))[entry.seq + 1])
        assert handover.verified_by([old]) == [old]
        assert handover.verified_by([new]) == [new]
        final = SignedNote.parse((tmp_path / "checkpoint").read_bytes())
        with pytest.raises(CheckpointError):
            final.verified_by([old])
        assert [v.key_string() for v in read_verifiers(tmp_path)] == [old.key_string(), new.key_string()]
        assert stat.S_IMODE((tmp_path / "signing.key").stat().st_mode) == 0o600
        assert verify_log(tmp_path, pubkey=new).ok

    def test_auditor_holding_the_old_key_follows_the_handover(self, tmp_path: Path) -> None:
        """verify_log with a rotated-out key succeeds through the hand-over checkpoint, and says so."""
        with open_log(tmp_path) as log:
            old = log.verifier
            log.rotate_key("operator:alice")
            log.rotate_key("operator:bob")
            log.append("agent.stop", "agent", {})
        result = verify_log(tmp_path, pubkey=old)
        assert result.ok, result.summary()
        assert any("was rotated out" in note for note in result.notes)

    def test_stranger_key_is_not_trusted_for_the_log(self, tmp_path: Path) -> None:
        """A key the log never used does not verify it."""
        from edge_agent.audit import Signer

        open_log(tmp_path).close()
        result = verify_log(tmp_path, pubkey=Signer.generate(ORIGIN).verifier)
        assert result.problem is not None and "not one this log's key.rotated entries name" in result.problem.reason

    def test_key_made_but_not_yet_recorded_is_recorded_on_next_open(self, tmp_path: Path) -> None:
        """A crash between creating the key and writing entry 0: the next open records that same key."""
        from edge_agent.audit import Signer

        signer = Signer.generate(ORIGIN)
        signer.write(tmp_path / "signing.key")
        with open_log(tmp_path) as log:
            assert log.verifier == signer.verifier
        first = json.loads(lines(tmp_path)[0])
        assert (first["event"], first["payload"]["key"]) == ("key.rotated", signer.verifier.key_string())
        assert verify_log(tmp_path, pubkey=signer.verifier).ok

    def test_missing_key_for_an_existing_log_is_an_error(self, tmp_path: Path) -> None:
        """A log with entries never silently gets a fresh key."""
        open_log(tmp_path).close()
        (tmp_path / "signing.key").unlink()
        with pytest.raises(AuditKeyError, match="missing but the log holds 1 entries"):
            open_log(tmp_path)

    def test_pubkey_is_a_note_verifier_key(self, tmp_path: Path) -> None:
        """`<origin>+<8 hex>+<base64(0x01||key)>`, parseable back."""
        with open_log(tmp_path) as log:
            text = log.verifier.key_string()
        name, hash_hex, _ = text.split("+", 2)
        assert name == ORIGIN and len(hash_hex) == 8
        assert Verifier.parse(text).key_string() == text


class TestReopen:
    def test_torn_last_line_is_cut_kept_and_recorded(self, tmp_path: Path) -> None:
        """A partial line (never acknowledged) is removed, saved under torn/, and an error entry names its hash."""
        with open_log(tmp_path) as log:
            log.append("ingest.batch", "mqtt", {"i": 1})
        torn = b'{"actor":"mqtt","entry_hash":"ab'
        with open(tmp_path / "entries.jsonl", "ab") as f:
            f.write(torn)
        with capture_logs() as logs:
            log = open_log(tmp_path)
        log.close()
        assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["audit_torn_tail_repaired"]
        saved = list((tmp_path / "torn").iterdir())
        assert [p.read_bytes() for p in saved] == [torn]
        record = json.loads(lines(tmp_path)[2])
        assert record["event"] == "error"
        assert record["payload"] == {
            "kind": "torn_tail_repaired",
            "offset": record["payload"]["offset"],
            "bytes": len(torn),
            "sha256": hashlib.sha256(torn).hexdigest(),
        }
        assert verify_log(tmp_path).ok

    def test_damaged_last_complete_line_refuses_to_open(self, tmp_path: Path) -> None:
        """A complete (acknowledged) entry that fails its hash is not a crash artefact: open refuses."""
        with open_log(tmp_path) as log:
            log.append("ingest.batch", "mqtt", {"i": 1})
        data = lines(tmp_path)
        data[-1] = data[-1].replace(b'"i":1', b'"i":2')
        (tmp_path / "entries.jsonl").write_bytes(b"\n".join(data) + b"\n")
        with pytest.raises(AuditIntegrityError, match="last entry \\(line 2\\).*damaged"):
            open_log(tmp_path)
