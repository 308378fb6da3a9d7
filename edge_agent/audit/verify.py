"""Verification of a log directory: the hash chain, the Merkle tree against every signed checkpoint, and the keys.

The chain check reads stored lines as bytes and never builds a pydantic model: at a million entries the cost per
entry is two SHA-256 calls and a few slices. It relies on the canonical layout documented in entry.py — the first
`"entry_hash":"` member is the top-level one, and `prev_hash`, `seq`, `time` are the last three members. Every byte
of every line is covered (by its entry_hash, the next prev_hash and the signed tree); whether each line is also a
well-typed entry in canonical form is what `strict=True` adds, at about an eighth of the speed.

Trust: the latest checkpoint must be signed by the trusted key (the `--pubkey` given, else the newest key in
keys.txt). Earlier checkpoints must be signed by the key the chain says was active at their size (`key.rotated`
entries name each key); those entries are themselves covered by the trusted checkpoint.
"""

from __future__ import annotations

import binascii
import hashlib
import json
import tempfile
from base64 import b64decode
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from edge_agent.approval import ApproverKey
from edge_agent.audit import bundle
from edge_agent.audit.approvals import check_approvals, describe_state, security_states, unsigned_signoff_state
from edge_agent.audit.archive import extract_bundle
from edge_agent.audit.binding import check_reports
from edge_agent.audit.bundle import BundleError
from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.cosignature import CosignerKey, require_cosignatures
from edge_agent.audit.entry import (
    ENTRY_HASH_MARKER,
    ENTRY_HASH_MEMBER_LEN,
    GENESIS_HASH,
    HASH_HEX_LEN,
    PREV_HASH_MARKER,
    SEQ_MARKER,
    AuditEntry,
    EntryFormatError,
)
from edge_agent.audit.evidence import Recompute, check_evidence, describe
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.keys import AuditKeyError, Verifier
from edge_agent.audit.log import ENTRIES, KEYS, iter_lines, read_verifiers, signed_notes
from edge_agent.audit.manifest import BundleManifest, check_manifest, list_files
from edge_agent.audit.merkle import MerkleTree, RootBuilder
from edge_agent.audit.proof import ProofError, verify_consistency, verify_inclusion

# Offsets into a canonical line, from entry.py's markers: entry_hash's hex digits start `_HASH_AT` after its
# marker; prev_hash's run from `_PREV_AT` to `_PREV_END` after its marker, and the seq marker follows at once.
_HASH_AT = len(ENTRY_HASH_MARKER)
_PREV_AT = len(PREV_HASH_MARKER)
_PREV_END = _PREV_AT + HASH_HEX_LEN
_SEQ_AT = len(SEQ_MARKER)
_KEY_ROTATED = b'"event":"key.rotated"'


@dataclass(frozen=True)
class Problem:
    """The first thing found wrong: `seq` names the entry (None when the problem is not one entry's)."""

    seq: int | None
    reason: str

    def __str__(self) -> str:
        return f"entry {self.seq}: {self.reason}" if self.seq is not None else self.reason


@dataclass
class ChainResult:
    """What a chain scan learned: counts, leaf-derived roots at requested sizes, keys named by rotation entries."""

    count: int = 0
    head_hash: str = GENESIS_HASH
    problem: Problem | None = None
    roots: dict[int, bytes] = field(default_factory=dict)
    leaves: list[bytes] | None = None
    # (seq of the key.rotated entry, the key it brings in), in log order.
    key_schedule: list[tuple[int, str]] = field(default_factory=list)


