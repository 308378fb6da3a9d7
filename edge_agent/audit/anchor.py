"""Anti-rollback: every signed checkpoint leaves the box, and the agent checks its log against what left.

Where checkpoints go (`AuditAnchor`, a component):
  * a retained MQTT message on `edge/<site>/audit/checkpoint` — the signed note as is, queued in the store's outbox;
  * each configured witness (C2SP tlog-witness, witness_client.py), from the size it holds, with a consistency proof;
    the cosignatures are kept in `<audit>/cosigned`, each witness's state in `<audit>/witnesses.json`.

What is checked at start, before anything is signed (the log is held until then; it fails closed):
  * a rollback marker left by an earlier start (`<audit>/ROLLBACK`);
  * the store: every report's `audit` seqs (requested, generated, signoff) name an entry of this log, of the right
    event, for that report;
  * the retained checkpoint, read back from the broker: one signed by this log's key must not be larger than the log,
    and the log's root at its size must be its root. One not signed by this log's key (garbage, anyone with the
    broker's credentials can publish it) is a warning and a named finding, not a reason to stop signing;
  * each witness, by submitting the log's latest checkpoint: a witness that cosigned more, or another root, is one.
Signing waits until the retained checkpoint has been read and checked or a witness has answered (with
`audit.require_witness`: until a witness has answered), retrying with backoff; meanwhile the component is not ready,
naming what it waits for. No checkpoint is published to the retained topic before the retained one was read.

On any finding the log is blocked (never signed in this process), the finding is logged, written to the marker and
appended as an `error` entry, and the component stays not ready naming it. A finding is accepted only by an
`audit.recovered` entry naming its key that a signed checkpoint covers (`edge-agent audit recover` writes and signs
it): nothing on disk outside the log can silence one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog
from prometheus_client import Counter, Gauge

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.log import ENTRIES, LATEST_CHECKPOINT, AuditIntegrityError, AuditLog, iter_lines, read_verifiers
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.witness_client import WitnessAnswer, WitnessTarget, submit
from edge_agent.base.backoff import backoff_delay
from edge_agent.signing.keys import Verifier, write_durably

log = structlog.get_logger(component="audit")

MARKER = "ROLLBACK"
LEGACY_ACCEPTED = "accepted.jsonl"  # no longer read: findings are accepted in the log only
WITNESS_STATE = "witnesses.json"
COSIGNED = "cosigned"
PUBLISHED = "published.json"
RECOVERED_EVENT = "audit.recovered"
# Retries (the broker at start, a witness that did not cosign): 1 s doubling to 5 min; a witness down for an hour
# is asked about twelve times an hour, and one back up is asked again within five minutes.
RETRY_INITIAL_S = 1.0
RETRY_MAX_S = 300.0

WITNESS_OK = Gauge(
    "edge_agent_audit_witness_ok", "0 while the witness's last exchange ended without a cosignature", ["witness"]
)
WITNESS_SIZE = Gauge("edge_agent_audit_witness_size", "The size the witness is known to hold for this log", ["witness"])
WITNESS_FAILURES = Counter(
    "edge_agent_audit_witness_failures_total", "Witness exchanges that ended without a cosignature", ["witness", "kind"]
)
RETAINED_FOREIGN = Counter(
    "edge_agent_audit_retained_foreign_total", "Retained checkpoints read back that this log's key did not sign"
)
SIGNING_HELD = Gauge("edge_agent_audit_signing_held", "1 while signing waits for the retained checkpoint or a witness")

_EXPECTED_EVENTS = {
    "requested": ("report.requested",),
    "generated": ("report.generated",),
    "signoff": ("report.signed_off", "report.rejected"),
}


def checkpoint_topic(site_id: str) -> str:
    return f"edge/{site_id}/audit/checkpoint"


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
    tree = MerkleTree([leaf_hash(line) for line in lines[: checkpoint.size]])
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


# -- witnesses' state -----------------------------------------------------------------------------------------------


@dataclass
class WitnessStatus:
    """What the agent knows of one witness: the size it holds, how the last exchange ended, and when to ask again.
    `state` is an answer's kind, or `pending` (a checkpoint not yet sent)."""

    size: int = 0
    state: str = "pending"
    detail: str = "not asked yet"
    at: str | None = None
    failures: int = 0  # exchanges without a cosignature since the last one
    next_try: float = 0.0  # time.monotonic() of the next try; not kept in the file

    @property
    def failing(self) -> bool:
        return self.state not in ("pending", "cosigned")


