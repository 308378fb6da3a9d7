"""`edge-agent run --config FILE`: the daemon (under systemd: Type=notify)."""

from __future__ import annotations

import argparse
import asyncio
from functools import partial

from edge_agent.audit import AuditError
from edge_agent.cli.common import CliExit, add_config_option, load
from edge_agent.config import AgentConfig
from edge_agent.config.required_files import absent, missing_files
from edge_agent.daemon.sdnotify import SdNotifier, SdNotifyError, watchdog_interval
from edge_agent.store import StoreError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = subparsers.add_parser("run", help="run the agent until SIGTERM (what the systemd service runs)")
    add_config_option(run)
    run.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from edge_agent.app import run_agent  # the daemon's imports are not needed by the other commands
    from edge_agent.doctor.assemble import local_checks

    config = load(args)
    # Before anything starts: a missing model, head or certificate is an error now, not after llm.start_timeout_s.
    missing = _missing_at_start(config)
    if missing:  # one line each
        raise CliExit("\n".join(f"edge-agent: cannot start: {key}: {reason}" for key, reason in missing), 2)
    try:
        watchdog_interval()  # a malformed WATCHDOG_USEC/_PID is an error now, not after the store is open
        # unset: engine worker processes must not inherit the socket and speak for the service.
        notifier = SdNotifier.from_environ(unset=True)
    except SdNotifyError as exc:
        raise CliExit(f"edge-agent: {exc}", 2) from exc
    try:
        # The console's Health page shows doctor's cheap checks; doctor sits beside app, so they are handed in here.
        doctor_checks = partial(local_checks, args.config, config)
        return asyncio.run(run_agent(config, notifier, config_path=args.config, doctor_checks=doctor_checks))
    except (StoreError, AuditError) as exc:  # e.g. state directory not writable, or another agent holds the log
        raise CliExit(f"edge-agent: {exc}", 1) from exc
    finally:
        notifier.close()


def _missing_at_start(config: AgentConfig) -> list[tuple[str, str]]:
    """`config check`'s missing files, then the default model and head when the config names no model."""
    missing = missing_files(config)
    llm = config.llm
    if llm.enabled and llm.backend == "vllm" and llm.model_dir is None:
        from edge_agent.llm.launcher import draft_dir, model_dir

        for key, path in (("llm.model_dir", model_dir(config)), ("llm.speculative.draft", draft_dir(config))):
            if path is not None and (reason := absent(path, "directory")):
                missing.append((key, f"not set, and the default {reason}: run `edge-agent model prepare`"))
    return missing
