"""`edge-agent store stats|retention|dead-letters|requeue`."""

from __future__ import annotations

import argparse
from datetime import timedelta

from edge_agent.cli.common import add_config_option, load, print_json
from edge_agent.daemon.storage import retention_policy
from edge_agent.store import Store


def register(subparsers: argparse._SubParsersAction) -> None:
    store = subparsers.add_parser("store", help="inspect the local store")
    sub = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    stats = sub.add_parser("stats", help="JSON counts: records by source, quarantined, outbox pending")
    add_config_option(stats)
    stats.set_defaults(func=_stats)
    retention = sub.add_parser("retention", help="apply the configured retention now; prints rows deleted per table")
    add_config_option(retention)
    retention.set_defaults(func=_retention)
    dead = sub.add_parser("dead-letters", help="JSON list of outbox rows no broker accepted, with why")
    add_config_option(dead)
    dead.add_argument("--limit", type=int, default=100, help="at most this many, oldest first (default 100)")
    dead.set_defaults(func=_dead_letters)
    requeue = sub.add_parser(
        "requeue", help="put dead letters back in the outbox once their cause is mended (the running agent sends them)"
    )
    add_config_option(requeue)
    requeue.add_argument("ids", nargs="+", type=int, metavar="ID", help="dead letter ids, as `dead-letters` lists")
    requeue.set_defaults(func=_requeue)


def _stats(args: argparse.Namespace) -> int:
    config = load(args, setup_logging=False)
    with Store(config.paths.store_path) as store:
        print_json(store.stats())
    return 0


def _retention(args: argparse.Namespace) -> int:
    config = load(args, setup_logging=False)
    with Store(config.paths.store_path) as store:
        result = store.apply_retention(retention_policy(config.store)).model_dump()
    if config.reports.retention_days > 0:
        from edge_agent.reports.document import ReportRepository

        repo = ReportRepository.for_state_dir(config.paths.state_dir)
        try:
            deleted = repo.trim_unapproved(timedelta(days=config.reports.retention_days))
        finally:
            repo.close()
        result["deleted"]["reports"] = len(deleted)
    print_json(result)
    return 0


def _dead_letters(args: argparse.Namespace) -> int:
    config = load(args, setup_logging=False)
    with Store(config.paths.store_path) as store:
        letters = store.dead_letters(limit=max(args.limit, 0))
    print_json(
        [
            {
                "id": d.id,
                "topic": d.topic,
                "payload_bytes": len(d.payload),
                "qos": d.qos,
                "attempts": d.attempts,
                "reason": d.reason,
                "created_time": d.created_time.isoformat(),
                "failed_time": d.failed_time.isoformat(),
            }
            for d in letters
        ]
    )
    return 0


def _requeue(args: argparse.Namespace) -> int:
    """Exit 1 when an id was not a dead letter (the others are requeued all the same)."""
    config = load(args, setup_logging=False)
    with Store(config.paths.store_path) as store:
        moved = store.dead_letter_requeue(args.ids)
    missing = sorted(set(args.ids) - set(moved))
    print_json({"requeued": moved, "not_dead_letters": missing})
    return 1 if missing else 0
