"""The hash chain of a log's lines, and what a verification found (shared by log.py and bundle.py).

The chain check reads stored lines as bytes and never builds a pydantic model: at a million entries the cost per
entry is two SHA-256 calls and a few slices. It relies on the canonical layout documented in entry.py — the first
`"entry_hash":"` member is the top-level one, and `prev_hash`, `seq`, `time` are the last three members. Every byte
of every line is covered (by its entry_hash, the next prev_hash and the signed tree); whether each line is also a
well-typed entry in canonical form is what `strict=True` adds, at about an eighth of the speed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from edge_agent.audit.checkpoint import Checkpoint, SignedNote
from edge_agent.audit.entry import (
    ENTRY_HASH_MARKER,
    ENTRY_HASH_MEMBER_LEN,
    GENESIS_HASH,
    HASH_HEX_LEN,
    PREV_HASH_MARKER,
    SEQ_MARKER,
    AuditEntry,
    EntryFormatError,
)
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.merkle import RootBuilder
from edge_agent.signing import Verifier

# Offsets into a canonical line, from entry.py's markers: entry_hash's hex digits start `_HASH_AT` after its
# marker; prev_hash's run from `_PREV_AT` to `_PREV_END` after its marker, and the seq marker follows at once.
_HASH_AT = len(ENTRY_HASH_MARKER)
_PREV_AT = len(PREV_HASH_MARKER)
_PREV_END = _PREV_AT + HASH_HEX_LEN
_SEQ_AT = len(SEQ_MARKER)
_KEY_ROTATED = b'"event":"key.rotated"'


@dataclass(frozen=True)
class Problem:
    """The first thing found wrong: `seq` names the entry (None when the problem is not one entry's)."""

    seq: int | None
    reason: str

    def __str__(self) -> str:
        return f"entry {self.seq}: {self.reason}" if self.seq is not None else self.reason


@dataclass
class ChainResult:
    """What a chain scan learned: counts, leaf-derived roots at requested sizes, keys named by rotation entries."""

    count: int = 0  # lines checked
    size: int = 0  # leaves in the tree: the archived ones it was seeded with, then one per line checked
    head_hash: str = GENESIS_HASH
    problem: Problem | None = None
    roots: dict[int, bytes] = field(default_factory=dict)
    leaves: list[bytes] | None = None
    # (seq of the key.rotated entry, the key it brings in), in log order.
    key_schedule: list[tuple[int, str]] = field(default_factory=list)


def scan_chain(
    lines: Iterable[bytes],
    *,
    first_seq: int = 0,
    prev_hash: str = GENESIS_HASH,
    roots_at: Iterable[int] = (),
    keep_leaves: bool = False,
    strict: bool = False,
    archived: Sequence[bytes] = (),
) -> ChainResult:
    """Check seq, prev_hash and entry_hash of every line; build the Merkle tree. Stops at the first bad entry.

    `strict` also parses every line into an AuditEntry (valid types, canonical encoding): about 8x slower,
    and only adds something for entries after the last checkpoint, whose bytes no signature covers yet.
    `archived`: the leaf hashes of the entries before `first_seq` that left the log (view.py); the tree starts with
    them, so the roots at every size are the whole log's."""
    sha256 = hashlib.sha256
    want = sorted(set(roots_at))
    result = ChainResult(head_hash=prev_hash)
    builder = RootBuilder()
    leaves: list[bytes] | None = [] if keep_leaves else None
    expected_prev = prev_hash.encode()
    seq = first_seq
    w = 0
    while w < len(want) and want[w] == 0:
        result.roots[0] = builder.root()
        w += 1
    for archived_leaf in archived:
        builder.append(archived_leaf)
        while w < len(want) and want[w] == builder.size:
            result.roots[builder.size] = builder.root()
            w += 1
    for line in lines:
        p = line.find(ENTRY_HASH_MARKER)
        if p < 0:
            result.problem = Problem(seq, "line has no entry_hash member (not an audit entry)")
            break
        end = p + ENTRY_HASH_MEMBER_LEN
        digits_end = p + _HASH_AT + HASH_HEX_LEN
        claimed = line[p + _HASH_AT : digits_end]
        if sha256(line[:p] + line[end:]).hexdigest().encode() != claimed or line[digits_end:end] != b'",':
            result.problem = Problem(seq, f"entry_hash {claimed.decode(errors='replace')} does not match its contents")
            break
        q = line.rfind(PREV_HASH_MARKER)
        prev = line[q + _PREV_AT : q + _PREV_END]
        r = q + _PREV_END
        s = line.find(b",", r + _SEQ_AT)
        if q < p or line[r : r + _SEQ_AT] != SEQ_MARKER or s < 0:
            result.problem = Problem(seq, "line is not laid out as a canonical entry (prev_hash, seq, time last)")
            break
        try:
            stored_seq = int(line[r + _SEQ_AT : s])
        except ValueError:
            result.problem = Problem(seq, f"seq {line[r + _SEQ_AT : s]!r} is not an integer")
            break
        if stored_seq != seq:
            result.problem = Problem(
                seq,
                f"line {seq - first_seq + 1} holds seq {stored_seq}, expected {seq}"
                + (
                    f": entry {seq} is missing or out of order"
                    if stored_seq > seq
                    else ": entries are out of order or repeated"
                ),
            )
            break
        if prev != expected_prev:
            result.problem = Problem(
                seq,
                f"prev_hash {prev.decode(errors='replace')} != entry_hash of entry {seq - 1} {expected_prev.decode()}",
            )
            break
        if strict:
            try:
                AuditEntry.from_line(line)
            except EntryFormatError as exc:
                result.problem = Problem(seq, str(exc))
                break
        if _KEY_ROTATED in line:
            data = json.loads(line)
            if data.get("event") == "key.rotated":
                result.key_schedule.append((seq, str(data["payload"].get("key"))))
        leaf = leaf_hash(line)
        builder.append(leaf)
        if leaves is not None:
            leaves.append(leaf)
        expected_prev = claimed
        seq += 1
        while w < len(want) and want[w] == builder.size:
            result.roots[builder.size] = builder.root()
            w += 1
    result.count = seq - first_seq
    result.size = builder.size
    result.head_hash = expected_prev.decode()
    result.roots[builder.size] = builder.root()
    result.leaves = leaves
    return result


@dataclass
class VerifyResult:
    """What `verify_log` or `verify_bundle` found: counts, the signed root, the first problem and notes."""

    entries: int
    checkpoints: int
    signed_size: int
    root: str
    problem: Problem | None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.problem is None

    def summary(self) -> str:
        if self.problem is None:
            unsigned = self.entries - self.signed_size
            # Negative for a bundle, whose checkpoint also covers entries after its window: nothing to say then.
            tail = f"; {unsigned} newest entries not yet covered by a checkpoint" if unsigned > 0 else ""
            return (
                f"OK: {self.entries} entries, hash chain intact, {self.checkpoints} checkpoint(s) verified,"
                f" latest signed size {self.signed_size}, root {self.root}{tail}"
            )
        return f"FAILED: {self.problem}"


def open_trusted(note: bytes, keys: Sequence[Verifier]) -> Checkpoint:
    """The body of a checkpoint the auditor trusts, once a key in `keys` has signed it."""
    parsed = SignedNote.parse(note)
    parsed.verified_by(keys)
    return Checkpoint.parse_body(parsed.text)


def prev_hash_of(line: bytes) -> str:
    """The prev_hash a line claims (the genesis hash when it names none): where a bundle's chain starts."""
    q = line.rfind(PREV_HASH_MARKER)
    return line[q + _PREV_AT : q + _PREV_END].decode(errors="replace") if q >= 0 else GENESIS_HASH
