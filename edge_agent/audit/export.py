"""Export a time range of the log as an auditor's bundle (layout in bundle.py), as a directory, .tar.xz or .tar.gz.

With the log open (the agent stopped, or the CLI holding it), the export is itself recorded: an `audit.export`
entry is appended, a checkpoint covering it is signed, and every proof in the bundle leads to that checkpoint. The
next export proves its tree extends this one's. If the running agent holds the log, the export is read-only: it
proves against the latest checkpoint the agent signed, and says that it was not recorded.
"""

from __future__ import annotations

import csv
import json
import shutil
import tarfile
import tempfile
from base64 import b64encode
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from edge_agent.audit import bundle
from edge_agent.audit.approvals import ENROLLED_EVENT, security_states, unsigned_signoff_state
from edge_agent.audit.archive import member_problem
from edge_agent.audit.binding import bind_document, rendering_name, report_trails
from edge_agent.audit.carried import carry, entries_before
from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.entry import AuditError, format_time
from edge_agent.audit.evidence import AnswerSource, EvidenceSource, answered_entries, write_evidence
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.log import (
    ENTRIES,
    KEYS,
    LATEST_CHECKPOINT,
    SIGNING_KEY,
    AuditLog,
    read_signer,
    read_verifiers,
    signed_notes,
)
from edge_agent.audit.manifest import (
    UNLISTED,
    BundleManifest,
    checkpoint_record,
    describe_files,
    file_sha256,
    list_files,
    sign_manifest,
)
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.summary import render_summary
from edge_agent.audit.verify import VerifyResult, verify_bundle
from edge_agent.audit.view import LogLines, leaf_hashes, read_log_lines, time_of
from edge_agent.signing import Signer, Verifier

_EXPORT_EVENT = b'"event":"audit.export"'


class ExportError(AuditError):
    """An export that cannot be made (nothing in range, nothing signed yet, output in the way)."""


@dataclass
class ExportResult:
    path: Path
    first_seq: int
    last_seq: int
    checkpoint_size: int
    previous_size: int | None
    recorded: bool
    reports: list[str] = field(default_factory=list)
    missing_reports: list[str] = field(default_factory=list)
    unbound_reports: dict[str, str] = field(default_factory=dict)
    # Reports exported without the records behind their facts, with why (evidence.py); None: no evidence written.
    without_evidence: dict[str, str] | None = None
    verification: VerifyResult | None = None

    @property
    def entries(self) -> int:
        return self.last_seq - self.first_seq + 1


