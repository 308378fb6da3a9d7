"""`audit archive`: the oldest entries moved out of the live log into a signed bundle, the log kept verifiable.

    result = archive_log(audit_dir, origin, before=SEQ, out=DIR, reports_dir=...)   # the agent stopped

Entries first_kept..SEQ-1 are exported (export.py, so `audit verify-bundle` checks the bundle) against a checkpoint
signed for the purpose, whose size is at least SEQ. An `audit.archived` entry (the seq range, the bundle's name and
sha256, the new leaf file's sha256) is appended and signed; then, still under the log's lock, the directory is cut
over (cutover.py) to keep entries SEQ.. in entries.jsonl and the archived entries' leaf hashes and retained lines
beside it (view.py). Every checkpoint stays. SEQ must be at most the size of the latest signed checkpoint found when
the command starts: nothing no checkpoint covers leaves the log.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import BaseModel

from edge_agent.audit.cutover import Cutover
from edge_agent.audit.entry import AuditError
from edge_agent.audit.export import export_bundle
from edge_agent.audit.files import ENTRIES, iter_lines
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.log import AuditLog
from edge_agent.audit.manifest import file_sha256
from edge_agent.audit.view import ArchiveSegment, ArchiveState, LogView, is_retained, time_of

ARCHIVED_EVENT = "audit.archived"
# Bundles are .tar.xz, export's smallest form: 20 000 entries (7.4 MB of log) made a 3.5 MB bundle, proofs included.
BUNDLE_SUFFIX = ".tar.xz"


class ArchiveError(AuditError):
    """An archive that cannot be made (SEQ out of range, nothing checkpointed, the log blocked), naming why."""


class ArchiveResult(BaseModel):
    """What `audit archive` did: the entries that left the log, the bundle that holds them, what stays."""

    bundle: Path
    bundle_sha256: str
    first_seq: int
    last_seq: int
    checkpoint_size: int
    first_kept: int
    leaves_sha256: str
    archived_entry_seq: int

    @property
    def entries(self) -> int:
        return self.last_seq - self.first_seq + 1


def bundle_name(first: int, last: int) -> str:
    return f"audit-archive-{first:012d}-{last:012d}{BUNDLE_SUFFIX}"


def check_before(before: object, view: LogView, checkpointed: int | None) -> int:
    """SEQ as the first entry to keep, or ArchiveError saying why it cannot be."""
    if not isinstance(before, int) or isinstance(before, bool):
        raise ArchiveError(f"--before {before!r}: a seq is a whole number")
    if checkpointed is None:
        raise ArchiveError("the log has no signed checkpoint: nothing can be archived")
    if before <= view.first_kept:
        raise ArchiveError(
            f"--before {before}: entries before {view.first_kept} are already archived; nothing to archive"
            if view.first_kept
            else f"--before {before}: nothing to archive (entries start at 0)"
        )
    if before > checkpointed:
        raise ArchiveError(
            f"--before {before} is above the latest signed checkpoint's size {checkpointed}: only entries a"
            f" checkpoint covers are archived (use --before {checkpointed} or less)"
        )
    return before


def archive_log(
    audit_dir: Path,
    origin: str,
    *,
    before: int,
    out: Path,
    reports_dir: Path | None,
    actor: str = "operator",
) -> ArchiveResult:
    """Move entries first_kept..before-1 into a bundle under `out` (a directory). AuditLockedError while the agent
    holds the log; ArchiveError when `before` cannot be archived (nothing changed then)."""
    log = AuditLog.open(audit_dir, origin)
    try:
        result, cutover = record_archive(log, before=before, out=out, reports_dir=reports_dir, actor=actor)
    except BaseException:
        log.close()
        raise
    lock_fd = log.close_keeping_lock()
    try:
        cutover.run()
    finally:
        os.close(lock_fd)
    return result


def record_archive(
    log: AuditLog, *, before: int, out: Path, reports_dir: Path | None, actor: str = "operator"
) -> tuple[ArchiveResult, Cutover]:
    """The archive up to its cutover: the bundle written, the `audit.archived` entry appended and signed, and the
    cutover that trims the directory (to run once the log is closed, its lock still held: `archive_log`)."""
    audit_dir, out = log.directory, Path(out)
    if log.blocked is not None:
        raise ArchiveError(f"the log is not being signed ({log.blocked}): run `edge-agent audit verify` first")
    view = LogView.read(audit_dir)
    checkpointed = log.last_checkpoint.size if log.last_checkpoint else None
    first, last = view.first_kept, check_before(before, view, checkpointed) - 1
    bundle = out / bundle_name(first, last)
    if bundle.exists():
        raise ArchiveError(
            f"{bundle} already exists (an earlier run stopped before trimming the log?): move it away or choose"
            " another --out"
        )
    exported = export_bundle(audit_dir, bundle, reports_dir=reports_dir, log=log, actor=actor, seqs=(first, last))
    if exported.verification is None or not exported.verification.ok:
        raise ArchiveError(f"the archive bundle {bundle} does not verify; the log is unchanged")
    bundle_sha256 = file_sha256(bundle)
    cut = _cutover_for(view, before)
    leaves_sha256 = hashlib.sha256(cut.leaves).hexdigest()
    lines = view.lines()
    segment = ArchiveSegment(
        first_seq=first,
        last_seq=last,
        first_time=time_of(lines[first]),
        last_time=time_of(lines[last]),
        bundle=bundle.name,
        bundle_sha256=bundle_sha256,
    )
    entry = log.append(
        ARCHIVED_EVENT,
        actor,
        {
            "first_seq": first,
            "last_seq": last,
            "bundle": bundle.name,
            "bundle_sha256": bundle_sha256,
            "leaves_sha256": leaves_sha256,
            "checkpoint_size": exported.checkpoint_size,
        },
    )
    log.checkpoint()
    state = ArchiveState(first_kept=before, leaves_sha256=leaves_sha256, segments=[*view.segments, segment])
    result = ArchiveResult(
        bundle=bundle,
        bundle_sha256=bundle_sha256,
        first_seq=first,
        last_seq=last,
        checkpoint_size=exported.checkpoint_size,
        first_kept=before,
        leaves_sha256=leaves_sha256,
        archived_entry_seq=entry.seq,
    )
    return result, Cutover(audit_dir, cut.leaves, cut.lines, state.to_bytes(), cut.kept_from)


class _Cut(BaseModel):
    leaves: bytes
    lines: bytes
    kept_from: int


def _cutover_for(view: LogView, before: int) -> _Cut:
    """The new archived.leaves and archived.jsonl, and where entry `before` starts in entries.jsonl."""
    leaves = [view.archived_leaves]
    retained = [line + b"\n" for _, line in sorted(view.retained.items())]
    offset = 0
    seq = view.first_kept
    for line in iter_lines(view.directory / ENTRIES):
        if seq == before:
            break
        leaves.append(leaf_hash(line))
        if is_retained(line) or seq == before - 1:
            retained.append(line + b"\n")
        offset += len(line) + 1
        seq += 1
    assert seq == before, f"entries.jsonl ends before entry {before}"
    return _Cut(leaves=b"".join(leaves), lines=b"".join(retained), kept_from=offset)
