"""Verification of a log directory: the hash chain, the Merkle tree against every signed checkpoint, and the keys.

Trust: the latest checkpoint must be signed by the trusted key (the `--pubkey` given, else the newest key in
keys.txt). Earlier checkpoints must be signed by the key the chain says was active at their size (`key.rotated`
entries name each key); those entries are themselves covered by the trusted checkpoint.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Sequence
from pathlib import Path

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.cutover import JOURNAL
from edge_agent.audit.log import KEYS, AuditKeyError, read_verifiers, signed_notes
from edge_agent.audit.verify.chain import ChainResult, Problem, VerifyResult, open_trusted, scan_chain
from edge_agent.audit.view import ARCHIVE_STATE, ARCHIVED_LEAVES, ArchiveStateError, LogView
from edge_agent.signing import CosignatureError, CosignerKey, SigningKeyError, Verifier, require_cosignatures


def key_at(schedule: Sequence[tuple[int, str]], size: int) -> str | None:
    """The key that signs checkpoints of `size`: the one brought in by the last key.rotated entry before it."""
    i = bisect_left([seq for seq, _ in schedule], size)
    return schedule[i - 1][1] if i else None


def check_checkpoint(
    note_bytes: bytes, size_hint: int | None, chain: ChainResult, origin: str | None, trusted: Sequence[Verifier]
) -> tuple[Checkpoint | None, Problem | None]:
    """One stored checkpoint against the chain: signature by the key active at its size, and its root."""
    label = f"checkpoint {size_hint}" if size_hint is not None else "checkpoint"
    try:
        note = SignedNote.parse(note_bytes)
        checkpoint = Checkpoint.parse_body(note.text)
    except CheckpointError as exc:
        return None, Problem(None, f"{label}: {exc}")
    label = f"checkpoint of size {checkpoint.size}"
    if origin is not None and checkpoint.origin != origin:
        return None, Problem(None, f"{label}: origin {checkpoint.origin!r} != {origin!r}")
    active = key_at(chain.key_schedule, checkpoint.size)
    try:
        keys = [Verifier.parse(active)] if active is not None else list(trusted)
    except SigningKeyError as exc:
        return None, Problem(None, f"{label}: key named by the log is unusable: {exc}")
    try:
        note.verified_by(keys)
    except CheckpointError as exc:
        return None, Problem(None, f"{label}: signature: {exc}")
    if checkpoint.size > chain.size:
        missing = f"entries {chain.size}..{checkpoint.size - 1}"
        return None, Problem(chain.size, f"{label} covers {missing}, which are missing (tail truncated)")
    computed = chain.roots.get(checkpoint.size)
    if computed != checkpoint.root:
        return None, Problem(
            None,
            f"{label}: signed root {checkpoint.root.hex()} != root of the stored entries"
            f" {computed.hex() if computed else '?'} (entries before {checkpoint.size} were rewritten)",
        )
    return checkpoint, None


def verify_log(
    directory: Path | str,
    pubkey: Verifier | None = None,
    origin: str | None = None,
    *,
    strict: bool = False,
    trusted: bytes | None = None,
    witness_keys: Sequence[CosignerKey] = (),
) -> VerifyResult:
    """Verify the log in `directory` (chain, every checkpoint, signatures). Never raises on bad data: the result
    names the first problem. `trusted`: the auditor's last seen checkpoint, which the log must extend;
    `witness_keys`: witnesses whose cosignatures the newest checkpoint must carry (from `cosigned`)."""
    directory = Path(directory)
    result = _verify_log(directory, pubkey, origin, strict, trusted)
    if result.ok and witness_keys:
        problem = _log_cosignatures(directory, witness_keys)
        if problem is not None:
            result.problem = problem
        else:
            result.notes.append(f"newest checkpoint cosigned by {len(witness_keys)} witness(es)")
    return result


def _verify_log(
    directory: Path, pubkey: Verifier | None, origin: str | None, strict: bool, trusted: bytes | None
) -> VerifyResult:
    notes = list(signed_notes(directory))
    try:
        known = read_verifiers(directory)
    except AuditKeyError as exc:
        return VerifyResult(0, 0, 0, "", Problem(None, f"{directory / KEYS}: {exc}"))
    anchor = pubkey or (known[-1] if known else None)
    untrusted_anchor = pubkey is None and anchor is not None
    if (directory / JOURNAL).exists():
        return VerifyResult(
            0,
            0,
            0,
            "",
            Problem(
                None,
                f"an archive step was interrupted ({directory / JOURNAL} exists): open the log (start the agent, or"
                " run `edge-agent audit pubkey`) to finish it, then verify",
            ),
        )
    try:
        view = LogView.read(directory)
    except ArchiveStateError as exc:
        return VerifyResult(0, 0, 0, "", Problem(None, str(exc)))
    trusted_cp: Checkpoint | None = None
    if trusted is not None:
        try:
            trusted_cp = open_trusted(trusted, [pubkey] if pubkey else known)
        except CheckpointError as exc:
            return VerifyResult(0, 0, 0, "", Problem(None, f"trusted checkpoint: {exc}"))
    chain = scan_chain(
        view.kept_lines(),
        first_seq=view.first_kept,
        prev_hash=view.head_hash,
        archived=view.leaf_list(),
        roots_at=[size for size, _ in notes] + ([trusted_cp.size] if trusted_cp else []),
        strict=strict,
    )
    # Key rotations among the archived entries are kept whole (view.py): the older checkpoints' keys.
    chain.key_schedule[:0] = _archived_rotations(view)
    root = chain.roots[chain.size].hex()
    result = VerifyResult(chain.size, 0, 0, root, chain.problem)
    if chain.problem is not None:
        return result
    if view.archived:
        bundles = ", ".join(s.bundle for s in view.segments) or f"the bundles {ARCHIVE_STATE} names"
        result.notes.append(
            f"{view.first_kept} entries (0..{view.first_kept - 1}) are archived in {bundles}: their leaf hashes in"
            f" {ARCHIVED_LEAVES} are checked against every checkpoint, the chain from entry {view.first_kept}"
        )
    if chain.key_schedule and pubkey is None and known and chain.key_schedule[-1][1] != known[-1].key_string():
        result.notes.append("keys.txt's newest key is not the one the log's last key.rotated entry names")
    latest: Checkpoint | None = None
    previous: Checkpoint | None = None
    for size, note_bytes in notes:
        checkpoint, problem = check_checkpoint(note_bytes, size, chain, origin, known)
        if problem is not None:
            result.problem = _locate(problem, previous, size)
            if view.archived and "were rewritten" in problem.reason:
                found = result.problem
                result.problem = Problem(found.seq, f"{found.reason} (or {directory / ARCHIVED_LEAVES} was changed)")
            return result
        assert checkpoint is not None
        previous = latest = checkpoint
        result.checkpoints += 1
    latest_path = directory / "checkpoint"
    if latest_path.exists():
        checkpoint, problem = check_checkpoint(latest_path.read_bytes(), None, chain, origin, known)
        if problem is not None:
            result.problem = problem
            return result
        assert checkpoint is not None
        if latest is not None and checkpoint.size < latest.size:
            result.problem = Problem(None, f"latest checkpoint has size {checkpoint.size} < stored {latest.size}")
            return result
        latest = checkpoint
    if latest is None:
        if chain.size:
            # open() signs a checkpoint right after creating the log, so a log without any was stripped of them.
            result.problem = Problem(None, f"no signed checkpoint for {chain.size} entries (checkpoints deleted?)")
        return result
    if anchor is not None:
        latest_note = SignedNote.parse(latest_path.read_bytes() if latest_path.exists() else notes[-1][1])
        try:
            latest_note.verified_by([anchor])
        except CheckpointError as exc:
            handover = _handover_problem(anchor, chain.key_schedule, notes)
            if handover is not None:
                result.problem = Problem(
                    None,
                    f"latest checkpoint (size {latest.size}) is not signed by the trusted key ({exc}), and {handover}",
                )
                return result
            result.notes.append(
                f"trusted key {anchor.key_string()} was rotated out; hand-over checkpoints lead to the current key"
            )
    result.signed_size = latest.size
    if trusted_cp is not None:
        problem = _against_trusted(trusted_cp, latest, chain.roots.get(trusted_cp.size))
        if problem is not None:
            result.problem = problem
            return result
        result.notes.append(f"extends the trusted checkpoint of size {trusted_cp.size}")
    if untrusted_anchor:
        result.notes.append(
            "trusted the newest key in keys.txt; pass --pubkey with the key from the commissioning record to rule out"
            " a re-keyed, re-signed log"
        )
    return result


def _archived_rotations(view: LogView) -> list[tuple[int, str]]:
    schedule = []
    for seq, line in sorted(view.retained.items()):
        if b'"event":"key.rotated"' in line:
            data = json.loads(line)
            if data.get("event") == "key.rotated":
                schedule.append((seq, str(data["payload"].get("key"))))
    return schedule


def _against_trusted(trusted: Checkpoint, latest: Checkpoint, root_at_trusted: bytes | None) -> Problem | None:
    """The log (latest signed checkpoint `latest`, roots over its entries) must extend the auditor's checkpoint."""
    if trusted.origin != latest.origin:
        return Problem(None, f"trusted checkpoint is of origin {trusted.origin!r}, the log is {latest.origin!r}")
    if trusted.size > latest.size:
        return Problem(
            None,
            f"ROLLBACK: trusted checkpoint has size {trusted.size}, the log's latest signed checkpoint only"
            f" {latest.size}: entries {latest.size}..{trusted.size - 1} were removed",
        )
    if root_at_trusted != trusted.root:
        return Problem(
            None,
            f"ROLLBACK: the log's root at size {trusted.size} differs from the trusted checkpoint's: history was"
            " rewritten (no consistency with the trusted checkpoint)",
        )
    return None


