"""Tampering with a log on disk is detected and located by `verify_log` and `edge-agent audit verify`."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent.audit import AuditLog, Signer
from edge_agent.audit.checkpoint import Checkpoint, SignedNote, sign_checkpoint
from edge_agent.audit.entry import AuditEntry
from edge_agent.audit.verify import verify_log

ORIGIN = "edge-agent/tamper-site"
EVERY = 8


def build(directory: Path, n: int = 40, tag: str = "a") -> None:
    """A closed log of n entries (entry 0 is the key), checkpointed at 1, every 8 entries after, and at close."""
    with AuditLog.open(directory, ORIGIN, checkpoint_every_entries=EVERY) as log:
        for i in range(1, n):
            log.append("ingest.batch", "mqtt", {"i": i, "tag": tag})


def read(directory: Path) -> list[bytes]:
    return (directory / "entries.jsonl").read_bytes().splitlines()


def write(directory: Path, lines: list[bytes]) -> None:
    (directory / "entries.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    build(tmp_path / "audit")
    assert verify_log(tmp_path / "audit").ok
    return tmp_path / "audit"


class TestTamperingIsLocated:
    def test_one_byte_edited(self, log_dir: Path) -> None:
        """A single changed byte in entry 17's payload names entry 17 and its hash."""
        lines = read(log_dir)
        lines[17] = lines[17].replace(b'"i":17', b'"i":18')
        write(log_dir, lines)
        result = verify_log(log_dir)
        assert result.problem is not None and result.problem.seq == 17
        assert "does not match its contents" in result.problem.reason

    def test_one_byte_edited_in_the_hash_itself(self, log_dir: Path) -> None:
        """Changing a hex digit of entry 9's own entry_hash is caught at entry 9."""
        lines = read(log_dir)
        i = lines[9].index(b'"entry_hash":"') + 14
        lines[9] = lines[9][:i] + (b"0" if lines[9][i : i + 1] != b"0" else b"1") + lines[9][i + 1 :]
        write(log_dir, lines)
        result = verify_log(log_dir)
        assert result.problem is not None and result.problem.seq == 9

    def test_entry_deleted(self, log_dir: Path) -> None:
        """Removing entry 23 is reported at 23: the next line holds seq 24."""
        lines = read(log_dir)
        del lines[23]
        write(log_dir, lines)
        result = verify_log(log_dir)
        assert result.problem is not None and result.problem.seq == 23
        assert "holds seq 24, expected 23: entry 23 is missing" in result.problem.reason

    def test_two_entries_swapped(self, log_dir: Path) -> None:
        """Swapping entries 30 and 31 is reported at 30."""
        lines = read(log_dir)
        lines[30], lines[31] = lines[31], lines[30]
        write(log_dir, lines)
        result = verify_log(log_dir)
        assert result.problem is not None and result.problem.seq == 30
        assert "holds seq 31, expected 30" in result.problem.reason

    def test_tail_truncated(self, log_dir: Path) -> None:
        """Dropping the last 5 entries contradicts the signed checkpoint of size 40: 35..39 are named missing."""
        write(log_dir, read(log_dir)[:35])
        result = verify_log(log_dir)
        assert result.problem is not None and result.problem.seq == 35
        assert "covers entries 35..39, which are missing (tail truncated)" in result.problem.reason

    def test_entries_spliced_from_another_log(self, log_dir: Path, tmp_path: Path) -> None:
        """Entries 12..15 taken from another log of the same origin break the chain at 12."""
        build(tmp_path / "other", tag="b")
        ours, theirs = read(log_dir), read(tmp_path / "other")
        write(log_dir, ours[:12] + theirs[12:16] + ours[16:])
        result = verify_log(log_dir)
        assert result.problem is not None and result.problem.seq == 12
        assert "prev_hash" in result.problem.reason

    def test_rewritten_history_with_a_recomputed_chain(self, log_dir: Path) -> None:
        """Re-hashing every entry after an edit keeps the chain valid, but the signed roots locate the range."""
        lines = read(log_dir)
        entries = [AuditEntry.from_line(x) for x in lines]
        rewritten = entries[:19]
        for e in entries[19:]:
            payload = dict(e.payload, i=-1) if e.seq == 19 else e.payload
            rewritten.append(AuditEntry.create(e.seq, e.time, e.actor, e.event, payload, rewritten[-1].entry_hash))
        write(log_dir, [e.to_line() for e in rewritten])
        result = verify_log(log_dir)
        assert result.problem is not None
        # Checkpoints were signed at sizes 1, 9, 17, 25, 33, 40: the one at 25 is the first to cover entry 19.
        assert "checkpoint of size 25: signed root" in result.problem.reason
        assert "the first changed entry is one of 17..24" in result.problem.reason

    def test_checkpoint_resigned_with_another_key(self, log_dir: Path) -> None:
        """The latest checkpoint with its body intact but signed by a stranger's key is rejected."""
        note = (log_dir / "checkpoint").read_bytes()
        body = Checkpoint.parse_body(SignedNote.parse(note).text)
        forged = sign_checkpoint(body, [Signer.generate(ORIGIN)])
        (log_dir / "checkpoint").write_bytes(forged)
        records = [json.loads(x) for x in (log_dir / "checkpoints.jsonl").read_text().splitlines()]
        records[-1]["note"] = forged.decode()
        (log_dir / "checkpoints.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        result = verify_log(log_dir)
        assert result.problem is not None
        assert f"checkpoint of size {body.size}: signature: no signature from a trusted key" in result.problem.reason


class TestCli:
    def _config(self, tmp_path: Path) -> Path:
        config = tmp_path / "edge-agent.toml"
        config.write_text(f'[site]\nid = "tamper-site"\n\n[paths]\nstate_dir = "{tmp_path}"\n', encoding="utf-8")
        return config

    def test_verify_exits_zero_on_an_intact_log(self, tmp_path: Path) -> None:
        """`edge-agent audit verify` prints OK and exits 0."""
        build(tmp_path / "audit")
        run = subprocess.run(
            [sys.executable, "-m", "edge_agent", "audit", "verify", "--config", str(self._config(tmp_path))],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("OK: 40 entries, hash chain intact")

    def test_verify_exits_one_naming_the_first_bad_entry(self, tmp_path: Path) -> None:
        """An edited entry makes the command exit 1 with `entry N:` on stderr."""
        build(tmp_path / "audit")
        lines = read(tmp_path / "audit")
        lines[5] = lines[5].replace(b'"tag":"a"', b'"tag":"x"')
        write(tmp_path / "audit", lines)
        run = subprocess.run(
            [sys.executable, "-m", "edge_agent", "audit", "verify", "--config", str(self._config(tmp_path))],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 1
        assert "audit verify: FAILED: entry 5: entry_hash" in run.stderr


def test_log_stripped_of_every_checkpoint_fails(log_dir: Path) -> None:
    """A log always has a checkpoint from its creation; deleting them all (to hide truncation) is reported."""
    (log_dir / "checkpoint").unlink()
    (log_dir / "checkpoints.jsonl").unlink()
    result = verify_log(log_dir)
    assert result.problem is not None and "no signed checkpoint for 40 entries" in result.problem.reason


def test_strict_mode_rejects_an_unsigned_entry_with_a_valid_hash_but_a_bad_shape(log_dir: Path) -> None:
    """A line appended after the last checkpoint, correctly hashed and chained but with a list as payload, passes the
    byte-level chain check (nothing signs it yet) and is caught by --strict."""
    from edge_agent.audit.entry import ENTRY_HASH_MARKER

    lines = read(log_dir)
    prev = AuditEntry.from_line(lines[-1]).entry_hash
    body = (
        '{"actor":"x","event":"e","payload":[],"prev_hash":"'
        + prev
        + '","seq":40,"time":"2026-11-29T06:00:00.000000Z"}'
    ).encode()
    at = body.index(b',"event":') + 1
    forged = body[:at] + ENTRY_HASH_MARKER + hashlib.sha256(body).hexdigest().encode() + b'",' + body[at:]
    write(log_dir, lines + [forged])
    assert verify_log(log_dir).ok
    result = verify_log(log_dir, strict=True)
    assert result.problem is not None and result.problem.seq == 40
    assert "not an audit entry" in result.problem.reason