def export_bundle(
    audit_dir: Path,
    out: Path,
    *,
    reports_dir: Path | None,
    start: datetime | None = None,
    end: datetime | None = None,
    log: AuditLog | None = None,
    actor: str = "operator",
    cosign: Callable[[bytes], bytes] | None = None,
    evidence: EvidenceSource | None = None,
    answers: AnswerSource | None = None,
    seqs: tuple[int, int] | None = None,
) -> ExportResult:
    """Write the bundle for entries with `start <= time <= end` (either open) to `out` (a dir, `*.tar.xz` or
    `*.tar.gz`).

    `evidence`: where the records behind each exported report's facts come from (records.jsonl, evidence.json);
    without it the bundle carries none. `answers`: where the records each exported answer was computed from come
    from (with `evidence`)."""
    out = Path(out)
    suffix = bundle.archive_suffix(out)
    as_tar = suffix is not None
    if out.exists() and (as_tar or any(out.iterdir())):
        raise ExportError(f"{out} already exists; choose a new path")
    held = read_log_lines(audit_dir)
    if seqs is not None and seqs[0] < held.view.first_kept:
        raise ExportError(
            f"entries {seqs[0]}..{min(seqs[1], held.view.first_kept - 1)} are archived in"
            f" {held.view.where(seqs[0])}; export entries from {held.view.first_kept} on"
        )
    previous_size = _previous_export_size(held)
    recorded = log is not None
    if log is not None:
        log.append(
            "audit.export",
            actor,
            {
                "from": format_time(start) if start else None,
                "to": format_time(end) if end else None,
                "out": str(out),
                "checkpoint_size": log.size + 1,
                "previous_checkpoint_size": previous_size,
            },
        )
        note = log.checkpoint()
    else:
        latest = audit_dir / LATEST_CHECKPOINT
        if not latest.exists():
            raise ExportError(f"no signed checkpoint in {audit_dir} yet: stop the agent (it signs at shutdown)")
        note = latest.read_bytes()
    if cosign is not None:
        note = cosign(note)  # the witnesses' cosignatures travel in the bundle's checkpoint (witness_state.py)
    checkpoint = Checkpoint.parse_body(SignedNote.parse(note).text)

    lines = _first_lines(audit_dir, checkpoint.size)
    tree = MerkleTree(leaf_hashes(lines))
    if tree.root() != checkpoint.root:
        raise ExportError(
            f"the stored entries do not match checkpoint {checkpoint.size}; run `edge-agent audit verify` first"
        )
    first, last = _select(lines, start, end) if seqs is None else _in_range(lines, *seqs)
    previous_note = None
    if previous_size is not None and previous_size <= checkpoint.size:
        previous_note = dict(signed_notes(audit_dir)).get(previous_size)

    # Staged next to the output, so the final rename stays on one filesystem.
    out.parent.mkdir(parents=True, exist_ok=True)
    stage_root = Path(tempfile.mkdtemp(prefix=".audit-export-", dir=out.parent))
    name = out.name.removesuffix(suffix or "")
    stage = stage_root / name
    stage.mkdir()
    try:
        result = ExportResult(out, first, last, checkpoint.size, previous_size if previous_note else None, recorded)
        exported = [lines[seq] for seq in range(first, last + 1)]
        signer = _write_core(stage, exported, first, tree, note, previous_note, previous_size, audit_dir)
        # The approval check's inputs from before the window: the approver keys in force at its start (the newest
        # config.loaded) and every passkey registered so far (console.enrolled); the window holds neither.
        configs = entries_before(lines, first, "config.loaded")
        in_force = configs[-1] if configs else None
        if in_force is not None:
            _write_carried(stage / bundle.CONFIG_IN_FORCE, carry(lines, in_force, tree).model_dump())
        enrolments = entries_before(lines, first, ENROLLED_EVENT)
        if enrolments:
            _write_carried(stage / bundle.ENROLMENTS_IN_FORCE, [carry(lines, s, tree).model_dump() for s in enrolments])
        result.reports, result.missing_reports, result.unbound_reports = _copy_reports(stage, exported, reports_dir)
        _copy_qualifications(stage, exported, audit_dir)
        if evidence is not None:
            documents = {
                rid: json.loads((stage / bundle.REPORTS / f"{rid}.json").read_bytes()) for rid in result.reports
            }
            answered = answered_entries(exported)
            result.without_evidence = write_evidence(stage, documents, evidence, answered, answers)
        _write_csv(stage / bundle.CSV, exported)
        manifest = BundleManifest(
            format=bundle.FORMAT,
            origin=checkpoint.origin,
            created=format_time(datetime.now(UTC)),
            start=format_time(start) if start else None,
            end=format_time(end) if end else None,
            first_seq=first,
            last_seq=last,
            checkpoint_size=checkpoint.size,
            previous_checkpoint_size=result.previous_size,
            recorded_in_log=recorded,
            reports=result.reports,
            missing_reports=result.missing_reports,
            unbound_reports=result.unbound_reports,
            # From the whole log: the config.security entry in force at `first` may precede the window.
            unsigned_signoff=unsigned_signoff_state(security_states(lines), first, last),
            config_in_force=in_force,
            enrolments_in_force=enrolments,
            checkpoint=checkpoint_record(checkpoint),
            files=[],  # listed once every other file is written, below
        )
        (stage / bundle.MANIFEST).write_bytes(manifest.to_bytes())
        result.verification = verify_bundle(stage, signer.verifier, check_files=False)
        (stage / bundle.SUMMARY).write_text(
            render_summary(manifest, exported, stage, result.verification), encoding="utf-8"
        )
        _write_sums(stage)
        manifest = manifest.model_copy(update={"files": describe_files(stage)})
        manifest_bytes = manifest.to_bytes()
        (stage / bundle.MANIFEST).write_bytes(manifest_bytes)
        (stage / bundle.SIGNATURE).write_bytes(sign_manifest(manifest_bytes, checkpoint.origin, signer))
        if as_tar:
            write_archive(stage, out)
        elif out.exists():
            for item in stage.iterdir():
                shutil.move(str(item), out / item.name)
        else:
            stage.rename(out)
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)
    return result


