"""`edge-agent sim`: run the plant simulator (OPC UA server + MQTT MES/log publisher) from the [sim] section."""

from __future__ import annotations

import argparse
import asyncio
import logging

from edge_agent.cli.common import CliExit, add_config_option, load, print_json


def register(subparsers: argparse._SubParsersAction) -> None:
    sim = subparsers.add_parser("sim", help="run the plant simulator: OPC UA server and MQTT MES/log publisher")
    add_config_option(sim)
    sim.add_argument("--seed", type=int, default=None, help="plant seed (default: [sim] seed)")
    sim.add_argument(
        "--malformed-share",
        type=float,
        default=None,
        metavar="SHARE",
        help="extra malformed MQTT messages per good one, 0..1 (default: [sim] malformed_share)",
    )
    sim.add_argument("--duration", type=float, default=None, metavar="S", help="stop after S wall seconds")
    sim.add_argument(
        "--speed",
        type=float,
        default=None,
        metavar="X",
        help="catch-up speed of the simulated clock over [sim] backfill_hours (default: [sim] speed)",
    )
    sim.add_argument(
        "--backfill-hours",
        type=float,
        default=None,
        metavar="H",
        help="start the simulated clock H hours in the past (default: [sim] backfill_hours)",
    )
    sim.add_argument(
        "--sparkplug",
        action="store_true",
        default=None,
        help="also run a Sparkplug B edge node publishing the plant's values (default: [sim] sparkplug)",
    )
    sim.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from edge_agent.sim import run_sim
    from edge_agent.sim.publisher import SimPublisherError

    config = load(args)
    # asyncua logs every client connect at WARNING ("no signing policy" and the like): not news in a simulator.
    logging.getLogger("asyncua").setLevel(logging.ERROR)
    if args.malformed_share is not None and not 0.0 <= args.malformed_share <= 1.0:
        raise CliExit(f"edge-agent: --malformed-share must be within 0..1, got {args.malformed_share}", 2)
    if args.speed is not None and args.speed < 1.0:
        raise CliExit(f"edge-agent: --speed must be >= 1, got {args.speed}", 2)
    if args.backfill_hours is not None:
        if args.backfill_hours < 0:
            raise CliExit(f"edge-agent: --backfill-hours must be >= 0, got {args.backfill_hours}", 2)
        config.sim.backfill_hours = args.backfill_hours
    try:
        stats = asyncio.run(
            run_sim(
                config,
                seed=args.seed,
                malformed_share=args.malformed_share,
                duration_s=args.duration,
                speed=args.speed,
                sparkplug=args.sparkplug,
            )
        )
    except KeyboardInterrupt:
        return 0
    except (SimPublisherError, OSError) as exc:
        raise CliExit(f"edge-agent sim: {exc}", 1) from exc
    print_json(stats.as_dict())
    return 0
