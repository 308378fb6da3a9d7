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