def write_archive(stage: Path, out: Path) -> None:
    """The bundle directory `stage` as the archive `out` (compressed as its suffix says), holding it as `out`'s
    name less the suffix."""
    suffix = bundle.archive_suffix(out)
    if suffix is None:
        raise ExportError(f"{out}: an archive's name ends in one of {', '.join(bundle.ARCHIVES)}")
    with tarfile.open(out, "w:xz" if bundle.ARCHIVES[suffix] == "xz" else "w:gz") as tar:
        tar.add(stage, arcname=out.name.removesuffix(suffix))


def _previous_export_size(lines: LogLines) -> int | None:
    """The checkpoint size recorded by the last `audit.export` entry, if any (archived ones are retained)."""
    size = None
    for line in lines:
        if _EXPORT_EVENT in line:
            data = json.loads(line)
            if data.get("event") == "audit.export":
                size = data["payload"].get("checkpoint_size")
    return size


def _first_lines(audit_dir: Path, count: int) -> LogLines:
    lines = read_log_lines(audit_dir)
    if len(lines) < count:
        raise ExportError(f"checkpoint covers {count} entries but {audit_dir / ENTRIES} holds {len(lines)}")
    return lines.prefix(count)


def _in_range(lines: LogLines, first: int, last: int) -> tuple[int, int]:
    if not 0 <= first <= last < len(lines):
        raise ExportError(f"entries {first}..{last} are not in the signed log of {len(lines)} entries")
    return first, last


def _select(lines: LogLines, start: datetime | None, end: datetime | None) -> tuple[int, int]:
    lo = format_time(start) if start else None
    hi = format_time(end) if end else None
    kept = lines.view.first_kept
    chosen = [
        seq
        for seq, line in lines.numbered()
        if seq >= kept and (lo is None or time_of(line) >= lo) and (hi is None or time_of(line) <= hi)
    ]
    if not chosen:
        archived = [
            s.bundle
            for s in lines.view.segments
            if (lo is None or s.last_time >= lo) and (hi is None or s.first_time <= hi)
        ]
        if archived:
            raise ExportError(
                f"the entries between {lo or 'the start'} and {hi or 'the end'} are archived in"
                f" {', '.join(archived)}: that bundle is their export (check it with `edge-agent audit verify-bundle`)"
            )
        raise ExportError(f"no entries between {lo or 'the start'} and {hi or 'the end'}")
    # A contiguous range keeps the chain checkable inside the bundle; entries written with a clock that stepped back
    # fall inside it rather than leaving a gap.
    return chosen[0], chosen[-1]


def _write_carried(path: Path, records: object) -> None:
    path.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")


def _write_core(
    stage: Path,
    exported: Sequence[bytes],
    first: int,
    tree: MerkleTree,
    note: bytes,
    previous_note: bytes | None,
    previous_size: int | None,
    audit_dir: Path,
) -> Signer:
    """Entries, checkpoint, proofs, consistency and keys; returns the signer of the checkpoint."""
    (stage / bundle.ENTRIES).write_bytes(b"".join(line + b"\n" for line in exported))
    (stage / bundle.CHECKPOINT).write_bytes(note)
    with open(stage / bundle.INCLUSION, "w", encoding="utf-8") as f:
        for offset, line in enumerate(exported):
            seq = first + offset
            proof = tree.inclusion_proof(seq)
            record = {"seq": seq, "leaf_hash": leaf_hash(line).hex(), "proof": [b64encode(h).decode() for h in proof]}
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
    consistency: dict[str, Any] | None = None
    if previous_note is not None and previous_size is not None:
        consistency = {
            "old_size": previous_size,
            "new_size": tree.size,
            "old_checkpoint": previous_note.decode("utf-8"),
            "proof": [b64encode(h).decode() for h in tree.consistency_proof(previous_size)],
        }
    (stage / bundle.CONSISTENCY).write_text(json.dumps(consistency, indent=2) + "\n", encoding="utf-8")
    verifiers = read_verifiers(audit_dir)
    key = _signing_key(note, verifiers)
    (stage / bundle.PUBKEY).write_text(key + "\n", encoding="utf-8")
    shutil.copyfile(audit_dir / KEYS, stage / bundle.KEYS)
    # The manifest is signed by the checkpoint's key, read from its file: the log (ours or the running agent's)
    # exposes no signing call, and with the agent running this key is still the one that signs its checkpoints.
    signer = read_signer(audit_dir / SIGNING_KEY)
    if signer.verifier.key_string() != key:
        raise ExportError(f"{audit_dir / SIGNING_KEY} is not the key that signed the checkpoint ({key})")
    return signer


