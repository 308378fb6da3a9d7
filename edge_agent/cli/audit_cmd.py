"""`edge-agent audit verify|export|verify-bundle|archive|pubkey|rotate-key|recover|init|replay`.

This module adds the `audit` group, its `verify` action and what the actions share (the trust options, the
configured origin, printing a verification); the other actions live in the modules of AUDIT_MODULES, each with a
`register(sub)`, in the order `edge-agent audit --help` shows them.

Exit codes: 0 verified / done; 1 verification failed (the first bad entry is named on stderr) or the action failed;
2 bad usage or bad config.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edge_agent.cli.common import CliExit, add_config_option, load, route_logs_to_stderr
from edge_agent.config import AgentConfig

if TYPE_CHECKING:
    from edge_agent.audit.verify import VerifyResult

# Modules under edge_agent.cli, each adding its audit actions after `verify`: the bundle (export, verify-bundle),
# keeping the log small (archive), starting over (recover, init), the signing key (pubkey, rotate-key), then replay.
AUDIT_MODULES: tuple[str, ...] = (
    "audit_bundle_cmd",
    "audit_archive_cmd",
    "audit_recover_cmd",
    "audit_keys_cmd",
    "audit_replay_cmd",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    audit = subparsers.add_parser("audit", help="verify, export and replay the tamper-evident audit trail")
    sub = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")

    verify = sub.add_parser("verify", help="check the hash chain, the Merkle tree and every signed checkpoint")
    add_config_option(verify)
    add_pubkey_option(verify)
    verify.add_argument(
        "--strict", action="store_true", help="also parse every entry (types, canonical JSON); ~8x slower"
    )
    add_trust_options(verify)
    verify.set_defaults(func=_verify)

    for name in AUDIT_MODULES:
        importlib.import_module(f"edge_agent.cli.{name}").register(sub)


def add_trust_options(parser: argparse.ArgumentParser) -> None:
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


def trust(args: argparse.Namespace) -> tuple[bytes | None, list[Any]]:
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


def add_pubkey_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pubkey", help="trusted verifier key (name+hash+base64), or a file holding it; default: the one on hand"
    )


def trusted_key(text: str | None) -> Any:
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
    trusted, witness_keys = trust(args)
    from edge_agent.audit.origin import recorded_origin

    result = verify_log(
        config.paths.audit_dir,
        trusted_key(args.pubkey),
        # Read-only: the origin configured or recorded, never a key made for a log that is not there.
        config.audit.origin or recorded_origin(config.paths.audit_dir),
        strict=args.strict,
        trusted=trusted,
        witness_keys=witness_keys,
    )
    return print_verification("audit verify", result)


def print_verification(command: str, result: VerifyResult) -> int:
    """A failure exits 1 with its summary on stderr; success prints the summary and any notes."""
    if not result.ok:
        raise CliExit(f"{command}: {result.summary()}", 1)
    print(result.summary())
    for note in result.notes:
        print(f"note: {note}")
    return 0
