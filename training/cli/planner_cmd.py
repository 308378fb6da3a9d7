"""`python -m training planner data|train|export`: the planner's corpus (questions → readings), the narrator adapter
continued on it with narrator samples mixed in (resumably), and the export `edge-agent model prepare` merges."""

from __future__ import annotations

import argparse
from pathlib import Path

from edge_agent.cli.common import CliExit
from training.cli.narrator_cmd import add_actions, export

DEFAULT_RECIPE = Path("configs/planner.toml")


def register(subparsers: argparse._SubParsersAction) -> None:
    planner = subparsers.add_parser("planner", help="train the ask's model planner into the narrator's adapter")
    sub = planner.add_subparsers(dest="planner_command", required=True, metavar="ACTION")
    actions = (
        ("data", "build the planner's corpus (questions → readings) from its training seeds", _data),
        (
            "train",
            "continue the adapter on planner and narrator samples; resumes from the work dir's checkpoint",
            _train,
        ),
        ("export", "write the adapter directory (weights, config, manifest) from the last checkpoint", _export),
    )
    add_actions(sub, actions, DEFAULT_RECIPE)


def _recipe(args: argparse.Namespace):  # noqa: ANN202  (the recipe type lives with the torch-heavy trainer)
    from training.narrator.train import TrainError
    from training.planner.train import load_planner_recipe

    try:
        recipe = load_planner_recipe(args.config)
    except TrainError as exc:
        raise CliExit(f"training: {exc}", 2) from exc
    if args.device:
        recipe = recipe.model_copy(update={"train": recipe.train.model_copy(update={"device": args.device})})
    return recipe


def _data(args: argparse.Namespace) -> int:
    from training.narrator.corpus import write_corpus
    from training.planner.corpus import TEST_SEEDS, TRAIN_SEEDS, build_samples

    corpus = _recipe(args).mix.corpus
    samples = [*build_samples(TRAIN_SEEDS, "train"), *build_samples(TEST_SEEDS, "test")]
    print(f"{corpus}: {write_corpus(corpus, samples)} samples")
    return 0


def _trainer(args: argparse.Namespace):  # noqa: ANN202  (torch-heavy import kept out of the module's top)
    from training.narrator.corpus import read_corpus, read_samples
    from training.narrator.train import NarratorTrainer, TrainError
    from training.planner.corpus import PlannerSample
    from training.planner.train import mixed_samples

    recipe = _recipe(args)
    mix = recipe.mix
    for corpus in (mix.corpus, mix.narrator_corpus):
        if not corpus.exists():
            raise CliExit(f"training: {corpus}: no corpus; build it first (see {args.config})", 1)
    planner = [s for s in read_samples(mix.corpus, PlannerSample) if s.split == "train"]
    narrator = [s for s in read_corpus(mix.narrator_corpus) if s.split == "train"]
    samples = mixed_samples(planner, narrator, mix.narrator_per_planner, mix.seed)
    try:
        trainer = NarratorTrainer(recipe, samples)
        trainer.maybe_resume()
    except TrainError as exc:
        raise CliExit(f"training: planner: {exc}", 1) from exc
    return trainer


def _train(args: argparse.Namespace) -> int:
    _trainer(args).train(progress=not args.no_progress)
    return 0


def _export(args: argparse.Namespace) -> int:
    return export(_trainer(args), args.out, "planner")
