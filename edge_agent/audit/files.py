"""The audit directory's files: their names, how their complete lines are read, and the list of verifier keys.

The directory's layout is in `log`'s docstring."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from edge_agent.audit.errors import AuditKeyError
from edge_agent.signing import Signer, SigningKeyError, Verifier

ENTRIES = "entries.jsonl"
SIGNING_KEY = "signing.key"
KEYS = "keys.txt"
LATEST_CHECKPOINT = "checkpoint"
CHECKPOINTS = "checkpoints.jsonl"
TORN = "torn"
LOCK = "lock"


def read_verifiers(directory: Path) -> list[Verifier]:
    path = directory / KEYS
    if not path.exists():
        return []
    try:
        return [Verifier.parse(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except SigningKeyError as exc:
        raise AuditKeyError(str(exc)) from exc


def read_signer(path: Path) -> Signer:
    """The log's signing key in `path` (mode 0600), or AuditKeyError naming why it cannot be used."""
    try:
        return Signer.read(path)
    except SigningKeyError as exc:
        raise AuditKeyError(str(exc)) from exc


def iter_lines(path: Path) -> Iterator[bytes]:
    """Complete lines of a JSONL file without their newlines (a partial last line is not yielded)."""
    with open(path, "rb") as f:
        for raw in f:
            if raw.endswith(b"\n"):
                yield raw[:-1]


def signed_notes(directory: Path) -> list[tuple[int, bytes]]:
    """Every stored checkpoint note with the size it claims, in the order signed."""
    path = directory / CHECKPOINTS
    if not path.exists():
        return []
    notes = []
    for line in iter_lines(path):
        record = json.loads(line)
        notes.append((int(record["size"]), record["note"].encode("utf-8")))
    return notes


def append_key(directory: Path, verifier: Verifier) -> None:
    with open(directory / KEYS, "a", encoding="utf-8") as f:
        f.write(verifier.key_string() + "\n")
        f.flush()
        os.fsync(f.fileno())
