"""Approvals in a bundle, re-checked offline: every `report.signed_off` / `report.rejected` entry's signed statement
(edge_agent.signing.verify_recorded_approval), and whether the plant accepted unsigned sign-offs at the time.

Rules, for the verified entry lines of a bundle:

* a decision entry whose `approval` is an object must verify: its signature holds, its statement is for the entry's
  report, body, decision, actor and comment, and its key is one the auditor trusts (`trusted`, from
  `verify-bundle --approver-key NAME=KEY`) or, without `trusted`, one the log held for the signer at the time: the
  approver keys of the newest `config.loaded` entry before the decision (its `identities`, each `{"name",
  "broker_user", "approver_keys": [key text, ...]}`, and the older `approver_keys`, each `{"name", "key"}`), which
  is the bundle's carried `config_in_force.json` when the window starts after it. Never
  the key the entry itself records: whoever can append to the log could record a stranger's. No key for the signer
  there fails as `unknown_key`, as does anything else wrong, naming the entry and the code (`bad_signature`,
  `mismatch`, `unknown_key`, `malformed`);
* a decision entry whose `approval` is null was accepted unsigned (`reports.allow_unsigned_signoff`, or an agent
  older than signed sign-off): listed as a note, never a failure;
* `config.security` entries say whether `reports.allow_unsigned_signoff` was on (their warnings include
  `reports_unsigned_signoff`). The exporter states it for the whole window in the signed manifest
  (`unsigned_signoff`: "on", "off" or "unknown"), reading the config.security entry in force at the window's first
  entry too, which the bundle may not hold; the verifier fails a manifest that says less than the bundle's own
  entries show;
* a decision entry whose approval is a passkey's (`"format": "webauthn"`, edge_agent/signing/passkey.py) must
  verify against a passkey the log registered for the signer before it: the `console.enrolled` entries' credential
  id and COSE public key (the console writes one when a person registers a passkey with an enrolment link), which
  the bundle carries in `enrolments_in_force.json` when they precede the window.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal

from edge_agent.signing import ApprovalError, ApproverKey, PasskeyKey, parse_public_key, verify_recorded_approval
from edge_agent.signing.passkey import from_b64url

DECISION_EVENTS = ("report.signed_off", "report.rejected")
ENROLLED_EVENT = "console.enrolled"
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
        if self.event not in DECISION_EVENTS:
            return f"{self.event}: {self.code}: {self.message}"
        return f"{self.event} of report {self.report_id}: approval {self.code}: {self.message}"


@dataclass(frozen=True)
class LoggedKeys:
    """The approver keys the newest config.loaded entry recorded (`seq` None: no config.loaded entry yet)."""

    seq: int | None = None
    keys: tuple[ApproverKey, ...] = ()

    def of(self, name: str) -> list[ApproverKey]:
        return [k for k in self.keys if k.name == name]


def config_keys(payload: Mapping[str, Any]) -> tuple[ApproverKey, ...]:
    """The approver keys a config.loaded payload records: `identities[].approver_keys` under the identity's name,
    and the older `approver_keys[]` of name and key. A member of another shape, or a key that does not parse, is
    ValueError naming it."""
    keys: list[ApproverKey] = []
    pairs = [(i.get("name"), text) for i in _objects(payload, "identities") for text in _list(i, "approver_keys")]
    pairs += [(item.get("name"), item.get("key")) for item in _objects(payload, "approver_keys")]
    for name, text in pairs:
        if not isinstance(name, str) or not isinstance(text, str):
            raise ValueError(f"an approver key's name and key must be strings, got {name!r}: {text!r}")
        try:
            keys.append(ApproverKey(name, parse_public_key(text)))
        except ValueError as exc:
            raise ValueError(f"approver key of {name!r}: {exc}") from exc
    return tuple(keys)


def _list(data: Mapping[str, Any], member: str) -> list[Any]:
    value = data.get(member)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{member}: expected a list, got {type(value).__name__}")
    return value


def _objects(data: Mapping[str, Any], member: str) -> list[Mapping[str, Any]]:
    items = _list(data, member)
    if not all(isinstance(item, Mapping) for item in items):
        raise ValueError(f"{member}: expected a list of objects")
    return items


@dataclass
class ApprovalCheck:
    """What the approvals of a bundle's entries came to."""

    signed: int = 0
    unsigned: list[tuple[int, str, str]] = field(default_factory=list)  # (seq, report_id, actor)
    problem: ApprovalProblem | None = None


