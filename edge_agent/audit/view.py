"""What the audit directory holds of the log once entries may have been archived: the reader's view.

`edge-agent audit archive` moves the oldest entries into a signed bundle and leaves behind, beside entries.jsonl:

    archived.leaves     the leaf hash of every archived entry (32 bytes each, seq order): with the kept entries
                        they rebuild the Merkle tree, so every root, checkpoint and proof stays checkable
    archived.jsonl      the archived lines later readers still need, byte for byte: key rotations, the config,
                        security and enrolment entries an export carries, exports, recoveries, archives, and the
                        last archived entry (the kept chain's first prev_hash is its entry_hash)
    archive.json        `ArchiveState`: the first kept seq, the leaf file's sha256 and each archived segment

A never-archived log has none of them: `first_kept` is 0 and line i of entries.jsonl is entry i. Otherwise line i
is entry `first_kept + i`; every reader goes through `LogView` (or the `LogLines` it gives) rather than counting
lines. Reading checks the three files against each other and raises `ArchiveStateError` naming the file that does
not hold.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge_agent.audit.entry import ENTRY_HASH_MARKER, GENESIS_HASH, HASH_HEX_LEN, AuditError
from edge_agent.audit.errors import AuditIntegrityError
from edge_agent.audit.files import ENTRIES, iter_lines
from edge_agent.audit.hasher import HASH_SIZE, leaf_hash

ARCHIVED_LEAVES = "archived.leaves"
ARCHIVED_LINES = "archived.jsonl"
ARCHIVE_STATE = "archive.json"

# Archived entries of these events are kept whole: verify needs the key rotations; an export carries the config,
# security and enrolment entries in force at its window, and chains from the last export; the anchor accepts
# findings by `audit.recovered` entries; `audit.archived` says what left the log.
RETAINED_EVENTS = (
    "key.rotated",
    "config.loaded",
    "config.security",
    "console.enrolled",
    "audit.export",
    "audit.recovered",
    "audit.archived",
)
_RETAINED_MARKERS = tuple(f'"event":"{event}"'.encode() for event in RETAINED_EVENTS)


class ArchiveStateError(AuditIntegrityError):
    """The archive files do not agree with each other or with entries.jsonl (edited, or partly restored)."""


class ArchivedError(AuditError):
    """An entry asked for that left the log in an archive bundle (`bundle` names it, None when unknown)."""

    def __init__(self, message: str, bundle: str | None) -> None:
        super().__init__(message)
        self.bundle = bundle


class ArchiveSegment(BaseModel):
    """One `audit archive` run: the entries it moved out and the bundle that holds them."""

    model_config = ConfigDict(extra="forbid")

    first_seq: int = Field(ge=0)
    last_seq: int = Field(ge=0)
    first_time: str
    last_time: str
    bundle: str
    bundle_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class ArchiveState(BaseModel):
    """archive.json: entries before `first_kept` are archived; `leaves_sha256` is archived.leaves' digest."""

    model_config = ConfigDict(extra="forbid")

    first_kept: int = Field(ge=0)
    leaves_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    segments: list[ArchiveSegment] = Field(default_factory=list)

    def to_bytes(self) -> bytes:
        return self.model_dump_json(indent=1).encode("utf-8") + b"\n"


def is_retained(line: bytes) -> bool:
    """Whether an archived line is one later readers need (by its event; the caller adds the last archived one)."""
    if not any(marker in line for marker in _RETAINED_MARKERS):
        return False
    return str(json.loads(line).get("event")) in RETAINED_EVENTS


def seq_of(line: bytes) -> int:
    return int(json.loads(line)["seq"])


def entry_hash_of(line: bytes) -> str:
    """The entry_hash a canonical line claims (entry.py: the first `"entry_hash":"` member is the top-level one)."""
    p = line.find(ENTRY_HASH_MARKER)
    if p < 0:
        return GENESIS_HASH
    start = p + len(ENTRY_HASH_MARKER)
    return line[start : start + HASH_HEX_LEN].decode(errors="replace")


