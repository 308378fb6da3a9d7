"""`edge-agent qualify --config FILE --out DIR`: installation, operational and performance qualification on this
server (docs/validation.md), signed and recorded in the audit log."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from edge_agent.cli.audit_cmd import origin_of
from edge_agent.cli.common import CliExit, add_config_option, load_file, logs_on_stderr
from edge_agent.doctor.host import DEFAULT_UNIT, unit_environment


def register(subparsers: argparse._SubParsersAction) -> None:
    qualify = subparsers.add_parser(
        "qualify",
        help="IQ / OQ / PQ on this server: installed files, operational self-tests, speed against [qualify]",
        description="Runs every check against a private broker and state dir (never the live store or topics),"
        " writes DIR/qualification.json and .html, signs the JSON with the audit key and records its sha256 in the"
        " audit log. Stop the agent first: qualify holds the audit log and measures speed on an idle server."
        " Needs the mosquitto binary (not its service): OQ and PQ start a private broker on a free local port."
        " Exit 0 when every check passes, 1 when any fails, 2 on a bad config or a missing prerequisite.",
    )
    add_config_option(qualify)
    qualify.add_argument("--out", type=Path, required=True, help="directory for the results (new or empty)")
    qualify.add_argument(
        "--unit", type=Path, default=DEFAULT_UNIT, help="systemd unit to rate, when it exists (default: %(default)s)"
    )
    qualify.add_argument("--actor", default="operator", help="who ran it, as the audit entry records")
    qualify.set_defaults(func=_qualify)


def _qualify(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.qualify.report import write_outputs
    from edge_agent.qualify.runner import qualify_install
    from edge_agent.qualify.seal import seal

    environ = unit_environment(args.unit) | dict(os.environ)  # as the unit runs the agent, as doctor loads it
    config = load_file(args.config, environ)
    if args.out.exists() and (not args.out.is_dir() or any(args.out.iterdir())):
        raise CliExit(f"edge-agent qualify: {args.out} is not an empty directory; choose a new one", 2)
    if shutil.which("mosquitto") is None:  # checked before the engines' minutes of start-up, not after
        raise CliExit(
            "edge-agent qualify: OQ and PQ run against a private Mosquitto broker started for the run, and mosquitto"
            " is not on PATH; install it without its service (Debian: apt-get install mosquitto && systemctl disable"
            " --now mosquitto)",
            2,
        )
    with logs_on_stderr("warning"):
        try:
            # Held for the whole run: the agent cannot start meanwhile and disturb the speed measured.
            with AuditLog.open(config.paths.audit_dir, origin_of(config)) as log:
                with tempfile.TemporaryDirectory(prefix="edge-agent-qualify-") as work:
                    q = asyncio.run(qualify_install(args.config, config, Path(work), unit=args.unit))
                data, no_pdf = write_outputs(q, args.out)
                entry = seal(log, q, args.out, data, args.actor)
        except AuditLockedError as exc:
            raise CliExit(f"edge-agent qualify: {exc}; stop the agent first", 1) from exc
        except AuditError as exc:
            raise CliExit(f"edge-agent qualify: {exc}", 1) from exc
    width = max([len(c.id) for c in q.checks] + [len(m.id) for m in q.measures])
    for check in q.checks:
        print(f"{check.id:<{width}}  {'PASS' if check.passed else 'FAIL'}  {check.measured}")
    for measure in q.measures:  # recorded, not judged
        print(f"{measure.id:<{width}}  INFO  {measure.measured}")
    print(
        f"{'passed' if q.passed else 'FAILED: ' + ', '.join(q.failed)}; audit entry {entry.seq}; results in {args.out}"
    )
    if no_pdf:
        print(no_pdf)
    return 0 if q.passed else 1
