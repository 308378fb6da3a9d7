"""Write one benchmark's section of BENCHMARKS.md between its markers, leaving everything else alone.

A section is wholly generated:

    <!-- bench:NAME -->
    ## Title

    Command: `…` — 2026-12-04 02:31 UTC, x86_64, 2 CPUs, Python 3.11.7, commit 33c77bb

    - **Headline:** the one figure that sums the run up
    - **Goal:** the goal it is held to, and met / missed (computed from the figures)

    …the bench's tables…

    Earlier runs, newest first:
    <!-- history:NAME -->
    - 2026-12-03 19:11 UTC, commit 019333d, x86_64, 2 CPUs, Python 3.11.7: headline — goal: …
    <!-- /history:NAME -->
    <!-- /bench:NAME -->

When a bench writes its section again, the run it replaces becomes the first line of the history (its date, commit,
machine, headline and goal, read back from the old section), capped at HISTORY_MAX lines; the index table between
`<!-- index -->` markers at the top of the file is rebuilt from every section's header. Text outside the markers
(the intro, short notes between sections) is never touched.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "BENCHMARKS.md"
HISTORY_MAX = 15
INDEX_START, INDEX_END = "<!-- index -->", "<!-- /index -->"
HEADER = (
    "# Benchmarks\n\n"
    "What the agent measures on a plant's kind of machine, each table written by `make bench` (`python -m bench`, or\n"
    "the one module named in its section) with the command, date, machine and commit it ran at; the runs before it\n"
    "are listed under it, one line each. Ratios come from one run, engines side by side.\n\n"
    f"{INDEX_START}\n{INDEX_END}\n"
)

_HEADER_LINE = re.compile(
    r"^Command: `(?P<command>.*)` — (?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d UTC), (?P<machine>.*?)"
    r"(?:, commit (?P<commit>[^\s,]+))?$",
    re.M,
)
_HEADLINE = re.compile(r"^- \*\*Headline:\*\* (?P<text>.*)$", re.M)
_GOAL = re.compile(r"^- \*\*Goal:\*\* (?P<text>.*)$", re.M)
_TITLE = re.compile(r"^## (?P<text>.*)$", re.M)


# The widest int8 instructions the CPU has, best first: at int8 the compiled engine's kernels follow them, and its
# text with them (one commit's bench.narrative: 99.2 % of sections on one install, 96.7 % on this AVX-512 VNNI one).
_INT8_ISA = ("amx_int8", "avx512_vnni", "avx_vnni", "avx512f", "avx2")


def cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name and its widest int8 instructions ("AMD EPYC (avx512_vnni)"); "" where `cpuinfo`
    cannot be read."""
    try:
        info = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    fields = dict(line.split(":", 1) for line in info.splitlines() if ":" in line)
    model = " ".join(fields.get("model name\t", fields.get("model name", "")).split()).replace(",", "")
    flags = set(fields.get("flags\t\t", fields.get("flags", "")).split())
    isa = next((name for name in _INT8_ISA if name in flags), "")
    return f"{model} ({isa})" if model and isa else model


def machine() -> str:
    named = cpu()
    return (
        f"{platform.machine()}{' ' + named if named else ''}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )


def commit() -> str:
    """`git rev-parse --short HEAD` of this checkout; "unknown" outside one (or without git)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else "unknown"


@dataclass(frozen=True)
class RunInfo:
    """When, where and at which commit a bench ran: what every section's header names. Benches that keep their
    results store it with them (`as_dict`), so a section rewritten from saved results keeps the run's own."""

    stamp: str  # "2026-12-04 02:31 UTC"
    machine: str
    commit: str

    @classmethod
    def now(cls) -> RunInfo:
        return cls(datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), machine(), commit())

    def as_dict(self) -> dict[str, str]:
        return {"stamp": self.stamp, "machine": self.machine, "commit": self.commit}

    @classmethod
    def from_dict(cls, data: Any) -> RunInfo | None:
        """The run of saved results; None for results saved before runs were recorded."""
        if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("stamp", "machine", "commit")):
            return None
        return cls(data["stamp"], data["machine"], data["commit"])