def read_witness_state(audit_dir: Path) -> dict[str, WitnessStatus]:
    """`witnesses.json`, per witness URL (an older file held only each witness's size)."""
    path = audit_dir / WITNESS_STATE
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except ValueError:
        return {}
    states: dict[str, WitnessStatus] = {}
    for url, value in raw.items() if isinstance(raw, dict) else ():
        if isinstance(value, int):
            states[url] = WitnessStatus(size=value)
        elif isinstance(value, dict):
            try:  # our own file, but a hand-edited one must not stop the agent: a bad record is a fresh start
                states[url] = WitnessStatus(
                    size=int(value.get("size", 0)),
                    state=str(value.get("state", "pending")),
                    detail=str(value.get("detail", "")),
                    at=value.get("at") if isinstance(value.get("at"), str) else None,
                    failures=int(value.get("failures", 0)),
                )
            except (TypeError, ValueError):
                continue
    return states


def write_witness_state(audit_dir: Path, states: dict[str, WitnessStatus]) -> None:
    data = {url: {k: v for k, v in asdict(s).items() if k != "next_try"} for url, s in sorted(states.items())}
    write_durably(audit_dir / WITNESS_STATE, json.dumps(data, indent=1, ensure_ascii=False).encode() + b"\n")


def log_proofs(lines: Sequence[bytes]) -> Callable[[int, int], list[bytes]]:
    """Consistency proofs between two sizes of the log `lines` holds (the tree is built on the first call)."""
    tree: list[MerkleTree] = []

    def proof(old: int, new: int) -> list[bytes]:
        if not tree:
            tree.append(MerkleTree([leaf_hash(line) for line in lines]))
        return tree[0].consistency_proof(old, new)

    return proof


def keep_cosignature(audit_dir: Path, note: bytes, answer: WitnessAnswer) -> None:
    """Add a witness's cosignature to `cosigned` (the newest cosigned checkpoint, with every cosignature on it)."""
    assert answer.signature is not None
    parsed = SignedNote.parse(note)
    path = audit_dir / COSIGNED
    kept = list(parsed.signatures)
    if path.exists():
        try:
            previous = SignedNote.parse(path.read_bytes())
            if previous.text == parsed.text:
                kept += [s for s in previous.signatures if s not in kept]
        except CheckpointError:
            pass
    new = answer.signature
    kept = [s for s in kept if (s.name, s.key_hash) != (new.name, new.key_hash)] + [new]
    write_durably(path, SignedNote(parsed.text, tuple(kept)).encode())


def with_cosignatures(audit_dir: Path, note: bytes, targets: Sequence[WitnessTarget] = ()) -> bytes:
    """`note` with every cosignature kept for it in `cosigned` (asking `targets` first, if any, when it has none)."""
    text = SignedNote.parse(note).text
    path = audit_dir / COSIGNED
    if targets and not (path.exists() and SignedNote.parse(path.read_bytes()).text == text):
        states = read_witness_state(audit_dir)
        proofs = log_proofs(read_lines(audit_dir))
        for target in targets:
            answer = submit(target, note, proofs, states.get(target.url, WitnessStatus()).size)
            if answer.signature is not None:
                keep_cosignature(audit_dir, note, answer)
    if path.exists():
        kept = SignedNote.parse(path.read_bytes())
        if kept.text == text:
            return kept.encode()
    return note


# -- the component --------------------------------------------------------------------------------------------------


