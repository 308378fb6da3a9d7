"""`edge-agent audit archive`: move the oldest audit entries into a signed bundle, keeping the log verifiable
(edge_agent/audit/retention.py). The agent must be stopped: the command takes the log's lock."""

from __future__ import annotations

import argparse
from pathlib import Path

from edge_agent.cli.audit_cmd import origin_of
from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr


def register(sub: argparse._SubParsersAction) -> None:
    archive = sub.add_parser(
        "archive",
        help="move entries before SEQ into a signed bundle (the agent must be stopped); the log stays verifiable",
    )
    add_config_option(archive)
    archive.add_argument(
        "--before",
        required=True,
        type=int,
        metavar="SEQ",
        help="the first entry to keep; at most the latest signed checkpoint's size",
    )
    archive.add_argument("--out", required=True, type=Path, help="directory the bundle is written to (kept off-host)")
    archive.add_argument("--actor", default="operator", help="who archives (recorded in the audit.archived entry)")
    archive.set_defaults(func=_archive)


def _archive(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError
    from edge_agent.audit.retention import archive_log

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    try:
        result = archive_log(
            config.paths.audit_dir,
            origin_of(config),
            before=args.before,
            out=args.out,
            reports_dir=config.paths.state_dir / "reports",
            actor=args.actor,
        )
    except AuditLockedError as exc:
        raise CliExit(f"audit archive: {exc}; stop the agent first", 1) from exc
    except AuditError as exc:
        raise CliExit(f"audit archive: {exc}", 1) from exc
    print_json(
        {
            "bundle": str(result.bundle),
            "bundle_sha256": result.bundle_sha256,
            "archived": {"first_seq": result.first_seq, "last_seq": result.last_seq, "entries": result.entries},
            "checkpoint_size": result.checkpoint_size,
            "first_kept": result.first_kept,
            "leaves_sha256": result.leaves_sha256,
            "archived_entry_seq": result.archived_entry_seq,
        }
    )
    return 0