@dataclass
class Section:
    name: str
    title: str
    command: str
    run: RunInfo
    headline: str
    goal: str
    body: str
    history: list[str] = field(default_factory=list)

    def history_line(self) -> str:
        """This run as one line of the history: date, commit, machine, headline and goal."""
        return f"- {self.run.stamp}, commit {self.run.commit}, {self.run.machine}: {self.headline} — goal: {self.goal}"

    def render(self) -> str:
        history = "\n".join(self.history[:HISTORY_MAX])
        earlier = (
            f"Earlier runs, newest first:\n<!-- history:{self.name} -->\n{history}\n<!-- /history:{self.name} -->"
            if history
            else f"Earlier runs: none recorded.\n<!-- history:{self.name} -->\n<!-- /history:{self.name} -->"
        )
        return (
            f"<!-- bench:{self.name} -->\n## {self.title}\n\n"
            f"Command: `{self.command}` — {self.run.stamp}, {self.run.machine}, commit {self.run.commit}\n\n"
            f"- **Headline:** {_one_line(self.headline)}\n- **Goal:** {_one_line(self.goal)}\n\n"
            f"{self.body.strip()}\n\n{earlier}\n<!-- /bench:{self.name} -->"
        )


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _section_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"<!-- bench:{re.escape(name)} -->.*?<!-- /bench:{re.escape(name)} -->", re.S)


def old_run(section: str) -> tuple[RunInfo, str] | None:
    """The run a section shows now, as (run, history line); None when its header cannot be read."""
    header = _HEADER_LINE.search(section)
    if header is None:
        return None
    run = RunInfo(header["stamp"], header["machine"], header["commit"] or "unknown")
    headline, goal = _HEADLINE.search(section), _GOAL.search(section)
    line = (
        f"- {run.stamp}, commit {run.commit}, {run.machine}: "
        f"{headline['text'] if headline else '(no headline recorded)'} — goal: {goal['text'] if goal else '—'}"
    )
    return run, line


def old_history(name: str, section: str) -> list[str]:
    block = re.search(rf"<!-- history:{re.escape(name)} -->\n(.*?)<!-- /history:{re.escape(name)} -->", section, re.S)
    return [line for line in (block[1].splitlines() if block else []) if line.startswith("- ")]


def update(text: str, section: Section) -> str:
    """`text` (the whole file) with `section` in place of its old one, the old run prepended to its history, and
    the index rebuilt. Rendering the same run again (the same date and commit) adds no history line."""
    pattern = _section_pattern(section.name)
    old = pattern.search(text)
    history: list[str] = []
    if old is not None:
        history = old_history(section.name, old[0])
        previous = old_run(old[0])
        if previous is not None and (previous[0].stamp, previous[0].commit) != (section.run.stamp, section.run.commit):
            history.insert(0, previous[1])
    section.history = history[:HISTORY_MAX]
    rendered = section.render()
    text = pattern.sub(lambda _: rendered, text) if old is not None else text.rstrip() + "\n\n" + rendered + "\n"
    return with_index(text)


def index(text: str) -> str:
    """The index table: every section's title (linked), headline, goal and date, in file order."""
    rows = ["| benchmark | headline | goal | date |", "|---|---|---|---|"]
    for match in re.finditer(r"<!-- bench:([\w-]+) -->(.*?)<!-- /bench:\1 -->", text, re.S):
        body = match[2]
        title, header = _TITLE.search(body), _HEADER_LINE.search(body)
        headline, goal = _HEADLINE.search(body), _GOAL.search(body)
        if title is None:
            continue
        cells = [
            f"[{title['text']}](#{slug(title['text'])})",
            headline["text"] if headline else "—",
            goal["text"] if goal else "—",
            header["stamp"][:10] if header else "—",
        ]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows)


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def with_index(text: str) -> str:
    table = f"{INDEX_START}\n{index(text)}\n{INDEX_END}"
    start, end = text.find(INDEX_START), text.find(INDEX_END)
    if start != -1 and end > start:
        return text[:start] + table + text[end + len(INDEX_END) :]
    first = text.find("<!-- bench:")
    if first == -1:
        return text.rstrip() + "\n\n" + table + "\n"
    return text[:first] + table + "\n\n" + text[first:]


def engine_mode(enforce_eager: bool) -> str:
    """How a bench's engines ran, in the words of the config key: compiled (the default) or eager."""
    return "`enforce_eager = true` (eager)" if enforce_eager else "`enforce_eager = false` (compiled)"


def met(ok: bool) -> str:
    return "**met**" if ok else "**missed**"


def write_section(
    name: str,
    title: str,
    body: str,
    command: str,
    *,
    headline: str,
    goal: str,
    run: RunInfo | None = None,
    path: Path | None = None,
) -> None:
    """Replace (or append) the section `<!-- bench:name -->` … `<!-- /bench:name -->` in BENCHMARKS.md.

    `command` is what a reader types to reproduce the figures, e.g. ".venv/bin/python -m bench.audit"; `headline`
    and `goal` are computed from the results (the goal with its met / missed); `run` defaults to now, here.
    """
    path = path or BENCHMARKS
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    section = Section(name, title, command, run or RunInfo.now(), headline, goal, body)
    path.write_text(update(text, section), encoding="utf-8")
