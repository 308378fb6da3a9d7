"""EAGLE-3.1 vs EAGLE-3 draft heads in the vLLM engine: τ, per-position acceptance, tokens/s, identical output.

    .venv/bin/python -m bench.draft [--config configs/draft.toml] [--prompts N] [--max-tokens N] [--speed-k K ...]

Needs the prepared model and the exported heads (`make draft`); writes docs/img/draft-bench.json, the plots in
docs/img/ and the "EAGLE 3.1 draft head" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from bench.report import RunInfo, met, write_section

# The draft head's speed goal: this many times the no-draft engine's tokens/s, output identical.
SPEEDUP_GOAL = 2.0


def headline_goal(results: dict[str, Any]) -> tuple[str, str]:
    """The fastest drafted setting of the side-by-side speed run (end to end, and the decode rate when measured),
    and the first head's best τ; the goal: ≥ SPEEDUP_GOAL at identical output."""
    first = next(iter(results["heads"].values()))["runs"][0]["acceptance"]
    taus = {name: acc["tau"] for name, acc in first.items()}
    tau = ", ".join(f"τ {name} {t:.2f}" for name, t in taus.items())
    inter = results.get("speed_interleaved")
    if not inter:
        return tau or "no speed run", "speed not measured"
    parts, verdicts = [], []
    for prefix, what in (("", "end to end"), ("decode_", "decode rate")):
        speedups = inter.get(f"{prefix}speedup")
        if not speedups:
            continue
        name, sp = max(speedups.items(), key=lambda kv: kv[1])
        same = inter["identical"][name] == inter["prompts"]
        parts.append(f"{sp:.2f}× {what} ({name}, identical {inter['identical'][name]}/{inter['prompts']})")
        verdicts.append(f"{what} {met(sp >= SPEEDUP_GOAL and same)}")
    headline = "; ".join(parts) + (f"; {tau} at k = {max(results['config']['ks'])}" if tau else "")
    return headline, f"≥ {SPEEDUP_GOAL}× no draft at identical output: " + ", ".join(verdicts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.draft", description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/draft.toml"))
    parser.add_argument("--prompts", type=int, help="prompts per slice (default: the recipe's)")
    parser.add_argument("--max-tokens", type=int, help="tokens per answer (default: the recipe's)")
    parser.add_argument("--markdown-only", action="store_true", help="rewrite BENCHMARKS.md from the saved JSON")
    parser.add_argument(
        "--speed-k",
        type=int,
        action="append",
        default=[],
        help="time the first head at this k against no draft, engines side by side (repeatable; "
        "default: the recipe's speed_ks)",
    )
    parser.add_argument("--threads", type=int, help="engine threads (default: all cores, as the agent's engine)")
    parser.add_argument("--reference-only", action="store_true", help="only the no-draft run (cached for the next run)")
    args = parser.parse_args(argv)

    import json

    from training.draft.bench import markdown, plot, recipe_line, run_bench
    from training.draft.recipe import load_recipe

    recipe = load_recipe(args.config)
    if args.threads:
        import training.draft.bench as bench_module

        bench_module.BENCH_THREADS = args.threads
    if args.prompts:
        recipe.bench.prompts_per_slice = args.prompts
    if args.max_tokens:
        recipe.bench.max_tokens = args.max_tokens
    if args.speed_k:
        recipe.bench.speed_ks = args.speed_k
    if args.reference_only:
        from training.draft.bench import bench_prompts, reference_run

        print(reference_run(recipe, bench_prompts(recipe))["speed"])
        return 0
    if args.markdown_only:
        results = json.loads(recipe.bench.results.read_text())
        plot(results, recipe.bench.img_dir)
        run = RunInfo.from_dict(results.get("run"))
    else:
        results = run_bench(recipe)
        run = RunInfo.now()
        results["run"] = run.as_dict()
        recipe.bench.results.write_text(json.dumps(results, indent=1) + "\n")
    # Hand-written caveats (results of older runs may carry some) stay out of the generated section.
    results.pop("notes", None)
    # the measuring flags only (not --markdown-only): what a reader runs to get these figures again
    flags = [
        ("--config", args.config if args.config != Path("configs/draft.toml") else None),
        ("--threads", args.threads),
        ("--prompts", args.prompts),
        ("--max-tokens", args.max_tokens),
    ]
    flags += [("--speed-k", k) for k in args.speed_k]
    command = " ".join([".venv/bin/python -m bench.draft", *(f"{f} {v}" for f, v in flags if v)])
    body = markdown(results, recipe_line(recipe, args.config), recipe.bench.img_dir)
    headline, goal = headline_goal(results)
    write_section(recipe.bench.section, recipe.bench.title, body, command, headline=headline, goal=goal, run=run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
