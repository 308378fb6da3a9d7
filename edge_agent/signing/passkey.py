"""Passkey sign-offs: a WebAuthn assertion whose challenge is the SHA-256 of the statement (statement.py) the CLI
signs, checkable offline from what the audit entry keeps.

The approval object is `{"statement", "format": "webauthn", "credential_id", "public_key", "rp_id",
"authenticator_data", "client_data_json", "signature"}`, the binary members base64url without padding. It holds
when the client data is a `webauthn.get` over that challenge, the authenticator data is for `rp_id` with the user
present and verified, and the credential's COSE public key signed authenticatorData ‖ SHA-256(clientDataJSON).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from webauthn.helpers import decode_credential_public_key, decoded_public_key_to_cryptography, verify_signature

from edge_agent.signing.errors import ApprovalError
from edge_agent.signing.statement import Statement, parse_statement, statement_bytes

PASSKEY_MEMBERS = frozenset(
    {
        "statement",
        "format",
        "credential_id",
        "public_key",
        "rp_id",
        "authenticator_data",
        "client_data_json",
        "signature",
    }
)
# A P-256 COSE key is 77 bytes, its signature ≤ 72, client data a few hundred: 4 KiB bounds what is decoded.
MAX_MEMBER_CHARS = 4096
_USER_PRESENT, _USER_VERIFIED = 0x01, 0x04


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def from_b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def statement_challenge(statement: Statement) -> bytes:
    """The WebAuthn challenge of a passkey sign-off: the SHA-256 of the statement's bytes."""
    return hashlib.sha256(statement.bytes()).digest()


@dataclass(frozen=True)
class PasskeyKey:
    """A person's registered passkey: the credential id and its COSE public key."""

    name: str
    credential_id: bytes
    cose: bytes

    @property
    def fingerprint(self) -> str:
        return "SHA256:" + base64.b64encode(hashlib.sha256(self.cose).digest()).rstrip(b"=").decode()


def _member(approval: Mapping[str, Any], name: str) -> bytes:
    value = approval[name]
    if not isinstance(value, str) or len(value) > MAX_MEMBER_CHARS:
        raise ApprovalError("malformed", f"approval.{name}: base64url of at most {MAX_MEMBER_CHARS} characters")
    try:
        return from_b64url(value)
    except ValueError as exc:
        raise ApprovalError("malformed", f"approval.{name} is not base64url: {exc}") from exc


def verify_passkey(approval: Mapping[str, Any], keys: Iterable[PasskeyKey]) -> tuple[Statement, PasskeyKey]:
    """The statement of a passkey approval and the registered passkey that signed it, or ApprovalError."""
    if set(approval) != PASSKEY_MEMBERS:
        raise ApprovalError(
            "malformed", f"approval: members {sorted(map(str, approval))}; want {sorted(PASSKEY_MEMBERS)}"
        )
    statement = parse_statement(approval["statement"])
    message = statement_bytes(approval["statement"])
    credential_id, cose = _member(approval, "credential_id"), _member(approval, "public_key")
    authenticator_data, client_data = _member(approval, "authenticator_data"), _member(approval, "client_data_json")
    signature = _member(approval, "signature")
    rp_id = approval["rp_id"]
    if not isinstance(rp_id, str) or not 1 <= len(rp_id) <= 253:
        raise ApprovalError("malformed", "approval.rp_id: a host name")
    key = next((k for k in keys if k.name == statement.by and k.credential_id == credential_id), None)
    if key is None:
        raise ApprovalError(
            "unknown_key", f"no passkey {b64url(credential_id)[:40]} is registered for {statement.by!r}"
        )
    if key.cose != cose:
        raise ApprovalError("unknown_key", f"the recorded public key is not the one {key.fingerprint} registered")
    try:
        client = json.loads(client_data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApprovalError("malformed", f"approval.client_data_json is not JSON: {exc}") from exc
    if not isinstance(client, dict) or client.get("type") != "webauthn.get":
        raise ApprovalError("malformed", "approval.client_data_json: not a webauthn.get")
    if client.get("challenge") != b64url(hashlib.sha256(message).digest()):
        raise ApprovalError("mismatch", "the passkey signed another challenge than this statement's SHA-256")
    if len(authenticator_data) < 37 or authenticator_data[:32] != hashlib.sha256(rp_id.encode()).digest():
        raise ApprovalError("mismatch", f"the authenticator data is not for {rp_id!r}")
    flags = authenticator_data[32]
    if not (flags & _USER_PRESENT and flags & _USER_VERIFIED):
        raise ApprovalError("bad_signature", "the authenticator did not verify the user (flags UP and UV)")
    try:
        decoded = decode_credential_public_key(cose)
        public_key = decoded_public_key_to_cryptography(decoded)
        signed = authenticator_data + hashlib.sha256(client_data).digest()
        verify_signature(public_key=public_key, signature_alg=decoded.alg, signature=signature, data=signed)
    except InvalidSignature as exc:
        raise ApprovalError("bad_signature", f"the assertion by {key.fingerprint} does not verify") from exc
    except Exception as exc:  # noqa: BLE001 (a COSE key the library cannot read: its errors have no common base)
        raise ApprovalError("malformed", f"approval.public_key: {exc}") from exc
    return statement, key


__all__ = ["PASSKEY_MEMBERS", "PasskeyKey", "b64url", "from_b64url", "statement_challenge", "verify_passkey"]
