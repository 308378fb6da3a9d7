"""Speed of the report workload itself, with and without the draft head: whole reports through the agent's own
`build_draft` (every section's prompt, grounding, the strict retry when one runs), at the default settings.

    .venv/bin/python -m bench.report_speed [--requests 36] [--config configs/demo.toml] [--other-mode]

Two engines alive side by side, the config's own (the shipped head at its k) and the same config with the draft
off; request i (`bench.narrative.bench_requests`: test seeds never trained on, types and languages cycled) is sent
to both, which engine goes first alternating from one request to the next, so both see the same background load.
Output must be identical: every attempt's completion hash, in order, and every published section. Reported: wall
seconds per report and their ratio, generated tokens over generation seconds, the target's prefill (first token)
against the decode after it, τ, and the ceiling the prefill puts on the end-to-end ratio at this decode speed-up.
`--other-mode` adds a third engine, the config's own in the other compile mode (`llm.enforce_eager` flipped), in the
same rotation: the default mode's report time against the other's, and whether their outputs are identical.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench.narrative import bench_requests
from bench.report import RunInfo, engine_mode, met, write_section
from edge_agent.config import AgentConfig, load_config
from edge_agent.llm.engine import open_engine
from edge_agent.reports.generate import build_draft
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


async def run(config: AgentConfig, n: int, compare_modes: bool = False) -> dict[str, Any]:
    requests = bench_requests(n + 1)
    warm_up = len(requests) - 1  # a request outside the measured ones: none of their prompts is cached before
    configs = {"none": without_draft(config), "draft": config} | ({OTHER: other_mode(config)} if compare_modes else {})
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
    return {
        "requests": len(rows),
        "identical": sum(r["identical"] for r in rows),
        "seconds": seconds,
        "seconds_per_report_median": {name: statistics.median(r[name]["seconds"] for r in rows) for name in ENGINES},
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
    } | (_other_mode(rows) if OTHER in rows[0] else {})


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


def headline_goal(results: dict[str, Any], s: dict[str, Any]) -> tuple[str, str]:
    headline = (
        f"{s['speedup']:.2f}× whole-report wall time with the draft (k = {results['k']}), decode "
        f"{s['decode_speedup']:.2f}×, identical {s['identical']}/{s['requests']}"
    )
    ok = s["speedup"] >= SPEEDUP_GOAL and s["identical"] == s["requests"]
    return headline, f"≥ {SPEEDUP_GOAL}× at identical output: {met(ok)}"


def markdown(results: dict[str, Any], s: dict[str, Any]) -> str:
    k = results["k"]
    types = ", ".join(f"{t} {v:.2f}×" for t, v in s["speedup_by_type"].items())
    return "\n".join(
        [
            f"{s['requests']} report requests on the narrator's test seeds (never trained on), 4 types × 3 languages, "
            "each through the agent's `build_draft` (every section, grounding, the strict retry when one runs) on "
            f"{'three' if s.get('other') else 'two'} engines alive side by side: the default config's "
            f"(`{results['draft']}`, k = {k}) and the same config without a draft"
            f"{' (and a third, below)' if s.get('other') else ''}; which goes first "
            f"{'rotates' if s.get('other') else 'alternates'} by request. Default settings: float32, greedy, "
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
        ]
    )


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
    args = parser.parse_args()
    if not 1 <= args.requests < len(TEST_SEEDS):  # one more seed is the warm-up request
        parser.error(f"--requests must be 1..{len(TEST_SEEDS) - 1}")
    config = load_config(args.config)
    if not config.llm.speculative.enabled:
        parser.error(f"{args.config} runs no draft: nothing to compare")
    results = asyncio.run(run(config, args.requests, args.other_mode))
    results["run"] = RunInfo.now().as_dict()
    s = summary(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": s, **results}, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(s, indent=1))
    if not args.no_write:
        command = COMMAND + (f" --requests {args.requests}" if args.requests != 36 else "")
        command += " --other-mode" if args.other_mode else ""
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
