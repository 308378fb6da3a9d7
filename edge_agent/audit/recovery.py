"""Opening an audit log: the one process's lock, an archive step a crash interrupted completed or undone
(cutover.py), a torn last line cut off, the file scanned and held to its latest signed checkpoint, and a key
rotation a crash interrupted finished or abandoned (see `log`'s crash safety)."""

from __future__ import annotations

import fcntl
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, open_checkpoint
from edge_agent.audit.cutover import settle
from edge_agent.audit.entry import AuditEntry, EntryFormatError
from edge_agent.audit.errors import AuditIntegrityError, AuditKeyError, AuditLockedError
from edge_agent.audit.files import (
    CHECKPOINTS,
    ENTRIES,
    LATEST_CHECKPOINT,
    LOCK,
    SIGNING_KEY,
    TORN,
    append_key,
    iter_lines,
    read_signer,
    read_verifiers,
)
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.merkle import RootBuilder
from edge_agent.audit.view import ARCHIVE_STATE, ARCHIVED_LEAVES, LogView, seq_of
from edge_agent.signing import Signer, fsync_dir, write_durably

log = structlog.get_logger(component="audit")


@dataclass(frozen=True)
class Tail:
    size: int
    head_hash: str
    builder: RootBuilder
    root_at_checkpoint: bytes | None


