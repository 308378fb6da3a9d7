"""`edge-agent audit pubkey` and `audit rotate-key`: the key that signs the log's checkpoints."""

from __future__ import annotations

import argparse

from edge_agent.cli.audit_cmd import origin_of
from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr


def register(sub: argparse._SubParsersAction) -> None:
    pubkey = sub.add_parser("pubkey", help="print the note verifier key that signs checkpoints")
    add_config_option(pubkey)
    pubkey.set_defaults(func=_pubkey)

    rotate = sub.add_parser("rotate-key", help="replace the signing key (the agent must be stopped)")
    add_config_option(rotate)
    rotate.add_argument("--actor", default="operator", help="who rotates (recorded in the key.rotated entry)")
    rotate.set_defaults(func=_rotate)


def _pubkey(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.audit.log import read_verifiers

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    try:
        # Opening creates the key on a first start, as the agent would.
        with AuditLog.open(config.paths.audit_dir, origin_of(config)) as log:
            print(log.verifier.key_string())
            return 0
    except AuditLockedError:
        keys = read_verifiers(config.paths.audit_dir)  # the agent is running: its key is the newest listed
        print(keys[-1].key_string())
        return 0
    except AuditError as exc:
        raise CliExit(f"audit pubkey: {exc}", 1) from exc


def _rotate(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    try:
        with AuditLog.open(config.paths.audit_dir, origin_of(config)) as log:
            previous = log.verifier.key_string()
            entry = log.rotate_key(args.actor)
            print_json({"previous": previous, "key": log.verifier.key_string(), "seq": entry.seq})
            return 0
    except AuditLockedError as exc:
        raise CliExit(f"audit rotate-key: {exc}; stop the agent first", 1) from exc
    except AuditError as exc:
        raise CliExit(f"audit rotate-key: {exc}", 1) from exc
