"""`edge-agent console enrol NAME --role ROLE`: a one-time link with which NAME registers a passkey for the shift's
console (docs/console.md). The role must be one `[console] roles` gives NAME; the link works once, for
`[console] enrol_link_max_age_s`.

Exit codes: 0 printed; 1 NAME has no such role or the state directory cannot be written; 2 bad usage.
"""

from __future__ import annotations

import argparse
import sqlite3
from datetime import timedelta

from edge_agent.cli.common import CliExit, add_config_option, load
from edge_agent.config.console import ROLES


def register(subparsers: argparse._SubParsersAction) -> None:
    console = subparsers.add_parser("console", help="the shift's console: enrol people for passkey sign-in")
    sub = console.add_subparsers(dest="console_command", required=True, metavar="ACTION")
    enrol = sub.add_parser("enrol", help="print a one-time link with which NAME registers a passkey")
    enrol.add_argument("name", metavar="NAME", help="the person's identity ([[identities]] name)")
    enrol.add_argument("--role", required=True, choices=ROLES, help="a role [console] roles gives NAME")
    add_config_option(enrol)
    enrol.set_defaults(func=_enrol)


def _enrol(args: argparse.Namespace) -> int:
    from edge_agent.base.types import utcnow
    from edge_agent.console.auth.credentials import CredentialStore

    config = load(args)
    console = config.console
    if args.role not in console.roles_of(args.name):
        given = sorted(console.roles_of(args.name)) or "none"
        raise CliExit(f"console enrol: [console] roles gives {args.name!r} {given}, not {args.role!r}", 1)
    try:
        store = CredentialStore.for_state_dir(config.paths.state_dir)
        try:
            token = store.issue(args.name, args.role, utcnow(), timedelta(seconds=console.enrol_link_max_age_s))
        finally:
            store.close()
    except (OSError, sqlite3.Error) as exc:
        raise CliExit(f"console enrol: cannot write the console's table: {exc}", 1) from exc
    print(f"{console.effective_origin}/enrol/{token}")
    return 0
