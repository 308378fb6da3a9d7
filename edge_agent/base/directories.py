"""Directories built whole or not at all: a prepared model, an imported model, an exported adapter."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def make_readable(directory: Path) -> None:
    """mkdtemp makes a private directory; the daemon may run as another user than the one who built it."""
    directory.chmod(0o755)
    for path in directory.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)


def build_directory(out: Path, build: Callable[[Path], T]) -> T:
    """Run `build(tmp)` in a sibling temporary directory, make it readable by all, then put it where `out` was
    (replacing it): a failure or a kill while building leaves `out` as it was, and a reader never sees half a
    directory. Returns what `build` returned."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        result = build(tmp)
        make_readable(tmp)
        if out.exists():
            shutil.rmtree(out)
        tmp.replace(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result
