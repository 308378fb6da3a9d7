"""Signed approvals: a sign-off only the approver's key can make, checkable offline from the audit entry alone.

An approver signs a *statement*, the canonical JSON (edge_agent/base/canonical.py) of

    {"type": "edge-agent-signoff/v1", "report_id", "body_sha256", "decision": "approve"|"reject", "by", "at", "nonce",
     "comment"}

`at` is the signing time (ISO 8601 UTC, `…Z`), `nonce` 16 to 64 characters of [A-Za-z0-9_-] chosen by the signer.
A signed approval is the JSON object `{"statement": {...}, "format": "ed25519"|"sshsig", "signature": "..."}`:

* `ed25519`: the base64 of the 64-byte Ed25519 signature of the statement bytes;
* `sshsig`: the armored SSHSIG (openssh-portable PROTOCOL.sshsig) `ssh-keygen -Y sign -n edge-agent-signoff` makes
  for a file holding exactly the statement bytes: `SSHSIG`, version 1, the signer's public key, the namespace, an
  empty reserved string, the hash (`sha512` or `sha256`) and the signature over `SSHSIG ‖ string(namespace) ‖
  string(reserved) ‖ string(hash_algorithm) ‖ string(H(statement))`. Only `ssh-ed25519` keys are accepted.

Approver keys are Ed25519 public keys, written `ssh-ed25519 AAAA… [comment]`, as a PEM `PUBLIC KEY`, or as the raw
32 bytes in base64 or hex. A key's fingerprint is OpenSSH's: `SHA256:` and the unpadded base64 of the SHA-256 of its
SSH wire blob (what `ssh-keygen -lf` prints).

Everything here is pure (no clock, no files, no nonce store): the agent adds freshness and replay checks around
`verify_approval`; an auditor's `verify_recorded_approval` re-checks an audit entry's approval with nothing but the
entry and, optionally, the public keys the auditor trusts. This module imports only `edge_agent.base.canonical`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from edge_agent.base.canonical import CanonicalJsonError, canonical_json

NAMESPACE = "edge-agent-signoff"
STATEMENT_TYPE = "edge-agent-signoff/v1"
SSHSIG_MAGIC = b"SSHSIG"
SSHSIG_VERSION = 1
_ARMOR_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_ARMOR_END = "-----END SSH SIGNATURE-----"
_SSH_ED25519 = b"ssh-ed25519"
_HASHES = {"sha256": hashlib.sha256, "sha512": hashlib.sha512}
_NONCE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
# An armored SSHSIG of an ed25519 key is ~300 characters; 4 KiB leaves room and bounds what is parsed.
MAX_SIGNATURE_CHARS = 4096
_APPROVAL_REQUIRED = frozenset({"statement", "format", "signature"})
_APPROVAL_KEYS = _APPROVAL_REQUIRED | {"public_key"}
STATEMENT_KEYS = frozenset({"type", "report_id", "body_sha256", "decision", "by", "at", "nonce", "comment"})

ApprovalCode = Literal["malformed", "unknown_key", "bad_signature", "mismatch"]
Format = Literal["ed25519", "sshsig"]


class ApprovalError(ValueError):
    """A signed approval that does not hold; `code` says which kind of failure, the message names the values."""

    def __init__(self, code: ApprovalCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ApproverKey:
    """One registered key: the approver's name and the raw 32-byte Ed25519 public key."""

    name: str
    raw: bytes

    @property
    def wire(self) -> bytes:
        return _string(_SSH_ED25519) + _string(self.raw)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.raw)

    @property
    def openssh(self) -> str:
        return f"ssh-ed25519 {base64.b64encode(self.wire).decode()}"


@dataclass(frozen=True)
class Statement:
    report_id: str
    body_sha256: str
    decision: Literal["approve", "reject"]
    by: str
    at: datetime
    nonce: str
    comment: str

    def as_json(self) -> dict[str, str]:
        return {
            "type": STATEMENT_TYPE,
            "report_id": self.report_id,
            "body_sha256": self.body_sha256,
            "decision": self.decision,
            "by": self.by,
            "at": format_time(self.at),
            "nonce": self.nonce,
            "comment": self.comment,
        }

    def bytes(self) -> bytes:
        return canonical_json(self.as_json())


@dataclass(frozen=True)
class VerifiedApproval:
    """A statement whose signature a registered key made: `key` is that key."""

    statement: Statement
    key: ApproverKey
    format: Format


# --- keys -----------------------------------------------------------------------------------------------------------


def fingerprint(raw: bytes) -> str:
    wire = _string(_SSH_ED25519) + _string(raw)
    return "SHA256:" + base64.b64encode(hashlib.sha256(wire).digest()).decode().rstrip("=")


def parse_public_key(text: str) -> bytes:
    """The raw 32 bytes of an Ed25519 public key written as OpenSSH, PEM, base64 or hex; ValueError naming why."""
    text = text.strip()
    if text.startswith("ssh-"):
        parts = text.split()
        if parts[0] != "ssh-ed25519" or len(parts) < 2:
            raise ValueError(f"key type {parts[0]!r}: only ssh-ed25519 keys are accepted")
        try:
            blob = base64.b64decode(parts[1], validate=True)
        except ValueError as exc:
            raise ValueError(f"ssh-ed25519 key: its base64 does not decode ({exc})") from exc
        return _ed25519_from_wire(blob)
    if text.startswith("-----BEGIN PUBLIC KEY-----"):
        try:
            key = serialization.load_pem_public_key(text.encode())
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise ValueError(f"PEM public key does not load: {exc}") from exc
        if not isinstance(key, Ed25519PublicKey):
            raise ValueError(f"PEM public key is {type(key).__name__}, not Ed25519")
        return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    raw: bytes | None = None
    if re.fullmatch(r"[0-9a-fA-F]{64}", text):
        raw = bytes.fromhex(text)
    else:
        try:
            raw = base64.b64decode(text, validate=True)
        except ValueError:
            raw = None
    if raw is None or len(raw) != 32:
        raise ValueError(
            "not an Ed25519 public key: give `ssh-ed25519 AAAA…`, a PEM PUBLIC KEY, or 32 bytes in base64/hex"
        )
    return raw


def load_signing_key(data: bytes) -> tuple[Ed25519PrivateKey, Format]:
    """A private key file → the key and the format it signs in: an OpenSSH key signs SSHSIG (as `ssh-keygen -Y
    sign` would), a PEM PKCS#8 key or 32 raw bytes (base64 or hex) sign plain Ed25519."""
    text = data.decode("ascii", errors="replace").strip()
    try:
        if text.startswith("-----BEGIN OPENSSH PRIVATE KEY-----"):
            key: Any = serialization.load_ssh_private_key(data, password=None)
            fmt: Format = "sshsig"
        elif text.startswith("-----BEGIN"):
            key = serialization.load_pem_private_key(data, password=None)
            fmt = "ed25519"
        else:
            raw = (
                bytes.fromhex(text) if re.fullmatch(r"[0-9a-fA-F]{64}", text) else base64.b64decode(text, validate=True)
            )
            key = Ed25519PrivateKey.from_private_bytes(raw)
            fmt = "ed25519"
    except (ValueError, TypeError, UnsupportedAlgorithm, binascii.Error) as exc:
        raise ValueError(f"the key file does not hold an unencrypted Ed25519 private key: {exc}") from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"the key file holds a {type(key).__name__}, not an Ed25519 key")
    return key, fmt