def time_of(line: bytes) -> str:
    # Canonical lines end with "time":"<27 chars>"} (entry.py), so the time is at a fixed offset from the end.
    return line[-29:-2].decode()


@dataclass
class LogView:
    """The log in one directory as readers see it: archived leaf hashes, retained archived lines, kept entries."""

    directory: Path
    first_kept: int = 0
    archived_leaves: bytes = b""
    retained: dict[int, bytes] = field(default_factory=dict)
    segments: list[ArchiveSegment] = field(default_factory=list)

    @classmethod
    def read(cls, directory: Path | str) -> LogView:
        """The directory's view; ArchiveStateError naming the file when the archive files do not hold together."""
        directory = Path(directory)
        state_path = directory / ARCHIVE_STATE
        if not state_path.exists():
            return cls(directory)
        try:
            state = ArchiveState.model_validate_json(state_path.read_bytes())
        except (ValidationError, ValueError) as exc:
            raise ArchiveStateError(f"{state_path} cannot be read: {exc}") from exc
        leaves_path = directory / ARCHIVED_LEAVES
        leaves = leaves_path.read_bytes() if leaves_path.exists() else b""
        if hashlib.sha256(leaves).hexdigest() != state.leaves_sha256:
            raise ArchiveStateError(
                f"{leaves_path}: sha256 {hashlib.sha256(leaves).hexdigest()} != {state.leaves_sha256} recorded in"
                f" {state_path} (the archived leaf hashes were changed)"
            )
        if len(leaves) != state.first_kept * HASH_SIZE:
            raise ArchiveStateError(
                f"{leaves_path} holds {len(leaves) / HASH_SIZE:g} leaf hashes, {state_path} says {state.first_kept}"
            )
        view = cls(directory, state.first_kept, leaves, segments=state.segments)
        lines_path = directory / ARCHIVED_LINES
        for line in iter_lines(lines_path) if lines_path.exists() else []:
            try:
                seq = seq_of(line)
            except (ValueError, KeyError, TypeError) as exc:
                raise ArchiveStateError(f"{lines_path}: a line is not an audit entry: {exc}") from exc
            if not 0 <= seq < state.first_kept or leaf_hash(line) != view.leaf(seq):
                raise ArchiveStateError(f"{lines_path}: entry {seq} does not match its archived leaf hash")
            view.retained[seq] = line
        if state.first_kept and state.first_kept - 1 not in view.retained:
            raise ArchiveStateError(f"{lines_path} lacks the last archived entry {state.first_kept - 1}")
        return view

    @property
    def archived(self) -> bool:
        return self.first_kept > 0

    @property
    def head_hash(self) -> str:
        """The entry_hash the first kept entry chains from (the genesis hash for a never-archived log)."""
        if not self.first_kept:
            return GENESIS_HASH
        return entry_hash_of(self.retained[self.first_kept - 1])

    def leaf(self, seq: int) -> bytes:
        return self.archived_leaves[seq * HASH_SIZE : (seq + 1) * HASH_SIZE]

    def leaf_list(self) -> list[bytes]:
        """The archived entries' leaf hashes, seq order."""
        data = self.archived_leaves
        return [data[i : i + HASH_SIZE] for i in range(0, len(data), HASH_SIZE)]

    def kept_lines(self) -> Iterator[bytes]:
        """The complete lines of entries.jsonl: entries first_kept, first_kept + 1, ..."""
        path = self.directory / ENTRIES
        if path.exists():
            yield from iter_lines(path)

    def segment_of(self, seq: int) -> ArchiveSegment | None:
        return next((s for s in self.segments if s.first_seq <= seq <= s.last_seq), None)

    def where(self, seq: int) -> str:
        """Where archived entry `seq` is now, for an error: its bundle's name, or the archive files."""
        segment = self.segment_of(seq)
        return f"archive bundle {segment.bundle}" if segment else f"the archive recorded in {ARCHIVE_STATE}"

    def lines(self) -> LogLines:
        """Every line this directory still holds, indexed by seq (the kept entries read into memory)."""
        return LogLines(self, list(self.kept_lines()))


