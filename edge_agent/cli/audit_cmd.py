"""`edge-agent audit verify|export|verify-bundle|pubkey|rotate-key|recover|init|replay`.

Exit codes: 0 verified / done; 1 verification failed (the first bad entry is named on stderr) or the action failed;
2 bad usage or bad config.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import re
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
    _add_trust_options(verify)
    verify.set_defaults(func=_verify)

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
    _add_pubkey_option(bundle)
    _add_trust_options(bundle)
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

    recover = sub.add_parser(
        "recover", help="after a detected rollback: accept the findings on the record and sign again (agent stopped)"
    )
    add_config_option(recover)
    recover.add_argument("--reason", required=True, help="why (recorded in the audit.recovered entry)")
    recover.add_argument("--actor", default="operator", help="who recovers (recorded)")
    recover.set_defaults(func=_recover)

    init = sub.add_parser("init", help="start a new audit log on purpose (the old one is lost): --new-log")
    add_config_option(init)
    init.add_argument("--new-log", action="store_true", required=True, help="required: yes, a new log")
    init.add_argument("--reason", required=True, help="why (recorded in the new log's first entry)")
    init.add_argument("--actor", default="operator", help="who starts it (recorded)")
    init.add_argument(
        "--last-checkpoint",
        type=Path,
        help="the old log's last checkpoint (default: read back from edge/<site>/audit/checkpoint)",
    )
    init.set_defaults(func=_init)

    pubkey = sub.add_parser("pubkey", help="print the note verifier key that signs checkpoints")
    add_config_option(pubkey)
    pubkey.set_defaults(func=_pubkey)

    rotate = sub.add_parser("rotate-key", help="replace the signing key (the agent must be stopped)")
    add_config_option(rotate)
    rotate.add_argument("--actor", default="operator", help="who rotates (recorded in the key.rotated entry)")
    rotate.set_defaults(func=_rotate)

    replay = sub.add_parser(
        "replay", help="regenerate a report (rpt-...) or answer an ask again (question id or audit seq); identical?"
    )
    add_config_option(replay)
    replay.add_argument("report_id", metavar="ID", help="a report id, or an ask's question_id or audit seq")
    replay.set_defaults(func=_replay)


def _add_trust_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trusted-checkpoint",
        type=Path,
        help="the last checkpoint you saw (a signed note file): fail unless the log extends it",
    )
    parser.add_argument(
        "--witness-key",
        action="append",
        default=[],
        help="require a cosignature by this witness key on the newest checkpoint; repeatable",
    )


def _trust(args: argparse.Namespace) -> tuple[bytes | None, list[Any]]:
    from edge_agent.signing import CosignerKey, SigningKeyError

    trusted = None
    if args.trusted_checkpoint is not None:
        try:
            trusted = args.trusted_checkpoint.read_bytes()
        except OSError as exc:
            raise CliExit(f"edge-agent: --trusted-checkpoint: {exc}", 2) from exc
    try:
        keys = [CosignerKey.parse(k) for k in args.witness_key]
    except SigningKeyError as exc:
        raise CliExit(f"edge-agent: --witness-key: {exc}", 2) from exc
    return trusted, keys


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
    from edge_agent.signing import SigningKeyError, Verifier

    if text is None:
        return None
    path = Path(text)
    try:
        if path.is_file():
            text = path.read_text(encoding="utf-8")
        return Verifier.parse(text)
    except (SigningKeyError, OSError) as exc:
        raise CliExit(f"edge-agent: --pubkey: {exc}", 2) from exc


def origin_of(config: AgentConfig) -> str:
    from edge_agent.audit.component import origin_for

    return origin_for(config)


def _verify(args: argparse.Namespace) -> int:
    from edge_agent.audit.verify import verify_log

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    trusted, witness_keys = _trust(args)
    from edge_agent.audit.origin import recorded_origin

    result = verify_log(
        config.paths.audit_dir,
        _trusted_key(args.pubkey),
        # Read-only: the origin configured or recorded, never a key made for a log that is not there.
        config.audit.origin or recorded_origin(config.paths.audit_dir),
        strict=args.strict,
        trusted=trusted,
        witness_keys=witness_keys,
    )
    return _print_verification("audit verify", result)


def _verify_bundle(args: argparse.Namespace) -> int:
    from edge_agent.audit.verify import verify_bundle

    route_logs_to_stderr()
    trusted, witness_keys = _trust(args)
    result = verify_bundle(
        args.path,
        _trusted_key(args.pubkey),
        trusted=trusted,
        witness_keys=witness_keys,
        approver_keys=_approver_keys(args.approver_key),
        recompute=_recompute() if args.recompute else None,
        recompute_answer=_recompute_answer() if args.recompute else None,
    )
    return _print_verification("audit verify-bundle", result)


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


def _print_verification(command: str, result: VerifyResult) -> int:
    """A failure exits 1 with its summary on stderr; success prints the summary and any notes."""
    if not result.ok:
        raise CliExit(f"{command}: {result.summary()}", 1)
    print(result.summary())
    for note in result.notes:
        print(f"note: {note}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from edge_agent.audit.anchor import with_cosignatures
    from edge_agent.audit.component import witness_targets

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


def _recover(args: argparse.Namespace) -> int:
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.audit.anchor import MARKER, RECOVERED_EVENT, read_marker

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    audit_dir = config.paths.audit_dir
    findings = read_marker(audit_dir)
    if findings is None:
        raise CliExit(f"audit recover: no rollback recorded ({audit_dir / MARKER} does not exist); nothing to do", 1)
    try:
        with AuditLog.open(audit_dir, origin_of(config)) as log:
            # The entry is the acceptance: the next start accepts the findings it names once a checkpoint covers it.
            entry = log.append(
                RECOVERED_EVENT,
                args.actor,
                {"reason": args.reason, "findings": [{"key": f.key, "message": f.message} for f in findings]},
            )
            note = log.checkpoint() if log.blocked is None else None
            (audit_dir / MARKER).unlink()
    except AuditLockedError as exc:
        raise CliExit(f"audit recover: {exc}; stop the agent first", 1) from exc
    except AuditError as exc:
        raise CliExit(f"audit recover: {exc}", 1) from exc
    print_json(
        {
            "seq": entry.seq,
            "accepted": [f.message for f in findings],
            "signed": note is not None,
            "note": None
            if note is not None
            else "the log does not match its own checkpoints, so this entry is unsigned and accepts nothing; see"
            " audit verify",
        }
    )
    return 0


def _init(args: argparse.Namespace) -> int:
    import asyncio

    from edge_agent.audit import AuditError, AuditLog
    from edge_agent.audit.anchor import checkpoint_topic
    from edge_agent.audit.log import ENTRIES
    from edge_agent.publish.retained import read_retained

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    audit_dir = config.paths.audit_dir
    if (audit_dir / ENTRIES).exists() and (audit_dir / ENTRIES).stat().st_size:
        raise CliExit(f"audit init: {audit_dir / ENTRIES} exists; a new log only replaces a missing one", 1)
    previous: bytes | None = None
    source = None
    if args.last_checkpoint is not None:
        previous, source = args.last_checkpoint.read_bytes(), str(args.last_checkpoint)
    elif config.mqtt.enabled:
        topic = checkpoint_topic(config.site.id)
        try:
            previous = asyncio.run(read_retained(config.mqtt, topic, f"{config.mqtt.client_id}-audit-init"))
            source = topic
        except Exception as exc:  # an unreachable broker: the new log says so instead of the checkpoint
            print(f"note: could not read {topic}: {exc!r}", file=sys.stderr)
    origin = origin_of(config)
    genesis = {
        "reason": args.reason,
        "actor": args.actor,
        "previous_checkpoint": previous.decode("utf-8", "replace") if previous else None,
        "previous_checkpoint_from": source,
    }
    try:
        # The old log's retained checkpoint is not signed by the new key: the agent warns of it and replaces it. A
        # witness that cosigned the old log refuses the new one until its operator registers the new key.
        with AuditLog.open(audit_dir, origin, genesis=genesis) as log:
            print_json({"origin": origin, "key": log.verifier.key_string(), "previous_checkpoint": source})
    except AuditError as exc:
        raise CliExit(f"audit init: {exc}", 1) from exc
    return 0


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
    from edge_agent.audit.anchor import read_lines
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