def lock(directory: Path) -> int:
    fd = os.open(directory / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        os.close(fd)
        raise AuditLockedError(f"audit log {directory} is open in another process (the running agent?)") from exc
    return fd


def repair_torn_tail(directory: Path, entries: Path) -> dict[str, Any] | None:
    """Cut a partial last line (no newline: never acknowledged) and keep its bytes under torn/."""
    if not entries.exists():
        return None
    size = entries.stat().st_size
    if size == 0:
        return None
    with open(entries, "rb+") as f:
        # A torn line is at most one append_many's worth; read back far enough to find the previous newline.
        chunk = 1 << 16
        pos = size
        tail = b""
        while pos > 0:
            start = max(0, pos - chunk)
            f.seek(start)
            tail = f.read(pos - start) + tail
            pos = start
            if b"\n" in tail[:-1] or tail.endswith(b"\n"):
                break
        if tail.endswith(b"\n"):
            return None
        cut = tail.rfind(b"\n") + 1
        keep = pos + cut
        torn = tail[cut:]
        torn_dir = directory / TORN
        torn_dir.mkdir(exist_ok=True)
        digest = hashlib.sha256(torn).hexdigest()
        write_durably(torn_dir / f"{keep:012d}-{digest[:16]}.bin", torn)
        f.truncate(keep)
        f.flush()
        os.fsync(f.fileno())
    log.warning("audit_torn_tail_repaired", offset=keep, bytes=len(torn), sha256=digest)
    return {"offset": keep, "bytes": len(torn), "sha256": digest}


def scan(view: LogView, checkpoint_size: int | None) -> Tail:
    """Leaf hashes of every entry, archived ones from the view's leaf file (for the root, and the root at the
    latest checkpoint's size), and a full check of the last line (to extend the chain)."""
    entries = view.directory / ENTRIES
    builder = RootBuilder()
    last: bytes | None = None
    root_at_checkpoint: bytes | None = None
    for leaf in view.leaf_list():
        if builder.size == checkpoint_size:
            root_at_checkpoint = builder.root()
        builder.append(leaf)
    for line in view.kept_lines():
        if last is None:
            _check_first_kept(view, line)
        if builder.size == checkpoint_size:
            root_at_checkpoint = builder.root()
        builder.append(leaf_hash(line))
        last = line
    if builder.size == checkpoint_size:
        root_at_checkpoint = builder.root()
    if last is None:
        return Tail(builder.size, view.head_hash, builder, root_at_checkpoint)
    try:
        entry = AuditEntry.from_line(last)
    except EntryFormatError as exc:
        raise AuditIntegrityError(f"last entry (line {builder.size}) of {entries} is damaged: {exc}") from exc
    if entry.seq != builder.size - 1:
        raise AuditIntegrityError(f"last entry of {entries} has seq {entry.seq} but is line {builder.size}")
    return Tail(builder.size, entry.entry_hash, builder, root_at_checkpoint)


def _check_first_kept(view: LogView, line: bytes) -> None:
    """entries.jsonl's first line is entry first_kept: else the archive files are missing or from another backup."""
    try:
        seq = seq_of(line)
    except (ValueError, KeyError, TypeError):
        return  # a damaged line: the checkpoints' roots no longer match, and the log is not signed again
    if seq != view.first_kept:
        raise AuditIntegrityError(
            f"{view.directory / ENTRIES} starts at entry {seq}, not {view.first_kept}: entries are missing from its"
            f" start, or the archive files ({ARCHIVE_STATE}, {ARCHIVED_LEAVES}) are missing or from another backup;"
            " restore the whole audit directory from one backup"
        )


def read_latest_checkpoint(directory: Path, origin: str) -> tuple[Checkpoint | None, str | None]:
    """The latest signed checkpoint, or why it cannot be used."""
    path = directory / LATEST_CHECKPOINT
    if not path.exists():
        return None, None
    try:
        return open_checkpoint(path.read_bytes(), read_verifiers(directory), origin), None
    except CheckpointError as exc:
        return None, f"latest checkpoint {path} does not verify: {exc}"


def consistency_problem(checkpoint: Checkpoint | None, tail: Tail) -> str | None:
    """Why the file no longer matches the latest checkpoint (None if it does)."""
    if checkpoint is None:
        return None
    if checkpoint.size > tail.size:
        return f"checkpoint covers {checkpoint.size} entries but the log holds {tail.size}: entries are missing"
    if tail.root_at_checkpoint != checkpoint.root:
        return f"entries 0..{checkpoint.size - 1} no longer match the signed checkpoint of size {checkpoint.size}"
    return None


def finish_rotation(directory: Path, key_path: Path, entries: Path | None) -> Signer | None:
    """A crash during rotate_key leaves signing.key.new: adopt it if the rotation entry made it to disk (returning
    the old key, to sign the hand-over), else discard it."""
    pending = directory / (SIGNING_KEY + ".new")
    if not pending.exists():
        return None
    new = read_signer(pending)
    old = read_signer(key_path) if key_path.exists() else None
    recorded = False
    if entries is not None:
        for line in iter_lines(entries):
            if b'"event":"key.rotated"' in line and new.verifier.key_string().encode() in line:
                recorded = True
    if recorded:
        if new.verifier.key_string() not in {v.key_string() for v in read_verifiers(directory)}:
            append_key(directory, new.verifier)
        os.replace(pending, key_path)
        log.warning("audit_key_rotation_completed_on_open", key=new.verifier.key_string())
        fsync_dir(directory)
        return old
    pending.unlink()
    log.warning("audit_key_rotation_abandoned", key=new.verifier.key_string())
    fsync_dir(directory)
    return None


def cut_partial_line(path: Path) -> None:
    """checkpoints.jsonl: a line torn by a crash is a checkpoint that was never finished; drop it."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "rb+") as f:
            f.truncate(data.rfind(b"\n") + 1)
            os.fsync(f.fileno())
        log.warning("audit_torn_checkpoint_dropped", bytes=len(data) - data.rfind(b"\n") - 1)


@dataclass(frozen=True)
class Recovered:
    """What opening found on disk and mended, before the log takes the file for appending."""

    tail: Tail
    last_checkpoint: Checkpoint | None
    blocked: str | None  # why the file no longer matches its latest checkpoint; None when it does
    signer: Signer
    created: bool  # a new log: its first entry is still to be written
    torn: dict[str, Any] | None  # the torn last line cut off, to be recorded
    handover_from: Signer | None  # the old key of a rotation finished here, to sign the hand-over


def recover(directory: Path, origin: str) -> Recovered:
    """The log in `directory` made ready to append to, under the caller's lock: a torn tail cut off, the file scanned
    and held to its latest checkpoint, an interrupted rotation finished, the signing key read (or created)."""
    entries = directory / ENTRIES
    settle(directory)
    torn = repair_torn_tail(directory, entries)
    cut_partial_line(directory / CHECKPOINTS)

    last, blocked = read_latest_checkpoint(directory, origin)
    tail = scan(LogView.read(directory), last.size if last else None)
    blocked = blocked or consistency_problem(last, tail)
    if blocked is not None:
        log.error("audit_log_inconsistent", error=blocked)
    key_path = directory / SIGNING_KEY
    handover_from = finish_rotation(directory, key_path, entries if tail.size else None)
    if key_path.exists():
        signer = read_signer(key_path)
        if signer.name != origin:
            raise AuditKeyError(f"signing key {key_path} is named {signer.name!r}, the log's origin is {origin!r}")
    elif tail.size:
        raise AuditKeyError(
            f"signing key {key_path} is missing but the log holds {tail.size} entries; restore the key from backup"
        )
    else:
        signer = Signer.generate(origin)
        signer.write(key_path)
    # An empty log gets its key as entry 0 — also after a crash between creating the key and writing that entry.
    created = tail.size == 0
    if created and signer.verifier.key_string() not in {v.key_string() for v in read_verifiers(directory)}:
        append_key(directory, signer.verifier)
    return Recovered(tail, last, blocked, signer, created, torn, handover_from)
