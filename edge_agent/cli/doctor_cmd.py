"""`edge-agent doctor [--config FILE] [--json] [--unit FILE]`: check a live install, one finding per line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

import structlog

from edge_agent.cli.common import CliExit, add_config_option, print_json
from edge_agent.config import ConfigError, load_config
from edge_agent.doctor import Host, diagnose, render, worst
from edge_agent.doctor.host import DEFAULT_UNIT, unit_environment
from edge_agent.logging import configure_logging


def register(subparsers: argparse._SubParsersAction) -> None:
    doctor = subparsers.add_parser(
        "doctor",
        help="check a live install: config, state dir, clock, model and draft head, broker, OPC UA servers",
        description="Exit 0 when nothing fails (warnings included), 1 on any fail, 2 on a bad config file. Run it as"
        " the agent's user; the unit's EDGE_AGENT__ environment applies (what the caller sets wins).",
    )
    add_config_option(doctor)
    doctor.add_argument("--json", action="store_true", help="a JSON list of {id, status, detail, fix} instead")
    doctor.add_argument(
        "--unit", type=Path, default=DEFAULT_UNIT, help="systemd unit to rate, when it exists (default: %(default)s)"
    )
    doctor.set_defaults(func=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    # As the unit will run it: its Environment= (state dir, kernel cache) under what the caller's environment sets.
    environ = unit_environment(args.unit) | dict(os.environ)
    try:
        config = load_config(args.config, environ)
    except ConfigError as exc:
        raise CliExit(f"edge-agent: invalid config {exc}", 2) from exc
    with _quiet_logs(config.logging.format):
        checks = asyncio.run(diagnose(args.config, config, Host(environ=environ, unit=args.unit)))
    if args.json:
        print_json([check.model_dump() for check in checks])
    else:
        print(render(checks))
    return 1 if worst(checks) == "fail" else 0


@contextmanager
def _quiet_logs(fmt: Literal["auto", "json", "console"]) -> Iterator[None]:
    """Doctor reports every failure itself: the clients' own logs would only repeat them, and stdout is the table's
    (or the JSON's) alone. Errors still go to stderr. Restored after: a test may run the command in-process."""
    saved = structlog.get_config()
    asyncua = logging.getLogger("asyncua")
    level = asyncua.level
    configure_logging("error", fmt)
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))
    asyncua.setLevel(logging.CRITICAL)  # asyncua logs each refused connection at warning level
    try:
        yield
    finally:
        structlog.configure(**saved)
        asyncua.setLevel(level)
