"""Ed25519 signing keys in the formats of golang.org/x/mod/sumdb/note and C2SP signed-note.

    key hash      = first 4 bytes (big-endian uint32) of SHA-256(name || 0x0A || 0x01 || 32-byte public key)
    verifier key  = <name>+<key hash, 8 hex digits>+<base64(0x01 || public key)>       (`edge-agent audit pubkey`)
    signer key    = PRIVATE+KEY+<name>+<key hash>+<base64(0x01 || 32-byte seed)>       (the file, mode 0600)

0x01 is the signature type C2SP assigns to Ed25519. The key name is the log's origin.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from edge_agent.signing.errors import SigningError

ALG_ED25519 = 0x01
_PRIVATE_PREFIX = "PRIVATE+KEY+"


class SigningKeyError(SigningError):
    """A key file or key string that cannot be used."""


def key_hash(name: str, public: bytes) -> int:
    return int.from_bytes(hashlib.sha256(name.encode() + b"\n" + bytes([ALG_ED25519]) + public).digest()[:4], "big")


def check_name(name: str) -> str:
    if not name or any(c.isspace() or c == "+" for c in name):
        raise SigningKeyError(f"key name {name!r} must be non-empty with no spaces or '+' (C2SP signed-note)")
    return name


@dataclass(frozen=True)
class Verifier:
    """A public key with its note name and hash."""

    name: str
    public: bytes

    @property
    def hash(self) -> int:
        return key_hash(self.name, self.public)

    def key_string(self) -> str:
        encoded = base64.b64encode(bytes([ALG_ED25519]) + self.public).decode()
        return f"{self.name}+{self.hash:08x}+{encoded}"

    def verify(self, signature: bytes, message: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except InvalidSignature:
            return False
        return True

    @classmethod
    def parse(cls, text: str) -> Verifier:
        """Parse `<name>+<hash>+<base64 key>`, checking the hash against the key."""
        text = text.strip()
        try:
            name, hash_hex, encoded = text.split("+", 2)  # names hold no "+", base64 may
            raw = base64.b64decode(encoded, validate=True)
            claimed = int(hash_hex, 16)
        except (ValueError, binascii.Error) as exc:
            raise SigningKeyError(f"not a verifier key (name+hash+base64): {text!r}") from exc
        if len(hash_hex) != 8 or len(raw) != 33 or raw[0] != ALG_ED25519:
            raise SigningKeyError(f"not an Ed25519 note verifier key: {text!r}")
        verifier = cls(check_name(name), raw[1:])
        if verifier.hash != claimed:
            raise SigningKeyError(f"verifier key {text!r}: hash {hash_hex} != computed {verifier.hash:08x}")
        return verifier


@dataclass(frozen=True)
class Signer:
    name: str
    seed: bytes

    @classmethod
    def generate(cls, name: str) -> Signer:
        seed = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return cls(check_name(name), seed)

    @property
    def verifier(self) -> Verifier:
        key = Ed25519PrivateKey.from_private_bytes(self.seed).public_key()
        public = key.public_bytes(Encoding.Raw, PublicFormat.Raw)
        return Verifier(self.name, public)

    def sign(self, message: bytes) -> bytes:
        return Ed25519PrivateKey.from_private_bytes(self.seed).sign(message)

    def key_string(self) -> str:
        encoded = base64.b64encode(bytes([ALG_ED25519]) + self.seed).decode()
        return f"{_PRIVATE_PREFIX}{self.name}+{self.verifier.hash:08x}+{encoded}"

    @classmethod
    def parse(cls, text: str) -> Signer:
        text = text.strip()
        if not text.startswith(_PRIVATE_PREFIX):
            raise SigningKeyError("signer key does not start with PRIVATE+KEY+")
        try:
            name, hash_hex, encoded = text[len(_PRIVATE_PREFIX) :].split("+", 2)
            raw = base64.b64decode(encoded, validate=True)
            claimed = int(hash_hex, 16)
        except (ValueError, binascii.Error) as exc:
            raise SigningKeyError("signer key is not PRIVATE+KEY+name+hash+base64") from exc
        if len(raw) != 33 or raw[0] != ALG_ED25519:
            raise SigningKeyError("signer key is not an Ed25519 key")
        signer = cls(check_name(name), raw[1:])
        if signer.verifier.hash != claimed:
            raise SigningKeyError(f"signer key hash {hash_hex} does not match its key")
        return signer

    # -- files -----------------------------------------------------------------------------------------------------

    def write(self, path: Path) -> None:
        """Create `path` with mode 0600 (never overwrite), durable before returning."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, (self.key_string() + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(path.parent)

    @classmethod
    def read(cls, path: Path) -> Signer:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise SigningKeyError(f"signing key {path} has mode {stat.S_IMODE(mode):04o}; it must be 0600 (chmod 600)")
        return cls.parse(path.read_text(encoding="ascii"))


def fsync_dir(path: Path) -> None:
    """Make a create/rename in `path` durable: the directory entry is data too."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data` so that a crash leaves the old file or the new one, never a torn one. `mode` (0o600
    for a secret's file) is the new file's from its first byte, whatever mode a temporary left by a crash had."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else mode)
    with os.fdopen(fd, "wb") as f:
        if mode is not None:
            os.fchmod(f.fileno(), mode)
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
