"""The SSH wire format (RFC 4251 §5) as ssh-ed25519 keys and SSHSIG signatures use it: length-prefixed strings,
every overrun an ApprovalError("malformed")."""

from __future__ import annotations

import struct

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from edge_agent.signing.errors import ApprovalError

SSH_ED25519 = b"ssh-ed25519"


def string(data: bytes) -> bytes:
    """`data` as an SSH string: a big-endian uint32 length, then the bytes."""
    return struct.pack(">I", len(data)) + data


def ed25519_wire(raw: bytes) -> bytes:
    """The SSH wire blob of a raw Ed25519 public key (what OpenSSH fingerprints and SSHSIG embeds)."""
    return string(SSH_ED25519) + string(raw)


def ed25519_valid(raw_key: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(raw_key).verify(signature, message)
    except InvalidSignature:
        return False
    return True


def ed25519_from_wire(blob: bytes, what: str = "ssh-ed25519 key") -> bytes:
    """The raw 32 bytes of an ssh-ed25519 wire blob; any other key type or length is malformed."""
    reader = Reader(blob, what)
    key_type = reader.string()
    if key_type != SSH_ED25519:
        raise ApprovalError("malformed", f"{what}: type {key_type[:32]!r}, only ssh-ed25519 is accepted")
    raw = reader.string()
    reader.end()
    if len(raw) != 32:
        raise ApprovalError("malformed", f"{what}: {len(raw)} bytes, an Ed25519 key has 32")
    return raw


class Reader:
    """Reads uint32s and strings off an SSH wire blob, each overrun or trailing byte an ApprovalError."""

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