def scan_chain(
    lines: Iterable[bytes],
    *,
    first_seq: int = 0,
    prev_hash: str = GENESIS_HASH,
    roots_at: Iterable[int] = (),
    keep_leaves: bool = False,
    strict: bool = False,
) -> ChainResult:
    """Check seq, prev_hash and entry_hash of every line; build the Merkle tree. Stops at the first bad entry.

    `strict` also parses every line into an AuditEntry (valid types, canonical encoding): about 8x slower,
    and only adds something for entries after the last checkpoint, whose bytes no signature covers yet."""
    sha256 = hashlib.sha256
    want = sorted(set(roots_at))
    result = ChainResult(head_hash=prev_hash)
    builder = RootBuilder()
    leaves: list[bytes] | None = [] if keep_leaves else None
    expected_prev = prev_hash.encode()
    seq = first_seq
    w = 0
    while w < len(want) and want[w] == 0:
        result.roots[0] = builder.root()
        w += 1
    for line in lines:
        p = line.find(ENTRY_HASH_MARKER)
        if p < 0:
            result.problem = Problem(seq, "line has no entry_hash member (not an audit entry)")
            break
        end = p + ENTRY_HASH_MEMBER_LEN
        digits_end = p + _HASH_AT + HASH_HEX_LEN
        claimed = line[p + _HASH_AT : digits_end]
        if sha256(line[:p] + line[end:]).hexdigest().encode() != claimed or line[digits_end:end] != b'",':
            result.problem = Problem(seq, f"entry_hash {claimed.decode(errors='replace')} does not match its contents")
            break
        q = line.rfind(PREV_HASH_MARKER)
        prev = line[q + _PREV_AT : q + _PREV_END]
        r = q + _PREV_END
        s = line.find(b",", r + _SEQ_AT)
        if q < p or line[r : r + _SEQ_AT] != SEQ_MARKER or s < 0:
            result.problem = Problem(seq, "line is not laid out as a canonical entry (prev_hash, seq, time last)")
            break
        try:
            stored_seq = int(line[r + _SEQ_AT : s])
        except ValueError:
            result.problem = Problem(seq, f"seq {line[r + _SEQ_AT : s]!r} is not an integer")
            break
        if stored_seq != seq:
            result.problem = Problem(
                seq,
                f"line {seq - first_seq + 1} holds seq {stored_seq}, expected {seq}"
                + (
                    f": entry {seq} is missing or out of order"
                    if stored_seq > seq
                    else ": entries are out of order or repeated"
                ),
            )
            break
        if prev != expected_prev:
            result.problem = Problem(
                seq,
                f"prev_hash {prev.decode(errors='replace')} != entry_hash of entry {seq - 1} {expected_prev.decode()}",
            )
            break
        if strict:
            try:
                AuditEntry.from_line(line)
            except EntryFormatError as exc:
                result.problem = Problem(seq, str(exc))
                break
        if _KEY_ROTATED in line:
            data = json.loads(line)
            if data.get("event") == "key.rotated":
                result.key_schedule.append((seq, str(data["payload"].get("key"))))
        leaf = leaf_hash(line)
        builder.append(leaf)
        if leaves is not None:
            leaves.append(leaf)
        expected_prev = claimed
        seq += 1
        while w < len(want) and want[w] == builder.size:
            result.roots[builder.size] = builder.root()
            w += 1
    result.count = seq - first_seq
    result.head_hash = expected_prev.decode()
    result.roots[result.count] = builder.root()
    result.leaves = leaves
    return result


@dataclass
class VerifyResult:
    entries: int
    checkpoints: int
    signed_size: int
    root: str
    problem: Problem | None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.problem is None

    def summary(self) -> str:
        if self.problem is None:
            unsigned = self.entries - self.signed_size
            tail = f"; {unsigned} newest entries not yet covered by a checkpoint" if unsigned else ""
            return (
                f"OK: {self.entries} entries, hash chain intact, {self.checkpoints} checkpoint(s) verified,"
                f" latest signed size {self.signed_size}, root {self.root}{tail}"
            )
        return f"FAILED: {self.problem}"


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
    except AuditKeyError as exc:
        return None, Problem(None, f"{label}: key named by the log is unusable: {exc}")
    try:
        note.verified_by(keys)
    except CheckpointError as exc:
        return None, Problem(None, f"{label}: signature: {exc}")
    if checkpoint.size > chain.count:
        missing = f"entries {chain.count}..{checkpoint.size - 1}"
        return None, Problem(chain.count, f"{label} covers {missing}, which are missing (tail truncated)")
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
    entries = directory / ENTRIES
    trusted_cp: Checkpoint | None = None
    if trusted is not None:
        try:
            trusted_cp = _open_trusted(trusted, [pubkey] if pubkey else known)
        except CheckpointError as exc:
            return VerifyResult(0, 0, 0, "", Problem(None, f"trusted checkpoint: {exc}"))
    chain = scan_chain(
        iter_lines(entries) if entries.exists() else [],
        roots_at=[size for size, _ in notes] + ([trusted_cp.size] if trusted_cp else []),
        strict=strict,
    )
    root = chain.roots[chain.count].hex()
    result = VerifyResult(chain.count, 0, 0, root, chain.problem)
    if chain.problem is not None:
        return result
    if chain.key_schedule and pubkey is None and known and chain.key_schedule[-1][1] != known[-1].key_string():
        result.notes.append("keys.txt's newest key is not the one the log's last key.rotated entry names")
    latest: Checkpoint | None = None
    previous: Checkpoint | None = None
    for size, note_bytes in notes:
        checkpoint, problem = check_checkpoint(note_bytes, size, chain, origin, known)
        if problem is not None:
            result.problem = _locate(problem, previous, size)
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
        if chain.count:
            # open() signs a checkpoint right after creating the log, so a log without any was stripped of them.
            result.problem = Problem(None, f"no signed checkpoint for {chain.count} entries (checkpoints deleted?)")
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


