"""`edge-agent draft data|train|export|bench`: build, train, export and measure EAGLE-3 / 3.1 draft heads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_RECIPE = Path("configs/draft.toml")


def register(subparsers: argparse._SubParsersAction) -> None:
    draft = subparsers.add_parser("draft", help="train and benchmark speculative-decoding draft heads")
    sub = draft.add_subparsers(dest="draft_command", required=True, metavar="ACTION")
    for name, help_, func in (
        ("data", "answer the corpus prompts with the target (on-policy training data)", _data),
        ("train", "train every head of the recipe (runs `data` first when its file is missing)", _train),
        ("export", "export trained heads in vLLM's llama_eagle3 format with a manifest", _export),
        ("bench", "acceptance, speed and identical output via vLLM; writes BENCHMARKS.md", _bench),
    ):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--config", type=Path, default=DEFAULT_RECIPE, help=f"recipe TOML (default {DEFAULT_RECIPE})")
        if name in ("train", "export"):
            p.add_argument("--head", action="append", help="only this head (repeatable); default: all")
        if name == "train":
            p.add_argument("--no-progress", action="store_true", help="no progress bar")
        p.set_defaults(func=func)


def _recipe(args: argparse.Namespace):  # noqa: ANN202
    from edge_agent.speculative.recipe import RecipeError, load_recipe

    try:
        return load_recipe(args.config)
    except RecipeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


def _data(args: argparse.Namespace) -> int:
    from edge_agent.speculative import corpus
    from edge_agent.speculative.data import build_dataset

    recipe = _recipe(args)
    prompts = corpus.build("train", recipe.data.prompts, seed=recipe.data.seed)
    build_dataset(
        prompts, recipe.data.out, model_dir=recipe.model_dir, max_tokens=recipe.data.max_tokens, chunk=recipe.data.chunk
    )
    return 0


def _heads(recipe, names: list[str] | None):  # noqa: ANN001, ANN202
    return [recipe.head(n) for n in names] if names else recipe.heads


def _train(args: argparse.Namespace) -> int:
    from edge_agent.speculative.train import TrainError, Trainer

    recipe = _recipe(args)
    if not recipe.data.out.exists():
        _data(args)
    for head in _heads(recipe, args.head):
        try:
            trainer = Trainer(recipe.train_config(head), recipe.model_dir)
            trainer.maybe_resume()
            trainer.train(progress=not args.no_progress)
        except TrainError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        trainer.write_history(head.work_dir / "history.jsonl")
    return 0


def _export(args: argparse.Namespace) -> int:
    from edge_agent.speculative.train import TrainError, Trainer

    recipe = _recipe(args)
    for head in _heads(recipe, args.head):
        try:
            trainer = Trainer(recipe.train_config(head), recipe.model_dir)
            if not trainer.maybe_resume():
                raise TrainError(f"{head.work_dir}: no checkpoint; run `edge-agent draft train` first")
        except TrainError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        out = trainer.export(head.export_dir, name=f"{head.name}-{recipe.model_dir.name}", dtype=recipe.export_dtype)
        print(out)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from edge_agent.speculative.bench import run_bench

    run_bench(_recipe(args))
    return 0