def _signing_key(note: bytes, verifiers: Sequence[Verifier]) -> str:
    """The newest known key that signed the note (a hand-over checkpoint carries the old and the new key)."""
    parsed = SignedNote.parse(note)
    for verifier in reversed(verifiers):
        try:
            parsed.verified_by([verifier])
        except CheckpointError:
            continue
        return verifier.key_string()
    raise ExportError("the checkpoint is not signed by any key in keys.txt")


def _copy_reports(
    stage: Path, exported: Sequence[bytes], reports_dir: Path | None
) -> tuple[list[str], list[str], dict[str, str]]:
    """Copy each report the entries name, with its renderings, if it binds to them: (copied, missing, unbound)."""
    trails = report_trails(exported)
    copied: list[str] = []
    missing: list[str] = []
    unbound: dict[str, str] = {}
    (stage / bundle.REPORTS).mkdir()
    for report_id, trail in trails.items():
        # Ids come from the log; refuse anything that could step outside the reports directory or the archive rules.
        if "/" in report_id or report_id.startswith(".") or member_problem(f"{report_id}.json") is not None:
            unbound[report_id] = "its id is not a safe file name"
            continue
        source = reports_dir / f"{report_id}.json" if reports_dir is not None else None
        if source is None or not source.is_file():
            missing.append(report_id)
            continue
        data = source.read_bytes()
        try:
            document = json.loads(data)
        except (ValueError, RecursionError) as exc:
            unbound[report_id] = f"not JSON: {exc}"
            continue
        reason = bind_document(report_id, document, trail)
        renderings = document.get("renderings", {}) if reason is None else {}  # bind_document checked its type
        names = {fmt: rendering_name(report_id, fmt) for fmt in renderings}
        unknown = sorted(fmt for fmt, rel in names.items() if rel is None)
        if reason is None and unknown:
            reason = f"rendering format {unknown[0]!r} has no file in a bundle"
        if reason is not None:
            unbound[report_id] = reason
            continue
        (stage / bundle.REPORTS / source.name).write_bytes(data)
        for fmt, rel in names.items():
            assert rel is not None
            (stage / rel).write_bytes(renderings[fmt].encode("utf-8"))
        copied.append(report_id)
    return copied, missing, unbound


def _copy_qualifications(stage: Path, exported: Sequence[bytes], audit_dir: Path) -> None:
    """The files of each qualification the entries record (`<sha256>.json`, its signature and HTML), kept by
    `edge-agent qualify` under the audit dir; the entry's sha256 ties the JSON to the log."""
    kept = audit_dir / bundle.QUALIFICATIONS
    for line in exported:
        if b'"event":"qualification"' not in line:
            continue
        digest = json.loads(line)["payload"]["sha256"]
        for path in sorted(kept.glob(f"{digest}.*")):
            (stage / bundle.QUALIFICATIONS).mkdir(exist_ok=True)
            shutil.copyfile(path, stage / bundle.QUALIFICATIONS / path.name)


def _write_csv(path: Path, exported: Sequence[bytes]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["seq", "time", "actor", "event", "payload", "prev_hash", "entry_hash"])
        for line in exported:
            d = json.loads(line)
            payload = json.dumps(d["payload"], sort_keys=True, ensure_ascii=False)
            writer.writerow([d["seq"], d["time"], d["actor"], d["event"], payload, d["prev_hash"], d["entry_hash"]])


def _write_sums(stage: Path) -> None:
    rows = [f"{file_sha256(stage / rel)}  {rel}\n" for rel in list_files(stage) if rel not in UNLISTED]
    (stage / bundle.SUMS).write_text("".join(rows), encoding="utf-8")
