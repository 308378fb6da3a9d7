"""A C2SP signed-note signature line, the unit both a log's checkpoint signature and a witness's cosignature are:

    — <key name> <base64(4-byte big-endian key hash or ID || signature bytes)>\\n

The note itself (text, blank line, signature lines) is the audit log's (audit/checkpoint.py's SignedNote); what this
room needs of one is its text and its signature lines (`Note`).
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

SIG_PREFIX = "\u2014 "  # em dash, space


@dataclass(frozen=True)
class NoteSignature:
    """One signature line: the signer's name, its key hash (or cosigner key ID) and the signature bytes."""

    name: str
    key_hash: int
    signature: bytes

    def line(self) -> str:
        raw = self.key_hash.to_bytes(4, "big") + self.signature
        return f"{SIG_PREFIX}{self.name} {base64.b64encode(raw).decode()}\n"


class Note(Protocol):
    """A signed note as far as a signature check needs it: the signed text and its signature lines."""

    @property
    def text(self) -> bytes: ...

    @property
    def signatures(self) -> Sequence[NoteSignature]: ...


__all__ = ["SIG_PREFIX", "Note", "NoteSignature"]
