"""Approver keys: Ed25519 public keys written `ssh-ed25519 AAAA… [comment]`, as a PEM `PUBLIC KEY`, or as the raw 32
bytes in base64 or hex; and the private key files an approver signs with. A key's fingerprint is OpenSSH's: `SHA256:`
and the unpadded base64 of the SHA-256 of its SSH wire blob (what `ssh-keygen -lf` prints)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from edge_agent.signing.wire import ed25519_from_wire, ed25519_wire

# How an approval is signed: plain Ed25519 over the statement, or an SSHSIG (`ssh-keygen -Y sign`).
Format = Literal["ed25519", "sshsig"]


@dataclass(frozen=True)
class ApproverKey:
    """One registered key: the approver's name and the raw 32-byte Ed25519 public key."""

    name: str
    raw: bytes

    @property
    def wire(self) -> bytes:
        return ed25519_wire(self.raw)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.raw)

    @property
    def openssh(self) -> str:
        return f"ssh-ed25519 {base64.b64encode(self.wire).decode()}"


def fingerprint(raw: bytes) -> str:
    return "SHA256:" + base64.b64encode(hashlib.sha256(ed25519_wire(raw)).digest()).decode().rstrip("=")


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
        return ed25519_from_wire(blob)
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


__all__ = ["ApproverKey", "Format", "fingerprint", "load_signing_key", "parse_public_key", "public_raw"]
