"""The measured figures the guides quote are BENCHMARKS.md's: each is read from a table of a benchmark's current run
(never its history) and every place README.md or a page of docs/ quotes it must say the same. Each pattern must be
found, so a reworded guide fails here too instead of going quiet; a re-run benchmark that moves a figure fails here
until the guides say the new one."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from edge_agent.config.qualify import QualifyConfig

REPO = Path(__file__).resolve().parents[1]
GUIDES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])

Row = dict[str, str]


def section(text: str, bench: str) -> str:
    """A benchmark's current run: between `<!-- bench:NAME -->` and its history (the earlier runs' lines)."""
    start = text.index(f"<!-- bench:{bench} -->")
    return text[start : text.index(f"<!-- history:{bench} -->", start)]


def tables(text: str) -> list[list[Row]]:
    """Every Markdown table in `text`, each a list of rows keyed by the header's cells (bold marks dropped)."""
    found: list[list[Row]] = []
    block: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append([cell.strip().replace("**", "") for cell in line.strip().strip("|").split("|")])
            continue
        if len(block) > 2:
            header, rows = block[0], block[2:]
            found.append([dict(zip(header, row, strict=True)) for row in rows])
        block = []
    return found


def cell(bench: str, first: str, column: str, table: int = 0) -> str:
    """The cell of `column` (a header that starts so) in the row whose first cell starts with `first`, in the
    section's `table`-th table that has both."""
    text = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    rows = [
        next(r for r in t if next(iter(r.values())).startswith(first))
        for t in tables(section(text, bench))
        if any(key.startswith(column) for key in t[0]) and any(next(iter(r.values())).startswith(first) for r in t)
    ][table]
    return next(value for key, value in rows.items() if key.startswith(column))


def number(text: str) -> float:
    """The first number in a cell: `5,165 /s (last after 19.36 s)` is 5165, `2.70×` 2.7."""
    return float(written(text).replace(",", ""))


def written(text: str) -> str:
    """The first number in a cell as the table writes it (`5,165`, `2.70`)."""
    match = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    assert match is not None, f"no number in {text!r}"
    return match.group(0)


def figure(bench: str, first: str, column: str, table: int = 0) -> Callable[[], str]:
    return lambda: written(cell(bench, first, column, table))


def median_end_to_end() -> str:
    """bench.reports lists its latency runs; the median is the middle one."""
    text = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    runs = tables(section(text, "reports"))[0]
    times = sorted(number(r["end to end (s)"]) for r in runs)
    return f"{times[len(times) // 2]:.2f}"


def reports_with_draft(dtype: str) -> float:
    return number(cell("report_speed", dtype, "with the draft"))


def int8_over_float32() -> str:
    return f"{reports_with_draft('float32') / reports_with_draft('int8'):.2f}"


def offered_share() -> str:
    """bench.opcua_rate's paced column: `1991/s (1.00 of offered)`."""
    match = re.search(r"\(([\d.]+) of offered\)", cell("opcua_rate", "stored per second", "target"))
    assert match is not None
    return match.group(1)


def compiled(column: str) -> Callable[[], str]:
    """The compiled engine's start-up or restart seconds (bench.llamacpp), whole seconds as the guides say them."""
    return lambda: f"{number(cell('llamacpp', 'ours, EAGLE k=4, compiled', column)):.0f}"


LLAMA = "ours, EAGLE k=4, compiled"

