"""Entries from before a bundle's window that the bundle carries, each with its inclusion proof in the bundle's
checkpoint: the approval check needs them and the window does not hold them (bundle.py: config_in_force.json,
enrolments_in_force.json).

A carried entry is `{"seq", "entry" (the stored line), "leaf_hash" (hex), "proof" ([base64 hashes], leaf to
root)}`, the record inclusion.jsonl keeps for an exported entry plus the line itself. The exporter writes it with
`carry`; the verifier accepts its line with `check_carried` only when the proof leads to the signed root at the seq
the signed manifest names, the seq precedes the window, and the entry is of the event the file is for.
"""

from __future__ import annotations

import binascii
import json
from base64 import b64decode, b64encode
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from edge_agent.audit.checkpoint import Checkpoint
from edge_agent.audit.entry import AuditError
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.proof import ProofError, verify_inclusion
from edge_agent.audit.view import numbered


class CarriedEntry(BaseModel):
    """One carried entry as its file holds it. Strict: a bundle is untrusted input."""

    model_config = ConfigDict(extra="forbid", strict=True)

    seq: int = Field(ge=0)
    entry: str
    leaf_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    proof: list[str]


class CarriedError(AuditError):
    """A carried entry that does not hold, with the seq the signed manifest names for it."""

    def __init__(self, seq: int, message: str) -> None:
        super().__init__(message)
        self.seq = seq


def entries_before(lines: Sequence[bytes], first: int, event: str) -> list[int]:
    """The seqs of the `event` entries before entry `first`, oldest first (`lines[i]` is entry i; of an archived
    log, the lines it still holds: view.py retains the events carried)."""
    marker = f'"event":"{event}"'.encode()
    # The byte marker only skips the parse: a line it matches is parsed and its event compared.
    return [seq for seq, line in numbered(lines, first) if marker in line and json.loads(line)["event"] == event]


def carry(lines: Sequence[bytes], seq: int, tree: MerkleTree) -> CarriedEntry:
    """Entry `seq` with its inclusion proof in `tree`."""
    line = lines[seq]
    proof = [b64encode(h).decode() for h in tree.inclusion_proof(seq)]
    return CarriedEntry(seq=seq, entry=line.decode("utf-8"), leaf_hash=leaf_hash(line).hex(), proof=proof)


def check_carried(
    record: CarriedEntry, *, seq: int, event: str, first_seq: int, checkpoint: Checkpoint, where: str
) -> bytes:
    """The line of a carried entry that the signed manifest names as entry `seq` of `event`; CarriedError, its
    message starting with `where`, when it is not before the window, not entry `seq`, not in the signed tree, or
    of another event."""
    if seq >= first_seq:
        raise CarriedError(seq, f"{where}: not before the window's first entry {first_seq}")
    if record.seq != seq:
        raise CarriedError(seq, f"{where}: the file holds entry {record.seq}")
    line = record.entry.encode("utf-8")
    try:
        proof = [b64decode(h, validate=True) for h in record.proof]
        verify_inclusion(seq, checkpoint.size, leaf_hash(line), proof, checkpoint.root)
    except (ProofError, binascii.Error) as exc:
        raise CarriedError(seq, f"{where}: not included in the signed tree (edited after export?): {exc}") from exc
    entry = json.loads(line)
    if entry["seq"] != seq or entry["event"] != event:
        raise CarriedError(seq, f"{where}: is {entry['event']!r} at seq {entry['seq']}, not {event}")
    return line
