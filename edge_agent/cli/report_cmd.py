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
SIGNOFF_FINAL = {"approved", "rejected", "error", "refused"}


def register(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser("report", help="request, sign off and show reports")
    sub = report.add_subparsers(dest="report_command", required=True, metavar="ACTION")

    req = sub.add_parser("request", help="send a report request over MQTT 5 and print the replies")
    add_config_option(req)
    req.add_argument(
        "--type",
        required=True,
        choices=["shift_summary", "alarm_summary", "downtime_analysis", "asset_history", "alarm_performance"],
    )
    req.add_argument(
        "--window",
        default=None,
        help="shift:NAME, shift:NAME@YYYY-MM-DD, or START/END in ISO-8601 with offsets; required but for"
        " alarm_performance (default: the last reports.kpi.alarm_review_days whole days)",
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
        p = sub.add_parser(
            action, help=f"{action} a draft report, signed with your key (records report.signed_off/rejected)"
        )
        add_config_option(p)
        p.add_argument("report_id")
        p.add_argument(
            "--key",
            default=None,
            help="your Ed25519 private key file (OpenSSH, PEM or raw); its public key must be in your identity's"
            " approver_keys",
        )
        p.add_argument("--by", default=None, help="approver name (default: the identity --key belongs to)")
        p.add_argument(
            "--report",
            default=None,
            metavar="FILE",
            help="the report you reviewed, as `report show` prints it (default: the agent's store on this host);"
            " its body is shown, hashed and signed",
        )
        p.add_argument(
            "--mqtt",
            action="store_true",
            help="publish the signed sign-off over MQTT (a workstation, or the host while the agent runs)",
        )
        p.add_argument("--timeout", type=float, default=60.0, help="with --mqtt: seconds to wait for the reply")
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
        "scope": {"assets": args.asset, "line": args.line, "area": args.area},
        "formats": args.formats or ["json", "markdown"],
    }
    if args.window is not None:
        payload["window"] = parse_window(args.window)
    elif args.type != "alarm_performance":
        print("error: --window is required for this report type", file=sys.stderr)
        return 2
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


async def _exchange(
    config: AgentConfig,
    payload: dict[str, Any],
    timeout: float,
    base_topic: str | None = None,
    final: frozenset[str] | set[str] = FINAL,
) -> dict[str, Any]:
    """Publish `payload` on `base_topic` (default: the request topic) + `/<mqtt.username>` and wait for the final
    reply on the user's reply namespace."""
    from edge_agent.connectors.mqtt import MqttClient
    from edge_agent.reports.service import reply_namespace, request_topic

    client_id = f"edge-agent-cli-{uuid.uuid4().hex[:8]}"
    # A throwaway session: nothing should wait at the broker for a one-shot command.
    mqtt = config.mqtt.model_copy(update={"session_expiry_s": 0, "protocol": "5"})
    base = base_topic if base_topic is not None else request_topic(config)
    topic = base + (f"/{config.mqtt.username}" if config.mqtt.username else "")
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
                if data.get("status") not in final:
                    print(json.dumps(data, ensure_ascii=False), file=sys.stderr)
                    continue
                return data
    raise TimeoutError


def _signed_approval(args: argparse.Namespace, config: AgentConfig, body_sha256: str) -> tuple[str, dict[str, Any]]:
    """(approver, signed approval object) made with --key for args.report_id and the body hash this command
    computed from the body it showed."""
    import secrets
    from pathlib import Path

    from edge_agent.base.types import utcnow
    from edge_agent.config.identities import identity_table
    from edge_agent.signing.approval import sign
    from edge_agent.signing.approver_key import fingerprint, load_signing_key, public_raw
    from edge_agent.signing.statement import Statement

    try:
        key, fmt = load_signing_key(Path(args.key).read_bytes())
    except (OSError, ValueError) as exc:
        raise CliExit(f"edge-agent: --key {args.key}: {exc}", 1) from exc
    raw = public_raw(key)
    # One identity per key (config/identities.py checks it), so the key names its approver.
    owner = next((k.name for k in identity_table(config).keys() if k.raw == raw), None)
    if owner is None or (args.by is not None and args.by != owner):
        who = f" for {args.by!r}" if args.by is not None else ""
        raise CliExit(f"edge-agent: key {fingerprint(raw)} is not registered{who} in [[identities]] approver_keys", 1)
    nonce = secrets.token_urlsafe(24)  # 192 bits: never repeats by chance
    statement = Statement(args.report_id, body_sha256, args.decision, owner, utcnow(), nonce, args.comment)
    return owner, sign(statement, key, fmt)


def _reviewed_report(args: argparse.Namespace, config: AgentConfig) -> dict[str, Any]:
    """The report the approver reviews: --report FILE (as `report show` prints it, or a `done` reply's `report`),
    else the agent's store on this host."""
    from pathlib import Path

    from edge_agent.reports.document import ReportRepository
    from edge_agent.reports.errors import ReportNotFound

    if args.report is not None:
        try:
            document = json.loads(Path(args.report).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CliExit(f"edge-agent: --report {args.report}: {exc}", 1) from exc
        if not isinstance(document, dict) or document.get("report_id") != args.report_id:
            raise CliExit(f"edge-agent: --report {args.report} does not hold report {args.report_id}", 1)
        return document
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    try:
        return repo.get(args.report_id)
    except ReportNotFound as exc:
        raise CliExit(f"edge-agent: {exc} (on a workstation give --report FILE, the report you reviewed)", 1) from exc
    finally:
        repo.close()


def _shown_body_sha256(document: dict[str, Any]) -> str:
    """Print the report's body on stderr, exactly what the hash covers (every rendering derives from it), and return
    its SHA-256, computed here; SignoffError (`body_changed`) when it is not the body_sha256 the report records."""
    from edge_agent.reports.document import check_body

    computed = check_body(document)
    print(json.dumps(document["body"], indent=2, sort_keys=True, ensure_ascii=False), file=sys.stderr)
    print(f"signing body_sha256 {computed} of report {document['report_id']}", file=sys.stderr)
    return computed


def _signoff(args: argparse.Namespace, config: AgentConfig) -> tuple[str, dict[str, Any] | None]:
    """(approver, signed approval or None for an unsigned --by)."""
    if args.key is None:
        return args.by, None
    return _signed_approval(args, config, _shown_body_sha256(_reviewed_report(args, config)))


def _decide(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLog
    from edge_agent.audit.component import origin_for
    from edge_agent.base.types import utcnow
    from edge_agent.reports.document import (
        UNSIGNED_REFUSAL,
        ReportRepository,
        SignoffPolicy,
        check_signed,
        decide,
        record_refusal,
    )
    from edge_agent.reports.errors import SignoffError
    from edge_agent.reports.service import signoff_topic

    config = load(args, setup_logging=False)
    route_logs_to_stderr(config.logging.level)
    if args.key is None and args.by is None:
        raise CliExit("edge-agent: give --key FILE (your signing key) or, where unsigned sign-off is allowed, --by", 2)
    if args.key is None and args.by not in config.reports.approvers:
        raise CliExit(f"edge-agent: {args.by!r} is not in reports.approvers", 1)
    if args.mqtt:
        try:
            by, approval = _signoff(args, config)
        except SignoffError as exc:  # the agent, which holds the audit log, never saw it: nothing was sent
            raise CliExit(f"edge-agent: {exc}", 1) from exc
        payload = {"report_id": args.report_id, "decision": args.decision, "comment": args.comment}
        payload |= {"approval": approval} if approval is not None else {"by": by}
        try:
            reply = asyncio.run(_exchange(config, payload, args.timeout, signoff_topic(config), SIGNOFF_FINAL))
        except TimeoutError as exc:
            raise CliExit(f"edge-agent: no reply within {args.timeout}s", 1) from exc
        if reply.get("status") not in ("approved", "rejected"):
            raise CliExit(f"edge-agent: {json.dumps(reply, ensure_ascii=False)}", 1)
        print_json(reply)
        return 0
    try:
        audit = AuditLog.open(config.paths.audit_dir, origin=origin_for(config))
    except AuditError as exc:
        raise CliExit(
            f"edge-agent: cannot open the audit log ({exc}); while the agent runs, sign off with --mqtt", 1
        ) from exc
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    by = args.by
    try:
        by, approval = _signoff(args, config)
        verified = None
        policy = SignoffPolicy.from_config(config)
        if approval is not None:
            verified = check_signed(approval, policy, now=utcnow())
        elif not config.reports.allow_unsigned_signoff:
            raise SignoffError(UNSIGNED_REFUSAL, "unsigned")
        document = decide(
            repo,
            audit,
            report_id=args.report_id,
            decision=args.decision,
            by=by,
            via="cli",
            comment=args.comment,
            four_eyes=config.reports.four_eyes,
            approval=verified,
            approval_json=approval,
            identities=policy.identities,
        )
    except SignoffError as exc:
        record_refusal(audit, exc, via="cli", user=None, report_id=args.report_id, by=by)
        raise CliExit(f"edge-agent: {exc}", 1) from exc
    finally:
        repo.close()
        audit.close()
    signoff_seq = document["audit"]["signoff"]
    print_json({"report_id": document["report_id"], "status": document["status"], "audit_seq": signoff_seq})
    return 0


def _show(args: argparse.Namespace) -> int:
    from edge_agent.reports.document import ReportRepository, renderings
    from edge_agent.reports.errors import ReportNotFound

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
    from edge_agent.reports.document import ReportRepository

    config = load(args, setup_logging=False)
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    try:
        print_json(repo.list(args.limit))
    finally:
        repo.close()
    return 0
