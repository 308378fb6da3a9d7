"""`edge-agent run --config FILE`: the daemon (under systemd: Type=notify)."""

from __future__ import annotations

import argparse
import asyncio

from edge_agent.audit import AuditError
from edge_agent.cli.common import CliExit, add_config_option, load
from edge_agent.daemon.sdnotify import SdNotifier, SdNotifyError, watchdog_interval
from edge_agent.store import StoreError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser("run", help="run the agent until SIGTERM (sd_notify aware)")
    add_config_option(run)
    run.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from edge_agent.app import run_agent  # the daemon's imports are not needed by the other commands

    config = load(args)
    try:
        watchdog_interval()  # a malformed WATCHDOG_USEC/_PID is an error now, not after the store is open
        # unset: engine worker processes must not inherit the socket and speak for the service.
        notifier = SdNotifier.from_environ(unset=True)
    except SdNotifyError as exc:
        raise CliExit(f"edge-agent: {exc}", 2) from exc
    try:
        return asyncio.run(run_agent(config, notifier, config_path=args.config))
    except (StoreError, AuditError) as exc:  # e.g. state directory not writable, or another agent holds the log
        raise CliExit(f"edge-agent: {exc}", 1) from exc
    finally:
        notifier.close()
