"""Speed of the report workload itself, with and without the draft head: whole reports through the agent's own
`build_draft` (every section's prompt, grounding, the strict retry when one runs), at the default settings.

    .venv/bin/python -m bench.report_speed [--requests 36] [--config configs/demo.toml] [--other-mode]
                                           [--dtypes float32 bfloat16 int8]

Two engines alive side by side, the config's own (the shipped head at its k) and the same config with the draft
off; request i (`bench.narrative.bench_requests`: test seeds never trained on, types and languages cycled) is sent
to both, which engine goes first alternating from one request to the next, so both see the same background load.
Output must be identical: every attempt's completion hash, in order, and every published section. Reported: wall
seconds per report and their ratio, generated tokens over generation seconds, the target's prefill (first token)
against the decode after it, τ, and the ceiling the prefill puts on the end-to-end ratio at this decode speed-up.
`--other-mode` adds a third engine, the config's own in the other compile mode (`llm.enforce_eager` flipped), in the
same rotation: the default mode's report time against the other's, and whether their outputs are identical.
`--dtypes` adds, for each other precision (`llm.dtype`), its pair of engines (draft and none) to the rotation: per
precision, report time, whether the draft changed any output, outputs against float32's, model-written shares.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.narrative import bench_requests
from bench.report import RunInfo, engine_mode, met, write_section
from edge_agent.config import AgentConfig, load_config
from edge_agent.llm.engine import open_engine
from edge_agent.reports.narrative import build_draft
from training.narrator.corpus import TEST_SEEDS

COMMAND = ".venv/bin/python -m bench.report_speed"
ENGINES = ("none", "draft")
OTHER = "other"  # the draft engine in the other compile mode, with --other-mode


def without_draft(config: AgentConfig) -> AgentConfig:
    data = config.model_dump(mode="python")
    data["llm"]["speculative"]["enabled"] = False
    return AgentConfig.model_validate(data)


def other_mode(config: AgentConfig) -> AgentConfig:
    data = config.model_dump(mode="python")
    data["llm"]["enforce_eager"] = not config.llm.enforce_eager
    return AgentConfig.model_validate(data)


def outputs(draft: Any) -> list[Any]:
    """What must not depend on the draft: each section's status and text, each attempt's completion hash."""
    return [
        (s["name"], s["status"], s["text"], [a["completion_sha256"] for a in s["attempts"]])
        for s in draft.body["sections"]
    ]


def with_dtype(config: AgentConfig, dtype: str) -> AgentConfig:
    data = config.model_dump(mode="python")
    data["llm"]["dtype"] = dtype
    return AgentConfig.model_validate(data)


def precision_configs(config: AgentConfig, dtypes: list[str]) -> dict[str, AgentConfig]:
    """For each other precision, its pair of engines: "<dtype>:none" and "<dtype>:draft"."""
    out: dict[str, AgentConfig] = {}
    for dtype in dtypes:
        if dtype != config.llm.dtype:
            out[f"{dtype}:none"] = without_draft(with_dtype(config, dtype))
            out[f"{dtype}:draft"] = with_dtype(config, dtype)
    return out


def output_sha256(draft: Any) -> str:
    return hashlib.sha256(json.dumps(outputs(draft), ensure_ascii=False).encode()).hexdigest()


def model_written(draft: Any) -> tuple[int, int]:
    """(sections the model wrote, sections it was asked to write)."""
    asked = [s for s in draft.body["sections"] if s["attempts"]]
    return sum(s["status"] != "reference" for s in asked), len(asked)


async def run(
    config: AgentConfig, n: int, compare_modes: bool = False, dtypes: list[str] | None = None
) -> dict[str, Any]:
    requests = bench_requests(n + 1)
    warm_up = len(requests) - 1  # a request outside the measured ones: none of their prompts is cached before
    configs = {"none": without_draft(config), "draft": config} | ({OTHER: other_mode(config)} if compare_modes else {})
    configs |= precision_configs(config, dtypes or [])
    names = tuple(configs)
    rows: list[dict[str, Any]] = []
    async with contextlib.AsyncExitStack() as stack:
        engines = {name: await stack.enter_async_context(open_engine(c)) for name, c in configs.items()}

        async def one(name: str, i: int) -> tuple[float, Any]:  # request i on one engine: (wall seconds, draft)
            request, records = requests[i]
            started = time.perf_counter()
            draft = await build_draft(
                request, records, engines[name], site_id="demo", config=config.reports, seed=config.llm.seed
            )
            return time.perf_counter() - started, draft

        for name in names:  # first request of each engine pays one-off costs (imports, kernels)
            await one(name, warm_up)
        for i, (request, _) in enumerate(requests[:warm_up]):
            # Rotate: each engine goes first, second (and last) in turn; for two, that is alternating.
            order = names[i % len(names) :] + names[: i % len(names)]
            measured = {name: await one(name, i) for name in order}
            row: dict[str, Any] = {"type": request.type, "language": request.language}
            for name, (seconds, draft) in measured.items():
                runs = draft.run
                row[name] = {
                    "seconds": seconds,
                    "generations": len(runs),
                    "tokens": sum(r["completion_tokens"] for r in runs),
                    "prompt_tokens": sum(r["prompt_tokens"] for r in runs),
                    "generation_s": sum(r["timings"]["total_s"] for r in runs),
                    "first_token_s": sum(r["timings"]["first_token_s"] for r in runs),
                    "drafts": sum(r["speculative"]["drafts"] for r in runs if r["speculative"]),
                    "accepted": sum(r["speculative"]["accepted"] for r in runs if r["speculative"]),
                    "outputs_sha256": output_sha256(draft),
                    "model_written": model_written(draft),
                }
            row["identical"] = outputs(measured["none"][1]) == outputs(measured["draft"][1])
            if OTHER in measured:
                row["identical_other"] = outputs(measured[OTHER][1]) == outputs(measured["draft"][1])
            rows.append(row)
            print(
                json.dumps(
                    {k: row[k] for k in ("type", "language", "identical")}
                    | {name: round(row[name]["seconds"], 2) for name in names}
                ),
                flush=True,
            )
    k = config.llm.speculative.num_speculative_tokens
    return {
        "requests": n,
        "k": k,
        "draft": str(config.llm.speculative.draft),
        "enforce_eager": config.llm.enforce_eager,
        "dtype": config.llm.dtype,
        "dtypes": [config.llm.dtype, *(d for d in dtypes or [] if d != config.llm.dtype)],
        "rows": rows,
    }


def _total(rows: list[dict[str, Any]], name: str, key: str) -> float:
    return float(sum(r[name][key] for r in rows))


def summary(results: dict[str, Any]) -> dict[str, Any]:
    rows = results["rows"]
    seconds = {name: _total(rows, name, "seconds") for name in ENGINES}
    tokens = {name: _total(rows, name, "tokens") for name in ENGINES}
    gen = {name: _total(rows, name, "generation_s") for name in ENGINES}
    first = {name: _total(rows, name, "first_token_s") for name in ENGINES}
    decode = {name: gen[name] - first[name] for name in ENGINES}
    decode_speedup = decode["none"] / decode["draft"]
    drafts = _total(rows, "draft", "drafts")
    return (
        {
            "requests": len(rows),
            "identical": sum(r["identical"] for r in rows),
            "seconds": seconds,
            "seconds_per_report_median": {
                name: statistics.median(r[name]["seconds"] for r in rows) for name in ENGINES
            },
            "speedup": seconds["none"] / seconds["draft"],
            "speedup_by_type": {
                t: sum(r["none"]["seconds"] for r in rows if r["type"] == t)
                / sum(r["draft"]["seconds"] for r in rows if r["type"] == t)
                for t in sorted({r["type"] for r in rows})
            },
            "tokens": tokens["none"],
            "prompt_tokens_per_generation": _total(rows, "none", "prompt_tokens") / _total(rows, "none", "generations"),
            "tokens_per_s": {name: tokens[name] / gen[name] for name in ENGINES},
            "first_token_s": first,
            "decode_s": decode,
            "prefill_share_none": first["none"] / gen["none"],
            "decode_speedup": decode_speedup,
            "tau": 1 + _total(rows, "draft", "accepted") / drafts if drafts else None,
            # With a draft costing nothing at the first token, the end-to-end ratio could reach only this.
            "ceiling": gen["none"] / (first["none"] + decode["none"] / decode_speedup),
        }
        | (_other_mode(rows) if OTHER in rows[0] else {})
        | ({"precisions": precisions(results)} if "dtypes" in results else {})
    )


def _pair(results: dict[str, Any], dtype: str) -> tuple[str, str]:
    return ("none", "draft") if dtype == results.get("dtype", "float32") else (f"{dtype}:none", f"{dtype}:draft")


def precisions(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per precision (`--dtypes`): report time with and without the draft, whether the draft changed any output,
    the draft engine's outputs against float32's, and how many sections and reports the model wrote."""
    rows, dtypes = results["rows"], results.get("dtypes") or [results.get("dtype", "float32")]
    reference = _pair(results, "float32")[1] if "float32" in dtypes else None
    out: dict[str, dict[str, Any]] = {}
    for dtype in dtypes:
        none, draft = _pair(results, dtype)
        written = [r[draft]["model_written"] for r in rows]
        shift = [r[draft]["seconds"] for r in rows if r["type"] == "shift_summary"]
        drafts = _total(rows, draft, "drafts")
        out[dtype] = {
            "seconds": {"none": _total(rows, none, "seconds"), "draft": _total(rows, draft, "seconds")},
            "median_s": {
                name: statistics.median(r[e]["seconds"] for r in rows) for name, e in (("none", none), ("draft", draft))
            },
            "shift_median_s": statistics.median(shift) if shift else None,
            "tokens_per_s": _total(rows, draft, "tokens") / _total(rows, draft, "generation_s"),
            "tau": 1 + _total(rows, draft, "accepted") / drafts if drafts else None,
            "identical": sum(r[none]["outputs_sha256"] == r[draft]["outputs_sha256"] for r in rows),
            "identical_to_float32": (
                sum(r[draft]["outputs_sha256"] == r[reference]["outputs_sha256"] for r in rows) if reference else None
            ),
            "sections_model_written": [sum(w[0] for w in written), sum(w[1] for w in written)],
            "reports_all_model": sum(w[0] == w[1] for w in written),
        }
    return out


