"""`edge-agent mcp`: the agent's read-only plant tools for an assistant, as an MCP server on stdio; `edge-agent mcp
token ...` manages the tokens of the same server over HTTPS, which `edge-agent run` serves when `[mcp]` is enabled."""

from __future__ import annotations

import argparse
import asyncio

from edge_agent.cli import mcp_token_cmd
from edge_agent.cli.common import add_config_option, load, route_logs_to_stderr

DESCRIPTION = """\
Serve the plant's read-only tools (namespace, tag_stats, stops, production, alarms, notes, kpis, reports, ...) and
`ask` to an assistant over the Model Context Protocol on stdin/stdout. The assistant starts this command itself
(e.g. command "edge-agent", args ["mcp", "--config", FILE]). Each call goes to the running agent over MQTT, which
checks it, runs it against the store and audits it; stdout carries only the protocol, log lines go to stderr.

The same tools over HTTPS: enable [mcp] and give each person a token with `edge-agent mcp token add --user NAME`."""


def register(subparsers: argparse._SubParsersAction) -> None:
    mcp = subparsers.add_parser(
        "mcp",
        help="serve the plant's read-only tools to an assistant over MCP (stdio); manage its HTTPS tokens",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_config_option(mcp)
    mcp.add_argument(
        "--user",
        default=None,
        help="the user the calls are made as: the request topic's last level (default: mqtt.username)",
    )
    mcp.add_argument(
        "--timeout", type=float, default=30.0, help="seconds to wait for the agent's reply to each call (default 30)"
    )
    mcp.set_defaults(func=_serve)
    mcp_token_cmd.register(mcp)


def _serve(args: argparse.Namespace) -> int:
    config = load(args, setup_logging=False)
    route_logs_to_stderr(config.logging.level)
    from edge_agent.ask.mcp import serve_stdio

    asyncio.run(serve_stdio(config, args.user, args.timeout))
    return 0
