"""Checkpoints: the C2SP tlog-checkpoint body inside a C2SP signed note.

    <origin>\\n
    <tree size, decimal>\\n
    <base64 RFC 6962 root hash>\\n
    \\n
    — <key name> <base64(4-byte big-endian key hash || 64-byte Ed25519 signature)>\\n     (one line per signer)

The signature covers the note text: the three body lines including the last newline, not the blank line.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from edge_agent.audit.entry import AuditError
from edge_agent.audit.hasher import HASH_SIZE
from edge_agent.signing import NoteSignature, Signer, Verifier
from edge_agent.signing.note import SIG_PREFIX

_SIZE = re.compile(r"^(0|[1-9][0-9]*)$")


class CheckpointError(AuditError):
    """A checkpoint that is malformed, unsigned by a trusted key, or inconsistent with an earlier one."""


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes

    def body(self) -> bytes:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n".encode()

    @classmethod
    def parse_body(cls, text: bytes) -> Checkpoint:
        try:
            lines = text.decode("utf-8").split("\n")
        except UnicodeDecodeError as exc:
            raise CheckpointError("checkpoint body is not UTF-8") from exc
        if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
            raise CheckpointError(f"checkpoint body needs at least 3 non-empty newline-ended lines, got {text!r}")
        origin, size, root_b64 = lines[0], lines[1], lines[2]
        if not _SIZE.match(size):
            raise CheckpointError(f"checkpoint size {size!r} is not a decimal without leading zeros")
        try:
            root = base64.b64decode(root_b64, validate=True)
        except ValueError as exc:
            raise CheckpointError(f"checkpoint root {root_b64!r} is not base64") from exc
        if len(root) != HASH_SIZE:
            raise CheckpointError(f"checkpoint root is {len(root)} bytes, not {HASH_SIZE}")
        return cls(origin, int(size), root)


@dataclass(frozen=True)
class SignedNote:
    """A C2SP signed note: its text and the signature lines below it (signing/note.py)."""

    text: bytes
    signatures: tuple[NoteSignature, ...]

    def encode(self) -> bytes:
        return self.text + b"\n" + "".join(s.line() for s in self.signatures).encode()

    @classmethod
    def sign(cls, text: bytes, signers: Iterable[Signer]) -> SignedNote:
        if not text.endswith(b"\n"):
            raise CheckpointError("note text must end in a newline")
        sigs = tuple(NoteSignature(s.name, s.verifier.hash, s.sign(text)) for s in signers)
        return cls(text, sigs)

    @classmethod
    def parse(cls, data: bytes) -> SignedNote:
        try:
            decoded = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CheckpointError("signed note is not UTF-8") from exc
        if any(ord(c) < 0x20 and c != "\n" for c in decoded):
            raise CheckpointError("signed note holds control characters")
        # The text is separated from the signatures by the *last* blank line.
        split = decoded.rfind("\n\n")
        if split < 0 or not decoded.endswith("\n"):
            raise CheckpointError("signed note has no blank line before its signatures")
        text, sig_block = decoded[: split + 1], decoded[split + 2 :]
        signatures = []
        for line in sig_block.split("\n")[:-1]:
            if not line.startswith(SIG_PREFIX):
                raise CheckpointError(f"signature line {line!r} does not start with an em dash and a space")
            try:
                name, encoded = line[len(SIG_PREFIX) :].split(" ")
                raw = base64.b64decode(encoded, validate=True)
            except (ValueError, binascii.Error) as exc:
                raise CheckpointError(f"malformed signature line {line!r}") from exc
            if len(raw) < 5:
                raise CheckpointError(f"signature in line {line!r} is too short")
            signatures.append(NoteSignature(name, int.from_bytes(raw[:4], "big"), raw[4:]))
        if not signatures:
            raise CheckpointError("signed note has no signatures")
        return cls(text.encode(), tuple(signatures))

    def verified_by(self, verifiers: Sequence[Verifier]) -> list[Verifier]:
        """The trusted keys whose signatures verify. A known key (name and hash match) with a bad signature, or no
        verifying known key at all, rejects the note (C2SP: signatures from unknown keys are ignored)."""
        good: list[Verifier] = []
        for sig in self.signatures:
            for v in verifiers:
                if v.name == sig.name and v.hash == sig.key_hash:
                    if not v.verify(sig.signature, self.text):
                        raise CheckpointError(f"signature by {v.key_string()} does not verify over the note text")
                    good.append(v)
        if not good:
            names = ", ".join(f"{s.name}/{s.key_hash:08x}" for s in self.signatures)
            trusted = ", ".join(f"{v.name}/{v.hash:08x}" for v in verifiers)
            raise CheckpointError(f"no signature from a trusted key: signed by {names}; trusted: {trusted or 'none'}")
        return good


def sign_checkpoint(checkpoint: Checkpoint, signers: Iterable[Signer]) -> bytes:
    return SignedNote.sign(checkpoint.body(), signers).encode()


def open_checkpoint(data: bytes, verifiers: Sequence[Verifier], origin: str | None = None) -> Checkpoint:
    """Verify a signed checkpoint against trusted keys and return its body; origin checked when given."""
    note = SignedNote.parse(data)
    note.verified_by(verifiers)
    checkpoint = Checkpoint.parse_body(note.text)
    if origin is not None and checkpoint.origin != origin:
        raise CheckpointError(f"checkpoint origin {checkpoint.origin!r} != expected {origin!r}")
    return checkpoint
