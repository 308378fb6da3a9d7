"""`edge-agent store stats|retention`."""

from __future__ import annotations

import argparse

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


def _stats(args: argparse.Namespace) -> int:
    config = load(args, setup_logging=False)
    with Store(config.paths.store_path) as store:
        print_json(store.stats())
    return 0


def _retention(args: argparse.Namespace) -> int:
    config = load(args, setup_logging=False)
    with Store(config.paths.store_path) as store:
        result = store.apply_retention(retention_policy(config.store))
    print_json(result.model_dump())
    return 0
