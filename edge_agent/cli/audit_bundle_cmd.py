"""`edge-agent audit export` and `audit verify-bundle`: writing an auditor's bundle and checking one offline."""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from edge_agent.cli.audit_cmd import (
    add_pubkey_option,
    add_trust_options,
    origin_of,
    print_verification,
    trust,
    trusted_key,
)
from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr
from edge_agent.config import AgentConfig


def register(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="write an auditor's bundle (directory, .tar.xz or .tar.gz) for a time range")
    add_config_option(export)
    export.add_argument("--from", dest="start", type=_parse_time, help="first entry time (ISO 8601; naive = UTC)")
    export.add_argument("--to", dest="end", type=_parse_time, help="last entry time (ISO 8601; naive = UTC)")
    export.add_argument(
        "--out", required=True, type=Path, help="new directory, or a path ending in .tar.xz (smallest) or .tar.gz"
    )
    export.add_argument("--actor", default="operator", help="who exports (recorded in the audit.export entry)")
    export.set_defaults(func=_export)

    bundle = sub.add_parser(
        "verify-bundle",
        help="verify an export bundle offline (no config or state needed): entries, proofs, the signed manifest of"
        " its files, and every report file against its log entries",
    )
    bundle.add_argument("path", type=Path, help="bundle directory, .tar.xz or .tar.gz")
    add_pubkey_option(bundle)
    add_trust_options(bundle)
    bundle.add_argument(
        "--approver-key",
        action="append",
        default=None,
        metavar="NAME=KEY",
        help="an approver's Ed25519 public key (ssh-ed25519 line, base64/hex, or a file holding it) from the"
        " commissioning record: every recorded approval must be signed by one of these; repeatable (default: the"
        " key each entry records)",
    )
    bundle.add_argument(
        "--recompute",
        action="store_true",
        help="also recompute every fact of every report from the bundle's records (records.jsonl) with this agent's"
        " fact code, naming any difference (report, fact, expected, found)",
    )
    bundle.set_defaults(func=_verify_bundle)


def _parse_time(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from exc
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def _verify_bundle(args: argparse.Namespace) -> int:
    from edge_agent.audit.verify import verify_bundle

    route_logs_to_stderr()
    trusted, witness_keys = trust(args)
    result = verify_bundle(
        args.path,
        trusted_key(args.pubkey),
        trusted=trusted,
        witness_keys=witness_keys,
        approver_keys=_approver_keys(args.approver_key),
        recompute=_recompute() if args.recompute else None,
        recompute_answer=_recompute_answer() if args.recompute else None,
    )
    return print_verification("audit verify-bundle", result)


def _recompute() -> Any:
    # Imported only here: the reports' fact code, which plain verification does not need.
    from edge_agent.reports.document import recompute

    return recompute


def _recompute_answer() -> Any:
    # Imported only here: the ask's code, which plain verification does not need.
    from edge_agent.ask.evidence import recompute_answer

    return recompute_answer


def _approver_keys(specs: list[str] | None) -> list[Any] | None:
    """--approver-key NAME=KEY values as ApproverKeys; None when none was given."""
    from edge_agent.signing import ApproverKey, parse_public_key

    if specs is None:
        return None
    keys = []
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep or not name.strip() or not text.strip():
            raise CliExit(f"edge-agent: --approver-key {spec[:80]!r}: expected NAME=KEY", 2)
        try:
            try:
                raw = parse_public_key(text)
            except ValueError:
                if len(text) > 4096 or not Path(text).is_file():
                    raise
                raw = parse_public_key(Path(text).read_text(encoding="utf-8"))
            keys.append(ApproverKey(name.strip(), raw))
        except (ValueError, OSError) as exc:
            raise CliExit(f"edge-agent: --approver-key {name.strip()}: {exc}", 2) from exc
    return keys


def _export(args: argparse.Namespace) -> int:
    from edge_agent.audit.component import witness_targets
    from edge_agent.audit.witness_state import with_cosignatures

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    audit_dir = config.paths.audit_dir
    reports_dir = config.paths.state_dir / "reports"
    targets = witness_targets(config)

    def cosign(note: bytes) -> bytes:
        return with_cosignatures(audit_dir, note, targets)

    with contextlib.ExitStack() as stack:
        evidence = _evidence(config, stack)
        answers = _answer_evidence(config) if evidence is not None else None
        result = _export_with(args, audit_dir, reports_dir, cosign, evidence, origin_of(config), answers)
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
            "without_evidence": result.without_evidence,
            "verification": result.verification.summary(),
        }
    )
    return 0 if result.verification.ok else 1


def _evidence(config: AgentConfig, stack: contextlib.ExitStack) -> Any:
    """The records behind each report's facts, from the store under the plant's [reports] settings; None (no
    evidence in the bundle, said on stderr) when there is no store."""
    from edge_agent.reports.document import StoreEvidence
    from edge_agent.store import Store

    if not config.paths.store_path.exists():
        print(f"note: no store at {config.paths.store_path}: the bundle carries no evidence", file=sys.stderr)
        return None
    return StoreEvidence(stack.enter_context(Store(config.paths.store_path)), config.reports)


def _answer_evidence(config: AgentConfig) -> Any:
    """The records each answer was computed from, read from the store under the plant's config."""
    from edge_agent.ask.evidence import StoreAnswerEvidence

    return StoreAnswerEvidence(config.paths.store_path, config)


def _export_with(
    args: argparse.Namespace,
    audit_dir: Path,
    reports_dir: Path,
    cosign: Any,
    evidence: Any,
    origin: str,
    answers: Any = None,
) -> Any:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.audit.export import export_bundle

    export = functools.partial(
        export_bundle,
        audit_dir,
        args.out,
        reports_dir=reports_dir,
        start=args.start,
        end=args.end,
        cosign=cosign,
        evidence=evidence,
        answers=answers,
    )
    try:
        try:
            with AuditLog.open(audit_dir, origin) as log:
                return export(log=log, actor=args.actor)
        except AuditLockedError:
            print(
                "note: the agent holds the audit log; exporting against its latest checkpoint, not recorded in it",
                file=sys.stderr,
            )
            return export()
    except AuditError as exc:
        raise CliExit(f"audit export: {exc}", 1) from exc
