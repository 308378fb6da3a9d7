"""`edge-agent audit recover` and `audit init`: accepting a detected rollback, or starting a new log on purpose."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from edge_agent.cli.audit_cmd import origin_of
from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr


def register(sub: argparse._SubParsersAction) -> None:
    recover = sub.add_parser(
        "recover", help="after a detected rollback: accept the findings on the record and sign again (agent stopped)"
    )
    add_config_option(recover)
    recover.add_argument("--reason", required=True, help="why (recorded in the audit.recovered entry)")
    recover.add_argument("--actor", default="operator", help="who recovers (recorded)")
    recover.set_defaults(func=_recover)

    init = sub.add_parser("init", help="start a new audit log on purpose (the old one is lost): --new-log")
    add_config_option(init)
    init.add_argument("--new-log", action="store_true", required=True, help="required: yes, a new log")
    init.add_argument("--reason", required=True, help="why (recorded in the new log's first entry)")
    init.add_argument("--actor", default="operator", help="who starts it (recorded)")
    init.add_argument(
        "--last-checkpoint",
        type=Path,
        help="the old log's last checkpoint (default: read back from edge/<site>/audit/checkpoint)",
    )
    init.set_defaults(func=_init)


def _recover(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.audit.rollback import MARKER, RECOVERED_EVENT, read_marker

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    audit_dir = config.paths.audit_dir
    findings = read_marker(audit_dir)
    if findings is None:
        raise CliExit(f"audit recover: no rollback recorded ({audit_dir / MARKER} does not exist); nothing to do", 1)
    try:
        with AuditLog.open(audit_dir, origin_of(config)) as log:
            # The entry is the acceptance: the next start accepts the findings it names once a checkpoint covers it.
            entry = log.append(
                RECOVERED_EVENT,
                args.actor,
                {"reason": args.reason, "findings": [{"key": f.key, "message": f.message} for f in findings]},
            )
            note = log.checkpoint() if log.blocked is None else None
            (audit_dir / MARKER).unlink()
    except AuditLockedError as exc:
        raise CliExit(f"audit recover: {exc}; stop the agent first", 1) from exc
    except AuditError as exc:
        raise CliExit(f"audit recover: {exc}", 1) from exc
    print_json(
        {
            "seq": entry.seq,
            "accepted": [f.message for f in findings],
            "signed": note is not None,
            "note": None
            if note is not None
            else "the log does not match its own checkpoints, so this entry is unsigned and accepts nothing; see"
            " audit verify",
        }
    )
    return 0


def _init(args: argparse.Namespace) -> int:
    import asyncio

    from edge_agent.audit import AuditError, AuditLog
    from edge_agent.audit.anchor import checkpoint_topic
    from edge_agent.audit.log import ENTRIES
    from edge_agent.audit.view import ARCHIVE_STATE, ARCHIVED_LEAVES, ARCHIVED_LINES
    from edge_agent.publish.retained import read_retained

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    audit_dir = config.paths.audit_dir
    if (audit_dir / ENTRIES).exists() and (audit_dir / ENTRIES).stat().st_size:
        raise CliExit(f"audit init: {audit_dir / ENTRIES} exists; a new log only replaces a missing one", 1)
    if (audit_dir / ARCHIVE_STATE).exists():
        raise CliExit(
            f"audit init: {audit_dir / ARCHIVE_STATE} is the old log's (entries it archived): move it,"
            f" {ARCHIVED_LEAVES} and {ARCHIVED_LINES} away with the old log first",
            1,
        )
    previous: bytes | None = None
    source = None
    if args.last_checkpoint is not None:
        previous, source = args.last_checkpoint.read_bytes(), str(args.last_checkpoint)
    elif config.mqtt.enabled:
        topic = checkpoint_topic(config.site.id)
        try:
            previous = asyncio.run(read_retained(config.mqtt, topic, f"{config.mqtt.client_id}-audit-init"))
            source = topic
        except Exception as exc:  # an unreachable broker: the new log says so instead of the checkpoint
            print(f"note: could not read {topic}: {exc!r}", file=sys.stderr)
    origin = origin_of(config)
    genesis = {
        "reason": args.reason,
        "actor": args.actor,
        "previous_checkpoint": previous.decode("utf-8", "replace") if previous else None,
        "previous_checkpoint_from": source,
    }
    try:
        # The old log's retained checkpoint is not signed by the new key: the agent warns of it and replaces it. A
        # witness that cosigned the old log refuses the new one until its operator registers the new key.
        with AuditLog.open(audit_dir, origin, genesis=genesis) as log:
            print_json({"origin": origin, "key": log.verifier.key_string(), "previous_checkpoint": source})
    except AuditError as exc:
        raise CliExit(f"audit init: {exc}", 1) from exc
    return 0
