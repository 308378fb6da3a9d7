"""The training commands, run from a checkout of the repository: `python -m training narrator|planner|draft ...`.

Each subcommand group lives in its own module with a `register(subparsers)`.

Exit codes: 0 success, 1 failure at run time, 2 bad usage or bad recipe.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

# Modules under training.cli, each adding its subcommands.
COMMAND_MODULES: tuple[str, ...] = ("narrator_cmd", "planner_cmd", "draft_cmd")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m training", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"training.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
