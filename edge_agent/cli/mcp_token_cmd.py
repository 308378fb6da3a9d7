"""`edge-agent mcp token add|list|revoke`: the per-user bearer tokens of the MCP server over HTTPS (docs/ask.md, "MCP
over HTTPS"). `add` prints the new token once; the tokens file keeps only its SHA-256.

Each change is an audit entry (`mcp.token_added`, `mcp.token_revoked`): written here when the agent is stopped, and by
the agent's MCP server, before it honours the file again, while the agent holds the log.

Exit codes: 0 done; 1 the user is no `[[identities]]` name, no such active token, or the file cannot be written;
2 bad usage or config.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from edge_agent.cli.common import CliExit, add_config_option, load, print_json, route_logs_to_stderr
from edge_agent.config import AgentConfig

if TYPE_CHECKING:
    from edge_agent.ask.mcp_tokens import TokenFile


def register(mcp: argparse.ArgumentParser) -> None:
    sub = mcp.add_subparsers(dest="mcp_command", metavar="token", required=False)
    token = sub.add_parser("token", help="add, list or revoke the per-user tokens of the MCP server over HTTPS")
    actions = token.add_subparsers(dest="token_command", required=True, metavar="ACTION")

    add = actions.add_parser("add", help="print a new token for USER, once (the file keeps only its SHA-256)")
    add_config_option(add)
    add.add_argument("--user", required=True, help="the person the token's calls are made as ([[identities]] name)")
    add.add_argument("--actor", default="operator", help="who adds it (recorded in the mcp.token_added entry)")
    add.set_defaults(func=_add)

    listing = actions.add_parser("list", help="list the tokens: id, user, created_at, revoked_at (no secrets)")
    add_config_option(listing)
    listing.set_defaults(func=_list)

    revoke = actions.add_parser("revoke", help="revoke USER's active tokens, or the token ID")
    add_config_option(revoke)
    which = revoke.add_mutually_exclusive_group(required=True)
    which.add_argument("--user", help="revoke every active token of this user")
    which.add_argument("--id", dest="token_id", help="revoke this token (an id `mcp token list` shows)")
    revoke.add_argument("--actor", default="operator", help="who revokes (recorded in the mcp.token_revoked entry)")
    revoke.set_defaults(func=_revoke)


def _token_file(config: AgentConfig) -> TokenFile:
    from edge_agent.ask.mcp_tokens import TokenFile

    return TokenFile(config.mcp.tokens_path(config.paths.state_dir))


def _audit(config: AgentConfig, command: str) -> None:
    """Append the file's waiting audit entries when the log is free; otherwise say who will."""
    from edge_agent.ask.mcp_tokens import TokenError
    from edge_agent.audit import AuditError, AuditLockedError, AuditLog
    from edge_agent.cli.audit_cmd import origin_of

    try:
        with AuditLog.open(config.paths.audit_dir, origin_of(config)) as log:
            _token_file(config).audit_pending(log)
    except AuditLockedError:
        who = (
            "its MCP server records the change when it next reads the tokens file"
            if config.mcp.enabled
            else "the change is recorded by its MCP server once [mcp] is enabled, or by the next token command run"
            " while the agent is stopped"
        )
        print(f"{command}: the running agent holds the audit log; {who}", file=sys.stderr)
    except (AuditError, TokenError) as exc:
        print(
            f"{command}: not yet recorded in the audit log ({exc}); the next token command or agent start does it",
            file=sys.stderr,
        )


def _add(args: argparse.Namespace) -> int:
    from edge_agent.ask.mcp_tokens import TokenError
    from edge_agent.base.types import utcnow

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    names = sorted(identity.name for identity in config.identities)
    if args.user not in names:
        raise CliExit(f"mcp token add: {args.user!r} is no [[identities]] name (the names: {names or 'none'})", 1)
    try:
        secret, record = _token_file(config).add(args.user, utcnow(), args.actor)
    except TokenError as exc:
        raise CliExit(f"mcp token add: {exc}", 1) from exc
    _audit(config, "mcp token add")
    print(f"mcp token add: {record.id} for {record.user}; the token is shown once, below", file=sys.stderr)
    print(secret)
    return 0


def _list(args: argparse.Namespace) -> int:
    from edge_agent.ask.mcp_tokens import TokenError

    config = load(args, setup_logging=False)
    try:
        tokens = _token_file(config).read()
    except TokenError as exc:
        raise CliExit(f"mcp token list: {exc}", 1) from exc
    print_json([record.listing() for record in tokens.tokens])
    return 0


def _revoke(args: argparse.Namespace) -> int:
    from edge_agent.ask.mcp_tokens import TokenError
    from edge_agent.base.types import utcnow

    config = load(args, setup_logging=False)
    route_logs_to_stderr()
    try:
        revoked = _token_file(config).revoke(utcnow(), args.actor, user=args.user, token_id=args.token_id)
    except TokenError as exc:
        raise CliExit(f"mcp token revoke: {exc}", 1) from exc
    _audit(config, "mcp token revoke")
    print_json([record.listing() for record in revoked])
    return 0