def _open_trusted(note: bytes, keys: Sequence[Verifier]) -> Checkpoint:
    parsed = SignedNote.parse(note)
    parsed.verified_by(keys)
    return Checkpoint.parse_body(parsed.text)


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
    except CheckpointError as exc:
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


# -- bundles -----------------------------------------------------------------------------------------------------


def verify_bundle(
    path: Path | str,
    pubkey: Verifier | None = None,
    *,
    check_files: bool = True,
    trusted: bytes | None = None,
    witness_keys: Sequence[CosignerKey] = (),
    approver_keys: Sequence[ApproverKey] | None = None,
    recompute: Recompute | None = None,
) -> VerifyResult:
    """Verify an export bundle (directory, .tar.xz or .tar.gz) with nothing but its files and a trusted public key.

    Without `pubkey` the bundle's own pubkey.txt is used, which proves only that the bundle is self-consistent;
    the result's notes say so. `check_files=False` is for the exporter, which verifies the bundle before it writes
    and signs the manifest of its files. Every recorded approval is re-checked (approvals.py) against
    `approver_keys`, or, when None, against the key each entry records (the notes say so). The bundle's evidence
    (evidence.py) is checked against its reports' facts by record ids; `recompute` (the reports' fact code, given
    by the caller: this layer does not import it) also recomputes every fact from the bundle's records.
    """
    path = Path(path)
    if path.is_file():
        with tempfile.TemporaryDirectory(prefix="audit-bundle-") as tmp:
            try:
                root = extract_bundle(path, Path(tmp))
            except BundleError as exc:
                return VerifyResult(0, 0, 0, "", Problem(None, str(exc)))
            return _verify_bundle_dir(root, pubkey, check_files, trusted, witness_keys, approver_keys, recompute)
    if not path.is_dir():
        return VerifyResult(0, 0, 0, "", Problem(None, f"{path}: no bundle there (a directory, .tar.xz or .tar.gz)"))
    return _verify_bundle_dir(path, pubkey, check_files, trusted, witness_keys, approver_keys, recompute)


def _verify_bundle_dir(
    root: Path,
    pubkey: Verifier | None,
    check_files: bool,
    trusted: bytes | None = None,
    witness_keys: Sequence[CosignerKey] = (),
    approver_keys: Sequence[ApproverKey] | None = None,
    recompute: Recompute | None = None,
) -> VerifyResult:
    result = VerifyResult(0, 0, 0, "", None)
    try:
        _check_bundle(root, pubkey, result, check_files, trusted, witness_keys, approver_keys, recompute)
    except BundleError as exc:
        result.problem = Problem(None, str(exc))
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        # A bundle is untrusted input: a missing file or malformed JSON is a finding, not a crash.
        result.problem = result.problem or Problem(None, f"bundle {root} is malformed: {exc!r}")
    return result


