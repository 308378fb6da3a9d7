"""`make bench` (python -m bench) runs every benchmark module; each one starts and answers --help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import BENCHES

ROOT = Path(__file__).resolve().parents[1]


def test_make_bench_runs_every_benchmark_module() -> None:
    """A benchmark added under bench/ is part of `make bench` (report.py is the shared section writer)."""
    modules = {p.stem for p in (ROOT / "bench").glob("*.py")} - {"__init__", "__main__", "report"}
    assert set(BENCHES) == modules


@pytest.mark.parametrize("name", sorted(BENCHES))
def test_each_benchmark_parses_its_arguments(name: str) -> None:
    """`python -m bench.NAME --help` exits 0 with usage text: the module imports and has a command line."""
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


def test_unknown_benchmark_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--only", "nope"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr
