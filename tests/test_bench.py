"""`make bench` (python -m bench) runs every benchmark module; each one starts and answers --help; the section
writer keeps one current table per benchmark with its history, and leaves the rest of BENCHMARKS.md alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import BENCHES

ROOT = Path(__file__).resolve().parents[1]


def test_make_bench_runs_every_benchmark_module() -> None:
    """A benchmark added under bench/ is part of `make bench` (report.py is the shared section writer)."""
    modules = {p.stem for p in (ROOT / "bench").glob("*.py")} - {"__init__", "__main__", "report"}
    assert {module for module, _ in BENCHES.values()} == modules


def test_make_bench_writes_every_section_of_benchmarks_md() -> None:
    """Every generated section of BENCHMARKS.md has its entry in `make bench`, under the section's name."""
    sections = re.findall(r"<!-- bench:([\w-]+) -->", (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8"))
    assert sorted(sections) == sorted(BENCHES)


@pytest.mark.parametrize("name", sorted({module for module, _ in BENCHES.values()}))
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


def test_report_speed_ratios_and_the_prefill_ceiling() -> None:
    """Two reports: wall seconds 6+4 without a draft, 3+2 with → 2.00×; decode 4.0 s → 1.0 s (4×) behind 2.0 s of
    prefill on both, so a free draft could give at most 6.0 / (2.0 + 1.0) = 2.00× of the generation time."""
    from bench.report_speed import summary

    def engine(seconds: float, first: float, gen: float, drafts: int = 0, accepted: int = 0) -> dict[str, float]:
        return {
            "seconds": seconds,
            "generations": 5,
            "tokens": 100,
            "prompt_tokens": 2500,
            "generation_s": gen,
            "first_token_s": first,
            "drafts": drafts,
            "accepted": accepted,
        }

    rows = [
        {
            "type": "shift_summary",
            "language": "es",
            "identical": True,
            "none": engine(6, 1, 3),
            "draft": engine(3, 1, 1.5, 10, 30),
        },
        {
            "type": "alarm_summary",
            "language": "en",
            "identical": False,
            "none": engine(4, 1, 3),
            "draft": engine(2, 1, 1.5, 10, 10),
        },
    ]
    s = summary({"rows": rows})
    assert s["speedup"] == pytest.approx(2.0)
    assert s["speedup_by_type"] == {"alarm_summary": pytest.approx(2.0), "shift_summary": pytest.approx(2.0)}
    assert s["identical"] == 1
    assert s["decode_speedup"] == pytest.approx(4.0)
    assert s["prefill_share_none"] == pytest.approx(2 / 6)
    assert s["ceiling"] == pytest.approx(2.0)
    assert s["tau"] == pytest.approx(1 + 40 / 20)
    assert s["prompt_tokens_per_generation"] == pytest.approx(500)
    assert "other" not in s


def test_report_speed_other_mode_is_the_default_mode_against_the_flipped_one() -> None:
    """--other-mode: the draft engine with enforce_eager flipped took 4.5 s + 3.0 s against the default's 3 + 2 →
    the default mode is 1.50× as fast; one of the two reports' outputs differs from the default's."""
    from bench.report_speed import markdown, summary

    def engine(seconds: float) -> dict[str, float]:
        keys = ("generations", "tokens", "prompt_tokens", "first_token_s", "drafts", "accepted")
        return {"seconds": seconds, "generation_s": 2} | dict.fromkeys(keys, 1)

    rows = [
        {"type": t, "language": "es", "identical": True, "identical_other": same}
        | {"none": engine(6), "draft": engine(d), "other": engine(o)}
        for t, d, o, same in (("shift_summary", 3, 4.5, True), ("alarm_summary", 2, 3.0, False))
    ]
    results = {"rows": rows, "k": 4, "draft": "assets/h", "enforce_eager": False}
    s = summary(results)
    assert s["other"] == {
        "seconds": 7.5,
        "seconds_per_report_median": 3.75,
        "default_speedup": pytest.approx(1.5),
        "identical": 1,
    }
    assert (
        "A third engine in the same rotation, the default config with `enforce_eager = true` (eager): 7.5 s for all "
        "requests (median 3.75 s) against the default's 5.0 s: the default mode is **1.50×** as fast on whole "
        "reports; outputs identical to the default's on 1/2 requests."
    ) in markdown(results, s)
    assert "`enforce_eager = false` (compiled), single stream." in markdown(results, s)
    assert "on three engines alive side by side" in markdown(results, s) and "rotates by request" in markdown(
        results, s
    )


def test_report_speed_precisions_and_the_goal() -> None:
    """--dtypes float32: int8 (the config's) reports 2+4 s with the draft against 6+8 without, float32's 5+9 and
    12+14; int8's draft changed the second report's output, float32's none; int8 wrote 3 of 4 asked sections."""
    from bench.report_speed import headline_goal, markdown, precisions, summary

    def engine(seconds: float, sha: str, written: tuple[int, int] = (2, 2)) -> dict[str, Any]:
        keys = ("generations", "tokens", "prompt_tokens", "first_token_s", "drafts", "accepted")
        base = {"seconds": seconds, "generation_s": seconds / 2, "outputs_sha256": sha, "model_written": written}
        return base | dict.fromkeys(keys, 1)

    rows = [
        {"type": "shift_summary", "language": "es", "identical": True}
        | {
            "none": engine(6, "a"),
            "draft": engine(2, "a"),
            "float32:none": engine(12, "f"),
            "float32:draft": engine(5, "f"),
        },
        {"type": "alarm_summary", "language": "en", "identical": False}
        | {
            "none": engine(8, "b"),
            "draft": engine(4, "c", (1, 2)),
            "float32:none": engine(14, "g"),
            "float32:draft": engine(9, "g"),
        },
    ]
    results = {
        "rows": rows,
        "k": 4,
        "draft": "h",
        "enforce_eager": False,
        "dtype": "int8",
        "dtypes": ["int8", "float32"],
    }
    table = precisions(results)
    assert table["int8"]["seconds"] == {"none": 14, "draft": 6}
    assert (table["int8"]["identical"], table["int8"]["identical_to_float32"]) == (1, 0)
    assert (table["float32"]["identical"], table["float32"]["identical_to_float32"]) == (2, 2)
    assert table["int8"]["sections_model_written"] == [3, 4] and table["int8"]["reports_all_model"] == 1
    assert table["int8"]["shift_median_s"] == 2 and table["float32"]["shift_median_s"] == 5
    s = summary(results)
    headline, goal = headline_goal(results, s)
    assert headline.startswith("int8: 2.33× whole-report wall time") and "shift report median 2.00 s" in headline
    assert goal == "≥ 2.0× (identity not promised at int8), shift report ≤ 5 s: **met**"
    text = markdown(results, s)
    assert "| int8 | 14.0 s | 6.0 s | 2.33× | 3.00 s | 2.00 s |" in text and "| 1/2 | 0/2 | 75.0 % | 50.0 % |" in text
    assert "| float32 | 26.0 s | 14.0 s | 1.86× |" in text
    slow = results | {"dtype": "float32", "dtypes": ["float32"]}
    assert headline_goal(slow, summary(slow))[1].endswith("**missed**")  # float32 must be identical: 1/2 is not


def test_bandwidth_bytes_per_pass_and_ceilings(tmp_path: Path) -> None:
    """Parameters come from the safetensors header alone (a tied embedding stored once is counted once); a pass
    reading 500 MB at 20 GB/s runs at most 40 times a second; with a draft of 25 MB read k = 4 times per pass and
    τ = 3, at most 3 × 20 GB/s ÷ 600 MB = 100 tok/s; τ is read from the sections that record it."""
    import json
    import struct

    from bench.bandwidth import TAU_CHAT_ISSUE_38, ceiling, quoted_taus, safetensors_params, spec_ceiling

    header = {
        "__metadata__": {"format": "pt"},
        "model.embed_tokens.weight": {"dtype": "F32", "shape": [10, 4], "data_offsets": [0, 160]},
        "model.norm.weight": {"dtype": "BF16", "shape": [4], "data_offsets": [160, 168]},
    }
    raw = json.dumps(header).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + bytes(168))
    assert safetensors_params(path) == (44, 168)
    assert ceiling(500e6, 20.0) == pytest.approx(40.0)
    assert spec_ceiling(500e6, 25e6, 4, 3.0, 20.0) == pytest.approx(100.0)
    text = (
        "<!-- bench:report_speed -->\nIdentical 36/36. τ = 4.66. Speed-up\n<!-- /bench:report_speed -->\n"
        "<!-- bench:llamacpp -->\n| engine | tok/s | τ | identical |\n|---|---|---|---|\n"
        "| ours, EAGLE k=4, compiled (agent default) | 30.5 | 3.39 | 8/8 |\n<!-- /bench:llamacpp -->\n"
    )
    assert sorted(quoted_taus(text).values()) == [TAU_CHAT_ISSUE_38, 3.39, 4.66]
    assert list(quoted_taus("").values()) == [TAU_CHAT_ISSUE_38]


# -- the section writer (bench/report.py) -----------------------------------------------------------------------------

FIRST = "2026-12-01 10:00 UTC"
SECOND = "2026-12-02 11:00 UTC"
THIRD = "2026-12-03 12:00 UTC"


def _write(path: Path, stamp: str, headline: str, commit: str = "abc1234", name: str = "demo") -> None:
    from bench.report import RunInfo, write_section

    write_section(
        name,
        f"Demo {name}",
        f"| figure | value |\n|---|---|\n| rate | {headline} |\n",
        f".venv/bin/python -m bench.{name}",
        headline=headline,
        goal="≥ 1 /s: **met**",
        run=RunInfo(stamp, "x86_64, 2 CPUs, Python 3.11.7", commit),
        path=path,
    )


def _history(text: str, name: str = "demo") -> list[str]:
    block = re.search(rf"<!-- history:{name} -->\n(.*?)<!-- /history:{name} -->", text, re.S)
    assert block is not None
    return block[1].splitlines()


def test_rewriting_a_section_moves_its_run_into_history_exactly_once(tmp_path: Path) -> None:
    """Each rewrite by a new run adds one history line (the replaced run's date, commit, machine, headline, goal),
    newest first; the section itself holds only the current run's table."""
    path = tmp_path / "BENCHMARKS.md"
    _write(path, FIRST, "10 /s", commit="1111111")
    assert _history(path.read_text()) == []
    _write(path, SECOND, "20 /s", commit="2222222")
    text = path.read_text()
    assert _history(text) == [
        "- 2026-12-01 10:00 UTC, commit 1111111, x86_64, 2 CPUs, Python 3.11.7: 10 /s — goal: ≥ 1 /s: **met**"
    ]
    _write(path, THIRD, "30 /s", commit="3333333")
    text = path.read_text()
    history = _history(text)
    assert len(history) == 2 and history[0].startswith(f"- {SECOND}, commit 2222222") and FIRST in history[1]
    assert text.count("| rate |") == 1 and "| rate | 30 /s |" in text
    assert text.count("<!-- bench:demo -->") == 1 and text.count("<!-- history:demo -->") == 1


def test_rendering_the_same_run_again_adds_no_history(tmp_path: Path) -> None:
    """A section rewritten from saved results (--markdown-only) is the same run: same date and commit."""
    path = tmp_path / "BENCHMARKS.md"
    _write(path, FIRST, "10 /s")
    _write(path, SECOND, "20 /s")
    before = path.read_text()
    _write(path, SECOND, "20 /s")
    assert path.read_text() == before


def test_history_is_capped(tmp_path: Path) -> None:
    from bench.report import HISTORY_MAX

    path = tmp_path / "BENCHMARKS.md"
    for i in range(HISTORY_MAX + 3):
        _write(path, f"2026-12-{i + 1:02d} 10:00 UTC", f"{i} /s")
    history = _history(path.read_text())
    assert len(history) == HISTORY_MAX
    assert history[0].startswith(f"- 2026-12-{HISTORY_MAX + 2:02d} 10:00 UTC")


def test_text_outside_the_markers_survives_a_rewrite(tmp_path: Path) -> None:
    """The intro, notes between sections and other sections are left byte for byte; the index follows."""
    path = tmp_path / "BENCHMARKS.md"
    _write(path, FIRST, "10 /s", name="one")
    _write(path, FIRST, "5 /s", name="two")
    text = path.read_text()
    text = text.replace("<!-- bench:one -->", "A hand-written note before one.\n\n<!-- bench:one -->")
    text = text.replace("<!-- /bench:one -->", "<!-- /bench:one -->\n\nA short note after one: keep me.")
    text = text.replace("# Benchmarks\n", "# Benchmarks\n\nIntro line kept.\n")
    path.write_text(text)
    other = re.search(r"<!-- bench:two -->.*?<!-- /bench:two -->", text, re.S)
    assert other is not None
    _write(path, SECOND, "11 /s", name="one")
    after = path.read_text()
    notes = ("A hand-written note before one.\n\n", "A short note after one: keep me.", "Intro line kept.")
    for kept in (*notes, other[0]):
        assert kept in after
    assert after.index("Intro line kept.") < after.index("<!-- index -->") < after.index("<!-- bench:one -->")
    assert "| [Demo one](#demo-one) | 11 /s | ≥ 1 /s: **met** | 2026-12-02 |" in after
    assert "| [Demo two](#demo-two) | 5 /s | ≥ 1 /s: **met** | 2026-12-01 |" in after


def test_every_header_names_command_date_machine_and_commit(tmp_path: Path) -> None:
    """In the writer's output, and in BENCHMARKS.md as committed: one current header per section, with its
    command, date, machine and commit, a headline and a goal, and a history block."""
    from bench.report import commit

    path = tmp_path / "BENCHMARKS.md"
    _write(path, FIRST, "10 /s", commit=commit())
    for text in (path.read_text(), (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")):
        sections = re.findall(r"<!-- bench:([\w-]+) -->(.*?)<!-- /bench:\1 -->", text, re.S)
        assert sections
        for name, body in sections:
            headers = re.findall(
                r"^Command: `[^`]+` — \d{4}-\d\d-\d\d \d\d:\d\d UTC, ([^,]+, \d+ CPUs, Python [\d.]+), commit (\S+)$",
                body,
                re.M,
            )
            assert len(headers) == 1, name
            assert re.fullmatch(r"[0-9a-f]{7,}|unknown", headers[0][1]), name
            assert body.count("**Headline:** ") == 1 and body.count("**Goal:** ") == 1, name
            assert f"<!-- history:{name} -->" in body and f"<!-- /history:{name} -->" in body, name


def test_the_machine_names_its_cpu_and_int8_instructions(tmp_path: Path) -> None:
    """A run names the CPU's model and its widest int8 instructions: the compiled int8 engine's text follows them."""
    from bench.report import cpu

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        "processor\t: 0\nmodel name\t: AMD EPYC 9R14, 96-Core\nflags\t\t: fpu avx2 avx512f avx512_vnni\n"
    )
    assert cpu(cpuinfo) == "AMD EPYC 9R14 96-Core (avx512_vnni)"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Old Xeon\nflags\t\t: fpu sse2\n")
    assert cpu(cpuinfo) == "Old Xeon"
    assert cpu(tmp_path / "missing") == ""


def test_commit_is_the_checkout_head_or_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bench.report as report

    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    assert report.commit() == (head.stdout.strip() if head.returncode == 0 else "unknown")
    monkeypatch.setattr(report, "REPO", tmp_path)  # not a checkout
    assert report.commit() == "unknown"


def test_a_section_of_the_old_format_becomes_a_history_line(tmp_path: Path) -> None:
    """A section written before headlines and commits were recorded still yields its date and machine."""
    path = tmp_path / "BENCHMARKS.md"
    path.write_text(
        "# Benchmarks\n\n<!-- bench:demo -->\n## Demo demo\n\nCommand: `x` — 2026-11-29 19:07 UTC, x86_64, 2 CPUs, "
        "Python 3.11.7\n\nold body\n<!-- /bench:demo -->\n"
    )
    _write(path, SECOND, "20 /s")
    text = path.read_text()
    assert _history(text) == [
        "- 2026-11-29 19:07 UTC, commit unknown, x86_64, 2 CPUs, Python 3.11.7: (no headline recorded) — goal: —"
    ]
    assert "old body" not in text


@pytest.mark.parametrize("k", [None, 4])
def test_engine_bench_configs_validate_with_and_without_a_draft(k: int | None, tmp_path: Path) -> None:
    """bench.engine's configurations are valid agent configs: without a k drafting is off (it is on by default, and a
    config naming its model_dir must name the head or turn it off), with one it drafts with the given head at k."""
    from bench.engine import Run, bench_config

    config = bench_config(Run("r", "bfloat16", k), tmp_path / "head", tmp_path / "state")
    assert config.llm.dtype == "bfloat16"
    assert config.llm.speculative.enabled is (k is not None)
    if k is not None:
        assert (config.llm.speculative.num_speculative_tokens, config.llm.speculative.draft) == (4, tmp_path / "head")


def test_bandwidth_limit_note_reads_the_recorded_bandwidth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another section's note: each measured rate against bandwidth ÷ bytes per pass (× τ over target + k drafts),
    at the median 2-thread DRAM reading of the last recorded run; no recorded run, no note."""
    import json

    import bench.bandwidth as bw

    monkeypatch.setattr(bw, "RESULTS", tmp_path / "bandwidth.json")
    assert bw.limit_note([("x", "float32", 10.0, None)], 4) is None
    readings = {"DRAM (> L3)": {"1": [5.0], "2": [20.0, 24.0, 22.0]}}
    bw.RESULTS.write_text(json.dumps({"readings": readings, "run": {"stamp": "2026-12-05 06:00 UTC"}}))
    target, _ = bw.safetensors_params(bw.MODEL_DIR / "model.safetensors")
    draft, _ = bw.safetensors_params(bw.DRAFT_DIR / "model.safetensors")
    fp32 = 22e9 / (4 * target)
    int8 = 3.0 * 22e9 / (bw.int8_engine_bytes(bw.MODEL_DIR / "model.safetensors") + 4 * 2 * draft)
    note = bw.limit_note([("plain", "float32", fp32 / 2, None), ("drafted", "int8", int8 / 4, 3.0)], 4)
    assert note == (
        "Memory-bandwidth limit (bench.bandwidth, 2026-12-05 06:00 UTC: 22.0 GB/s read on 2 threads, weights read "
        f"once per pass; a limit, not a forecast): plain {fp32 / 2:.1f} tok/s is 50 % of its {fp32:.0f} (one token "
        f"per target pass); drafted {int8 / 4:.1f} tok/s is 25 % of its {int8:.0f} (τ = 3.00, k = 4 draft passes)."
    )


@pytest.mark.parametrize(
    ("header", "counts"),
    [
        (
            "# First asked (2026-12-06 09:34 UTC, before any change): right 73/82 (es 25/27), refused 27/27",
            (73, 82, 27, 27),
        ),
        ("# First asked (09:04 UTC): 58/72 right (es 19/24, en 19/24),\n# 24/29 refused.", (58, 72, 24, 29)),
        ("# First run (06:14 UTC): 65/71 right\n# (es 23/24) and 30/34 refused. Missed: …", (65, 71, 30, 34)),
        ("# Asked first before any change (06:01 UTC): 57/70 right (es 24/25)\n# and 29/32 refused", (57, 70, 29, 32)),
    ],
)
def test_a_blind_file_s_first_seen_counts_are_read_from_its_header(header: str, counts: tuple[int, ...]) -> None:
    """bench.ask reports each blind set as first asked (new wording) beside how it does now."""
    from bench.ask import first_seen

    got = first_seen(header + '\n\n[[refuse]]\nq = "right 1/1"\nlang = "en"\n')
    assert got == dict(zip(("right", "answerable", "refused", "to_refuse"), counts, strict=True))


def test_our_question_file_has_no_first_seen_and_the_blind_files_are_asked_in_the_order_written() -> None:
    from bench.ask import QUESTIONS, first_seen

    names = [q.stem for q in QUESTIONS]
    assert names[:3] == ["ask_questions", "ask_questions_blind", "ask_questions_blind2"]
    assert names.index("ask_questions_blind9") < names.index("ask_questions_blind10")
    assert first_seen(QUESTIONS[0].read_text()) is None
    assert all(first_seen(q.read_text()) is not None for q in QUESTIONS[1:])


@pytest.mark.parametrize(
    ("q", "site_now", "asked"),
    [
        ({"figure": "max", "window": "part:0:06:07"}, "00:18", False),  # today 6 to 7, not yet come
        ({"figure": "max", "window": "part:0:06:07"}, "07:30", True),
        ({"figure": "mean", "window": "curshift"}, "22:01", False),  # the night shift a minute old: no tick stored
        ({"figure": "mean", "window": "curshift"}, "22:05", True),
        ({"figure": "stops", "window": "day:-1"}, "00:18", True),
        ({"figure": "value_at", "tag": "T-301.level_pct", "at": "0:14:00"}, "09:00", False),
        ({"figure": "active", "at": "-1:14:00"}, "00:18", True),
    ],
)
def test_bench_ask_leaves_out_questions_about_hours_not_yet_come(q: dict[str, str], site_now: str, asked: bool) -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from bench.support.ask_expected import TZ, askable

    hour, minute = (int(x) for x in site_now.split(":"))
    assert askable(q, datetime(2026, 12, 7, hour, minute, tzinfo=ZoneInfo(TZ))) is asked
