"""`edge-agent audit verify|export|verify-bundle|pubkey|rotate-key|replay`.

Exit codes: 0 verified / done; 1 verification failed (the first bad entry is named on stderr) or the action failed;
2 bad usage or bad config.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr
from edge_agent.config import AgentConfig

if TYPE_CHECKING:
    from edge_agent.audit.verify import VerifyResult


def register(subparsers: argparse._SubParsersAction) -> None:
    audit = subparsers.add_parser("audit", help="verify, export and replay the tamper-evident audit trail")
    sub = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")

    verify = sub.add_parser("verify", help="check the hash chain, the Merkle tree and every signed checkpoint")
    add_config_option(verify)
    _add_pubkey_option(verify)
    verify.add_argument(
        "--strict", action="store_true", help="also parse every entry (types, canonical JSON); ~8x slower"
    )
    verify.set_defaults(func=_verify)

    export = sub.add_parser("export", help="write an auditor's bundle (directory, or .tar.gz) for a time range")
    add_config_option(export)
    export.add_argument("--from", dest="start", type=_parse_time, help="first entry time (ISO 8601; naive = UTC)")
    export.add_argument("--to", dest="end", type=_parse_time, help="last entry time (ISO 8601; naive = UTC)")
    export.add_argument("--out", required=True, type=Path, help="new directory, or a path ending in .tar.gz")
    export.add_argument("--actor", default="operator", help="who exports (recorded in the audit.export entry)")
    export.set_defaults(func=_export)

    bundle = sub.add_parser(
        "verify-bundle",
        help="verify an export bundle offline (no config or state needed): entries, proofs, the signed manifest of"
        " its files, and every report file against its log entries",
    )
    bundle.add_argument("path", type=Path, help="bundle directory or .tar.gz")
    _add_pubkey_option(bundle)
    bundle.set_defaults(func=_verify_bundle)

    pubkey = sub.add_parser("pubkey", help="print the note verifier key that signs checkpoints")
    add_config_option(pubkey)
    pubkey.set_defaults(func=_pubkey)

    rotate = sub.add_parser("rotate-key", help="replace the signing key (the agent must be stopped)")
    add_config_option(rotate)
    rotate.add_argument("--actor", default="operator", help="who rotates (recorded in the key.rotated entry)")
    rotate.set_defaults(func=_rotate)

    replay = sub.add_parser("replay", help="regenerate a report with its recorded fingerprint; byte-identical?")
    add_config_option(replay)
    replay.add_argument("report_id")
    replay.set_defaults(func=_replay)


def _add_pubkey_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pubkey", help="trusted verifier key (name+hash+base64), or a file holding it; default: the one on hand"
    )


def _parse_time(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from exc
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _trusted_key(text: str | None) -> Any:
    from edge_agent.audit import AuditKeyError, Verifier

    if text is None:
        return None
    path = Path(text)
    try:
        if path.is_file():
            text = path.read_text(encoding="utf-8")
        return Verifier.parse(text)
    except (AuditKeyError, OSError) as exc:
        raise CliExit(f"edge-agent: --pubkey: {exc}", 2) from exc


def origin_of(config: AgentConfig) -> str:
    from edge_agent.audit.component import origin_for

    return origin_for(config)


def _verify(args: argparse.Namespace) -> int:
    from edge_agent.audit.verify import verify_log

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    result = verify_log(config.paths.audit_dir, _trusted_key(args.pubkey), origin_of(config), strict=args.strict)
    return _print_verification("audit verify", result)


def _verify_bundle(args: argparse.Namespace) -> int:
    from edge_agent.audit.verify import verify_bundle

    route_logs_to_stderr()
    result = verify_bundle(args.path, _trusted_key(args.pubkey))
    return _print_verification("audit verify-bundle", result)


def _print_verification(command: str, result: VerifyResult) -> int:
    """A failure exits 1 with its summary on stderr; success prints the summary and any notes."""
    if not result.ok:
        raise CliExit(f"{command}: {result.summary()}", 1)
    print(result.summary())
    for note in result.notes:
        print(f"note: {note}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.audit.export import export_bundle

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    audit_dir = config.paths.audit_dir
    reports_dir = config.paths.state_dir / "reports"
    try:
        try:
            with AuditLog.open(audit_dir, origin_of(config)) as log:
                result = export_bundle(
                    audit_dir,
                    args.out,
                    reports_dir=reports_dir,
                    start=args.start,
                    end=args.end,
                    log=log,
                    actor=args.actor,
                )
        except AuditLockedError:
            print(
                "note: the agent holds the audit log; exporting against its latest checkpoint, not recorded in it",
                file=sys.stderr,
            )
            result = export_bundle(audit_dir, args.out, reports_dir=reports_dir, start=args.start, end=args.end)
    except AuditError as exc:
        raise CliExit(f"audit export: {exc}", 1) from exc
    assert result.verification is not None
    print_json(
        {
            "out": str(result.path),
            "entries": result.entries,
            "first_seq": result.first_seq,
            "last_seq": result.last_seq,
            "checkpoint_size": result.checkpoint_size,
            "previous_checkpoint_size": result.previous_size,
            "recorded_in_log": result.recorded,
            "reports": result.reports,
            "missing_reports": result.missing_reports,
            "unbound_reports": result.unbound_reports,
            "verification": result.verification.summary(),
        }
    )
    return 0 if result.verification.ok else 1


def _pubkey(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.audit.log import read_verifiers

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    try:
        # Opening creates the key on a first start, as the agent would.
        with AuditLog.open(config.paths.audit_dir, origin_of(config)) as log:
            print(log.verifier.key_string())
            return 0
    except AuditLockedError:
        keys = read_verifiers(config.paths.audit_dir)  # the agent is running: its key is the newest listed
        print(keys[-1].key_string())
        return 0
    except AuditError as exc:
        raise CliExit(f"audit pubkey: {exc}", 1) from exc


def _rotate(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    try:
        with AuditLog.open(config.paths.audit_dir, origin_of(config)) as log:
            previous = log.verifier.key_string()
            entry = log.rotate_key(args.actor)
            print_json({"previous": previous, "key": log.verifier.key_string(), "seq": entry.seq})
            return 0
    except AuditLockedError as exc:
        raise CliExit(f"audit rotate-key: {exc}; stop the agent first", 1) from exc
    except AuditError as exc:
        raise CliExit(f"audit rotate-key: {exc}", 1) from exc


def _replay(args: argparse.Namespace) -> int:
    config = load(args)
    try:
        # Imported here: replay pulls in the engine, which the other audit commands must not need.
        module = importlib.import_module("edge_agent.reports.replay")
        replay_report = module.replay_report
    except (ImportError, AttributeError) as exc:
        raise CliExit(
            f"audit replay: not available in this build: edge_agent.reports.replay.replay_report is missing ({exc})", 1
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
