"""Write one benchmark's section of BENCHMARKS.md between its markers, leaving the other sections alone."""

from __future__ import annotations

import platform
import re
from datetime import UTC, datetime
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
HEADER = "# Benchmarks\n\nEvery figure below was measured by the command shown with it; ratios come from one run.\n"


def machine() -> str:
    import os

    return f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def engine_mode(enforce_eager: bool) -> str:
    """How a bench's engines ran, in the words of the config key: compiled (the default) or eager."""
    return "`enforce_eager = true` (eager)" if enforce_eager else "`enforce_eager = false` (compiled)"


def write_section(name: str, title: str, body: str, command: str) -> None:
    """Replace (or append) the section `<!-- bench:name -->` … `<!-- /bench:name -->` in BENCHMARKS.md.

    `command` is what a reader types to reproduce the figures, e.g. ".venv/bin/python -m bench.audit".
    """
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = (
        f"<!-- bench:{name} -->\n## {title}\n\n"
        f"Command: `{command}` — {stamp}, {machine()}\n\n{body.strip()}\n<!-- /bench:{name} -->"
    )
    text = BENCHMARKS.read_text(encoding="utf-8") if BENCHMARKS.exists() else HEADER
    pattern = re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section + "\n"
    BENCHMARKS.write_text(text, encoding="utf-8")