def public_raw(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


# --- statements -----------------------------------------------------------------------------------------------------


def format_time(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_statement(data: Any) -> Statement:
    """A statement object → Statement, or ApprovalError("malformed") naming the first bad member."""
    if not isinstance(data, Mapping):
        raise ApprovalError("malformed", f"statement: expected an object, got {type(data).__name__}")
    keys = set(data)
    if keys != STATEMENT_KEYS:
        missing, extra = sorted(STATEMENT_KEYS - keys), sorted(k for k in keys - STATEMENT_KEYS)
        raise ApprovalError("malformed", f"statement: missing {missing}, unexpected {extra}")
    for key in STATEMENT_KEYS:
        if not isinstance(data[key], str):
            raise ApprovalError("malformed", f"statement.{key}: expected a string, got {type(data[key]).__name__}")
    if data["type"] != STATEMENT_TYPE:
        raise ApprovalError("malformed", f"statement.type {data['type']!r} is not {STATEMENT_TYPE!r}")
    if not 1 <= len(data["report_id"]) <= 128:
        raise ApprovalError("malformed", "statement.report_id: 1 to 128 characters")
    if not _SHA256_HEX.fullmatch(data["body_sha256"]):
        raise ApprovalError("malformed", f"statement.body_sha256 {data['body_sha256'][:80]!r} is not a SHA-256 in hex")
    if data["decision"] not in ("approve", "reject"):
        raise ApprovalError("malformed", f"statement.decision {data['decision'][:40]!r}: approve or reject")
    if not 1 <= len(data["by"]) <= 256:
        raise ApprovalError("malformed", "statement.by: 1 to 256 characters")
    if not _NONCE.fullmatch(data["nonce"]):
        raise ApprovalError("malformed", "statement.nonce: 16 to 64 characters of A-Z a-z 0-9 _ -")
    if len(data["comment"]) > 2000:
        raise ApprovalError("malformed", "statement.comment: at most 2000 characters")
    if not _TIME.fullmatch(data["at"]):
        raise ApprovalError("malformed", f"statement.at {data['at'][:40]!r} is not YYYY-MM-DDTHH:MM:SS[.ffffff]Z")
    try:
        at = datetime.fromisoformat(data["at"])
    except ValueError as exc:
        raise ApprovalError("malformed", f"statement.at {data['at']!r}: {exc}") from exc
    return Statement(
        data["report_id"], data["body_sha256"], data["decision"], data["by"], at, data["nonce"], data["comment"]
    )


def statement_bytes(data: Mapping[str, Any]) -> bytes:
    """The exact bytes an approver signs for a statement object (its canonical JSON)."""
    try:
        return canonical_json(dict(data))
    except CanonicalJsonError as exc:
        raise ApprovalError("malformed", f"statement has no canonical form: {exc}") from exc


# --- signing (the approver's side) ----------------------------------------------------------------------------------


def sign(statement: Statement, key: Ed25519PrivateKey, fmt: Format, hash_algorithm: str = "sha512") -> dict[str, Any]:
    """A signed approval object for `statement`."""
    message = statement.bytes()
    if fmt == "ed25519":
        signature = base64.b64encode(key.sign(message)).decode()
    else:
        signature = sshsig_sign(message, key, hash_algorithm)
    public_key = ApproverKey(statement.by, public_raw(key)).openssh
    return {"statement": statement.as_json(), "format": fmt, "signature": signature, "public_key": public_key}


def sshsig_sign(message: bytes, key: Ed25519PrivateKey, hash_algorithm: str = "sha512") -> str:
    """Armored SSHSIG of `message` in NAMESPACE, byte-for-byte what `ssh-keygen -Y sign -n edge-agent-signoff`
    writes for an ed25519 key."""
    digest = _HASHES[hash_algorithm](message).digest()
    signed = _signed_data(NAMESPACE.encode(), b"", hash_algorithm.encode(), digest)
    raw = key.sign(signed)
    blob = (
        SSHSIG_MAGIC
        + struct.pack(">I", SSHSIG_VERSION)
        + _string(_string(_SSH_ED25519) + _string(public_raw(key)))
        + _string(NAMESPACE.encode())
        + _string(b"")
        + _string(hash_algorithm.encode())
        + _string(_string(_SSH_ED25519) + _string(raw))
    )
    text = base64.b64encode(blob).decode()
    lines = [text[i : i + 70] for i in range(0, len(text), 70)]
    return "\n".join([_ARMOR_BEGIN, *lines, _ARMOR_END]) + "\n"


# --- verification ---------------------------------------------------------------------------------------------------


def verify_approval(approval: Any, keys: Iterable[ApproverKey]) -> VerifiedApproval:
    """The statement of a signed approval and the registered key that signed it, or ApprovalError.

    The key must be registered for the statement's `by`: a valid signature by anyone else's key, or by a key not in
    `keys`, is `unknown_key`. No clock and no nonce store: freshness and replays are the caller's."""
    if not isinstance(approval, Mapping):
        raise ApprovalError("malformed", f"approval: expected an object, got {type(approval).__name__}")
    if set(approval) - {"statement", "format", "signature", "public_key"} or not {
        "statement",
        "format",
        "signature",
    } <= set(approval):
        raise ApprovalError(
            "malformed", f"approval: members {sorted(map(str, approval))}; want statement, format, signature"
        )
    statement = parse_statement(approval["statement"])
    message = statement_bytes(approval["statement"])
    fmt, signature = approval["format"], approval["signature"]
    if not isinstance(signature, str) or len(signature) > MAX_SIGNATURE_CHARS:
        raise ApprovalError("malformed", f"approval.signature: a string of at most {MAX_SIGNATURE_CHARS} characters")
    candidates = [k for k in keys if k.name == statement.by]
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
            if _ed25519_valid(key.raw, raw_signature, message):
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


def sshsig_check(message: bytes, armored: str) -> tuple[bytes, bool]:
    """Parse an armored SSHSIG: (the signer's raw public key, whether its signature of `message` holds in
    NAMESPACE). A malformed signature, another namespace or key type: ApprovalError("malformed")."""
    text = armored.strip()
    if not (text.startswith(_ARMOR_BEGIN) and text.endswith(_ARMOR_END)):
        raise ApprovalError("malformed", "approval.signature: not an armored SSH SIGNATURE")
    body = "".join(text[len(_ARMOR_BEGIN) : -len(_ARMOR_END)].split())
    try:
        blob = base64.b64decode(body, validate=True)
    except ValueError as exc:
        raise ApprovalError("malformed", f"SSH signature: its base64 does not decode ({exc})") from exc
    reader = _Reader(blob)
    if reader.take(6) != SSHSIG_MAGIC:
        raise ApprovalError("malformed", "SSH signature: no SSHSIG preamble")
    version = reader.uint32()
    if version != SSHSIG_VERSION:
        raise ApprovalError("malformed", f"SSH signature: version {version}, not {SSHSIG_VERSION}")
    public_blob = reader.string()
    namespace, reserved, hash_algorithm, sig_blob = reader.string(), reader.string(), reader.string(), reader.string()
    reader.end()
    if namespace != NAMESPACE.encode():
        raise ApprovalError("malformed", f"SSH signature: namespace {namespace[:64]!r}, not {NAMESPACE!r}")
    hash_name = hash_algorithm.decode("ascii", errors="replace")
    if hash_name not in _HASHES:
        raise ApprovalError("malformed", f"SSH signature: hash {hash_name[:32]!r}, not sha256 or sha512")
    signer = _ed25519_from_wire(public_blob, what="SSH signature public key")
    sig = _Reader(sig_blob)
    sig_type, raw_signature = sig.string(), sig.string()
    sig.end()
    if sig_type != _SSH_ED25519 or len(raw_signature) != 64:
        raise ApprovalError("malformed", f"SSH signature: a {sig_type[:32]!r} signature of {len(raw_signature)} bytes")
    digest = _HASHES[hash_name](message).digest()
    signed = _signed_data(namespace, reserved, hash_algorithm, digest)
    return signer, _ed25519_valid(signer, raw_signature, signed)


def verify_recorded_approval(
    event: str, actor: str, payload: Mapping[str, Any], trusted: Sequence[ApproverKey] | None = None
) -> VerifiedApproval | None:
    """Re-check the approval an audit entry (`report.signed_off` / `report.rejected`) records, offline.

    Returns None for a decision recorded unsigned (`payload["approval"]` is null: the agent ran with
    `reports.allow_unsigned_signoff = true`, or the entry predates signed sign-off), the verified approval otherwise;
    ApprovalError when the signature does not hold, the statement is for another report, body or decision than the
    entry, names someone other than the entry's actor, or (with `trusted`) the key is not one the auditor trusts.
    Without `trusted`, the key is the one the entry records (`approval.public_key`), checked against its fingerprint
    (`approval.key_fingerprint` in the payload)."""
    approval = payload.get("approval")
    if approval is None:
        return None
    if not isinstance(approval, Mapping):
        raise ApprovalError("malformed", "payload.approval: expected an object")
    statement = parse_statement(approval.get("statement"))
    if trusted is None:
        public = approval.get("public_key")
        if not isinstance(public, str):
            raise ApprovalError("malformed", "payload.approval.public_key: the entry does not record the signer's key")
        try:
            keys: Sequence[ApproverKey] = [ApproverKey(statement.by, parse_public_key(public))]
        except ValueError as exc:
            raise ApprovalError("malformed", f"payload.approval.public_key: {exc}") from exc
    else:
        keys = trusted
    verified = verify_approval(approval, keys)
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


# --- wire helpers ---------------------------------------------------------------------------------------------------


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _signed_data(namespace: bytes, reserved: bytes, hash_algorithm: bytes, digest: bytes) -> bytes:
    return SSHSIG_MAGIC + _string(namespace) + _string(reserved) + _string(hash_algorithm) + _string(digest)


def _ed25519_valid(raw_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(raw_key).verify(signature, message)
    except InvalidSignature:
        return False
    return True


def _ed25519_from_wire(blob: bytes, what: str = "ssh-ed25519 key") -> bytes:
    reader = _Reader(blob, what)
    key_type = reader.string()
    if key_type != _SSH_ED25519:
        raise ApprovalError("malformed", f"{what}: type {key_type[:32]!r}, only ssh-ed25519 is accepted")
    raw = reader.string()
    reader.end()
    if len(raw) != 32:
        raise ApprovalError("malformed", f"{what}: {len(raw)} bytes, an Ed25519 key has 32")
    return raw


class _Reader:
    """SSH wire format (RFC 4251 §5): uint32 and length-prefixed strings, with every overrun an ApprovalError."""

    def __init__(self, data: bytes, what: str = "SSH signature") -> None:
        self.data, self.pos, self.what = data, 0, what

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ApprovalError("malformed", f"{self.what}: truncated at byte {self.pos} (wanted {n} more)")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def uint32(self) -> int:
        value: int = struct.unpack(">I", self.take(4))[0]
        return value

    def string(self) -> bytes:
        return self.take(self.uint32())

    def end(self) -> None:
        if self.pos != len(self.data):
            raise ApprovalError("malformed", f"{self.what}: {len(self.data) - self.pos} trailing bytes")


__all__ = [
    "NAMESPACE",
    "STATEMENT_TYPE",
    "ApprovalError",
    "ApproverKey",
    "Statement",
    "VerifiedApproval",
    "fingerprint",
    "load_signing_key",
    "parse_public_key",
    "parse_statement",
    "sign",
    "sshsig_check",
    "sshsig_sign",
    "verify_approval",
    "verify_recorded_approval",
]
