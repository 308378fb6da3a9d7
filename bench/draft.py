"""EAGLE-3.1 vs EAGLE-3 draft heads in the vLLM engine: τ, per-position acceptance, tokens/s, identical output.

    .venv/bin/python -m bench.draft [--config configs/draft.toml] [--prompts N] [--max-tokens N] [--speed-k K ...]

Needs the prepared model and the exported heads (`make draft`); writes docs/img/draft-bench.json, the plots in
docs/img/ and the "EAGLE 3.1 draft head" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.report import write_section


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
    parser.add_argument("--note", action="append", default=[], help="a caveat printed with the figures (repeatable)")
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
    else:
        results = run_bench(recipe)
    if args.note:
        results["notes"] = args.note
        recipe.bench.results.write_text(json.dumps(results, indent=1) + "\n")
    # the measuring flags only (not --note / --markdown-only): what a reader runs to get these figures again
    flags = [
        ("--config", args.config if args.config != Path("configs/draft.toml") else None),
        ("--threads", args.threads),
        ("--prompts", args.prompts),
        ("--max-tokens", args.max_tokens),
    ]
    flags += [("--speed-k", k) for k in args.speed_k]
    command = " ".join([".venv/bin/python -m bench.draft", *(f"{f} {v}" for f, v in flags if v)])
    body = markdown(results, recipe_line(recipe, args.config), recipe.bench.img_dir)
    write_section(recipe.bench.section, recipe.bench.title, body, command)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
