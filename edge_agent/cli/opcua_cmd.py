"""`edge-agent opcua browse ENDPOINT`: list a server's variables and event notifiers, or print them as config."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from edge_agent.cli.common import CliExit, load, logs_on_stderr
from edge_agent.config import OpcuaSourceConfig

# Without --config: a name for the throwaway source (it names nothing on disk under security None).
_ANONYMOUS = "browse"


def register(subparsers: argparse._SubParsersAction) -> None:
    opcua = subparsers.add_parser("opcua", help="inspect OPC UA servers")
    sub = opcua.add_subparsers(dest="opcua_command", required=True, metavar="ACTION")
    browse = sub.add_parser(
        "browse",
        help="walk a server's address space: variables (node id, browse path, data type, unit) and event notifiers",
        description="Without --config the session is anonymous with security None; with --config and --source it"
        " uses that [[opcua.sources]] entry's security, certificates, pin and user. The walk stops at 10 000 nodes.",
    )
    browse.add_argument(
        "endpoint", nargs="?", metavar="ENDPOINT", help="opc.tcp://host:port/path (default: the --source's endpoint)"
    )
    # asyncua is imported only when a command runs (every `edge-agent` call builds this parser): the defaults are
    # edge_agent.connectors.opcua.browse's DEFAULT_DEPTH and MAX_NODES, which tests/test_opcua_browse.py holds these
    # texts to.
    browse.add_argument("--depth", type=int, help="levels below --from (default 6)")
    browse.add_argument(
        "--from", dest="start", metavar="NODE", help='start node, e.g. "ns=2;s=Plant" (default: Objects)'
    )
    browse.add_argument("--config", "-c", type=Path, help="agent config whose [[opcua.sources]] security to use")
    browse.add_argument("--source", metavar="NAME", help="the [[opcua.sources]] entry (name) in --config")
    output = browse.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="JSON for scripts")
    output.add_argument("--toml", action="store_true", help="[[opcua.sources.nodes]] blocks to paste into the config")
    browse.set_defaults(func=_browse)


def _browse(args: argparse.Namespace) -> int:
    from asyncua import ua

    from edge_agent.connectors.opcua.browse import (
        DEFAULT_DEPTH,
        BrowseError,
        as_json,
        browse,
        format_table,
        format_toml,
    )
    from edge_agent.connectors.opcua.security import OpcuaSecurityError

    depth = DEFAULT_DEPTH if args.depth is None else args.depth
    if depth < 0:
        raise CliExit("edge-agent: opcua browse: --depth must be 0 or more", 2)
    if args.start is not None:
        try:
            ua.NodeId.from_string(args.start)
        except (ValueError, ua.UaError) as exc:
            raise CliExit(f"edge-agent: opcua browse: --from {args.start!r} is not a node id ({exc})", 2) from exc
    source, pki_dir, level = _source(args)
    try:
        # asyncua warns about what it negotiates; only its errors concern this command.
        with logs_on_stderr(level, asyncua_level=logging.ERROR):
            space = asyncio.run(browse(source, pki_dir, start=args.start, depth=depth))
    except OpcuaSecurityError as exc:
        raise CliExit(f"edge-agent: opcua browse: {exc}", 1) from exc
    except BrowseError as exc:
        raise CliExit(f"edge-agent: opcua browse: {exc}", 1) from exc
    except TimeoutError as exc:
        raise CliExit(
            f"edge-agent: opcua browse: {source.endpoint} did not answer within {source.connect_timeout_s:g} s", 1
        ) from exc
    except PermissionError as exc:  # the client certificate goes into the agent's <state_dir>/pki
        raise CliExit(f"edge-agent: opcua browse: {exc} (run it as the agent's user)", 1) from exc
    except OSError as exc:  # refused, unreachable, unknown host
        raise CliExit(f"edge-agent: opcua browse: cannot reach {source.endpoint}: {exc}", 1) from exc
    except ua.UaStatusCodeError as exc:
        name = ua.StatusCode(exc.code).name
        raise CliExit(f"edge-agent: opcua browse: {source.endpoint} refused: {name} ({exc})", 1) from exc
    except (ua.UaError, ConnectionError) as exc:
        raise CliExit(f"edge-agent: opcua browse: {source.endpoint}: {exc!r}", 1) from exc
    if args.json:
        print(json.dumps(as_json(space), indent=2, ensure_ascii=False))
    elif args.toml:
        sys.stdout.write(format_toml(space))
    else:
        sys.stdout.write(format_table(space))
    return 0


def _source(args: argparse.Namespace) -> tuple[OpcuaSourceConfig, Path, str]:
    """The source whose security to use, with ENDPOINT put in; where its generated certificate lives; the log level."""
    if args.config is None and args.source is None:
        if args.endpoint is None:
            raise CliExit("edge-agent: opcua browse: give ENDPOINT, or --config FILE --source NAME", 2)
        return _anonymous(args.endpoint), Path("."), "warning"  # security None: no certificate is read or written
    if args.config is None or args.source is None:
        raise CliExit("edge-agent: opcua browse: --config and --source go together", 2)
    config = load(args, setup_logging=False)
    names = [s.name for s in config.opcua.sources]
    if args.source not in names:
        listed = ", ".join(names) if names else "none"
        raise CliExit(
            f"edge-agent: opcua browse: no [[opcua.sources]] named {args.source!r} in {args.config} ({listed})", 2
        )
    source = config.opcua.sources[names.index(args.source)]
    if args.endpoint is not None:
        source = source.model_copy(update={"endpoint": _checked_endpoint(args.endpoint)})
    return source, config.paths.pki_dir, config.logging.level


def _anonymous(endpoint: str) -> OpcuaSourceConfig:
    return OpcuaSourceConfig(name=_ANONYMOUS, endpoint=_checked_endpoint(endpoint))


def _checked_endpoint(endpoint: str) -> str:
    if not endpoint.startswith("opc.tcp://") or len(endpoint) == len("opc.tcp://"):
        raise CliExit(f"edge-agent: opcua browse: {endpoint!r} is not an opc.tcp:// endpoint", 2)
    return endpoint