def _other_mode(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The draft engine in the other compile mode against the default's: report time, identical outputs."""
    seconds = _total(rows, OTHER, "seconds")
    return {
        "other": {
            "seconds": seconds,
            "seconds_per_report_median": statistics.median(r[OTHER]["seconds"] for r in rows),
            "default_speedup": seconds / _total(rows, "draft", "seconds"),
            "identical": sum(r["identical_other"] for r in rows),
        }
    }


# The draft head's goal (as bench.draft's): whole reports at least this much faster, output unchanged.
SPEEDUP_GOAL = 2.0


# The issue's goal for a shift report at the default settings on 2 cores (request to `done` is bench.reports').
SHIFT_GOAL_S = 5.0


def headline_goal(results: dict[str, Any], s: dict[str, Any]) -> tuple[str, str]:
    """Goal: the draft at least SPEEDUP_GOAL× and, at float32 (the precision that promises it), identical output;
    the shift report's median within SHIFT_GOAL_S."""
    dtype = results.get("dtype", "float32")
    shift = statistics.median(r["draft"]["seconds"] for r in results["rows"] if r["type"] == "shift_summary")
    headline = (
        f"{dtype}: {s['speedup']:.2f}× whole-report wall time with the draft (k = {results['k']}), decode "
        f"{s['decode_speedup']:.2f}×, identical {s['identical']}/{s['requests']}; shift report median {shift:.2f} s"
    )
    identical = s["identical"] == s["requests"] or dtype != "float32"
    ok = s["speedup"] >= SPEEDUP_GOAL and identical and shift <= SHIFT_GOAL_S
    what = "at identical output" if dtype == "float32" else f"(identity not promised at {dtype})"
    return headline, f"≥ {SPEEDUP_GOAL}× {what}, shift report ≤ {SHIFT_GOAL_S:.0f} s: {met(ok)}"


def _precision_lines(s: dict[str, Any]) -> list[str]:
    table = s.get("precisions")
    if not table or len(table) < 2:
        return []
    pct = lambda a, b: f"{100 * a / b:.1f} %" if b else "—"  # noqa: E731
    lines = [
        "",
        "Each precision (`llm.dtype`) as a pair of engines, with and without the draft, in the same rotation:",
        "",
        "| precision | reports, no draft | with the draft | × | median report | shift report median | tok/s | τ "
        "| draft changed output | = float32 with the draft | sections model-written | reports all model-written |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for dtype, p in table.items():
        n = s["requests"]
        same32 = f"{p['identical_to_float32']}/{n}" if p["identical_to_float32"] is not None else "—"
        tau = f"{p['tau']:.2f}" if p["tau"] else "—"
        shift = f"{p['shift_median_s']:.2f} s" if p["shift_median_s"] is not None else "—"
        written, asked = p["sections_model_written"]
        lines.append(
            f"| {dtype} | {p['seconds']['none']:.1f} s | {p['seconds']['draft']:.1f} s | "
            f"{p['seconds']['none'] / p['seconds']['draft']:.2f}× | {p['median_s']['draft']:.2f} s | {shift} | "
            f"{p['tokens_per_s']:.1f} | {tau} | {n - p['identical']}/{n} | {same32} | {pct(written, asked)} "
            f"| {pct(p['reports_all_model'], n)} |"
        )
    return lines


def markdown(results: dict[str, Any], s: dict[str, Any]) -> str:
    k = results["k"]
    engines = 2 + bool(s.get("other")) + 2 * (len(s.get("precisions") or [None]) - 1)
    types = ", ".join(f"{t} {v:.2f}×" for t, v in s["speedup_by_type"].items())
    return "\n".join(
        [
            f"{s['requests']} report requests on the narrator's test seeds (never trained on), 4 types × 3 languages, "
            "each through the agent's `build_draft` (every section, grounding, the strict retry when one runs) on "
            f"{_count(engines)} engines alive side "
            "by side: the default config's "
            f"(`{results['draft']}`, k = {k}) and the same config without a draft"
            f"{' (and the others below)' if engines > 2 else ''}; which "
            f"goes first {'alternates' if engines == 2 else 'rotates'} by request. Default settings: "
            f"{results.get('dtype', 'float32')}, greedy, "
            f"{engine_mode(results.get('enforce_eager', True))}, single stream.",
            "",
            "| | no draft | EAGLE 3.1, k = " + str(k) + " | ratio |",
            "|---|---|---|---|",
            f"| report wall time, all requests | {s['seconds']['none']:.1f} s | {s['seconds']['draft']:.1f} s | "
            f"**{s['speedup']:.2f}×** |",
            f"| report wall time, median | {s['seconds_per_report_median']['none']:.2f} s | "
            f"{s['seconds_per_report_median']['draft']:.2f} s | |",
            f"| generated tokens / generation seconds | {s['tokens_per_s']['none']:.1f} tok/s | "
            f"{s['tokens_per_s']['draft']:.1f} tok/s | {s['tokens_per_s']['draft'] / s['tokens_per_s']['none']:.2f}× |",
            f"| first tokens (prefill), summed | {s['first_token_s']['none']:.1f} s | "
            f"{s['first_token_s']['draft']:.1f} s | |",
            f"| decode after the first token, summed | {s['decode_s']['none']:.1f} s | "
            f"{s['decode_s']['draft']:.1f} s | "
            f"{s['decode_speedup']:.2f}× |",
            "",
            f"Identical output (every attempt's completion hash and every published section): "
            f"{s['identical']}/{s['requests']} requests. τ = {s['tau']:.2f}. Speed-up by type: {types}. "
            f"{s['tokens']:.0f} tokens generated per engine; a section's prompt runs "
            f"{s['prompt_tokens_per_generation']:.0f} tokens on average.",
            "",
            f"The target's prefill is {100 * s['prefill_share_none']:.0f} % of the no-draft generation time and a "
            "draft cannot shorten it: at this run's decode speed-up, a draft that cost nothing at the first token "
            f"would give at most **{s['ceiling']:.2f}×** end to end.",
            *_other_lines(results, s),
            *_precision_lines(s),
            *_limit_lines(results, s),
        ]
    )


def _limit_lines(results: dict[str, Any], s: dict[str, Any]) -> list[str]:
    """Each precision's tok/s (prefill included) against its memory-bandwidth limit, without and with the draft."""
    from bench.bandwidth import limit_note

    table = s.get("precisions") or {
        results.get("dtype", "float32"): {"tokens_per_s": s["tokens_per_s"]["draft"], "tau": s["tau"]}
    }
    figures: list[tuple[str, str, float, float | None]] = []
    for dtype, p in table.items():
        none, draft = _pair(results, dtype)
        rows = results["rows"]
        plain = _total(rows, none, "tokens") / _total(rows, none, "generation_s")
        figures += [(f"{dtype} without the draft", dtype, plain, None)]
        if p["tau"]:
            figures += [(f"{dtype} with it", dtype, p["tokens_per_s"], p["tau"])]
    note = limit_note(figures, results["k"])
    return ["", note] if note else []


def _count(n: int) -> str:
    return {2: "two", 3: "three"}.get(n, str(n))


def _other_lines(results: dict[str, Any], s: dict[str, Any]) -> list[str]:
    other = s.get("other")
    if other is None:
        return []
    default_eager = results.get("enforce_eager", True)
    return [
        "",
        f"A third engine in the same rotation, the default config with {engine_mode(not default_eager)}: "
        f"{other['seconds']:.1f} s for all requests (median {other['seconds_per_report_median']:.2f} s) against "
        f"the default's {s['seconds']['draft']:.1f} s: the default mode is **{other['default_speedup']:.2f}×** "
        f"as fast on whole reports; outputs identical to the default's on {other['identical']}/{s['requests']} "
        "requests.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/demo.toml"))
    parser.add_argument("--requests", type=int, default=36)
    parser.add_argument("--out", type=Path, default=Path("var/bench/report_speed.json"))
    parser.add_argument("--no-write", action="store_true", help="print, leave BENCHMARKS.md alone")
    parser.add_argument("--other-mode", action="store_true", help="also the draft engine with enforce_eager flipped")
    parser.add_argument("--dtypes", nargs="*", default=[], help="also these precisions, each with and without draft")
    args = parser.parse_args()
    if not 1 <= args.requests < len(TEST_SEEDS):  # one more seed is the warm-up request
        parser.error(f"--requests must be 1..{len(TEST_SEEDS) - 1}")
    config = load_config(args.config)
    if not config.llm.speculative.enabled:
        parser.error(f"{args.config} runs no draft: nothing to compare")
    results = asyncio.run(run(config, args.requests, args.other_mode, args.dtypes))
    results["run"] = RunInfo.now().as_dict()
    s = summary(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": s, **results}, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(s, indent=1))
    if not args.no_write:
        command = COMMAND + (f" --requests {args.requests}" if args.requests != 36 else "")
        command += " --other-mode" if args.other_mode else ""
        command += f" --dtypes {' '.join(args.dtypes)}" if args.dtypes else ""
        headline, goal = headline_goal(results, s)
        write_section(
            "report_speed",
            "Report workload speed, with and without the draft head",
            markdown(results, s),
            command,
            headline=headline,
            goal=goal,
            run=RunInfo.from_dict(results["run"]),
        )


if __name__ == "__main__":
    main()
