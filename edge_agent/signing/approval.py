"""Signed approvals: a sign-off only the approver's key can make, checkable offline from the audit entry alone.

A signed approval is the JSON object `{"statement": {...}, "format": "ed25519"|"sshsig", "signature": "...",
"public_key": "..."}` over a statement (statement.py), `public_key` optional:

* `ed25519`: the base64 of the 64-byte Ed25519 signature of the statement bytes;
* `sshsig`: the armored SSHSIG of the statement bytes (sshsig.py).

Everything here is pure (no clock, no files, no nonce store): the agent adds freshness and replay checks around
`verify_approval`; an auditor's `verify_recorded_approval` re-checks an audit entry's approval with nothing but the
entry and the approver keys the auditor trusts (given, or the ones the log held when the approval was made).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from edge_agent.signing.approver_key import ApproverKey, Format, fingerprint, parse_public_key, public_raw
from edge_agent.signing.errors import ApprovalError
from edge_agent.signing.passkey import PasskeyKey, verify_passkey
from edge_agent.signing.sshsig import sshsig_check, sshsig_sign
from edge_agent.signing.statement import Statement, parse_statement, statement_bytes
from edge_agent.signing.wire import ed25519_valid

# An armored SSHSIG of an ed25519 key is ~300 characters; 4 KiB leaves room and bounds what is parsed.
MAX_SIGNATURE_CHARS = 4096
_APPROVAL_REQUIRED = frozenset({"statement", "format", "signature"})
_APPROVAL_KEYS = _APPROVAL_REQUIRED | {"public_key"}


@dataclass(frozen=True)
class VerifiedApproval:
    """A statement whose signature a registered key made: `key` is that key (a passkey for `webauthn`)."""

    statement: Statement
    key: ApproverKey | PasskeyKey
    format: Format | Literal["webauthn"]


def sign(statement: Statement, key: Ed25519PrivateKey, fmt: Format, hash_algorithm: str = "sha512") -> dict[str, Any]:
    """A signed approval object for `statement`."""
    message = statement.bytes()
    if fmt == "ed25519":
        signature = base64.b64encode(key.sign(message)).decode()
    else:
        signature = sshsig_sign(message, key, hash_algorithm)
    public_key = ApproverKey(statement.by, public_raw(key)).openssh
    return {"statement": statement.as_json(), "format": fmt, "signature": signature, "public_key": public_key}


def verify_approval(approval: Any, keys: Iterable[ApproverKey | PasskeyKey]) -> VerifiedApproval:
    """The statement of a signed approval and the registered key that signed it, or ApprovalError.

    The key must be registered for the statement's `by`: a valid signature by anyone else's key, or by a key not in
    `keys`, is `unknown_key`. No clock and no nonce store: freshness and replays are the caller's."""
    if not isinstance(approval, Mapping):
        raise ApprovalError("malformed", f"approval: expected an object, got {type(approval).__name__}")
    if approval.get("format") == "webauthn":  # a passkey sign-off (passkey.py)
        statement, passkey = verify_passkey(approval, [k for k in keys if isinstance(k, PasskeyKey)])
        return VerifiedApproval(statement, passkey, "webauthn")
    if set(approval) - _APPROVAL_KEYS or not _APPROVAL_REQUIRED <= set(approval):
        raise ApprovalError(
            "malformed", f"approval: members {sorted(map(str, approval))}; want statement, format, signature"
        )
    statement = parse_statement(approval["statement"])
    message = statement_bytes(approval["statement"])
    fmt, signature = approval["format"], approval["signature"]
    if not isinstance(signature, str) or len(signature) > MAX_SIGNATURE_CHARS:
        raise ApprovalError("malformed", f"approval.signature: a string of at most {MAX_SIGNATURE_CHARS} characters")
    candidates = [k for k in keys if isinstance(k, ApproverKey) and k.name == statement.by]
    if fmt == "ed25519":
        try:
            raw_signature = base64.b64decode(signature, validate=True)
        except ValueError as exc:
            raise ApprovalError("malformed", f"approval.signature is not base64: {exc}") from exc
        if len(raw_signature) != 64:
            raise ApprovalError("malformed", f"approval.signature: {len(raw_signature)} bytes, an Ed25519 one has 64")
        if not candidates:
            raise ApprovalError("unknown_key", f"no key is registered for {statement.by!r}")
        claimed = approval.get("public_key")
        if isinstance(claimed, str):  # optional for ed25519: names the signer, so a stranger's key is told apart
            try:
                raw_claimed = parse_public_key(claimed)
            except ValueError as exc:
                raise ApprovalError("malformed", f"approval.public_key: {exc}") from exc
            if all(k.raw != raw_claimed for k in candidates):
                raise ApprovalError(
                    "unknown_key",
                    f"signed by {fingerprint(raw_claimed)}, which is not a key registered for {statement.by!r}",
                )
        for key in candidates:
            if ed25519_valid(key.raw, raw_signature, message):
                return VerifiedApproval(statement, key, "ed25519")
        names = ", ".join(k.fingerprint for k in candidates)
        raise ApprovalError("bad_signature", f"the signature is not one of {statement.by!r}'s keys (tried {names})")
    if fmt == "sshsig":
        signer, valid = sshsig_check(message, signature)
        found = next((k for k in candidates if k.raw == signer), None)
        if found is None:
            raise ApprovalError(
                "unknown_key", f"signed by {fingerprint(signer)}, which is not a key registered for {statement.by!r}"
            )
        if not valid:
            raise ApprovalError("bad_signature", f"the SSHSIG signature by {found.fingerprint} does not verify")
        return VerifiedApproval(statement, found, "sshsig")
    raise ApprovalError("malformed", f"approval.format {str(fmt)[:40]!r}: ed25519 or sshsig")