class LogLines(Sequence[bytes]):
    """The log's lines by seq: `len()` counts every entry, archived ones too; `lines[seq]` is the stored line of a
    kept or retained entry and raises ArchivedError naming the bundle for any other archived one. Iterating yields
    only the lines held (retained archived ones, then the kept ones), in seq order; `numbered` pairs them with seqs."""

    def __init__(self, view: LogView, kept: list[bytes], size: int | None = None) -> None:
        self.view = view
        self._kept = kept
        self._size = view.first_kept + len(kept) if size is None else size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> bytes: ...

    @overload
    def __getitem__(self, index: slice) -> LogLines | list[bytes]: ...

    def __getitem__(self, index: int | slice) -> bytes | LogLines | list[bytes]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._size)
            if start == 0 and step == 1:
                return self.prefix(stop)
            return [self[seq] for seq in range(start, stop, step)]
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError(f"entry {index} is beyond the log's {self._size} entries")
        first = self.view.first_kept
        if index >= first:
            return self._kept[index - first]
        if index in self.view.retained:
            return self.view.retained[index]
        raise ArchivedError(f"entry {index} is archived in {self.view.where(index)}", self._bundle(index))

    def prefix(self, size: int) -> LogLines:
        """The log as it was at `size` entries."""
        return LogLines(self.view, self._kept, max(0, min(size, self._size)))

    def _bundle(self, seq: int) -> str | None:
        segment = self.view.segment_of(seq)
        return segment.bundle if segment else None

    def __iter__(self) -> Iterator[bytes]:
        for _, line in self.numbered():
            yield line

    def numbered(self, stop: int | None = None) -> Iterator[tuple[int, bytes]]:
        """(seq, line) for each line held before `stop` (default: all), in seq order."""
        stop = self._size if stop is None else min(stop, self._size)
        first = self.view.first_kept
        for seq in sorted(self.view.retained):
            if seq < stop:
                yield seq, self.view.retained[seq]
        for offset in range(max(0, stop - first)):
            yield first + offset, self._kept[offset]

    def leaves(self, size: int | None = None) -> list[bytes]:
        """Leaf hashes of entries 0..size-1 (default: all), archived ones from archived.leaves."""
        size = self._size if size is None else min(size, self._size)
        first = self.view.first_kept
        archived = self.view.leaf_list()[:size]
        return archived + [leaf_hash(line) for line in self._kept[: max(0, size - first)]]


def leaf_hashes(lines: Sequence[bytes], size: int | None = None) -> list[bytes]:
    """Leaf hashes of the first `size` entries of `lines` (a LogLines, or a plain list where line i is entry i)."""
    if isinstance(lines, LogLines):
        return lines.leaves(size)
    return [leaf_hash(line) for line in (lines if size is None else lines[:size])]


def numbered(lines: Sequence[bytes], stop: int | None = None) -> Iterator[tuple[int, bytes]]:
    """(seq, line) for each line held before `stop`, for a LogLines or a plain list where line i is entry i."""
    if isinstance(lines, LogLines):
        yield from lines.numbered(stop)
        return
    yield from enumerate(lines if stop is None else lines[:stop])


def read_archive_state(directory: Path | str) -> ArchiveState | None:
    """archive.json alone (None: never archived, or unreadable), for a page that shows what was archived."""
    path = Path(directory) / ARCHIVE_STATE
    try:
        return ArchiveState.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def read_log_lines(directory: Path | str) -> LogLines:
    """Every line the directory holds, by seq (`LogView.read(directory).lines()`)."""
    return LogView.read(directory).lines()
