"""The append-only audit log: one JSONL file, fsync'd before `append` returns, with signed Merkle checkpoints.

Files in the audit directory (`<state_dir>/audit/`):

    entries.jsonl           one canonical entry per line (see entry.py)
    signing.key             Ed25519 signer key, mode 0600 (signing/keys.py)
    keys.txt                every verifier key this log has used, oldest first
    checkpoint              the latest signed checkpoint (checkpoint.py), as a plain note file
    checkpoints.jsonl       every signed checkpoint, one {"size": n, "note": "<signed note>"} per line
    torn/                   bytes cut from a torn last line on reopen, kept for forensics
    lock                    flock'd by the one process that has the log open for appending

Crash safety: a line is written with one `write` and then fsync'd; `append` returns only after that, so an
acknowledged entry is on disk. A crash mid-write can leave a partial last line without its newline — that entry was
never acknowledged, so reopening cuts it off (keeping the bytes under `torn/`) and records an `error` entry saying so.
Anything else that is wrong with the file is never "repaired": a bad last complete line refuses the open, and a file
that no longer matches its last signed checkpoint is opened for appending but never signed again.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, sign_checkpoint
from edge_agent.audit.entry import AuditEntry, AuditError, EntryFormatError
from edge_agent.audit.errors import AuditIntegrityError, AuditKeyError, AuditLockedError, AuditWriteError
from edge_agent.audit.events import EVENT_NAME, EVENTS
from edge_agent.audit.files import (
    CHECKPOINTS,
    ENTRIES,
    KEYS,
    LATEST_CHECKPOINT,
    SIGNING_KEY,
    iter_lines,
    read_signer,
    read_verifiers,
    signed_notes,
)
from edge_agent.audit.files import append_key as _append_key
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.recovery import Tail, lock, recover
from edge_agent.signing import Signer, SigningKeyError, Verifier, check_name, fsync_dir, write_durably

log = structlog.get_logger(component="audit")


def utcnow() -> datetime:
    return datetime.now(UTC)


class AuditLog:
    """Thread-safe append-only audit log. Open with `AuditLog.open(directory, origin=...)`."""

    def __init__(
        self,
        directory: Path,
        origin: str,
        signer: Signer,
        fd: int,
        tail: Tail,
        last_checkpoint: Checkpoint | None,
        blocked: str | None,
        checkpoint_every_entries: int | None,
        clock: Callable[[], datetime],
    ) -> None:
        self.directory = directory
        self.origin = origin
        self._signer = signer
        self._fd = fd
        # Durable state: entries fsync'd, the tree over them. Changed only by the fsync leader (under _sync_lock).
        self._size = tail.size
        self._head = tail.head_hash
        self._builder = tail.builder
        self._durable_end = os.fstat(fd).st_size
        # Written state: entries written (maybe not yet fsync'd), what the next entry chains from (under _write_lock).
        self._written_size = tail.size
        self._written_head = tail.head_hash
        self._written_end = self._durable_end
        self._pending: list[tuple[int, list[bytes], int, str]] = []  # (end offset, leaf hashes, size, head)
        self._epoch = 0  # bumped when a failed fsync rolls written entries back
        self._last_checkpoint = last_checkpoint
        self._blocked = blocked
        self._every = checkpoint_every_entries
        self._clock = clock
        # Lock order: _sync_lock before _write_lock. Writers hold _write_lock only to write, then queue for an fsync.
        self._write_lock = threading.Lock()
        self._sync_lock = threading.RLock()
        self._lock_fd: int | None = None
        self._closed = False
        self._held: str | None = None  # signing waits for the start-up rollback check (anchor.py)
        self._listeners: list[Callable[[bytes], None]] = []
        # The latest append or checkpoint that failed on disk (e.g. a read-only or full audit dir), until one succeeds.
        self._write_failure: str | None = None
        self._sign_failure: str | None = None

    # -- opening ---------------------------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        directory: Path | str,
        origin: str,
        *,
        checkpoint_every_entries: int | None = None,
        clock: Callable[[], datetime] = utcnow,
        genesis: dict[str, Any] | None = None,
    ) -> AuditLog:
        """Open (creating on first start) the log in `directory`; the signing key is created with it. `genesis`
        is added to a new log's first entry (`audit init --new-log`: why, and the old log's last checkpoint)."""
        directory = Path(directory)
        try:
            check_name(origin)
        except SigningKeyError as exc:
            raise AuditKeyError(f"origin: {exc}") from exc
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        lock_fd = lock(directory)
        try:
            return cls._open_locked(directory, origin, lock_fd, checkpoint_every_entries, clock, genesis)
        except BaseException:
            os.close(lock_fd)
            raise

    @classmethod
    def _open_locked(
        cls,
        directory: Path,
        origin: str,
        lock_fd: int,
        checkpoint_every_entries: int | None,
        clock: Callable[[], datetime],
        genesis: dict[str, Any] | None = None,
    ) -> AuditLog:
        disk = recover(directory, origin)
        tail, last, blocked, signer, created = disk.tail, disk.last_checkpoint, disk.blocked, disk.signer, disk.created
        entries = directory / ENTRIES
        fd = os.open(entries, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        fsync_dir(directory)
        audit = cls(directory, origin, signer, fd, tail, last, blocked, checkpoint_every_entries, clock)
        audit._lock_fd = lock_fd
        if created:
            first = {"previous": None, "key": signer.verifier.key_string(), **({"new_log": genesis} if genesis else {})}
            audit.append("key.rotated", "audit", first)
            # Signed at once, so every log has a checkpoint: one without any is then evidence of deletion.
            audit.checkpoint()
            log.info("audit_key_created", key=signer.verifier.key_string())
        if disk.handover_from is not None and blocked is None:
            # The rotation entry is durable but its hand-over checkpoint may not be: sign one with both keys now.
            with audit._sync_lock:
                audit._checkpoint_locked([disk.handover_from, signer])
        if disk.torn is not None:
            audit.append("error", "audit", {"kind": "torn_tail_repaired", **disk.torn})
        if blocked is not None:
            audit.append("error", "audit", {"kind": "checkpoint_mismatch", "detail": blocked})
        log.info("audit_opened", entries=audit.size, origin=origin, key=signer.verifier.key_string())
        return audit

    # -- state -----------------------------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return self._size

    @property
    def head_hash(self) -> str:
        return self._head

    @property
    def verifier(self) -> Verifier:
        return self._signer.verifier

    @property
    def last_checkpoint(self) -> Checkpoint | None:
        return self._last_checkpoint

    @property
    def path(self) -> Path:
        return self.directory / ENTRIES

    def root(self) -> bytes:
        with self._sync_lock:
            return self._builder.root()

    @property
    def blocked(self) -> str | None:
        """Why this log will not be signed (None: it will)."""
        return self._blocked

    @property
    def failure(self) -> str | None:
        """Why the latest checkpoint, or else the latest append, failed on disk (None: the latest of each worked)."""
        return self._sign_failure or self._write_failure

    def block(self, reason: str) -> None:
        """Never sign again in this process (a rollback was found); `audit recover` is the way back."""
        with self._sync_lock:
            self._blocked = self._blocked or reason

    def hold(self, reason: str) -> None:
        """Sign nothing until `release()`: the start-up rollback check has not finished."""
        with self._sync_lock:
            self._held = reason

    def release(self) -> None:
        with self._sync_lock:
            self._held = None

    def add_listener(self, listener: Callable[[bytes], None]) -> None:
        """Call `listener(note)` after each checkpoint is signed and stored (under the log's lock: keep it short)."""
        self._listeners.append(listener)

    def sign(self, message: bytes) -> bytes:
        """Sign a document kept beside the log (a qualification report) with the log's current key."""
        return self._signer.sign(message)

    # -- appending -------------------------------------------------------------------------------------------------

    def append(self, event: str, actor: str, payload: dict[str, Any] | None = None) -> AuditEntry:
        """Add one entry; returns once it is on disk (fsync'd). Safe to call from any thread."""
        return self.append_many([(event, actor, payload or {})])[0]

    def append_many(self, items: Sequence[tuple[str, str, dict[str, Any]]]) -> list[AuditEntry]:
        """Add several entries with one write and one fsync (group commit); all or none become durable."""
        return self._append(items, auto_checkpoint=True)

    def _append(self, items: Sequence[tuple[str, str, dict[str, Any]]], auto_checkpoint: bool) -> list[AuditEntry]:
        for event, actor, _ in items:
            if not EVENT_NAME.match(event):
                raise EntryFormatError(f"event name {event!r} is not dotted lowercase (e.g. report.generated)")
            if not actor:
                raise EntryFormatError(f"entry {event!r} has an empty actor")
        try:
            entries = self._append_durably(items)
        except AuditWriteError as exc:
            self._write_failure = str(exc)
            raise
        self._write_failure = None
        if auto_checkpoint and self._every is not None and self._size - self._checkpointed_size() >= self._every:
            self._checkpoint_or_log()
        return entries

    def _append_durably(self, items: Sequence[tuple[str, str, dict[str, Any]]]) -> list[AuditEntry]:
        with self._write_lock:
            self._check_open()
            entries: list[AuditEntry] = []
            lines: list[bytes] = []
            head, seq = self._written_head, self._written_size
            now = self._clock()
            for event, actor, payload in items:
                entry, line = AuditEntry.create_with_line(seq, now, actor, event, payload, head)
                entries.append(entry)
                lines.append(line)
                head, seq = entry.entry_hash, seq + 1
            self._write(b"".join(line + b"\n" for line in lines))
            self._written_size, self._written_head = seq, head
            self._pending.append((self._written_end, [leaf_hash(line) for line in lines], seq, head))
            my_end, my_epoch = self._written_end, self._epoch
        self._wait_durable(my_end, my_epoch)
        return entries

    def _write(self, data: bytes) -> None:
        """One entry group into the file (caller holds _write_lock); on error nothing of it stays behind."""
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            self._truncate(self._written_end)
            raise AuditWriteError(f"audit entry not written to {self.path}: {exc}") from exc
        self._written_end += len(data)

    def _truncate(self, offset: int) -> None:
        try:
            os.ftruncate(self._fd, offset)
            os.fsync(self._fd)
        except OSError:
            log.error("audit_truncate_after_failed_write_failed", offset=offset)

    def _wait_durable(self, end: int, epoch: int) -> None:
        """Group commit: return once the file is fsync'd past `end`. Whoever gets the sync lock first fsyncs for
        everyone whose write finished before it; the others find their bytes already durable."""
        with self._sync_lock:
            if self._epoch != epoch:
                raise AuditWriteError(f"audit entry rolled back: an fsync of {self.path} failed")
            if self._durable_end < end:
                self._sync()

    def _sync(self) -> None:
        """fsync everything written so far and move it into the durable state (caller holds _sync_lock)."""
        with self._write_lock:
            target = self._written_end
        if target == self._durable_end:
            return
        try:
            os.fsync(self._fd)
        except OSError as exc:
            # What was written since the last good fsync may or may not be on disk: cut it all, so the chain
            # continues from the last entry anyone was told is durable. Every waiter for it gets this error.
            with self._write_lock:
                self._truncate(self._durable_end)
                self._written_end, self._written_size, self._written_head = self._durable_end, self._size, self._head
                self._pending.clear()
                self._epoch += 1
            self._write_failure = f"audit entries not made durable in {self.path}: {exc}"
            raise AuditWriteError(self._write_failure) from exc
        with self._write_lock:
            while self._pending and self._pending[0][0] <= target:
                end, leaves, size, head = self._pending.pop(0)
                for leaf in leaves:
                    self._builder.append(leaf)
                self._size, self._head, self._durable_end = size, head, end

    # -- checkpoints -----------------------------------------------------------------------------------------------

    def _checkpointed_size(self) -> int:
        return self._last_checkpoint.size if self._last_checkpoint else 0

    def _checkpoint_or_log(self) -> None:
        try:
            self.checkpoint()
        except CheckpointError as exc:
            log.error("audit_checkpoint_refused", error=str(exc))
        except OSError as exc:  # the entries are durable: their caller must not hear that they failed
            log.error("audit_checkpoint_failed", error=str(exc))

    def checkpoint(self) -> bytes:
        """Sign and store a checkpoint of every durable entry (or return the latest one if nothing was added)."""
        with self._sync_lock:
            self._check_open()
            self._sync()
            return self._checkpoint_locked([self._signer])

    def _checkpoint_locked(self, signers: Sequence[Signer]) -> bytes:
        """Caller holds _sync_lock, so the durable state (size, tree) cannot move underneath."""
        if self._blocked is not None:
            raise CheckpointError(f"not signing: {self._blocked}")
        if self._held is not None:
            raise CheckpointError(f"not signing yet: {self._held}")
        previous = self._last_checkpoint
        if previous is not None and previous.size == self._size and len(signers) == 1:
            return (self.directory / LATEST_CHECKPOINT).read_bytes()
        if previous is not None and previous.size > self._size:
            raise CheckpointError(f"not signing size {self._size}: checkpoint {previous.size} is larger")
        current = Checkpoint(self.origin, self._size, self._builder.root())
        note = sign_checkpoint(current, signers)
        record = json.dumps({"size": current.size, "note": note.decode("utf-8")}, ensure_ascii=False)
        try:
            with open(self.directory / CHECKPOINTS, "ab") as f:
                f.write(record.encode("utf-8") + b"\n")
                f.flush()
                os.fsync(f.fileno())
            write_durably(self.directory / LATEST_CHECKPOINT, note)
        except OSError as exc:
            self._sign_failure = f"audit checkpoint {current.size} not stored in {self.directory}: {exc}"
            raise
        self._sign_failure = None
        self._last_checkpoint = current
        log.info("audit_checkpoint", size=current.size, root=current.root.hex())
        for listener in self._listeners:
            try:
                listener(note)
            except Exception as exc:  # a listener's failure must not undo a stored checkpoint
                log.error("audit_checkpoint_listener_failed", error=repr(exc))
        return note

    # -- keys ------------------------------------------------------------------------------------------------------

    def rotate_key(self, actor: str) -> AuditEntry:
        """Replace the signing key. The rotation is an entry; the checkpoint covering it is signed by both keys, so a
        verifier who trusts the old key can follow the hand-over."""
        with self._sync_lock:
            self._check_open()
            if self._blocked is not None:
                raise CheckpointError(f"not rotating the key: {self._blocked}")
            old = self._signer
            new = Signer.generate(self.origin)
            pending = self.directory / (SIGNING_KEY + ".new")
            pending.unlink(missing_ok=True)
            new.write(pending)
            # No automatic checkpoint in between: the first one covering this entry must carry both signatures.
            (entry,) = self._append(
                [("key.rotated", actor, {"previous": old.verifier.key_string(), "key": new.verifier.key_string()})],
                auto_checkpoint=False,
            )
            _append_key(self.directory, new.verifier)
            self._checkpoint_locked([old, new])
            os.replace(pending, self.directory / SIGNING_KEY)
            fsync_dir(self.directory)
            self._signer = new
            log.info("audit_key_rotated", previous=old.verifier.key_string(), key=new.verifier.key_string())
            return entry

    # -- closing ---------------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Make everything written durable, checkpoint what is unsigned, then close the file."""
        with self._sync_lock:
            if self._closed:
                return
            try:
                self._sync()
                if self._size > self._checkpointed_size():
                    try:
                        self._checkpoint_locked([self._signer])
                    except CheckpointError as exc:
                        log.error("audit_checkpoint_refused", error=str(exc))
            finally:
                with self._write_lock:
                    os.close(self._fd)
                    if self._lock_fd is not None:
                        os.close(self._lock_fd)  # releases the flock
                    self._closed = True

    def close_keeping_lock(self) -> int:
        """Close the log but keep the directory's lock, for an offline step on its files (`audit archive`'s
        cutover): returns the lock's descriptor, which the caller closes to release it."""
        with self._sync_lock:
            self._check_open()
            lock_fd, self._lock_fd = self._lock_fd, None
        self.close()
        assert lock_fd is not None, "a log opened with AuditLog.open holds its lock"
        return lock_fd

    def _check_open(self) -> None:
        if self._closed:
            raise AuditError(f"audit log {self.path} is closed")

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Also the names of `events`, `files` and `errors` that `anchor`, `export`, `verify` and the doctor read from here.
__all__ = [
    "CHECKPOINTS",
    "ENTRIES",
    "EVENTS",
    "KEYS",
    "LATEST_CHECKPOINT",
    "SIGNING_KEY",
    "AuditIntegrityError",
    "AuditKeyError",
    "AuditLockedError",
    "AuditLog",
    "AuditWriteError",
    "iter_lines",
    "read_signer",
    "read_verifiers",
    "signed_notes",
]
