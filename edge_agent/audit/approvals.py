"""Approvals in a bundle, re-checked offline: every `report.signed_off` / `report.rejected` entry's signed statement
(edge_agent.approval.verify_recorded_approval), and whether the plant accepted unsigned sign-offs at the time.

Rules, for the verified entry lines of a bundle:

* a decision entry whose `approval` is an object must verify: its signature holds, its statement is for the entry's
  report, body, decision, actor and comment, and its key is one the auditor trusts (`trusted`, from
  `verify-bundle --approver-key NAME=KEY`) or, without `trusted`, the key the entry records, checked against the
  entry's `key_fingerprint`. Anything else fails the bundle naming the entry and the code (`bad_signature`,
  `mismatch`, `unknown_key`, `malformed`);
* a decision entry whose `approval` is null was accepted unsigned (`reports.allow_unsigned_signoff`, or an agent
  older than signed sign-off): listed as a note, never a failure;
* `config.security` entries say whether `reports.allow_unsigned_signoff` was on (their warnings include
  `reports_unsigned_signoff`). The exporter states it for the whole window in the signed manifest
  (`unsigned_signoff`: "on", "off" or "unknown"), reading the config.security entry in force at the window's first
  entry too, which the bundle may not hold; the verifier fails a manifest that says less than the bundle's own
  entries show.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from edge_agent.approval import ApprovalError, ApproverKey, verify_recorded_approval

DECISION_EVENTS = ("report.signed_off", "report.rejected")
UNSIGNED_WARNING = "reports_unsigned_signoff"

UnsignedState = Literal["on", "off", "unknown"]


@dataclass(frozen=True)
class ApprovalProblem:
    """A decision entry whose approval does not hold: the entry's seq, the code and the verifier's message."""

    seq: int
    event: str
    report_id: str
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.event} of report {self.report_id}: approval {self.code}: {self.message}"


@dataclass
class ApprovalCheck:
    """What the approvals of a bundle's entries came to."""

    signed: int = 0
    unsigned: list[tuple[int, str, str]] = field(default_factory=list)  # (seq, report_id, actor)
    problem: ApprovalProblem | None = None


def check_approvals(lines: Iterable[bytes], trusted: Sequence[ApproverKey] | None = None) -> ApprovalCheck:
    """Re-check every decision entry's approval in verified entry lines; stops at the first that does not hold."""
    result = ApprovalCheck()
    # Every line is parsed: a byte marker would miss an entry written with spaces or \u escapes, which the chain
    # check (not strict) lets through from someone holding the audit key.
    for line in lines:
        entry = json.loads(line)
        event, payload = entry["event"], entry["payload"]
        if event not in DECISION_EVENTS or not isinstance(payload, dict):
            continue
        report_id = str(payload.get("report_id"))
        try:
            verified = verify_recorded_approval(event, entry["actor"], payload, trusted)
        except ApprovalError as exc:
            result.problem = ApprovalProblem(entry["seq"], event, report_id, exc.code, str(exc))
            return result
        if verified is None:
            result.unsigned.append((entry["seq"], report_id, entry["actor"]))
        else:
            result.signed += 1
    return result


def security_states(lines: Iterable[bytes]) -> list[tuple[int, bool]]:
    """(seq, whether its warnings include reports_unsigned_signoff) for each config.security entry, in order."""
    states: list[tuple[int, bool]] = []
    for line in lines:
        entry = json.loads(line)
        if entry["event"] != "config.security":
            continue
        warnings = entry["payload"].get("warnings") if isinstance(entry["payload"], dict) else None
        codes = {w.get("code") for w in warnings if isinstance(w, dict)} if isinstance(warnings, list) else set()
        states.append((entry["seq"], UNSIGNED_WARNING in codes))
    return states


def unsigned_signoff_state(states: Sequence[tuple[int, bool]], first_seq: int, last_seq: int) -> UnsignedState:
    """Whether unsigned sign-off was allowed at any time between entries first_seq and last_seq: "on" if a
    config.security entry in force then (the last one at or before first_seq, and every one up to last_seq) records
    the warning, "off" if one is in force and none does, "unknown" if none is (a log that predates the entry)."""
    in_force = [on for seq, on in states if first_seq <= seq <= last_seq]
    before = [on for seq, on in states if seq < first_seq]
    if before:
        in_force.append(before[-1])
    if not in_force:
        return "unknown"
    return "on" if any(in_force) else "off"


def describe_state(state: UnsignedState) -> str:
    return {
        "on": "reports.allow_unsigned_signoff was ON during this export's window (security warning"
        " reports_unsigned_signoff): a sign-off could be accepted without the approver's signature",
        "off": "reports.allow_unsigned_signoff was off during this export's window: every sign-off needed the"
        " approver's signature",
        "unknown": "no config.security entry is in force for this export's window: whether unsigned sign-off was"
        " allowed is not recorded",
    }[state]


__all__ = [
    "DECISION_EVENTS",
    "ApprovalCheck",
    "ApprovalProblem",
    "UnsignedState",
    "check_approvals",
    "describe_state",
    "security_states",
    "unsigned_signoff_state",
]
