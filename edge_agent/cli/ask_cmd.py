"""`edge-agent ask "QUESTION"`: ask the running agent over MQTT and print its answer.

Exit codes: 0 answered, 3 needs clarification (the candidates are printed), 4 refused (the reason code is printed),
1 no answer (broker unreachable, no reply in time), 2 bad usage or config.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr

EXIT_CODES = {"answered": 0, "needs_clarification": 3, "refused": 4}


def register(subparsers: argparse._SubParsersAction) -> None:
    ask = subparsers.add_parser(
        "ask",
        help="ask the running agent a question about the plant (es/en/pt) and print its answer",
        description="Ask the running agent about plant data over MQTT; every figure in the answer is computed from"
        " stored records it cites, and the question and answer are in the audit log. Exit codes: 0 answered,"
        " 3 needs clarification, 4 refused, 1 no answer.",
    )
    add_config_option(ask)
    ask.add_argument("question", help='e.g. "¿cuántas paradas tuvo la P-101 en el turno A?"')
    ask.add_argument("--lang", choices=["es", "en", "pt"], default=None, help="default: detected from the question")
    ask.add_argument("--json", action="store_true", help="print the whole answer as JSON (facts, plan, audit seq)")
    ask.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the answer")
    ask.set_defaults(func=_ask)


def _ask(args: argparse.Namespace) -> int:
    from edge_agent.ask.client import AskClientError, ask_agent

    config = load(args, setup_logging=False)
    route_logs_to_stderr(config.logging.level)
    payload = {"question": args.question, "lang": args.lang}
    try:
        reply = asyncio.run(ask_agent(config, payload, timeout_s=args.timeout))
    except TimeoutError as exc:
        raise CliExit(f"edge-agent: no answer within {args.timeout:g}s (is the agent running, [ask] enabled?)") from exc
    except (AskClientError, OSError) as exc:
        raise CliExit(f"edge-agent: {exc}") from exc
    if args.json:
        print_json(reply)
    else:
        _print(reply)
    return EXIT_CODES.get(str(reply.get("status")), 1)


def _print(reply: dict[str, Any]) -> None:
    status = reply.get("status")
    if reply.get("answer"):
        print(reply["answer"])
    if status == "needs_clarification" and reply.get("candidates"):
        print("  " + "\n  ".join(map(str, reply["candidates"])))
    if status != "answered":
        detail = f": {reply['detail']}" if reply.get("detail") else ""
        print(f"{status} ({reply.get('reason')}){detail}", file=sys.stderr)
    else:
        print(f"audit entry {reply.get('audit_seq')}, {len(reply.get('facts', []))} facts", file=sys.stderr)