def _log_cosignatures(directory: Path, keys: Sequence[CosignerKey]) -> Problem | None:
    latest_path = directory / "checkpoint"
    cosigned_path = directory / "cosigned"
    if not latest_path.exists():
        return Problem(None, "no checkpoint to require cosignatures on")
    latest = SignedNote.parse(latest_path.read_bytes())
    size = Checkpoint.parse_body(latest.text).size
    if not cosigned_path.exists():
        return Problem(None, f"newest checkpoint (size {size}) has no cosignatures (no {cosigned_path})")
    cosigned = SignedNote.parse(cosigned_path.read_bytes())
    if cosigned.text != latest.text:
        other = Checkpoint.parse_body(cosigned.text).size
        return Problem(None, f"newest checkpoint (size {size}) is not cosigned; the newest cosigned is size {other}")
    try:
        require_cosignatures(cosigned, keys)
    except CosignatureError as exc:
        return Problem(None, f"newest checkpoint (size {size}): {exc}")
    return None


def _handover_problem(
    anchor: Verifier, schedule: Sequence[tuple[int, str]], notes: Sequence[tuple[int, bytes]]
) -> str | None:
    """An older trusted key vouches for the current one when, for every rotation since, a checkpoint covering the
    key.rotated entry is signed by the key it replaced (rotate_key signs the hand-over with both)."""
    keys = [key for _, key in schedule]
    if anchor.key_string() not in keys:
        return "the trusted key is not one this log's key.rotated entries name"
    start = keys.index(anchor.key_string())
    # keys[start:] is one longer: each rotation is paired with the key before it, the last key with none.
    for (seq, new_key), previous in zip(schedule[start + 1 :], keys[start:], strict=False):
        verifier = Verifier.parse(previous)
        signed = False
        for size, note_bytes in notes:
            if size > seq:
                try:
                    SignedNote.parse(note_bytes).verified_by([verifier])
                    signed = True
                    break
                except CheckpointError:
                    continue
        if not signed:
            return f"no checkpoint signed by {previous} covers the rotation to {new_key} (entry {seq})"
    return None


def _locate(problem: Problem, previous: Checkpoint | None, size: int) -> Problem:
    """A root mismatch at checkpoint `size` means something in the range since the previous good one changed."""
    if problem.seq is None and "were rewritten" in problem.reason:
        start = previous.size if previous else 0
        return Problem(None, f"{problem.reason}; the first changed entry is one of {start}..{size - 1}")
    return problem