def _check_bundle(
    root: Path,
    pubkey: Verifier | None,
    result: VerifyResult,
    check_files: bool,
    trusted: bytes | None = None,
    witness_keys: Sequence[CosignerKey] = (),
    approver_keys: Sequence[ApproverKey] | None = None,
    recompute: Recompute | None = None,
) -> None:
    list_files(root)  # refuses a symlink or device before any file is read through it
    manifest_bytes = (root / bundle.MANIFEST).read_bytes()
    raw = json.loads(manifest_bytes)
    if not isinstance(raw, dict) or raw.get("format") != bundle.FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else raw
        result.problem = Problem(None, f"manifest format {found!r} is not {bundle.FORMAT!r}")
        return
    try:
        manifest = BundleManifest.model_validate_json(manifest_bytes)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        result.problem = Problem(None, f"{bundle.MANIFEST} is malformed: {where}: {err['msg']}")
        return
    if pubkey is None:
        pubkey = Verifier.parse((root / bundle.PUBKEY).read_text(encoding="utf-8"))
        result.notes.append(
            f"trusted the bundle's own {bundle.PUBKEY} ({pubkey.key_string()}); pass the key you hold to prove origin"
        )
    try:
        note = SignedNote.parse((root / bundle.CHECKPOINT).read_bytes())
        note.verified_by([pubkey])
        checkpoint = Checkpoint.parse_body(note.text)
    except CheckpointError as exc:
        result.problem = Problem(None, f"{bundle.CHECKPOINT}: {exc}")
        return
    result.checkpoints = 1
    result.signed_size = checkpoint.size
    result.root = checkpoint.root.hex()
    if checkpoint.origin != manifest.origin:
        result.problem = Problem(None, f"checkpoint origin {checkpoint.origin!r} != manifest {manifest.origin!r}")
        return

    lines = list(iter_lines(root / bundle.ENTRIES))
    first_seq = manifest.first_seq
    first_prev = _prev_hash_of(lines[0]) if lines else GENESIS_HASH
    chain = scan_chain(lines, first_seq=first_seq, prev_hash=first_prev, keep_leaves=True)
    result.entries = chain.count
    if chain.problem is not None:
        result.problem = chain.problem
        return
    if first_seq + chain.count - 1 != manifest.last_seq:
        result.problem = Problem(
            first_seq + chain.count,
            f"bundle holds entries {first_seq}..{first_seq + chain.count - 1}, manifest says"
            f" up to {manifest.last_seq}: entries are missing",
        )
        return

    proofs = [json.loads(line) for line in iter_lines(root / bundle.INCLUSION)]
    if len(proofs) != len(lines):
        result.problem = Problem(None, f"{len(proofs)} inclusion proofs for {len(lines)} entries")
        return
    assert chain.leaves is not None
    for offset, (record, leaf) in enumerate(zip(proofs, chain.leaves, strict=True)):
        seq = first_seq + offset
        if record["seq"] != seq or bytes.fromhex(record["leaf_hash"]) != leaf:
            result.problem = Problem(seq, "inclusion.jsonl does not match this entry (seq or leaf hash differ)")
            return
        try:
            verify_inclusion(
                seq, checkpoint.size, leaf, [b64decode(h, validate=True) for h in record["proof"]], checkpoint.root
            )
        except (ProofError, binascii.Error) as exc:
            result.problem = Problem(seq, f"not included in the signed tree: {exc}")
            return

    consistency = json.loads((root / bundle.CONSISTENCY).read_text(encoding="utf-8"))
    if consistency is not None:
        problem = _check_consistency(consistency, checkpoint, pubkey, root, result)
        if problem is not None:
            result.problem = problem
            return
    elif check_files:
        problem = _first_export_problem(manifest, lines, result)
        if problem is not None:
            result.problem = problem
            return
    if witness_keys:
        try:
            require_cosignatures(note, witness_keys)
        except CheckpointError as exc:
            result.problem = Problem(None, f"{bundle.CHECKPOINT} (size {checkpoint.size}): {exc}")
            return
        result.notes.append(f"checkpoint cosigned by {len(witness_keys)} witness(es)")
    if trusted is not None:
        problem = _bundle_against_trusted(trusted, pubkey, checkpoint, consistency, manifest.first_seq, chain)
        if problem is not None:
            result.problem = problem
            return
        result.notes.append("consistent with the trusted checkpoint")

    reason, notes = check_reports(root, lines, manifest)
    result.notes += notes
    if reason is None:
        reason = _check_evidence(root, recompute, result)
    if reason is None:
        reason = _check_qualifications(root, lines, result)
    if reason is None and check_files:
        reason = check_manifest(root, manifest_bytes, manifest, pubkey, checkpoint)
    if reason is not None:
        result.problem = Problem(None, reason)
        return
    result.problem = _check_approvals(lines, manifest, approver_keys, result)


