"""Directories built whole or not at all (models, adapters): what a failure leaves, what a success leaves."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from edge_agent.base.directories import build_directory


def write_two(tmp: Path) -> str:
    (tmp / "a.txt").write_text("new")
    (tmp / "sub").mkdir()
    (tmp / "sub" / "b.bin").write_bytes(b"\x00")
    return "built"


class TestBuildDirectory:
    def test_a_success_replaces_the_old_directory_readable_by_all(self, tmp_path: Path) -> None:
        out = tmp_path / "model"
        out.mkdir()
        (out / "old.txt").write_text("old")
        assert build_directory(out, write_two) == "built"
        assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["a.txt", "sub", "sub/b.bin"]
        assert stat.S_IMODE(out.stat().st_mode) == 0o755
        assert stat.S_IMODE((out / "sub" / "b.bin").stat().st_mode) == 0o644
        assert [p.name for p in tmp_path.iterdir()] == ["model"]

    def test_a_failure_leaves_the_old_directory_and_no_leftovers(self, tmp_path: Path) -> None:
        out = tmp_path / "model"
        out.mkdir()
        (out / "old.txt").write_text("old")

        def fails(tmp: Path) -> None:
            write_two(tmp)
            raise KeyboardInterrupt  # as a Ctrl-C in the middle of a conversion

        with pytest.raises(KeyboardInterrupt):
            build_directory(out, fails)
        assert [p.name for p in out.iterdir()] == ["old.txt"]
        assert [p.name for p in tmp_path.iterdir()] == ["model"]

    def test_missing_parents_are_made(self, tmp_path: Path) -> None:
        out = tmp_path / "a" / "b" / "adapter"
        build_directory(out, write_two)
        assert (out / "a.txt").read_text() == "new"
