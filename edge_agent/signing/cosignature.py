"""Witness cosignatures: C2SP tlog-cosignature, the Ed25519 `cosignature/v1` type.

A cosignature is a note signature line on a checkpoint:

    — <witness name> base64(4-byte key ID || 8-byte big-endian POSIX timestamp || 64-byte Ed25519 signature)

    key ID          = SHA-256(<name> || "\\n" || 0x04 || 32-byte public key)[:4]
    signed message  = "cosignature/v1\\n" "time <timestamp>\\n" <the checkpoint's note text, with its last newline>
    verifier key    = <name>+<key ID, 8 hex digits>+base64(0x04 || public key)          (a C2SP vkey of type 0x04)

The witness's private key file is an ordinary note signer key (`PRIVATE+KEY+…`, type 0x01, keys.py), as Go's
`formats/note.NewSignerForCosignatureV1` takes it; only the key ID and the message differ from a log signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from edge_agent.signing.errors import SigningError
from edge_agent.signing.keys import Signer, SigningKeyError, check_name
from edge_agent.signing.note import Note, NoteSignature

ALG_COSIGNATURE_V1 = 0x04
HEADER = b"cosignature/v1\n"
_TIMESTAMP_MAX = 2**63 - 1


class CosignatureError(SigningError):
    """A cosignature that is malformed or does not verify, or a note missing a required one."""


def cosigner_key_id(name: str, public: bytes) -> int:
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([ALG_COSIGNATURE_V1]) + public).digest()
    return int.from_bytes(digest[:4], "big")


def signed_message(note_text: bytes, timestamp: int) -> bytes:
    """What a cosignature/v1 signs: header, time line, then the whole checkpoint text (C2SP tlog-cosignature)."""
    if not 0 <= timestamp <= _TIMESTAMP_MAX:
        raise CosignatureError(f"cosignature timestamp {timestamp} is outside 0..2^63-1")
    return HEADER + f"time {timestamp}\n".encode() + note_text


@dataclass(frozen=True)
class CosignerKey:
    """A witness's public key, as an auditor or the agent's config names it."""

    name: str
    public: bytes

    @property
    def key_id(self) -> int:
        return cosigner_key_id(self.name, self.public)

    def key_string(self) -> str:
        encoded = base64.b64encode(bytes([ALG_COSIGNATURE_V1]) + self.public).decode()
        return f"{self.name}+{self.key_id:08x}+{encoded}"

    @classmethod
    def parse(cls, text: str) -> CosignerKey:
        """`<name>+<key ID>+base64(0x04 || key)`, the ID checked against the key."""
        text = text.strip()
        try:
            name, id_hex, encoded = text.split("+", 2)
            raw = base64.b64decode(encoded, validate=True)
            claimed = int(id_hex, 16)
        except (ValueError, binascii.Error) as exc:
            raise SigningKeyError(f"not a witness key (name+id+base64): {text!r}") from exc
        if len(id_hex) != 8 or len(raw) != 33 or raw[0] != ALG_COSIGNATURE_V1:
            raise SigningKeyError(f"not an Ed25519 cosignature/v1 key (type 0x04): {text!r}")
        key = cls(check_name(name), raw[1:])
        if key.key_id != claimed:
            raise SigningKeyError(f"witness key {text!r}: key ID {id_hex} != computed {key.key_id:08x}")
        return key

    def verify(self, signature: NoteSignature, note_text: bytes) -> int:
        """The timestamp of `signature` if it is this key's valid cosignature over `note_text`; else raises."""
        if signature.name != self.name or signature.key_hash != self.key_id:
            raise CosignatureError(f"signature by {signature.name}/{signature.key_hash:08x} is not from {self.name}")
        if len(signature.signature) != 8 + 64:
            raise CosignatureError(
                f"cosignature by {self.name} is {len(signature.signature)} bytes after the key ID, not 72"
            )
        timestamp = int.from_bytes(signature.signature[:8], "big")
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(
                signature.signature[8:], signed_message(note_text, timestamp)
            )
        except InvalidSignature as exc:
            raise CosignatureError(f"cosignature by {self.key_string()} does not verify") from exc
        return timestamp


@dataclass(frozen=True)
class Cosigner:
    """A witness's signing key (an ordinary note signer key) used for cosignature/v1."""

    signer: Signer

    @property
    def key(self) -> CosignerKey:
        return CosignerKey(self.signer.name, self.signer.verifier.public)

    def cosign(self, note_text: bytes, timestamp: int) -> NoteSignature:
        if timestamp <= 0:
            raise CosignatureError("a witness cosignature must carry a timestamp (C2SP tlog-witness)")
        raw = timestamp.to_bytes(8, "big") + self.signer.sign(signed_message(note_text, timestamp))
        return NoteSignature(self.signer.name, self.key.key_id, raw)


def cosigned_by(note: Note, keys: Sequence[CosignerKey]) -> dict[str, int]:
    """For each key in `keys` with a valid cosignature on `note`: its key string → the cosignature's timestamp.
    A line matching a key's name and ID that does not verify rejects the note (as signed-note requires)."""
    found: dict[str, int] = {}
    for sig in note.signatures:
        for key in keys:
            if sig.name == key.name and sig.key_hash == key.key_id:
                found[key.key_string()] = key.verify(sig, note.text)
    return found


def require_cosignatures(note: Note, keys: Sequence[CosignerKey]) -> dict[str, int]:
    """Every key in `keys` must have cosigned `note`; the error names those that did not."""
    found = cosigned_by(note, keys)
    missing = [k.key_string() for k in keys if k.key_string() not in found]
    if missing:
        raise CosignatureError(f"no cosignature from witness {', '.join(missing)}")
    return found


__all__ = [
    "ALG_COSIGNATURE_V1",
    "Cosigner",
    "CosignerKey",
    "CosignatureError",
    "cosigned_by",
    "cosigner_key_id",
    "require_cosignatures",
    "signed_message",
]