def verify_recorded_approval(
    event: str, actor: str, payload: Mapping[str, Any], trusted: Sequence[ApproverKey | PasskeyKey]
) -> VerifiedApproval | None:
    """Re-check the approval an audit entry (`report.signed_off` / `report.rejected`) records, offline.

    Returns None for a decision recorded unsigned (`payload["approval"]` is null: the agent ran with
    `reports.allow_unsigned_signoff = true`, or the entry predates signed sign-off), the verified approval otherwise;
    ApprovalError when the signature does not hold, the statement is for another report, body or decision than the
    entry, names someone other than the entry's actor, or the key is not one of `trusted` (the auditor's, or the ones
    the log held then: never the key the entry records, which whoever writes the entry chooses)."""
    approval = payload.get("approval")
    if approval is None:
        return None
    if not isinstance(approval, Mapping):
        raise ApprovalError("malformed", "payload.approval: expected an object")
    statement = parse_statement(approval.get("statement"))
    verified = verify_approval(approval, trusted)
    expected = {"report.signed_off": "approve", "report.rejected": "reject"}.get(event)
    checks = (
        ("report_id", statement.report_id, payload.get("report_id")),
        ("body_sha256", statement.body_sha256, payload.get("body_sha256")),
        ("decision", statement.decision, expected),
        ("by", f"operator:{statement.by}", actor),
        ("comment", statement.comment, payload.get("comment")),
    )
    for name, signed, logged in checks:
        if signed != logged:
            raise ApprovalError("mismatch", f"the signed {name} {signed!r} is not the entry's {logged!r}")
    recorded = payload.get("key_fingerprint")
    if recorded is not None and recorded != verified.key.fingerprint:
        raise ApprovalError("mismatch", f"signed by {verified.key.fingerprint}, the entry says {recorded}")
    return verified


__all__ = ["MAX_SIGNATURE_CHARS", "VerifiedApproval", "sign", "verify_approval", "verify_recorded_approval"]
