"""`edge-agent config check [--config] FILE`: the config's keys and values, and the files and directories it names
that the agent cannot start without (edge_agent.config.required_files)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from edge_agent.cli.common import DEFAULT_CONFIG, CliExit, load_file, print_json
from edge_agent.config import ConfigError
from edge_agent.config.required_files import missing_files
from edge_agent.config.security import security_warnings


def register(subparsers: argparse._SubParsersAction) -> None:
    config = subparsers.add_parser("config", help="check a config file: its keys, values and the files it names")
    sub = config.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    check = sub.add_parser(
        "check", help="validate a config file and print the effective config (secrets masked) and security warnings"
    )
    # FILE or --config FILE, as every other command takes it; without either, the installed config.
    check.add_argument("file", type=Path, nargs="?", metavar="FILE")
    check.add_argument("--config", "-c", type=Path, dest="config_file", help=f"TOML config (default: {DEFAULT_CONFIG})")
    check.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    if args.file is not None and args.config_file is not None and args.file != args.config_file:
        raise CliExit(f"edge-agent: config check got two files, {args.file} and --config {args.config_file}", 2)
    path = args.file or args.config_file or DEFAULT_CONFIG
    config = load_file(path)
    missing = missing_files(config)
    if missing:
        raise CliExit(f"edge-agent: invalid config {ConfigError(str(path), missing)}", 2)
    warnings = security_warnings(config, os.environ)
    # On stderr for the person at the terminal, in the JSON for scripts; a warning never changes the exit code.
    for warning in warnings:
        print(f"edge-agent: security warning ({warning.code}): {warning.message}", file=sys.stderr)
    print_json(
        {
            "config": config.masked(),
            "sha256": config.fingerprint(),
            "security_warnings": [w.model_dump() for w in warnings],
        }
    )
    return 0
