"""`edge-agent report request|approve|reject|show|list`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from typing import Any

from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr
from edge_agent.config import AgentConfig

FINAL = {"done", "failed", "error", "refused"}


def register(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser("report", help="request, sign off and show reports")
    sub = report.add_subparsers(dest="report_command", required=True, metavar="ACTION")

    req = sub.add_parser("request", help="send a report request over MQTT 5 and print the replies")
    add_config_option(req)
    req.add_argument(
        "--type", required=True, choices=["shift_summary", "alarm_summary", "downtime_analysis", "asset_history"]
    )
    req.add_argument(
        "--window", required=True, help="shift:NAME, shift:NAME@YYYY-MM-DD, or START/END in ISO-8601 with offsets"
    )
    req.add_argument("--lang", choices=["es", "en", "pt"], default=None)
    req.add_argument("--asset", action="append", default=[], help="scope: an asset id (repeatable)")
    req.add_argument("--line", default=None)
    req.add_argument("--area", default=None)
    req.add_argument("--format", dest="formats", action="append", choices=["json", "markdown", "html"], default=None)
    req.add_argument("--request-id", default=None, help="idempotency key (default: a new UUID)")
    req.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the final reply")
    req.set_defaults(func=_request)

    for action in ("approve", "reject"):
        p = sub.add_parser(action, help=f"{action} a draft report locally (records report.signed_off/rejected)")
        add_config_option(p)
        p.add_argument("report_id")
        p.add_argument("--by", required=True, help="approver name; must be listed in reports.approvers")
        p.add_argument("--comment", default="")
        p.set_defaults(func=_decide, decision=action)

    show = sub.add_parser("show", help="print a stored report")
    add_config_option(show)
    show.add_argument("report_id")
    show.add_argument("--format", choices=["json", "markdown", "html"], default="json")
    show.set_defaults(func=_show)

    lst = sub.add_parser("list", help="the newest stored reports")
    add_config_option(lst)
    lst.add_argument("--limit", type=int, default=20)
    lst.set_defaults(func=_list)


def parse_window(spec: str) -> dict[str, Any]:
    if spec.startswith("shift:"):
        name, _, day = spec[len("shift:") :].partition("@")
        return {"shift": name, **({"date": day} if day else {})}
    start, sep, end = spec.partition("/")
    if not sep:
        raise CliExit(f"edge-agent: --window {spec!r}: use shift:NAME[@DATE] or START/END", 2)
    return {"start": start, "end": end}


def _request(args: argparse.Namespace) -> int:
    config = load(args, setup_logging=False)
    route_logs_to_stderr(config.logging.level)
    payload = {
        "request_id": args.request_id or str(uuid.uuid4()),
        "type": args.type,
        "window": parse_window(args.window),
        "scope": {"assets": args.asset, "line": args.line, "area": args.area},
        "formats": args.formats or ["json", "markdown"],
    }
    if args.lang:
        payload["language"] = args.lang
    try:
        final = asyncio.run(_exchange(config, payload, args.timeout))
    except TimeoutError as exc:
        raise CliExit(f"edge-agent: no final reply within {args.timeout}s", 1) from exc
    if final.get("status") != "done":
        raise CliExit(f"edge-agent: {json.dumps(final, ensure_ascii=False)}", 1)
    report = final["report"]
    markdown = report.get("renderings", {}).get("markdown")
    print(markdown if markdown else json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True))
    status = f"{report['status']}, narrative {report['body']['narrative_status']}"
    print(f"report {report['report_id']} ({status})", file=sys.stderr)
    return 0


async def _exchange(config: AgentConfig, payload: dict[str, Any], timeout: float) -> dict[str, Any]:
    from connectors.mqtt import MqttClient
    from edge_agent.reports.topics import reply_namespace, request_topic

    client_id = f"edge-agent-cli-{uuid.uuid4().hex[:8]}"
    # A throwaway session: nothing should wait at the broker for a one-shot command.
    mqtt = config.mqtt.model_copy(update={"session_expiry_s": 0, "protocol": "5"})
    topic = request_topic(config) + (f"/{config.mqtt.username}" if config.mqtt.username else "")
    reply = f"{reply_namespace(config, config.mqtt.username)}/{client_id}"
    correlation = uuid.uuid4().bytes
    async with MqttClient(mqtt, client_id=client_id) as client:
        await client.wait_connected(timeout=30)
        await client.subscribe(reply, qos=1)
        data = json.dumps(payload).encode()
        await client.publish(topic, data, qos=1, response_topic=reply, correlation_data=correlation)
        async with asyncio.timeout(timeout):
            async for message in client.messages():
                await message.ack()
                if message.correlation_data != correlation:
                    continue
                data = json.loads(message.payload)
                if data.get("status") not in FINAL:
                    print(json.dumps(data, ensure_ascii=False), file=sys.stderr)
                    continue
                return data
    raise TimeoutError


def _decide(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLog
    from edge_agent.reports.errors import SignoffError
    from edge_agent.reports.repository import ReportRepository
    from edge_agent.reports.signoff import decide

    config = load(args, setup_logging=False)
    route_logs_to_stderr(config.logging.level)
    if args.by not in config.reports.approvers:
        raise CliExit(f"edge-agent: {args.by!r} is not in reports.approvers", 1)
    origin = config.audit.origin or f"edge-agent/{config.site.id}"
    try:
        audit = AuditLog.open(config.paths.audit_dir, origin=origin)
    except AuditError as exc:
        raise CliExit(
            f"edge-agent: cannot open the audit log ({exc}); while the agent runs, sign off over MQTT", 1
        ) from exc
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    try:
        document = decide(
            repo,
            audit,
            report_id=args.report_id,
            decision=args.decision,
            by=args.by,
            via="cli",
            comment=args.comment,
            four_eyes=config.reports.four_eyes,
        )
    except SignoffError as exc:
        raise CliExit(f"edge-agent: {exc}", 1) from exc
    finally:
        repo.close()
        audit.close()
    signoff_seq = document["audit"]["signoff"]
    print_json({"report_id": document["report_id"], "status": document["status"], "audit_seq": signoff_seq})
    return 0


def _show(args: argparse.Namespace) -> int:
    from edge_agent.reports.document import renderings
    from edge_agent.reports.errors import ReportNotFound
    from edge_agent.reports.repository import ReportRepository

    config = load(args, setup_logging=False)
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    try:
        document = repo.get(args.report_id)
    except ReportNotFound as exc:
        raise CliExit(f"edge-agent: {exc}", 1) from exc
    finally:
        repo.close()
    if args.format == "json":
        print_json(document)
    else:
        print(renderings(document["body"], [args.format], document["status"], document["signoff"])[args.format])
    return 0


def _list(args: argparse.Namespace) -> int:
    from edge_agent.reports.repository import ReportRepository

    config = load(args, setup_logging=False)
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    try:
        print_json(repo.list(args.limit))
    finally:
        repo.close()
    return 0