# (what, pattern with the figure in group 1 (and 2, …), the figures BENCHMARKS.md's tables give)
QUOTED: list[tuple[str, str, Callable[[], tuple[str, ...]]]] = [
    (
        "shift report over MQTT, median",
        r"request published → `done` received \| ([\d.]+) s median",
        lambda: (median_end_to_end(),),
    ),
    (
        "shift report at int8 with the draft, median",
        r"shift report median of ([\d.]+) s",
        lambda: (figure("report_speed", "int8", "shift report median")(),),
    ),
    (
        "audit verify rate",
        r"(?:audit log verification \||runs at) ([\d,]+) entries/s",
        lambda: (figure("audit", "`verify_log`", "entries/s")(),),
    ),
    (
        "MQTT ingest rate",
        r"([\d,]+) (?:MQTT )?messages/s",
        lambda: (figure("mqtt_ingest", "live", "agent (stored)")(),),
    ),
    (
        "OPC UA ingest, share of the paced rate stored",
        r"([\d.]+) of 2,000 values/s offered",
        lambda: (offered_share(),),
    ),
    (
        "Sparkplug B ingest rate",
        r"([\d,]+) metrics/s",
        lambda: (figure("sparkplug", "2,000", "metrics stored /s")(),),
    ),
    (
        "llama.cpp ratios, end to end and decode",
        r"([\d.]+)× end to end \(([\d.]+)× reports, ([\d.]+)× chat\); ([\d.]+)× in decode rate",
        lambda: (
            figure("llamacpp", LLAMA, "× llama.cpp (")(),
            figure("llamacpp", LLAMA, "× llama.cpp report")(),
            figure("llamacpp", LLAMA, "× llama.cpp test")(),
            figure("llamacpp", LLAMA, "× llama.cpp (", table=1)(),
        ),
    ),
    (
        "llama.cpp ratios on chat prompts",
        r"margin over llama\.cpp is small \(([\d.]+)×, ([\d.]+)× in decode\s+rate\)",
        lambda: (figure("llamacpp", LLAMA, "× llama.cpp test")(), figure("llamacpp", LLAMA, "× llama.cpp test", 1)()),
    ),
    (
        "int8 speed-up over float32, whole reports with the draft",
        r"([\d.]+)× faster \(([\d.]+) s against ([\d.]+) s\)",
        lambda: (
            int8_over_float32(),
            figure("report_speed", "int8", "with the draft")(),
            figure("report_speed", "float32", "with the draft")(),
        ),
    ),
    (
        "the draft head's speed-up and effect",
        r"([\d.]+)× at int8 \(the head changes the text of (\d+) of 36\); ([\d.]+)× at float32",
        lambda: (
            figure("report_speed", "int8", "×")(),
            figure("report_speed", "int8", "draft changed output")(),
            figure("report_speed", "float32", "×")(),
        ),
    ),
    (
        "model-written sections and reports",
        r"([\d.]+) % of sections, ([\d.]+) % of whole reports",
        lambda: (
            figure("narrative", "sections model-written", "value")(),
            figure("narrative", "reports with every section", "value")(),
        ),
    ),
    (
        "the compiled engine's first start and restart",
        r"compiles the engine's kernels, (\d+) s on 2 cores, into `var/compile-cache`; later starts take (\d+) s",
        lambda: (compiled("start-up s")(), compiled("restart s")()),
    ),
    (
        "the compiled engine's first start and restart (upgrades)",
        r"\((\d+) s on 2 cores(?:, against|; a restart that finds them compiled takes) (\d+) s",
        lambda: (compiled("start-up s")(), compiled("restart s")()),
    ),
    (
        "the compiled engine's first start (runbook)",
        r"compiles(?: for)?,? (\d+) s",
        lambda: (compiled("start-up s")(),),
    ),
    (
        "agent and engine memory peak",
        r"([\d,]+) MiB peak",
        lambda: (figure("hostile", "agent + worker (sum of VmHWM", "peak")(),),
    ),
    (
        "agent and engine memory peak (the unit)",
        r"measured a peak of\s+([\d,]+) MiB",
        lambda: (figure("hostile", "agent + worker (sum of VmHWM", "peak")(),),
    ),
    (
        "qualify's sources: report workload at int8",
        r"([\d.]+) tok/s without the draft and ([\d.]+) tok/s with it, τ ([\d.]+)",
        lambda: (
            f"{number(cell('report_speed', 'generated tokens', 'no draft')):.1f}",
            f"{number(cell('report_speed', 'generated tokens', 'EAGLE 3.1')):.1f}",
            figure("report_speed", "int8", "τ")(),
        ),
    ),
]