class AuditAnchor:
    """Start-up rollback check (fail closed), then: publish each new checkpoint (retained) and have the witnesses
    cosign it, retrying a witness that did not with backoff.

    `publish(note)` queues the retained message (the outbox); `read_published()` reads the retained checkpoint back
    (None: none there); `citations()` lists what the store cites. `publish` and `read_published` are None together,
    when there is no broker.
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
        require_witness: bool = False,
        every_s: float = 5.0,
        retry_initial_s: float = RETRY_INITIAL_S,
        retry_max_s: float = RETRY_MAX_S,
    ) -> None:
        self._audit = audit
        self._dir = audit.directory
        self._publish = publish
        self._read_published = read_published
        self._citations = citations
        self._witnesses = list(witnesses)
        self._require_witness = require_witness
        self._every_s = every_s
        self._retry = (retry_initial_s, retry_max_s)
        self.findings: list[Finding] = []  # each one stops signing
        self.warnings: list[Finding] = []  # foreign retained checkpoints: said, not stopping anything
        self._released = False
        self._first_pass_done = False
        self._said_waiting: str | None = None
        # The retained checkpoint: None without a broker; else whether it was read, why not, when to try again.
        self._retained_read: bool | None = None if read_published is None else False
        self._retained_error = "not read yet"
        self._retained_failures = 0
        self._retained_next = 0.0
        states = read_witness_state(self._dir)
        self._states = {t.url: states.get(t.url, WitnessStatus()) for t in self._witnesses}
        self._answered: set[str] = set()  # witnesses that answered in this process (the start check asks each anew)
        for target in self._witnesses:
            self._show(target)
        self._wake = threading.Event()
        audit.hold("start-up rollback check pending")
        SIGNING_HELD.set(1)
        audit.add_listener(lambda _note: self._wake.set())

    @property
    def released(self) -> bool:
        """The start-up check passed: the log may be signed."""
        return self._released

    # -- what /readyz shows ------------------------------------------------------------------------------------------

    @property
    def not_ready_reason(self) -> str | None:
        if self.findings:
            return reason_of(self.findings)
        if not self._released:
            return self._waiting_reason()
        problems = []
        if self._retained_read is False:
            problems.append(
                f"the retained checkpoint is not read yet ({self._retained_error}): no checkpoint is published"
                " until it is"
            )
        problems += [f"{s.detail} ({s.failures} tries)" for s in self._states.values() if s.failing]
        return "; ".join(problems) or None

    def _waiting_reason(self) -> str:
        witnesses = "; ".join(
            self._states[t.url].detail if t.url in self._answered or self._states[t.url].failing
            else f"witness {t.label}: not asked yet"
            for t in self._witnesses
        )  # fmt: skip
        if self._require_witness:
            return f"signing waits for a witness to answer (audit.require_witness): {witnesses}"
        waits = []
        if self._retained_read is False:
            waits.append(f"the retained checkpoint on the broker ({self._retained_error})")
        if self._witnesses:
            waits.append(f"a witness's answer ({witnesses})")
        return "signing waits for " + " or ".join(waits)

    # -- running ---------------------------------------------------------------------------------------------------

    async def run(self, ready: asyncio.Event) -> None:
        if not self._first_pass_done:
            await self._check_outside()  # bounded: the broker's connect timeout, each witness's request timeout
            self._first_pass_done = True
        ready.set()  # up: while signing waits, `not_ready_reason` says for what
        while True:
            if not self.findings:
                if not self._released:
                    await self._check_outside()
                else:
                    if self._retained_read is False and self._due(self._retained_next):
                        await self._read_retained()
                    await asyncio.to_thread(self.anchor_latest)
            await asyncio.to_thread(self._wake.wait, self._next_wait())
            self._wake.clear()

    def _due(self, at: float) -> bool:
        return time.monotonic() >= at

    def _next_wait(self) -> float:
        pending = [s.next_try for s in self._states.values() if s.failing]
        if self._retained_read is False:
            pending.append(self._retained_next)
        soonest = min(pending, default=time.monotonic() + self._every_s) - time.monotonic()
        return max(0.01, min(self._every_s, soonest))

    def _backoff(self, failures: int) -> float:
        return time.monotonic() + backoff_delay(failures - 1, *self._retry)

    async def _check_outside(self) -> None:
        """One pass of the start-up check: the marker and store (first pass), the retained checkpoint, each witness
        not answered yet. Fails on a finding no signed `audit.recovered` entry names; releases signing once enough
        answered."""
        lines = await asyncio.to_thread(read_lines, self._dir)
        found: list[Finding] = []
        if not self._first_pass_done:
            found += read_marker(self._dir) or []
            found += check_citations(lines, await asyncio.to_thread(self._citations))
            if (self._dir / LEGACY_ACCEPTED).exists():
                log.warning(
                    "audit_accepted_file_ignored",
                    path=str(self._dir / LEGACY_ACCEPTED),
                    reason="findings are accepted only by signed audit.recovered entries in the log",
                )
        if self._retained_read is False and self._due(self._retained_next):
            found += await self._read_retained(lines, fail=False)
        note_path = self._dir / LATEST_CHECKPOINT
        if note_path.exists():
            note = note_path.read_bytes()
            proofs = log_proofs(lines)
            for target in self._witnesses:
                state = self._states[target.url]
                if target.url not in self._answered and self._due(state.next_try):
                    answer = await asyncio.to_thread(submit, target, note, proofs, state.size)
                    found += self._record(target, note, answer)
        found = self._unaccepted(found, lines)
        if found:
            await asyncio.to_thread(self._fail, found)
            return
        witness_answered = bool(self._answered)
        nothing_outside = self._retained_read is None and not self._witnesses
        enough = witness_answered or (not self._require_witness and (self._retained_read is True or nothing_outside))
        if enough:
            self._audit.release()
            self._released = True
            SIGNING_HELD.set(0)
            log.info("audit_signing_released", retained_read=self._retained_read, witness_answered=witness_answered)
        elif (reason := self._waiting_reason()) != self._said_waiting:  # once per change, not every pass
            self._said_waiting = reason
            log.warning("audit_signing_waits", reason=reason)

    async def _read_retained(self, lines: Sequence[bytes] | None = None, *, fail: bool = True) -> list[Finding]:
        """Read and judge the retained checkpoint; a broker that does not answer is tried again after a backoff.
        Returns the finding (or fails on it at once, after start)."""
        assert self._read_published is not None
        try:
            published = await self._read_published()
        except Exception as exc:  # whatever the broker or the network did: not read, said, tried again
            self._retained_failures += 1
            self._retained_next = self._backoff(self._retained_failures)
            self._retained_error = f"broker: {exc!r}"
            log.warning("audit_retained_checkpoint_unread", error=repr(exc), failures=self._retained_failures)
            return []
        self._retained_read = True
        if not published:
            return []
        if lines is None:
            lines = await asyncio.to_thread(read_lines, self._dir)
        where = "published checkpoint"
        verdict = judge_checkpoint(lines, published, self._audit.origin, read_verifiers(self._dir), where)
        if verdict.kind == "foreign":
            assert verdict.finding is not None
            await asyncio.to_thread(self._warn, verdict.finding)
            return []
        found = [verdict.finding] if verdict.finding else []
        if fail and (found := self._unaccepted(found, lines)):
            await asyncio.to_thread(self._fail, found)
        return found

    def _unaccepted(self, found: list[Finding], lines: Sequence[bytes]) -> list[Finding]:
        if not found:
            return []
        last = self._audit.last_checkpoint
        signed = last.size if last is not None and self._audit.blocked is None else 0
        accepted = recovered_keys(lines, signed)
        for f in found:
            if f.key in accepted:
                log.warning("audit_finding_recovered", key=f.key, finding=f.message)
        return [f for f in found if f.key not in accepted]

    def _record(self, target: WitnessTarget, note: bytes, answer: WitnessAnswer) -> list[Finding]:
        """Keep a witness's answer (state file, metrics, cosignature); the finding it makes, if any."""
        state = self._states[target.url]
        state.state, state.detail, state.at = answer.kind, answer.detail, datetime.now(UTC).isoformat()
        if answer.size is not None:
            state.size = answer.size
        if answer.answered:
            self._answered.add(target.url)
        if answer.signature is not None:
            keep_cosignature(self._dir, note, answer)
            state.failures = 0
            log.info("audit_witness_cosigned", witness=target.label, size=answer.size)
        else:
            state.failures += 1
            state.next_try = self._backoff(state.failures)
            WITNESS_FAILURES.labels(target.label, answer.kind).inc()
            log.warning("audit_witness_failed", witness=target.label, kind=answer.kind, detail=answer.detail)
        write_witness_state(self._dir, self._states)
        self._show(target)
        if answer.kind in ("rollback", "fork"):
            return [Finding(f"witness:{target.url}:{answer.kind}:{answer.size}", answer.detail)]
        return []

    def _show(self, target: WitnessTarget) -> None:
        state = self._states[target.url]
        WITNESS_OK.labels(target.label).set(0.0 if state.failing else 1.0)
        WITNESS_SIZE.labels(target.label).set(state.size)

    def _warn(self, finding: Finding) -> None:
        """A retained checkpoint this log did not sign: on the record, counted, and replaced by the next publish."""
        self.warnings.append(finding)
        RETAINED_FOREIGN.inc()
        log.warning("audit_retained_checkpoint_foreign", key=finding.key, finding=finding.message)
        self._audit.append("error", "audit", {"kind": "retained_checkpoint_foreign", "key": finding.key,
                                              "finding": finding.message})  # fmt: skip

    def _fail(self, findings: list[Finding]) -> None:
        self.findings = findings
        reason = reason_of(findings)
        self._audit.block(reason)
        first_time = not (self._dir / MARKER).exists()
        write_marker(self._dir, findings)
        for f in findings:
            log.error("audit_rollback_detected", finding=f.message, key=f.key)
        if first_time:
            payload: dict[str, Any] = {"kind": "rollback_detected", "findings": [f.message for f in findings]}
            self._audit.append("error", "audit", payload)

    def anchor_latest(self) -> None:
        """Publish the newest checkpoint (once the retained one was read) and have each witness that has not cosigned
        it do so (one that failed, once its backoff is over)."""
        if self._audit.blocked is not None or not self._released:
            return
        path = self._dir / LATEST_CHECKPOINT
        if not path.exists():
            return
        note = path.read_bytes()
        size = Checkpoint.parse_body(SignedNote.parse(note).text).size
        digest = hashlib.sha256(note).hexdigest()
        state_path = self._dir / PUBLISHED
        published: dict[str, Any] = json.loads(state_path.read_text()) if state_path.exists() else {}
        if self._publish is not None and self._retained_read and published.get("sha256") != digest:
            self._publish(note)
            write_durably(state_path, json.dumps({"size": size, "sha256": digest}).encode() + b"\n")
            log.info("audit_checkpoint_published", size=size)
        due = [
            t
            for t in self._witnesses
            if not (self._states[t.url].state == "cosigned" and self._states[t.url].size == size)
            and self._due(self._states[t.url].next_try)
        ]
        if not due:
            return
        lines = read_lines(self._dir)
        proofs = log_proofs(lines[:size])
        found: list[Finding] = []
        for target in due:
            found += self._record(target, note, submit(target, note, proofs, self._states[target.url].size))
        if found := self._unaccepted(found, lines):
            self._fail(found)

    def finish(self) -> None:
        """At stop: sign what is unsigned, then publish and cosign it (the outbox sends it on the next start)."""
        if self._audit.blocked is not None or not self._released:
            return
        try:
            self._audit.checkpoint()
            self.anchor_latest()
        except (CheckpointError, OSError, ValueError) as exc:
            log.error("audit_anchor_at_stop_failed", error=str(exc))