def check_approvals(
    lines: Iterable[bytes], trusted: Sequence[ApproverKey] | None = None, *, before: Sequence[bytes] = ()
) -> ApprovalCheck:
    """Re-check every decision entry's approval in verified entry lines against `trusted`, or (None) against the
    keys the log held at the time; stops at the first that does not hold. `before`: verified entry lines that
    precede the first of `lines`, oldest first (a bundle's carried config.loaded and console.enrolled entries)."""
    result = ApprovalCheck()
    logged = LoggedKeys()
    passkeys: list[PasskeyKey] = []
    # Every line is parsed: a byte marker would miss an entry written with spaces or \u escapes, which the chain
    # check (not strict) lets through from someone holding the audit key.
    for line in chain(before, lines):
        entry = json.loads(line)
        event, payload = entry["event"], entry["payload"]
        if event == "config.loaded" and isinstance(payload, dict):
            try:
                logged = LoggedKeys(entry["seq"], config_keys(payload))
            except ValueError as exc:
                result.problem = ApprovalProblem(entry["seq"], event, "", "malformed", str(exc))
                return result
            continue
        if event == ENROLLED_EVENT and isinstance(payload, dict):
            try:
                passkeys.append(enrolled_passkey(payload))
            except (ValueError, TypeError) as exc:
                result.problem = ApprovalProblem(entry["seq"], event, "", "malformed", str(exc))
                return result
            continue
        if event not in DECISION_EVENTS or not isinstance(payload, dict):
            continue
        report_id = str(payload.get("report_id"))
        try:
            keys: Sequence[ApproverKey | PasskeyKey]
            if _is_passkey(payload):
                keys = passkeys
            else:
                keys = trusted if trusted is not None else _keys_in_log(entry["seq"], payload, logged)
            verified = verify_recorded_approval(event, entry["actor"], payload, keys)
        except ApprovalError as exc:
            result.problem = ApprovalProblem(entry["seq"], event, report_id, exc.code, str(exc))
            return result
        if verified is None:
            result.unsigned.append((entry["seq"], report_id, entry["actor"]))
        else:
            result.signed += 1
    return result


def enrolled_passkey(payload: Mapping[str, Any]) -> PasskeyKey:
    """The passkey a `console.enrolled` entry registered; ValueError when a member is missing or not base64url."""
    name, credential_id, public_key = payload.get("name"), payload.get("credential_id"), payload.get("public_key")
    if not isinstance(name, str) or not isinstance(credential_id, str) or not isinstance(public_key, str):
        raise ValueError("console.enrolled: name, credential_id and public_key must be strings")
    return PasskeyKey(name, from_b64url(credential_id), from_b64url(public_key))


def _is_passkey(payload: Mapping[str, Any]) -> bool:
    approval = payload.get("approval")
    return isinstance(approval, Mapping) and approval.get("format") == "webauthn"


def _keys_in_log(seq: int, payload: Mapping[str, Any], logged: LoggedKeys) -> list[ApproverKey]:
    """The keys the log held for the approval's signer at entry `seq`; ApprovalError("unknown_key") when none."""
    approval = payload.get("approval")
    statement = approval.get("statement") if isinstance(approval, Mapping) else None
    by = statement.get("by") if isinstance(statement, Mapping) else None
    if approval is None or not isinstance(by, str):
        return list(logged.keys)  # unsigned, or malformed: verify_recorded_approval says which
    keys = logged.of(by)
    if not keys:
        where = (
            f"the config.loaded entry in force is entry {logged.seq}"
            if logged.seq is not None
            else "no config.loaded entry precedes it in these entries"
        )
        raise ApprovalError("unknown_key", f"no key for {by} in the log at seq {seq} ({where})")
    return keys


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
    "ENROLLED_EVENT",
    "ApprovalCheck",
    "ApprovalProblem",
    "LoggedKeys",
    "UnsignedState",
    "check_approvals",
    "config_keys",
    "describe_state",
    "enrolled_passkey",
    "security_states",
    "unsigned_signoff_state",
]