def _check_qualifications(root: Path, lines: Sequence[bytes], result: VerifyResult) -> str | None:
    """Each `qualifications/<sha256>.json` (edge-agent qualify) hashes to its name, an exported `qualification` entry
    records that sha256, and its `.sig` is a signature by a key the log has used. Checked before the signed
    manifest, so a changed qualification is named."""
    directory = root / bundle.QUALIFICATIONS
    documents = sorted(directory.glob("*.json")) if directory.is_dir() else []
    if not documents:
        return None
    recorded = {json.loads(line)["payload"].get("sha256") for line in lines if b'"event":"qualification"' in line}
    keys = {k.key_string(): k for k in (Verifier.parse(t) for t in (root / bundle.KEYS).read_text().splitlines() if t)}
    for path in documents:
        where = f"{bundle.QUALIFICATIONS}/{path.name}"
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if path.name != f"{digest}.json":
            return f"{where}: its sha256 is {digest}, not its name"
        if digest not in recorded:
            return f"{where}: no exported qualification entry records it"
        try:
            key_line, signature = path.with_name(path.name + ".sig").read_text(encoding="ascii").splitlines()
            key = keys[key_line]
            valid = key.verify(b64decode(signature, validate=True), data)
        except (OSError, ValueError, KeyError, binascii.Error):
            valid = False
        if not valid:
            return f"{where}: no valid signature by a key of {bundle.KEYS} in {path.name}.sig"
    result.notes.append(f"{len(documents)} qualification(s) recorded in the log and signed with its key")
    return None


def _check_evidence(root: Path, recompute: Recompute | None, result: VerifyResult) -> str | None:
    """The records behind the reports' facts (evidence.py): tied to the facts by record ids, and with `recompute`
    every fact recomputed from them. Checked before the signed manifest, so a dropped or added record is named."""
    directory = root / bundle.REPORTS  # every report file there is bound to the log (check_reports)
    files = sorted(directory.glob("*.json")) if directory.is_dir() else []
    documents = {path.name.removesuffix(".json"): json.loads(path.read_bytes()) for path in files}
    check = check_evidence(root, documents)
    if check.problem is not None:
        return check.problem
    result.notes += check.notes
    if recompute is None:
        return None
    if not check.present and documents:
        return "--recompute: the bundle carries no evidence (records.jsonl, evidence.json) to recompute from"
    if check.without:
        report_id, why = sorted(check.without.items())[0]
        return f"--recompute: report {report_id} carries no evidence: {why}"
    differences = [
        d
        for report_id, (records, settings) in sorted(check.inputs.items())
        for d in recompute(report_id, documents[report_id], records, settings)
    ]
    if differences:
        return f"{describe(differences)} (the exporter's fact rules: version {check.facts_version})"
    facts = sum(len(documents[rid]["body"]["facts"]) for rid in check.inputs)
    result.notes.append(
        f"recomputed all {facts} facts of {len(check.inputs)} report(s) from the bundle's records: every one equal"
    )
    return None


def _check_approvals(
    lines: Sequence[bytes], manifest: BundleManifest, approver_keys: Sequence[ApproverKey] | None, result: VerifyResult
) -> Problem | None:
    """Every recorded approval re-checked offline, and whether unsigned sign-off was allowed (approvals.py)."""
    check = check_approvals(lines, approver_keys)
    if check.problem is not None:
        return Problem(check.problem.seq, str(check.problem))
    seen = unsigned_signoff_state(security_states(lines), manifest.first_seq, manifest.last_seq)
    stated = manifest.unsigned_signoff
    if stated is not None and (seen == "on" and stated != "on" or seen == "off" and stated == "unknown"):
        return Problem(
            None,
            f"{bundle.MANIFEST} says unsigned sign-off was {stated!r}, but the bundle's config.security entries"
            f" say {seen!r}",
        )
    if stated is None:
        result.notes.append(f"the manifest does not state unsigned sign-off (an older exporter); the entries: {seen}")
    result.notes.append(describe_state(stated or seen))
    if check.signed:
        whose = (
            f"against the {len(approver_keys)} approver key(s) given"
            if approver_keys is not None
            else "against the key each entry records (pass --approver-key NAME=KEY with the keys you hold to prove"
            " who signed)"
        )
        result.notes.append(f"{check.signed} signed approval(s) re-checked {whose}")
    for seq, report_id, actor in check.unsigned:
        result.notes.append(f"entry {seq}: the decision on report {report_id} by {actor} was recorded unsigned")
    return None


