"""SSHSIG (openssh-portable PROTOCOL.sshsig) for approvals: the armored signature `ssh-keygen -Y sign -n
edge-agent-signoff` makes for a file holding exactly the statement bytes: `SSHSIG`, version 1, the signer's public
key, the namespace, an empty reserved string, the hash (`sha512` or `sha256`) and the signature over `SSHSIG ‖
string(namespace) ‖ string(reserved) ‖ string(hash_algorithm) ‖ string(H(statement))`. Only `ssh-ed25519` keys are
accepted.
"""

from __future__ import annotations

import base64
import hashlib
import struct

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from edge_agent.signing.approver_key import public_raw
from edge_agent.signing.errors import ApprovalError
from edge_agent.signing.wire import SSH_ED25519, Reader, ed25519_from_wire, ed25519_valid, ed25519_wire, string

NAMESPACE = "edge-agent-signoff"
SSHSIG_MAGIC = b"SSHSIG"
SSHSIG_VERSION = 1
_ARMOR_BEGIN = "-----BEGIN SSH SIGNATURE-----"
_ARMOR_END = "-----END SSH SIGNATURE-----"
_HASHES = {"sha256": hashlib.sha256, "sha512": hashlib.sha512}


def sshsig_sign(message: bytes, key: Ed25519PrivateKey, hash_algorithm: str = "sha512") -> str:
    """Armored SSHSIG of `message` in NAMESPACE, byte-for-byte what `ssh-keygen -Y sign -n edge-agent-signoff`
    writes for an ed25519 key."""
    digest = _HASHES[hash_algorithm](message).digest()
    signed = _signed_data(NAMESPACE.encode(), b"", hash_algorithm.encode(), digest)
    raw = key.sign(signed)
    blob = (
        SSHSIG_MAGIC
        + struct.pack(">I", SSHSIG_VERSION)
        + string(ed25519_wire(public_raw(key)))
        + string(NAMESPACE.encode())
        + string(b"")
        + string(hash_algorithm.encode())
        + string(string(SSH_ED25519) + string(raw))
    )
    text = base64.b64encode(blob).decode()
    lines = [text[i : i + 70] for i in range(0, len(text), 70)]
    return "\n".join([_ARMOR_BEGIN, *lines, _ARMOR_END]) + "\n"


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
    reader = Reader(blob)
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
    signer = ed25519_from_wire(public_blob, what="SSH signature public key")
    sig = Reader(sig_blob)
    sig_type, raw_signature = sig.string(), sig.string()
    sig.end()
    if sig_type != SSH_ED25519 or len(raw_signature) != 64:
        raise ApprovalError("malformed", f"SSH signature: a {sig_type[:32]!r} signature of {len(raw_signature)} bytes")
    digest = _HASHES[hash_name](message).digest()
    signed = _signed_data(namespace, reserved, hash_algorithm, digest)
    return signer, ed25519_valid(signer, raw_signature, signed)


def _signed_data(namespace: bytes, reserved: bytes, hash_algorithm: bytes, digest: bytes) -> bytes:
    return SSHSIG_MAGIC + string(namespace) + string(reserved) + string(hash_algorithm) + string(digest)


__all__ = ["NAMESPACE", "sshsig_check", "sshsig_sign"]