def quotes(pattern: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each match in each guide, its lines joined (a figure's phrase may wrap)."""
    return [
        (path.relative_to(REPO).as_posix(), m.groups())
        for path in GUIDES
        for m in re.finditer(pattern, re.sub(r"\s+", " ", path.read_text(encoding="utf-8")))
    ]


@pytest.mark.parametrize(("what", "pattern", "value"), QUOTED, ids=[q[0] for q in QUOTED])
def test_guides_quote_the_benchmarks_figure(what: str, pattern: str, value: Callable[[], tuple[str, ...]]) -> None:
    """Every place a guide quotes this figure gives BENCHMARKS.md's current one, and at least one place does."""
    expected = value()
    found = quotes(pattern)
    assert found, f"no guide quotes {what} any more: update QUOTED"
    assert [(path, got) for path, got in found if got != expected] == [], f"BENCHMARKS.md says {expected}"


class TestQualifyDefaults:
    """qualify's default criteria are BENCHMARKS.md's figures with the margin docs/validation.md states, and the
    guide's table quotes the defaults the code has."""

    def test_the_defaults_follow_from_the_figures(self) -> None:
        """Half the rate (rounded down), twice the time (rounded up), three quarters of τ (to one decimal)."""
        q = QualifyConfig()
        plain = number(cell("report_speed", "generated tokens", "no draft"))
        draft = number(cell("report_speed", "generated tokens", "EAGLE 3.1"))
        tau = number(cell("report_speed", "int8", "τ"))
        shift_p50 = number(cell("report_speed", "int8", "shift report median"))
        ingest = number(cell("mqtt_ingest", "live", "agent (stored)"))
        assert q.plain_tokens_per_s_min == math.floor(plain / 2 * 10) / 10
        assert q.draft_tokens_per_s_min == math.floor(draft / 2 * 10) / 10
        assert q.tau_min == round(tau * 0.75, 1)
        assert q.report_p50_max_s == math.ceil(shift_p50 * 2)
        assert q.report_p95_max_s == 2 * q.report_p50_max_s
        assert q.ingest_min_per_s == math.floor(ingest / 2 / 10) * 10

    def test_the_guide_quotes_the_defaults(self) -> None:
        text = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
        rows = {r["check"]: r["default criterion"] for t in tables(text) if "default criterion" in t[0] for r in t}
        q = QualifyConfig()
        assert number(rows["`pq.tokens_per_s.plain`"]) == q.plain_tokens_per_s_min
        assert number(rows["`pq.tokens_per_s.draft`"]) == q.draft_tokens_per_s_min
        assert number(rows["`pq.tau`"]) == q.tau_min
        assert re.findall(r"[\d.]+", rows["`pq.latency.<type>.p50`, `.p95`"]) == [
            f"{q.report_p50_max_s:g}",
            f"{q.report_p95_max_s:g}",
        ]
        assert number(rows["`pq.ingest`"]) == q.ingest_min_per_s


def test_the_guides_agree_on_qualifys_run_time() -> None:
    """deployment.md quotes the run time validation.md measured."""
    measured = re.search(r"\| (\d+ min \d+ s) \|", (REPO / "docs" / "validation.md").read_text(encoding="utf-8"))
    quoted = re.search(r"IQ/OQ/PQ, (\d+ min \d+ s)", (REPO / "docs" / "deployment.md").read_text(encoding="utf-8"))
    assert measured is not None and quoted is not None
    assert quoted.group(1) == measured.group(1)


def test_a_stale_figure_is_caught() -> None:
    """The pattern reads the figure a guide kept from an earlier run (the audit rate README once said)."""
    text = "| audit log verification | 200,000 entries/s |"
    assert [m.groups() for m in re.finditer(QUOTED[2][1], text)] == [("200,000",)] != [QUOTED[2][2]()]


def test_tables_are_read_by_their_header() -> None:
    """A table's rows are keyed by its header; bold marks go; text around it is not a table."""
    text = "intro\n\n| phase | agent |\n|---|---|\n| live | **5,165** /s |\n| backlog | 5,425 /s |\n\nafter\n"
    assert tables(text) == [[{"phase": "live", "agent": "5,165 /s"}, {"phase": "backlog", "agent": "5,425 /s"}]]
    assert number("5,165 /s (last after 19.36 s)") == 5165


def test_changelog_links_resolve() -> None:
    """CHANGELOG.md links only to pages that exist: relative paths in the repository or real sites, never a
    placeholder host (no tag exists for a compare link to name)."""
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r"^\[[^\]]+\]:\s*(\S+)", text, re.M)
    assert targets
    broken = [
        t
        for t in targets
        if ("invalid" in t or "example." in t)
        or (not re.match(r"https?://", t) and not (REPO / t.partition("#")[0]).exists())
    ]
    assert broken == []
