"""Rollback findings: the start checks over the log's lines (the store's citations, a checkpoint kept outside),
the rollback marker, and the keys `audit.recovered` entries accept. The anchor component (anchor.py) runs them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.log import ENTRIES, AuditIntegrityError
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.view import ArchivedError, LogLines, leaf_hashes, read_log_lines
from edge_agent.signing.keys import Verifier, write_durably

MARKER = "ROLLBACK"
LEGACY_ACCEPTED = "accepted.jsonl"  # no longer read: findings are accepted in the log only
RECOVERED_EVENT = "audit.recovered"

_EXPECTED_EVENTS = {
    "requested": ("report.requested",),
    "generated": ("report.generated",),
    "signoff": ("report.signed_off", "report.rejected"),
}


@dataclass(frozen=True)
class Finding:
    """One sign of rollback (or, for a foreign retained checkpoint, of tampering with the broker). `key` is stable
    across starts (what an `audit.recovered` entry names); `message` says it."""

    key: str
    message: str


@dataclass(frozen=True)
class Citation:
    """An audit seq a report in the store records (its document's `audit` member)."""

    report_id: str
    field: str  # requested | generated | signoff
    seq: int


@dataclass(frozen=True)
class Verdict:
    """A checkpoint kept outside, judged against the log: `consistent` (a prefix of it), `foreign` (not signed by this
    log's key: ignored, warned about) or `inconsistent` (signed by it, and larger or of another root: a rollback)."""

    kind: Literal["consistent", "foreign", "inconsistent"]
    finding: Finding | None = None


# -- checks (pure over the log's lines) ---------------------------------------------------------------------------


def read_lines(audit_dir: Path) -> LogLines:
    """The log's lines by seq, archived entries included by their leaf hashes (view.py)."""
    return read_log_lines(audit_dir)


def check_citations(lines: Sequence[bytes], citations: Iterable[Citation]) -> list[Finding]:
    """Every cited seq must be an entry of the cited event for the cited report."""
    findings: list[Finding] = []
    for c in citations:
        key = f"store:{c.report_id}:{c.field}:{c.seq}"
        if c.seq >= len(lines):
            findings.append(
                Finding(
                    key,
                    f"store: report {c.report_id} cites audit entry {c.seq} as its {c.field} entry, but the log ends"
                    f" at entry {len(lines) - 1}: entries were removed (rollback)",
                )
            )
            continue
        try:
            line = lines[c.seq]
        except ArchivedError:
            continue  # archived: its leaf hash is in the signed tree, its line in the archive bundle
        try:
            entry = json.loads(line)
            event, report_id = entry.get("event"), (entry.get("payload") or {}).get("report_id")
        except (ValueError, AttributeError):
            event, report_id = None, None
        if event not in _EXPECTED_EVENTS.get(c.field, ()) or report_id != c.report_id:
            findings.append(
                Finding(
                    key,
                    f"store: report {c.report_id} cites audit entry {c.seq} as its {c.field} entry, but that entry"
                    f" is {event} for {report_id}: the store is from another log (swapped store or log)",
                )
            )
    return findings


def finding_key(where: str, note: bytes) -> str:
    """The stable key of a finding about a checkpoint kept outside: where, and a digest of its body."""
    digest = hashlib.sha256(note.split(b"\n\n")[0]).hexdigest()[:16]
    return f"{where}:{digest}"


def judge_checkpoint(
    lines: Sequence[bytes], note: bytes, origin: str, verifiers: Sequence[Verifier], where: str
) -> Verdict:
    """Any bytes found outside (the retained topic) against the log: foreign unless signed by one of the log's keys;
    then inconsistent if larger than the log or of another root at its size."""
    key = finding_key(where, note)
    ignored = "ignored; this log's next checkpoint replaces it"
    try:
        parsed = SignedNote.parse(note)
        checkpoint = Checkpoint.parse_body(parsed.text)
    except CheckpointError as exc:
        return Verdict("foreign", Finding(key, f"{where}: not a checkpoint ({exc}): {ignored}"))
    if checkpoint.origin != origin:
        message = f"{where}: a checkpoint of origin {checkpoint.origin!r}, this log is {origin!r}: {ignored}"
        return Verdict("foreign", Finding(key, message))
    try:
        parsed.verified_by(verifiers)
    except CheckpointError as exc:
        message = f"{where}: a checkpoint of size {checkpoint.size} not signed by this log's key ({exc}): {ignored}"
        return Verdict("foreign", Finding(key, message))
    if checkpoint.size > len(lines):
        return Verdict(
            "inconsistent",
            Finding(
                key,
                f"{where}: holds a signed checkpoint of size {checkpoint.size}, the log only {len(lines)} entries:"
                " the log was rolled back",
            ),
        )
    tree = MerkleTree(leaf_hashes(lines, checkpoint.size))
    if checkpoint.size and tree.root(checkpoint.size) != checkpoint.root:
        return Verdict(
            "inconsistent",
            Finding(
                key,
                f"{where}: the log's first {checkpoint.size} entries do not match the checkpoint published for that"
                " size: history was rewritten",
            ),
        )
    return Verdict("consistent")


def recovered_keys(lines: Sequence[bytes], signed_size: int) -> set[str]:
    """The finding keys `audit.recovered` entries name, among the first `signed_size` entries (those a signed
    checkpoint covers: an entry appended without the key accepts nothing)."""
    keys: set[str] = set()
    for line in lines[:signed_size]:
        if RECOVERED_EVENT.encode() not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("event") != RECOVERED_EVENT:
            continue
        for found in (entry.get("payload") or {}).get("findings") or []:
            if isinstance(found, dict) and isinstance(found.get("key"), str):
                keys.add(found["key"])
    return keys


class MissingLogError(AuditIntegrityError):
    """The audit directory is gone but the store holds data: starting would begin a new log without a word."""


def refuse_missing_log(audit_dir: Path, store_has_data: bool) -> None:
    """A store with data beside no audit log: refuse, naming the two ways on."""
    if store_has_data and not (audit_dir / ENTRIES).exists():
        raise MissingLogError(
            f"the audit log {audit_dir / ENTRIES} is missing but the store holds data: refusing to start a new log"
            " silently. Restore the audit directory from backup, or start a new log on purpose with"
            " `edge-agent audit init --new-log --reason '…'`"
        )


# -- marker ---------------------------------------------------------------------------------------------------------


def read_marker(audit_dir: Path) -> list[Finding] | None:
    path = audit_dir / MARKER
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Finding(str(f["key"]), str(f["message"])) for f in data["findings"]]
    except (ValueError, KeyError, TypeError):
        return [Finding("marker:unreadable", f"{path} exists but cannot be read: a rollback was recorded earlier")]


def write_marker(audit_dir: Path, findings: Sequence[Finding]) -> None:
    data = {
        "detected_at": datetime.now(UTC).isoformat(),
        "findings": [{"key": f.key, "message": f.message} for f in findings],
        "fix": "investigate, then: edge-agent audit recover --reason '…'",
    }
    write_durably(audit_dir / MARKER, json.dumps(data, indent=1, ensure_ascii=False).encode() + b"\n")


def reason_of(findings: Sequence[Finding]) -> str:
    more = f" (and {len(findings) - 1} more; see the ROLLBACK file)" if len(findings) > 1 else ""
    return f"audit rollback detected: {findings[0].message}{more}"
