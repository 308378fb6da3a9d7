"""Human sign-off: a report stays `draft` until a named approver approves or rejects it.

A sign-off counts when the approver signed it (edge_agent/signing/approval.py): a statement of report id, the report
body's SHA-256, decision, time, nonce and comment, signed with a key of that approver's identity (`[[identities]]`
approver_keys, edge_agent/config/identities.py). The agent refuses a signature by any other key, one for another
report or body, one older than `reports.signoff_max_age_s` (or further ahead than `signoff_max_skew_s`), and any
nonce it has seen before (the store's `signoff_nonces`, durable). The statement, signature and key go into the
`report.signed_off` / `report.rejected` entry, so an auditor re-checks each approval offline
(`approval.verify_recorded_approval`). Every refused attempt is a `report.signoff_refused` entry naming the reason.

Four-eyes (`reports.four_eyes`) compares identities: the identity behind the request's broker user may not approve.
A report requested by no identity (anonymous, or with the agent's own broker user) cannot be approved under it —
anyone may be behind such a request, so no approver is a second pair of eyes; it can still be rejected.

Unsigned sign-off (`reports.allow_unsigned_signoff = true`, a security warning): over MQTT the approver is then the
identity of the AUTHENTICATED broker user, never a name in the payload. MQTT does not tell a subscriber who published
a message, so the broker enforces it: with the ACL line `pattern write edge/+/reports/signoff/%u`, a client can
publish only to the sign-off topic ending in its own user name, so the last topic level IS the authenticated user. A
payload `by` that disagrees with it is refused. Anyone holding the agent's own broker credentials can still approve
as anyone: that is why signatures are the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge_agent.base.canonical import CanonicalJsonError, canonical_json, sha256_hex
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.config.identities import NO_IDENTITIES, IdentityTable, identity_table
from edge_agent.config.mqtt import MqttConfig
from edge_agent.reports.document.report import with_signoff
from edge_agent.reports.document.repository import ReportRepository
from edge_agent.reports.errors import ReportNotFound, RequestError, SignoffError
from edge_agent.reports.narrative import held_ranges
from edge_agent.reports.request import (
    MAX_REQUEST_BYTES,
    MAX_TOPIC_BYTES,
    ResolvedWindow,
    field_name,
    iso,
    json_object,
)
from edge_agent.signing.approval import VerifiedApproval, verify_approval
from edge_agent.signing.approver_key import ApproverKey
from edge_agent.signing.errors import ApprovalError
from edge_agent.signing.passkey import PasskeyKey
from edge_agent.store import to_us

Decision = Literal["approve", "reject"]


class SignoffRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    report_id: str = Field(min_length=1, max_length=128)
    decision: Decision
    comment: str = Field("", max_length=2000)
    by: str | None = Field(None, max_length=256, description="optional; must equal the authenticated user when given")
    reply_to: str | None = Field(None, max_length=MAX_TOPIC_BYTES)
    correlation_id: str | None = Field(None, max_length=MAX_TOPIC_BYTES)
    # The signed approval ({"statement", "format", "signature"}: edge_agent/signing/approval.py), checked by
    # `check_signed`.
    approval: dict[str, Any] | None = None


def parse_signoff(payload: bytes) -> SignoffRequest:
    """Bytes → a validated sign-off, or `RequestError` naming the first bad field (same JSON rules as requests)."""
    if len(payload) > MAX_REQUEST_BYTES:
        raise RequestError("<payload>", f"{len(payload)} bytes, more than {MAX_REQUEST_BYTES}")
    data = json_object(payload)
    try:
        return SignoffRequest.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise RequestError(field_name(err["loc"]), err["msg"]) from exc


def mqtt_signoff_refusal(mqtt: MqttConfig) -> str | None:
    """Why MQTT sign-off cannot be trusted with this broker connection, or None. An agent that connects anonymously
    is on a broker that admits anonymous clients, which can publish on any `<signoff topic>/<user>`: the topic level
    then proves nothing."""
    if mqtt.username is not None or (mqtt.tls is not None and mqtt.tls.cert_file is not None):
        return None
    return (
        "MQTT sign-off is disabled: the agent's broker connection is anonymous (no mqtt.username, no TLS client"
        " certificate), so the broker cannot vouch for the user in a sign-off topic; sign off on the agent's host"
        " with `edge-agent report approve|reject`, or give the agent broker credentials (docs/reports.md)"
    )


def authorise(user: str | None, claimed: str | None, approvers: Sequence[str], identities: IdentityTable) -> str:
    """The approver's identity for an UNSIGNED sign-off, or SignoffError. `user` is the authenticated broker user
    (topic level set by the ACL)."""
    if not user:
        raise SignoffError(
            "sign-off needs an authenticated user: publish to <signoff topic>/<your user name>", "no_user"
        )
    name = identities.of_broker_user(user)
    if name is None:
        raise SignoffError(f"broker user {user!r} is the agent's own, which is no one's identity", "no_user")
    if claimed is not None and claimed != name:
        raise SignoffError(f"payload names {claimed!r} but the authenticated user is {name!r}", "impostor")
    if name not in approvers:
        raise SignoffError(f"user {name!r} is not an approver", "not_approver")
    return name


UNSIGNED_REFUSAL = (
    "unsigned sign-off refused: sign it with `edge-agent report approve|reject --key FILE`"
    " (reports.allow_unsigned_signoff is false)"
)


@dataclass(frozen=True)
class SignoffPolicy:
    """What a sign-off must satisfy, from `[reports]` and `[[identities]]`."""

    keys: tuple[ApproverKey | PasskeyKey, ...]
    approvers: tuple[str, ...]
    max_age: timedelta
    max_skew: timedelta
    identities: IdentityTable = NO_IDENTITIES

    @classmethod
    def from_config(cls, config: AgentConfig) -> SignoffPolicy:
        reports, table = config.reports, identity_table(config)
        return cls(
            tuple(table.keys()),
            tuple(reports.approvers),
            timedelta(seconds=reports.signoff_max_age_s),
            timedelta(seconds=reports.signoff_max_skew_s),
            table,
        )


def check_signed(
    approval: Any,
    policy: SignoffPolicy,
    *,
    now: datetime,
    report_id: str | None = None,
    decision: str | None = None,
    comment: str | None = None,
    claimed: str | None = None,
) -> VerifiedApproval:
    """The verified approval, or SignoffError naming why not: a signature no registered key of its approver made
    (`unknown_key`, `bad_signature`), a malformed one, a statement that disagrees with the message carrying it
    (`mismatch`: another report, decision, comment or name), an approver no longer listed, or a time outside the
    window (`stale`). Replays and the body are checked by `decide`, against the store."""
    try:
        verified = verify_approval(approval, policy.keys)
    except ApprovalError as exc:
        raise SignoffError(f"signature refused: {exc}", exc.code) from exc
    statement = verified.statement
    if statement.by not in policy.approvers:
        raise SignoffError(f"{statement.by!r} is not in reports.approvers", "not_approver")
    for name, given, signed in (
        ("report_id", report_id, statement.report_id),
        ("decision", decision, statement.decision),
        ("comment", comment, statement.comment),
        ("by", claimed, statement.by),
    ):
        if given is not None and given != signed:
            raise SignoffError(f"the message's {name} {given!r} is not the signed {signed!r}", "mismatch")
    age = now - statement.at
    if age > policy.max_age:
        raise SignoffError(
            f"stale sign-off: signed at {iso(statement.at)}, {age.total_seconds():.0f} s ago"
            f" (reports.signoff_max_age_s = {policy.max_age.total_seconds():.0f})",
            "stale",
        )
    if -age > policy.max_skew:
        raise SignoffError(
            f"sign-off from the future: signed at {iso(statement.at)}, {-age.total_seconds():.0f} s ahead of the"
            f" agent's clock (reports.signoff_max_skew_s = {policy.max_skew.total_seconds():.0f})",
            "stale",
        )
    return verified


def approval_record(verified: VerifiedApproval, approval: dict[str, Any]) -> dict[str, Any]:
    """What the audit entry keeps of a signed approval: enough to re-check it offline."""
    if verified.format == "webauthn":  # authenticatorData, clientDataJSON, signature and the COSE key: all of it
        return dict(approval)
    assert isinstance(verified.key, ApproverKey)  # ed25519 and sshsig approvals are made by approver keys
    return {
        "statement": approval["statement"],
        "format": verified.format,
        "signature": approval["signature"],
        "public_key": verified.key.openssh,
    }


def record_refusal(
    audit: Any,
    error: SignoffError,
    *,
    via: str,
    user: str | None,
    report_id: str | None,
    by: str | None,
    payload_sha256: str | None = None,
) -> int | None:
    """Append `report.signoff_refused` (the attempted report under `attempted_report_id`, so a bundle's report
    binding does not count it as the report's trail); its seq, or None without an audit log."""
    if audit is None:
        return None
    entry = audit.append(
        "report.signoff_refused",
        "reports",
        {
            "code": error.code,
            "reason": str(error)[:500],
            "via": via,
            "broker_user": user,
            "claimed_by": by,
            "attempted_report_id": report_id,
            "payload_sha256": payload_sha256,
        },
    )
    return int(entry.seq)


def hold_cited(repo: ReportRepository, report_id: str, document: dict[str, Any]) -> None:
    """Hold every record the report read (generate.held_ranges of its window) against retention and the caps."""
    try:
        window = ResolvedWindow.model_validate(document["body"]["request"]["window"])
    except (KeyError, TypeError, ValidationError):
        return  # no window: a report of facts alone, which read no records
    repo.hold(report_id, held_ranges(window))


def hold_approved(repo: ReportRepository) -> int:
    """Hold the records of reports approved before holds existed; how many reports."""
    pending = repo.approved_without_hold()
    for report_id, document in pending:
        hold_cited(repo, report_id, document)
    return len(pending)


def body_sha256(body: Any) -> str:
    """The SHA-256 of a report body's canonical JSON (what `body_sha256` records); "" for a body with none."""
    try:
        return sha256_hex(canonical_json(body))
    except CanonicalJsonError:
        return ""


def check_body(document: dict[str, Any]) -> str:
    """The body hash of `document`, computed from the body it holds; SignoffError (`body_changed`) when that is not
    the `body_sha256` it records: the body changed after the report was generated, and nobody reviewed it."""
    computed, recorded = body_sha256(document.get("body")), document.get("body_sha256")
    if computed != recorded:
        raise SignoffError(
            f"report {document.get('report_id')}'s body hashes to {computed or 'nothing'}, not its recorded"
            f" body_sha256 {recorded}: it changed after it was generated, so it is not signed off",
            "body_changed",
        )
    return computed


def check_four_eyes(identities: IdentityTable, requested_by: str | None, approver: str, report_id: str) -> None:
    """SignoffError (`four_eyes`) when `approver` (an identity) may not approve a report requested by the broker user
    `requested_by`: it is the same identity, or the request came from no identity."""
    requester = identities.of_broker_user(requested_by)
    if requester is None:
        who = f"the agent's own broker user {requested_by!r}" if requested_by else "an anonymous client"
        raise SignoffError(
            f"four-eyes rule (reports.four_eyes): report {report_id} was requested by {who}, which is no identity,"
            " so no approver can be the second pair of eyes; it can only be rejected (request it again as yourself)",
            "four_eyes",
        )
    if requester == approver:
        via = f" (as broker user {requested_by!r})" if requested_by != requester else ""
        raise SignoffError(
            f"four-eyes rule (reports.four_eyes): {approver!r}{via} requested report {report_id} and may not"
            " approve it; another approver must",
            "four_eyes",
        )


def decide(
    repo: ReportRepository,
    audit: Any,
    *,
    report_id: str,
    decision: Decision,
    by: str,
    via: str,
    comment: str = "",
    four_eyes: bool = True,
    approval: VerifiedApproval | None = None,
    approval_json: dict[str, Any] | None = None,
    identities: IdentityTable = NO_IDENTITIES,
) -> dict[str, Any]:
    """Record the decision on a draft: audit entry first (report.signed_off / report.rejected), then the document.
    `by` is the approver's identity. With `four_eyes` (reports.four_eyes), the identity behind the request (by
    `identities`) may not approve it, and a report requested by no identity may not be approved at all (rejecting
    stays allowed: it withdraws the draft and approves nothing). With `approval` (a verified signed statement,
    `approval_json` the object it came in), its nonce must be new and its body hash the report's."""
    if approval is not None:
        statement = approval.statement
        if not repo.claim_nonce(statement.nonce, statement.by, statement.report_id, to_us(statement.at)):
            raise SignoffError(f"replayed sign-off: nonce {statement.nonce} was already used", "replayed")
    try:
        document = repo.get(report_id)
    except ReportNotFound as exc:
        raise SignoffError(f"no report {report_id!r}", "no_report") from exc
    if document["status"] != "draft":
        raise SignoffError(f"report {report_id} is already {document['status']}", "not_draft")
    check_body(document)
    if approval is not None and approval.statement.body_sha256 != document["body_sha256"]:
        raise SignoffError(
            f"signed for body {approval.statement.body_sha256}, report {report_id}'s body is"
            f" {document['body_sha256']}: review the report again and sign what it says now",
            "other_body",
        )
    if four_eyes and decision == "approve":
        check_four_eyes(identities, document.get("requested_by"), by, report_id)
    if decision == "approve":
        hold_cited(repo, report_id, document)  # before it is approved: an approved report's records are never deleted
    signoff = {"decision": decision, "by": by, "via": via, "at": iso(utcnow()), "comment": comment}
    # Rendered before its entry, so the entry logs the renderings' hashes (audit bundles bind them to the log).
    updated = with_signoff(document, signoff, None)
    if audit is not None:
        event = "report.signed_off" if decision == "approve" else "report.rejected"
        signed = approval_record(approval, approval_json) if approval is not None and approval_json else None
        entry = audit.append(
            event,
            f"operator:{by}",
            {
                "report_id": report_id,
                "body_sha256": document["body_sha256"],
                "via": via,
                "comment": comment,
                "renderings_sha256": updated["renderings_sha256"],
                # null: accepted unsigned (reports.allow_unsigned_signoff); an auditor sees which decisions were.
                "approval": signed,
                "key_fingerprint": approval.key.fingerprint if approval is not None else None,
            },
        )
        updated["audit"]["signoff"] = entry.seq
    repo.update(updated)
    return updated
