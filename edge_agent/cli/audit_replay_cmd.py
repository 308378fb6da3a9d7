"""`edge-agent audit replay`: regenerate a report, or answer an ask again, and say whether it is identical."""

from __future__ import annotations

import argparse
import importlib
import re

from edge_agent.cli.common import CliExit, add_config_option, load, print_json
from edge_agent.config import AgentConfig


def register(sub: argparse._SubParsersAction) -> None:
    replay = sub.add_parser(
        "replay", help="regenerate a report (rpt-...) or answer an ask again (question id or audit seq); identical?"
    )
    add_config_option(replay)
    replay.add_argument("report_id", metavar="ID", help="a report id, or an ask's question_id or audit seq")
    replay.set_defaults(func=_replay)


def _replay(args: argparse.Namespace) -> int:
    config = load(args)
    if ASK_ID.fullmatch(args.report_id):
        return _replay_ask(config, args.report_id)
    try:
        # Imported here: replay pulls in the engine, which the other audit commands must not need.
        module = importlib.import_module("edge_agent.reports.document.replay")
        replay_report = module.replay_report
    except (ImportError, AttributeError) as exc:
        raise CliExit(
            "audit replay: not available in this build: "
            f"edge_agent.reports.document.replay.replay_report is missing ({exc})",
            1,
        ) from exc
    from edge_agent.llm.types import EngineError
    from edge_agent.reports.errors import ReportError

    try:
        result = replay_report(config, args.report_id)
    except (ReportError, EngineError) as exc:  # unknown report, engine that cannot start: said, not crashed on
        raise CliExit(f"audit replay: {exc}", 1) from exc
    print_json(result.as_json())
    if result.refused:
        raise CliExit(f"audit replay: refused: {result.refused}", 1)
    if not result.identical:
        raise CliExit(
            f"audit replay: output differs: recorded body {result.recorded_body_sha256},"
            f" replayed {result.replayed_body_sha256}",
            1,
        )
    return 0


# An ask's audit seq or question id (16 hex); a report id starts `rpt-`.
ASK_ID = re.compile(r"[0-9]+|[0-9a-f]{16}")


def _replay_ask(config: AgentConfig, key: str) -> int:
    from edge_agent.ask.replay import ReplayError, find_answer, replay_answer
    from edge_agent.audit.rollback import read_lines
    from edge_agent.store import Store

    try:
        entry = find_answer(read_lines(config.paths.audit_dir), key)
    except ReplayError as exc:
        raise CliExit(f"audit replay: {exc}", 1) from exc
    if not config.paths.store_path.exists():
        raise CliExit(f"audit replay: no store at {config.paths.store_path}", 1)
    with Store(config.paths.store_path) as store:
        result = replay_answer(config, store, entry)
    print_json(result.as_json())
    if result.refused:
        raise CliExit(f"audit replay: refused: {result.refused}", 1)
    if not result.identical:
        raise CliExit(f"audit replay: answer differs: {result.differences[0]}", 1)
    return 0
