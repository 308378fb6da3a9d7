"""Crash safety: a real process SIGKILLed while appending loses no acknowledged entry and leaves a valid chain."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from edge_agent.audit import AuditLog
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.verify import verify_log

ORIGIN = "edge-agent/crash-site"

# The child acknowledges an entry (prints its seq) only after append() returned, i.e. after fsync. Four threads
# append concurrently, some in batches, with payloads big enough (16 KiB) that a kill often lands inside a write.
CHILD = textwrap.dedent(
    """
    import sys, threading
    from edge_agent.audit import AuditLog
    log = AuditLog.open(sys.argv[1], sys.argv[2], checkpoint_every_entries=50)
    lock = threading.Lock()
    def ack(seqs):
        with lock:
            sys.stdout.write("".join(f"ACK {s}\\n" for s in seqs))
            sys.stdout.flush()
    def work(n):
        i = 0
        while True:
            i += 1
            if i % 3:
                e = log.append("ingest.batch", f"worker-{n}", {"i": i, "blob": "x" * 16384})
                ack([e.seq])
            else:
                es = log.append_many([("ingest.batch", f"worker-{n}", {"i": i, "k": k}) for k in range(4)])
                ack([e.seq for e in es])
    for n in range(4):
        threading.Thread(target=work, args=(n,), daemon=True).start()
    threading.Event().wait()
    """
)


def run_and_kill(directory: Path, min_acks: int) -> set[int]:
    """Start the child, read acknowledgements until `min_acks`, SIGKILL it mid-stream; return the acked seqs."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(directory), ORIGIN], stdout=subprocess.PIPE, env=env, text=True
    )
    acked: set[int] = set()
    deadline = time.monotonic() + 60
    try:
        assert proc.stdout is not None
        while len(acked) < min_acks and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("ACK "):  # other lines are the child's structured log
                acked.add(int(line[4:]))
        proc.send_signal(signal.SIGKILL)
        # Acks already in the pipe were printed after their fsync: they count as acknowledged too.
        rest = proc.stdout.read()
        acked.update(int(line[4:]) for line in rest.splitlines() if line.startswith("ACK "))
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    assert len(acked) >= min_acks, "child did not get going"
    return acked


def test_sigkill_while_appending_loses_no_acknowledged_entry(tmp_path: Path) -> None:
    """Three kill/restart rounds: every acknowledged seq survives with its payload, and the chain verifies."""
    directory = tmp_path / "audit"
    acked: set[int] = set()
    for round_ in range(3):
        acked |= run_and_kill(directory, min_acks=150 * (round_ + 1))
        # Restart: open repairs a torn tail if the kill left one, then appends continue the chain.
        with AuditLog.open(directory, ORIGIN) as log:
            log.append("agent.start", "agent", {"round": round_})
        result = verify_log(directory)
        assert result.ok, result.summary()
        stored = {json.loads(line)["seq"] for line in (directory / "entries.jsonl").read_bytes().splitlines()}
        assert acked <= stored, f"acknowledged but lost: {sorted(acked - stored)[:10]}"


# Dies (os._exit, no cleanup, like a power cut) at a chosen step of rotate_key.
ROTATE_CHILD = textwrap.dedent(
    """
    import os, sys
    import edge_agent.audit.log as audit_log
    from edge_agent.audit import AuditLog
    log = AuditLog.open(sys.argv[1], sys.argv[2])
    log.append("agent.start", "agent", {})
    log.checkpoint()
    if sys.argv[3] == "after-entry":
        audit_log._append_key = lambda *a: os._exit(0)            # the key.rotated entry is durable, nothing after
    else:
        audit_log.AuditLog._append = lambda *a, **k: os._exit(0)  # the new key file exists, no entry yet
    log.rotate_key("operator:alice")
    """
)


def crash_during_rotation(directory: Path, step: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    run = subprocess.run([sys.executable, "-c", ROTATE_CHILD, str(directory), ORIGIN, step], env=env, timeout=60)
    assert run.returncode == 0


def test_rotation_cut_after_its_entry_is_completed_on_reopen(tmp_path: Path) -> None:
    """The new key is adopted, and a hand-over checkpoint signed by both keys is written, so the old key still
    vouches for the new one."""
    directory = tmp_path / "audit"
    crash_during_rotation(directory, "after-entry")
    old = read_verifiers(directory)[0]
    with AuditLog.open(directory, ORIGIN) as log:
        new = log.verifier
    assert new != old
    assert [v.key_string() for v in read_verifiers(directory)] == [old.key_string(), new.key_string()]
    assert not (directory / "signing.key.new").exists()
    assert verify_log(directory, pubkey=new).ok
    result = verify_log(directory, pubkey=old)
    assert result.ok, result.summary()


def test_rotation_cut_before_its_entry_keeps_the_old_key(tmp_path: Path) -> None:
    """Without the key.rotated entry on disk, the half-made key is discarded and nothing changes."""
    directory = tmp_path / "audit"
    crash_during_rotation(directory, "before-entry")
    old = read_verifiers(directory)[0]
    with AuditLog.open(directory, ORIGIN) as log:
        assert log.verifier == old
    assert not (directory / "signing.key.new").exists()
    assert verify_log(directory, pubkey=old).ok
