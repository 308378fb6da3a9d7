"""`python -m training narrator data|train|export`: the report narrator's corpus, its LoRA adapter trained
resumably, and the export to the directory `edge-agent model prepare` merges from."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from edge_agent.cli.common import CliExit

DEFAULT_RECIPE = Path("configs/narrator.toml")


def register(subparsers: argparse._SubParsersAction) -> None:
    narrator = subparsers.add_parser("narrator", help="train and export the report narrator's LoRA adapter")
    sub = narrator.add_subparsers(dest="narrator_command", required=True, metavar="ACTION")
    actions = (
        ("data", "build the corpus (section prompts → reference texts) from the training seeds' simulated days", _data),
        ("train", "train the adapter on the corpus' train split; resumes from the work dir's checkpoint", _train),
        ("export", "write the adapter directory (weights, config, manifest) from the last checkpoint", _export),
    )
    add_actions(sub, actions, DEFAULT_RECIPE)


def add_actions(
    sub: argparse._SubParsersAction, actions: tuple[tuple[str, str, Callable[..., int]], ...], recipe: Path
) -> None:
    """The data|train|export actions of an adapter's training, each with --config and --device."""
    for name, help_, func in actions:
        p = sub.add_parser(name, help=help_)
        p.add_argument("--config", type=Path, default=recipe, help=f"recipe TOML (default {recipe})")
        p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="where it trains (default: the recipe's)")
        if name == "train":
            p.add_argument("--no-progress", action="store_true", help="no progress bar")
        if name == "export":
            p.add_argument("--out", type=Path, help="adapter directory (default: the recipe's [export] dir)")
        p.set_defaults(func=func)


def _data(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from training.narrator.corpus import TRAIN_SEEDS, build_samples, read_corpus, write_corpus
    from training.narrator.train import TrainError, load_recipe

    try:
        corpus = load_recipe(args.config).train.corpus
    except TrainError as exc:
        raise CliExit(f"training: {exc}", 2) from exc
    if corpus.exists():
        # The first seed's samples, rebuilt (a second): a corpus made with other prompts, facts or reference wording
        # would otherwise train the adapter on text the agent no longer writes.
        first = list(build_samples(TRAIN_SEEDS[:1], "train"))
        if read_corpus(corpus, limit=len(first)) == first:
            print(f"{corpus}: already built and current (delete it to rebuild)")
            return 0
        print(f"{corpus}: built by other prompts, facts or reference wording; rebuilding")
    # Written to a .partial file and renamed at the end: an interrupted build starts over, it never trains on half.
    seeds = tqdm(TRAIN_SEEDS, desc="simulated days", unit="seed")
    print(f"{corpus}: {write_corpus(corpus, build_samples(seeds, 'train'))} samples")
    return 0


def _trainer(args: argparse.Namespace):  # noqa: ANN202  (torch-heavy import kept out of the module's top)
    from training.narrator.corpus import read_corpus
    from training.narrator.train import NarratorTrainer, TrainError, load_recipe

    try:
        recipe = load_recipe(args.config)
    except TrainError as exc:
        raise CliExit(f"training: {exc}", 2) from exc
    if args.device:
        recipe = recipe.model_copy(update={"train": recipe.train.model_copy(update={"device": args.device})})
    corpus = recipe.train.corpus
    if not corpus.exists():
        raise CliExit(f"training: {corpus}: no corpus; build it first (see {args.config})", 1)
    wanted = recipe.train.sections
    samples = [s for s in read_corpus(corpus) if s.split == "train" and (wanted is None or s.section in wanted)]
    if not samples:
        raise CliExit(f"training: {corpus}: no train sample of sections {wanted}", 1)
    try:
        trainer = NarratorTrainer(recipe, samples)
        trainer.maybe_resume()
    except TrainError as exc:
        raise CliExit(f"training: narrator: {exc}", 1) from exc
    return trainer


def _train(args: argparse.Namespace) -> int:
    trainer = _trainer(args)
    trainer.train(progress=not args.no_progress)
    return 0


def _export(args: argparse.Namespace) -> int:
    return export(_trainer(args), args.out, "narrator")


def export(trainer, out: Path | None, command: str) -> int:  # noqa: ANN001  (the torch-heavy trainer type)
    """Write the adapter of `trainer`'s last checkpoint to `out` (None: the recipe's [export] dir); exit 1 without
    a checkpoint, a warning when training has not run its steps."""
    if trainer.step == 0:
        raise CliExit(
            f"training: {trainer.config.work_dir}: no checkpoint; run `python -m training {command} train`", 1
        )
    if trainer.step < trainer.config.steps:
        print(f"warning: exporting at step {trainer.step} of {trainer.config.steps}", file=sys.stderr)
    print(trainer.export(out))
    return 0
