"""The switch from a log directory's files to their trimmed versions after `audit archive`, crash-safe.

The new archived.leaves, archived.jsonl, archive.json and entries.jsonl are written as `<name>.new` and fsync'd
(`Cutover.stage`); then the journal `archive.pending` is written durably: that is the commit. Each `.new` file is
renamed over its name, and the journal is removed. A crash before the journal leaves the old log (the `.new` files
are deleted on the next open); a crash after it leaves a journal, and the next open renames whatever `.new` files
are still there, giving the new log (`settle`). Renames are atomic, so at no point is a file half old, half new.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import structlog

from edge_agent.audit.files import ENTRIES
from edge_agent.audit.view import ARCHIVE_STATE, ARCHIVED_LEAVES, ARCHIVED_LINES
from edge_agent.signing import fsync_dir, write_durably

log = structlog.get_logger(component="audit")

JOURNAL = "archive.pending"
NEW = ".new"
# The rename order: the archive files first, entries.jsonl last. Only the journal decides which log a crash leaves;
# the order keeps the files a reader without the journal sees closest to the old log the longest.
FILES = (ARCHIVED_LEAVES, ARCHIVED_LINES, ARCHIVE_STATE, ENTRIES)


def _write_synced(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


@dataclass(frozen=True)
class Cutover:
    """The trimmed files for one directory. `steps()` are the switch, in order; `run()` does them all."""

    directory: Path
    leaves: bytes
    lines: bytes
    state: bytes
    kept_from: int  # the byte offset in entries.jsonl of the first kept entry

    def steps(self) -> list[tuple[str, Callable[[], None]]]:
        renames = [(f"rename {name}", self._renamer(name)) for name in FILES]
        return [("stage", self.stage), ("commit", self.commit), *renames, ("finish", self.finish)]

    def run(self) -> None:
        for _, step in self.steps():
            step()

    def stage(self) -> None:
        d = self.directory
        _write_synced(d / (ARCHIVED_LEAVES + NEW), self.leaves)
        _write_synced(d / (ARCHIVED_LINES + NEW), self.lines)
        _write_synced(d / (ARCHIVE_STATE + NEW), self.state)
        with open(d / ENTRIES, "rb") as src, open(d / (ENTRIES + NEW), "wb") as dst:
            src.seek(self.kept_from)
            shutil.copyfileobj(src, dst, 1 << 20)
            dst.flush()
            os.fsync(dst.fileno())
        fsync_dir(d)

    def commit(self) -> None:
        write_durably(self.directory / JOURNAL, "\n".join(FILES).encode() + b"\n")

    def _renamer(self, name: str) -> Callable[[], None]:
        def rename() -> None:
            os.replace(self.directory / (name + NEW), self.directory / name)
            fsync_dir(self.directory)

        return rename

    def finish(self) -> None:
        (self.directory / JOURNAL).unlink()
        fsync_dir(self.directory)


def settle(directory: Path) -> str | None:
    """Complete an archive step a crash interrupted after its commit, or undo one interrupted before it (under the
    log's lock, before it is read). Returns what was done ("completed", "undone"), None when there was nothing."""
    journal = directory / JOURNAL
    staged = [name for name in FILES if (directory / (name + NEW)).exists()]
    (directory / (JOURNAL + ".tmp")).unlink(missing_ok=True)  # write_durably's temporary: no commit yet
    if journal.exists():
        for name in staged:
            os.replace(directory / (name + NEW), directory / name)
        fsync_dir(directory)
        journal.unlink()
        fsync_dir(directory)
        log.warning("audit_archive_completed_on_open", renamed=staged)
        return "completed"
    if staged:
        for name in staged:
            (directory / (name + NEW)).unlink()
        fsync_dir(directory)
        log.warning("audit_archive_undone_on_open", removed=staged)
        return "undone"
    return None
