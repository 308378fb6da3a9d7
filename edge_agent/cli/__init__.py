"""`edge-agent` command line. Each command group lives in its own module with a `register(subparsers)`, listed in
COMMAND_MODULES in the order `edge-agent --help` shows them; DESCRIPTION and EPILOG are that page's text, for the
person at a plant's terminal.

Exit codes: 0 success, 1 failure at run time, 2 bad usage or bad config.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from edge_agent.cli.common import DEFAULT_CONFIG

# Modules under edge_agent.cli, each adding its command group: running the agent first, then setting it up and
# checking it, then its reports and audit trail, then the tools around it.
COMMAND_MODULES: tuple[str, ...] = (
    "run_cmd",
    "config_cmd",
    "doctor_cmd",
    "model_cmd",
    "draft_cmd",
    "report_cmd",
    "ask_cmd",
    "mcp_cmd",
    "audit_cmd",
    "store_cmd",
    "opcua_cmd",
    "witness_cmd",
    "console_cmd",
    "qualify_cmd",
    "sim_cmd",
)

DESCRIPTION = """\
edge-agent collects plant data from OPC UA servers and an MQTT broker into a local store, writes shift and
incident reports with a local language model, answers report requests over MQTT, and keeps a tamper-evident
audit log of everything it does. Under systemd it runs as `edge-agent run`; the other commands set it up, check
it and read what it has recorded."""

EPILOG = f"""\
Each command has its own help: edge-agent COMMAND --help. Most take --config FILE (default: {DEFAULT_CONFIG}).

A new install: edge-agent config check, then edge-agent doctor (as the edge-agent user), then
systemctl enable --now edge-agent. The guides are in /opt/edge-agent/docs (deployment.md first).

Exit codes: 0 success, 1 failure while running, 2 bad usage or a bad config."""


class _VersionAction(argparse.Action):
    """--version: printed and exit 0, read from the installed config when there is one (edge_agent.cli.version)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from edge_agent.cli.version import version_lines

        print("\n".join(version_lines(Path(DEFAULT_CONFIG))))
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="edge-agent",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="print the version, the git commit (in a checkout) and the prepared model and draft head, and exit",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands")
    for name in COMMAND_MODULES:
        importlib.import_module(f"edge_agent.cli.{name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)
