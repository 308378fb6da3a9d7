"""`edge-agent doctor [--config FILE] [--json] [--unit FILE]`: check a live install, one finding per line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from pathlib import Path

from edge_agent.cli.common import add_config_option, load_file, logs_on_stderr, print_json
from edge_agent.doctor import Host, diagnose, render, worst
from edge_agent.doctor.host import DEFAULT_UNIT, unit_environment


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
    config = load_file(args.config, environ)
    # The clients' own logs would only repeat what doctor reports; stdout is the table's (or the JSON's) alone.
    with logs_on_stderr("error", asyncua_level=logging.CRITICAL):
        checks = asyncio.run(diagnose(args.config, config, Host(environ=environ, unit=args.unit)))
    if args.json:
        print_json([check.model_dump() for check in checks])
    else:
        print(render(checks))
    return 1 if worst(checks) == "fail" else 0
