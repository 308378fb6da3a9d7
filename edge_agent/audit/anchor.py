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
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog
from prometheus_client import Counter, Gauge

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.log import LATEST_CHECKPOINT, AuditLog, read_verifiers
from edge_agent.audit.rollback import (
    LEGACY_ACCEPTED,
    MARKER,
    Citation,
    Finding,
    check_citations,
    judge_checkpoint,
    read_lines,
    read_marker,
    reason_of,
    recovered_keys,
    write_marker,
)
from edge_agent.audit.witness_client import WitnessAnswer, WitnessTarget, submit
from edge_agent.audit.witness_state import (
    WitnessStatus,
    keep_cosignature,
    log_proofs,
    read_witness_state,
    write_witness_state,
)
from edge_agent.base.backoff import backoff_delay
from edge_agent.signing.keys import write_durably

log = structlog.get_logger(component="audit")

PUBLISHED = "published.json"
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


def checkpoint_topic(site_id: str) -> str:
    return f"edge/{site_id}/audit/checkpoint"


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
