"""`edge-agent` command line. Each subcommand group lives in its own module with a `register(subparsers)`.

Exit codes: 0 success, 1 failure at run time, 2 bad usage or bad config.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

# Modules under edge_agent.cli, each adding its subcommands.
COMMAND_MODULES: tuple[str, ...] = (
    "config_cmd",
    "store_cmd",
    "model_cmd",
    "run_cmd",
    "sim_cmd",
    "audit_cmd",
    "report_cmd",
    "draft_cmd",
    "opcua_cmd",
    "doctor_cmd",
    "witness_cmd",
    "qualify_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="edge-agent", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"edge_agent.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