def _first_export_problem(manifest: BundleManifest, lines: Sequence[bytes], result: VerifyResult) -> Problem | None:
    """No consistency proof is acceptable only for the log's first export."""
    if manifest.previous_checkpoint_size is not None:
        return Problem(
            None,
            f"no consistency proof, but the manifest names a previous export (checkpoint size"
            f" {manifest.previous_checkpoint_size}): this is not the log's first export",
        )
    exports = [i for i, line in enumerate(lines) if b'"event":"audit.export"' in line]
    if manifest.recorded_in_log and exports:
        exports = exports[:-1]  # this export's own entry
    if exports:
        return Problem(
            manifest.first_seq + exports[0],
            "no consistency proof, but an earlier audit.export entry is in the bundle: this is not the log's first"
            " export",
        )
    where = "" if manifest.first_seq == 0 else f" (entries before {manifest.first_seq} are not in the bundle)"
    result.notes.append(
        f"no consistency proof: the log's first export by its signed manifest{where}; pass --trusted-checkpoint"
        " with the last checkpoint you saw to rule out a rollback"
    )
    return None


def _bundle_against_trusted(
    trusted: bytes,
    pubkey: Verifier,
    checkpoint: Checkpoint,
    consistency: dict | None,
    first_seq: int,
    chain: ChainResult,
) -> Problem | None:
    try:
        cp = _open_trusted(trusted, [pubkey])
    except CheckpointError as exc:
        return Problem(None, f"trusted checkpoint: {exc}")
    if cp.origin != checkpoint.origin:
        return Problem(None, f"trusted checkpoint is of origin {cp.origin!r}, the bundle's {checkpoint.origin!r}")
    if cp.size > checkpoint.size:
        return Problem(
            None,
            f"ROLLBACK: trusted checkpoint has size {cp.size}, newer than the bundle's checkpoint of size"
            f" {checkpoint.size}",
        )
    if cp.size == checkpoint.size:
        if cp.root != checkpoint.root:
            return Problem(None, f"ROLLBACK: the bundle's root at size {cp.size} differs from the trusted checkpoint's")
        return None
    if consistency is not None and int(consistency["old_size"]) == cp.size:
        old = Checkpoint.parse_body(SignedNote.parse(consistency["old_checkpoint"].encode("utf-8")).text)
        if old.root == cp.root:
            return None  # _check_consistency proved old → this checkpoint
        return Problem(
            None, f"ROLLBACK: the bundle's previous checkpoint at size {cp.size} differs from the trusted one"
        )
    if first_seq == 0 and chain.leaves is not None and len(chain.leaves) >= cp.size:
        if MerkleTree(chain.leaves[: cp.size]).root(cp.size) == cp.root:
            return None
        return Problem(None, f"ROLLBACK: the bundle's entries 0..{cp.size - 1} do not match the trusted checkpoint")
    return Problem(
        None,
        f"no valid consistency proof from the trusted checkpoint (size {cp.size}) to the bundle's (size"
        f" {checkpoint.size})",
    )


def _prev_hash_of(line: bytes) -> str:
    q = line.rfind(PREV_HASH_MARKER)
    return line[q + _PREV_AT : q + _PREV_END].decode(errors="replace") if q >= 0 else GENESIS_HASH


def _check_consistency(
    consistency: dict, checkpoint: Checkpoint, pubkey: Verifier, root: Path, result: VerifyResult
) -> Problem | None:
    old_size, proof_b64 = int(consistency["old_size"]), consistency["proof"]
    if int(consistency["new_size"]) != checkpoint.size:
        return Problem(None, f"consistency proof is to size {consistency['new_size']}, checkpoint is {checkpoint.size}")
    old_note = SignedNote.parse(consistency["old_checkpoint"].encode("utf-8"))
    try:
        old_note.verified_by([pubkey])
    except CheckpointError:
        # Signed before a key rotation: accept an earlier key from keys.txt (the bundle's word), and say so.
        earlier = [Verifier.parse(line) for line in (root / bundle.KEYS).read_text().splitlines() if line.strip()]
        try:
            used = old_note.verified_by(earlier)
        except CheckpointError as exc:
            return Problem(None, f"previous export's checkpoint: {exc}")
        result.notes.append(f"previous export's checkpoint is signed by earlier key {used[0].key_string()} (keys.txt)")
    old = Checkpoint.parse_body(old_note.text)
    if old.size != old_size or old.origin != checkpoint.origin:
        return Problem(None, f"previous checkpoint is {old.origin}/{old.size}, consistency.json says size {old_size}")
    try:
        proof = [b64decode(h, validate=True) for h in proof_b64]
        verify_consistency(old.size, checkpoint.size, old.root, checkpoint.root, proof)
    except (ProofError, binascii.Error) as exc:
        return Problem(None, f"this tree does not extend the previous export's (size {old.size}): {exc}")
    result.notes.append(f"extends the previous export's checkpoint of size {old.size}")
    return None
