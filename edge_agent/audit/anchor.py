"""Anti-rollback: every signed checkpoint leaves the box, and the agent checks its log against what left.

Where checkpoints go (`AuditAnchor`, a component):
  * a retained MQTT message on `edge/<site>/audit/checkpoint` — the signed note as is, queued in the store's outbox
    (durable: one not yet published is published after the broker comes back);
  * each configured witness (C2SP tlog-witness), with a consistency proof from the size it last cosigned; the
    cosignatures are kept in `<audit>/cosigned` (the newest cosigned checkpoint, every cosignature line on it).

What is checked at start, before anything is signed (the log is held until then):
  * the store: every report's `audit` seqs (requested, generated, signoff) name an entry of this log, of the right
    event, for that report — a cited entry beyond the log means entries were removed; one of another event or report
    means the store belongs to another log;
  * the retained checkpoint (read back from the broker) and each witness's latest cosigned checkpoint: their size
    must not exceed the log's, and the log's root at their size must be theirs;
  * a rollback marker left by an earlier start (`<audit>/ROLLBACK`).

On any finding the log is blocked (never signed in this process), the finding is logged, written to the marker and
appended as an `error` entry, and the component stays not ready naming it (/readyz 503; `edge-agent doctor` reads the
marker). Only `edge-agent audit recover --reason …` clears it: an `audit.recovered` entry records the findings
accepted (`<audit>/accepted.jsonl` keeps their keys so the next start does not report them again).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import threading
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import structlog

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.cosignature import CosignatureError
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.keys import write_durably
from edge_agent.audit.log import (
    ENTRIES,
    LATEST_CHECKPOINT,
    AuditIntegrityError,
    AuditLog,
    iter_lines,
    read_verifiers,
)
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.witness_client import (
    WitnessConflict,
    WitnessError,
    WitnessRefused,
    WitnessTarget,
    latest_cosigned,
    request_cosignature,
)

log = structlog.get_logger(component="audit")

MARKER = "ROLLBACK"
ACCEPTED = "accepted.jsonl"
WITNESS_SIZES = "witnesses.json"
COSIGNED = "cosigned"
PUBLISHED = "published.json"
# How long the start-up check waits for the retained checkpoint after the broker granted the subscription: a retained
# message follows the SUBACK at once; a second covers a loaded broker. No message by then: nothing was published.
RETAINED_WAIT_S = 1.0

_EXPECTED_EVENTS = {
    "requested": ("report.requested",),
    "generated": ("report.generated",),
    "signoff": ("report.signed_off", "report.rejected"),
}


def checkpoint_topic(site_id: str) -> str:
    return f"edge/{site_id}/audit/checkpoint"


@dataclass(frozen=True)
class Finding:
    """One sign of rollback. `key` is stable across starts (what `audit recover` accepts); `message` says it."""

    key: str
    message: str


@dataclass(frozen=True)
class Citation:
    """An audit seq a report in the store records (its document's `audit` member)."""

    report_id: str
    field: str  # requested | generated | signoff
    seq: int


# -- checks (pure over the log's lines) ---------------------------------------------------------------------------


def read_lines(audit_dir: Path) -> list[bytes]:
    path = audit_dir / ENTRIES
    return list(iter_lines(path)) if path.exists() else []


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
            entry = json.loads(lines[c.seq])
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


def check_checkpoint(lines: Sequence[bytes], note: bytes, origin: str, audit_dir: Path, where: str) -> Finding | None:
    """A checkpoint kept outside (retained topic, witness) against the log: signed by one of its keys, not larger,
    same root at its size."""
    key = finding_key(where, note)
    try:
        parsed = SignedNote.parse(note)
        checkpoint = Checkpoint.parse_body(parsed.text)
    except CheckpointError as exc:
        return Finding(key, f"{where}: the checkpoint there is malformed: {exc}")
    if checkpoint.origin != origin:
        return Finding(key, f"{where}: holds a checkpoint of origin {checkpoint.origin!r}, this log is {origin!r}")
    try:
        parsed.verified_by(read_verifiers(audit_dir))
    except CheckpointError as exc:
        return Finding(
            key,
            f"{where}: checkpoint of size {checkpoint.size} is not signed by any key of this log ({exc}): the log"
            " was replaced",
        )
    if checkpoint.size > len(lines):
        return Finding(
            key,
            f"{where}: holds a signed checkpoint of size {checkpoint.size}, the log only {len(lines)} entries:"
            " the log was rolled back",
        )
    tree = MerkleTree([leaf_hash(line) for line in lines[: checkpoint.size]])
    if checkpoint.size and tree.root(checkpoint.size) != checkpoint.root:
        return Finding(
            key,
            f"{where}: the log's first {checkpoint.size} entries do not match the checkpoint published for that size:"
            " history was rewritten",
        )
    return None


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


# -- marker and accepted findings -----------------------------------------------------------------------------------


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


def accepted_keys(audit_dir: Path) -> set[str]:
    path = audit_dir / ACCEPTED
    if not path.exists():
        return set()
    keys: set[str] = set()
    for line in iter_lines(path):
        keys.update(json.loads(line).get("keys", []))
    return keys


def accept(audit_dir: Path, keys: Iterable[str], reason: str) -> None:
    record = {"time": datetime.now(UTC).isoformat(), "reason": reason, "keys": sorted(set(keys))}
    with open(audit_dir / ACCEPTED, "ab") as f:
        f.write(json.dumps(record, ensure_ascii=False).encode() + b"\n")
        f.flush()
        os.fsync(f.fileno())


def reason_of(findings: Sequence[Finding]) -> str:
    more = f" (and {len(findings) - 1} more; see the ROLLBACK file)" if len(findings) > 1 else ""
    return f"audit rollback detected: {findings[0].message}{more}"


# -- cosigning ------------------------------------------------------------------------------------------------------


def cosign(audit_dir: Path, note: bytes, targets: Sequence[WitnessTarget], lines: Sequence[bytes]) -> list[Finding]:
    """Ask each witness to cosign `note` from the size it last cosigned; keep the cosignatures in `cosigned`.
    Returns rollback findings (a witness that cosigned more than the log holds, or refuses as inconsistent);
    an unreachable witness is logged and tried again with the next checkpoint."""
    parsed = SignedNote.parse(note)
    checkpoint = Checkpoint.parse_body(parsed.text)
    sizes_path = audit_dir / WITNESS_SIZES
    sizes: dict[str, int] = json.loads(sizes_path.read_text()) if sizes_path.exists() else {}
    tree = MerkleTree([leaf_hash(line) for line in lines[: checkpoint.size]])
    findings: list[Finding] = []
    signatures = []
    for target in targets:
        old = sizes.get(target.url, 0)
        for _ in range(2):  # a 409 tells us the witness's size: one retry from there
            if old > checkpoint.size:
                findings.append(
                    Finding(
                        f"witness:{target.url}:{old}",
                        f"witness {target.url} has cosigned size {old}, the log's checkpoint is {checkpoint.size}:"
                        " the log was rolled back",
                    )
                )
                break
            proof = tree.consistency_proof(old, checkpoint.size) if 0 < old < checkpoint.size else []
            try:
                signatures.append(request_cosignature(target, old, proof, note))
                sizes[target.url] = checkpoint.size
            except WitnessConflict as exc:
                old = exc.known_size
                continue
            except WitnessRefused as exc:
                if exc.status == 422:
                    findings.append(
                        Finding(
                            f"witness:{target.url}:refused:{checkpoint.size}",
                            f"witness {target.url} refused checkpoint {checkpoint.size} as inconsistent with the one"
                            f" it cosigned before: {exc.reason}",
                        )
                    )
                else:
                    log.warning("audit_witness_refused", witness=target.url, status=exc.status, reason=exc.reason)
            except (WitnessError, CosignatureError) as exc:
                log.warning("audit_witness_unavailable", witness=target.url, error=str(exc))
            break
    write_durably(sizes_path, json.dumps(sizes, sort_keys=True).encode() + b"\n")
    if signatures:
        cosigned_path = audit_dir / COSIGNED
        kept = list(parsed.signatures)
        if cosigned_path.exists():
            try:
                previous = SignedNote.parse(cosigned_path.read_bytes())
                if previous.text == parsed.text:
                    kept += [s for s in previous.signatures if s not in kept]
            except CheckpointError:
                pass
        names = {(s.name, s.key_hash) for s in signatures}
        kept = [s for s in kept if (s.name, s.key_hash) not in names] + signatures
        write_durably(cosigned_path, SignedNote(parsed.text, tuple(kept)).encode())
    return findings


def with_cosignatures(audit_dir: Path, note: bytes, targets: Sequence[WitnessTarget] = ()) -> bytes:
    """`note` with every cosignature kept for it in `cosigned` (asking `targets` first, if any, when it has none)."""
    text = SignedNote.parse(note).text
    path = audit_dir / COSIGNED
    if targets and not (path.exists() and SignedNote.parse(path.read_bytes()).text == text):
        cosign(audit_dir, note, targets, read_lines(audit_dir))
    if path.exists():
        kept = SignedNote.parse(path.read_bytes())
        if kept.text == text:
            return kept.encode()
    return note


# -- the component --------------------------------------------------------------------------------------------------


class AuditAnchor:
    """Start-up rollback check, then: publish each new checkpoint (retained) and have the witnesses cosign it.

    `publish(note)` queues the retained message (the outbox); `read_published()` reads the retained checkpoint back
    (None: none there); `citations()` lists what the store cites. Any may be None when not configured.
    """

    name = "audit-anchor"

    def __init__(
        self,
        audit: AuditLog,
        *,
        publish: Callable[[bytes], None] | None,
        read_published: Callable[[], Awaitable[bytes | None]] | None,
        citations: Callable[[], list[Citation]],
        witnesses: Sequence[WitnessTarget] = (),
        every_s: float = 5.0,
    ) -> None:
        self._audit = audit
        self._dir = audit.directory
        self._publish = publish
        self._read_published = read_published
        self._citations = citations
        self._witnesses = list(witnesses)
        self._every_s = every_s
        self.not_ready_reason: str | None = None
        self.findings: list[Finding] = []
        self._checked = False
        self._wake = threading.Event()
        audit.hold("start-up rollback check pending")
        audit.add_listener(lambda _note: self._wake.set())

    async def run(self, ready: asyncio.Event) -> None:
        if not self._checked:
            findings = await self.start_check()
            self._checked = True
            if findings:
                await asyncio.to_thread(self._fail, findings)
            else:
                self._audit.release()
        ready.set()
        while True:
            if self.not_ready_reason is None:
                await asyncio.to_thread(self.anchor_latest)
            await asyncio.to_thread(self._wake.wait, self._every_s)
            self._wake.clear()

    async def start_check(self) -> list[Finding]:
        marker = read_marker(self._dir)
        lines = await asyncio.to_thread(read_lines, self._dir)
        findings = list(marker or [])
        findings += check_citations(lines, await asyncio.to_thread(self._citations))
        if self._read_published is not None:
            try:
                published = await self._read_published()
            except Exception as exc:  # the broker down must not keep the agent from starting: say it was not checked
                log.warning("audit_published_checkpoint_unread", error=repr(exc))
                published = None
            if published:
                found = check_checkpoint(lines, published, self._audit.origin, self._dir, "published checkpoint")
                findings += [found] if found else []
        for target in self._witnesses:
            try:
                note = await asyncio.to_thread(latest_cosigned, target, self._audit.origin)
            except WitnessError as exc:
                log.warning("audit_witness_unavailable", witness=target.url, error=str(exc))
                continue
            if note:
                found = check_checkpoint(lines, note, self._audit.origin, self._dir, f"witness {target.url}")
                findings += [found] if found else []
        accepted = accepted_keys(self._dir)
        return [f for f in findings if f.key not in accepted]

    def _fail(self, findings: list[Finding]) -> None:
        self.findings = findings
        self.not_ready_reason = reason_of(findings)
        self._audit.block(self.not_ready_reason)
        first_time = not (self._dir / MARKER).exists()
        write_marker(self._dir, findings)
        for f in findings:
            log.error("audit_rollback_detected", finding=f.message, key=f.key)
        if first_time:
            payload: dict[str, Any] = {"kind": "rollback_detected", "findings": [f.message for f in findings]}
            self._audit.append("error", "audit", payload)

    def anchor_latest(self) -> None:
        """Publish and cosign the newest checkpoint if not done yet (also the last thing before stopping)."""
        if self._audit.blocked is not None:
            return
        path = self._dir / LATEST_CHECKPOINT
        if not path.exists():
            return
        note = path.read_bytes()
        size = Checkpoint.parse_body(SignedNote.parse(note).text).size
        digest = hashlib.sha256(note).hexdigest()
        state_path = self._dir / PUBLISHED
        state: dict[str, Any] = json.loads(state_path.read_text()) if state_path.exists() else {}
        if self._publish is not None and state.get("sha256") != digest:
            self._publish(note)
            state = {"size": size, "sha256": digest}
            write_durably(state_path, json.dumps(state).encode() + b"\n")
            log.info("audit_checkpoint_published", size=size)
        if self._witnesses and state.get("cosigned") != digest:
            accepted = accepted_keys(self._dir)
            found = cosign(self._dir, note, self._witnesses, read_lines(self._dir))
            findings = [f for f in found if f.key not in accepted]
            if findings:
                self._fail(findings)
                return
            state["cosigned"] = digest
            write_durably(state_path, json.dumps(state).encode() + b"\n")

    def finish(self) -> None:
        """At stop: sign what is unsigned, then publish and cosign it (the outbox sends it on the next start)."""
        if self._audit.blocked is not None or not self._checked:
            return
        try:
            self._audit.checkpoint()
            self.anchor_latest()
        except (CheckpointError, OSError, ValueError) as exc:
            log.error("audit_anchor_at_stop_failed", error=str(exc))
