"""Verification of an export bundle (directory, .tar.xz or .tar.gz) with nothing but its files and trusted keys:
its signed checkpoint, the entries' inclusion, the consistency with the previous export, the reports, evidence,
qualifications and approvals it carries, and the signed manifest of its files.
"""

from __future__ import annotations

import binascii
import json
import tempfile
from base64 import b64decode
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from edge_agent.audit import bundle
from edge_agent.audit.archive import extract_bundle
from edge_agent.audit.binding import check_reports
from edge_agent.audit.bundle import BundleError
from edge_agent.audit.carried import CarriedError
from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.entry import GENESIS_HASH
from edge_agent.audit.evidence import Recompute, RecomputeAnswer
from edge_agent.audit.log import iter_lines
from edge_agent.audit.manifest import BundleManifest, check_manifest, list_files
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.proof import ProofError, verify_consistency, verify_inclusion
from edge_agent.audit.verify.approvals import _check_approvals
from edge_agent.audit.verify.carried import _carried_config, _carried_enrolments
from edge_agent.audit.verify.chain import ChainResult, Problem, VerifyResult, open_trusted, prev_hash_of, scan_chain
from edge_agent.audit.verify.evidence import _check_evidence, _check_qualifications
from edge_agent.signing import ApproverKey, CosignatureError, CosignerKey, Verifier, require_cosignatures


def verify_bundle(
    path: Path | str,
    pubkey: Verifier | None = None,
    *,
    check_files: bool = True,
    trusted: bytes | None = None,
    witness_keys: Sequence[CosignerKey] = (),
    approver_keys: Sequence[ApproverKey] | None = None,
    recompute: Recompute | None = None,
    recompute_answer: RecomputeAnswer | None = None,
) -> VerifyResult:
    """Verify an export bundle (directory, .tar.xz or .tar.gz) with nothing but its files and a trusted public key.

    Without `pubkey` the bundle's own pubkey.txt is used, which proves only that the bundle is self-consistent;
    the result's notes say so. `check_files=False` is for the exporter, which verifies the bundle before it writes
    and signs the manifest of its files. Every recorded approval is re-checked (approvals.py) against
    `approver_keys`, or, when None, against the approver keys the log held then (the newest config.loaded entry
    before each decision; never the key an entry records). The bundle's evidence
    (evidence.py) is checked against its reports' facts by record ids; `recompute` (the reports' fact code, given
    by the caller: this layer does not import it) also recomputes every fact from the bundle's records, and
    `recompute_answer` (the ask's code, likewise) every carried answer from its records.
    """
    path = Path(path)
    if path.is_file():
        with tempfile.TemporaryDirectory(prefix="audit-bundle-") as tmp:
            try:
                root = extract_bundle(path, Path(tmp))
            except BundleError as exc:
                return VerifyResult(0, 0, 0, "", Problem(None, str(exc)))
            return _verify_bundle_dir(
                root, pubkey, check_files, trusted, witness_keys, approver_keys, recompute, recompute_answer
            )
    if not path.is_dir():
        return VerifyResult(0, 0, 0, "", Problem(None, f"{path}: no bundle there (a directory, .tar.xz or .tar.gz)"))
    return _verify_bundle_dir(
        path, pubkey, check_files, trusted, witness_keys, approver_keys, recompute, recompute_answer
    )


def _verify_bundle_dir(
    root: Path,
    pubkey: Verifier | None,
    check_files: bool,
    trusted: bytes | None = None,
    witness_keys: Sequence[CosignerKey] = (),
    approver_keys: Sequence[ApproverKey] | None = None,
    recompute: Recompute | None = None,
    recompute_answer: RecomputeAnswer | None = None,
) -> VerifyResult:
    result = VerifyResult(0, 0, 0, "", None)
    try:
        _check_bundle(
            root, pubkey, result, check_files, trusted, witness_keys, approver_keys, recompute, recompute_answer
        )
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
    recompute_answer: RecomputeAnswer | None = None,
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
    first_prev = prev_hash_of(lines[0]) if lines else GENESIS_HASH
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

    try:
        before = _carried_config(root, manifest, checkpoint) + _carried_enrolments(root, manifest, checkpoint)
    except CarriedError as exc:
        result.problem = Problem(exc.seq, str(exc))
        return
    except BundleError as exc:
        result.problem = Problem(None, str(exc))
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
        except CosignatureError as exc:
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
        reason = _check_evidence(root, lines, recompute, recompute_answer, result)
    if reason is None:
        reason = _check_qualifications(root, lines, result)
    if reason is None and check_files:
        reason = check_manifest(root, manifest_bytes, manifest, pubkey, checkpoint)
    if reason is not None:
        result.problem = Problem(None, reason)
        return
    carried = [line for _, line in sorted(before)]  # by seq: the config in force and the enrolments interleave
    result.problem = _check_approvals(lines, manifest, approver_keys, carried, result)


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
        cp = open_trusted(trusted, [pubkey])
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
