"""`edge-agent witness keygen|pubkey|serve`: a C2SP tlog-witness for an auditor or a second host (audit/witness.py).

Exit codes: 0 done; 1 the key or state cannot be used; 2 bad usage.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

from edge_agent.cli.common import CliExit, route_logs_to_stderr

if TYPE_CHECKING:
    from edge_agent.signing import Cosigner


def register(subparsers: argparse._SubParsersAction) -> None:
    witness = subparsers.add_parser("witness", help="run a transparency-log witness that cosigns audit checkpoints")
    sub = witness.add_subparsers(dest="witness_command", required=True, metavar="ACTION")

    keygen = sub.add_parser("keygen", help="create the witness's signing key (mode 0600) and print its public key")
    keygen.add_argument("--name", required=True, help="the witness's name, e.g. auditor.example/w1")
    keygen.add_argument("--key", required=True, type=Path, help="new key file")
    keygen.set_defaults(func=_keygen)

    pubkey = sub.add_parser("pubkey", help="print the witness's cosignature public key (for [audit] witnesses)")
    pubkey.add_argument("--key", required=True, type=Path)
    pubkey.set_defaults(func=_pubkey)

    serve = sub.add_parser("serve", help="serve POST /add-checkpoint (C2SP tlog-witness) until stopped")
    serve.add_argument("--state", required=True, type=Path, help="state directory (fsync'd per cosignature)")
    serve.add_argument("--listen", default="127.0.0.1:7380", help="HOST:PORT (default 127.0.0.1:7380)")
    serve.add_argument("--key", required=True, type=Path, help="the witness's signing key file (keygen)")
    serve.add_argument(
        "--log-key",
        action="append",
        required=True,
        help="a log's verifier key (`edge-agent audit pubkey`), or a file of them; repeatable",
    )
    serve.set_defaults(func=_serve)


def _keygen(args: argparse.Namespace) -> int:
    from edge_agent.signing import Cosigner, Signer, SigningKeyError

    try:
        signer = Signer.generate(args.name)
        signer.write(args.key)
    except (SigningKeyError, OSError) as exc:
        raise CliExit(f"witness keygen: {exc}", 1) from exc
    print(Cosigner(signer).key.key_string())
    return 0


def _cosigner(path: Path) -> Cosigner:
    from edge_agent.signing import Cosigner, Signer, SigningKeyError

    try:
        return Cosigner(Signer.read(path))
    except (SigningKeyError, OSError) as exc:
        raise CliExit(f"witness: key {path}: {exc}", 1) from exc


def _pubkey(args: argparse.Namespace) -> int:
    print(_cosigner(args.key).key.key_string())
    return 0


def _serve(args: argparse.Namespace) -> int:
    from edge_agent.audit.witness import Witness, WitnessState, make_server
    from edge_agent.signing import SigningKeyError, Verifier

    route_logs_to_stderr("info")
    host, _, port = args.listen.rpartition(":")
    if not host or not port.isdigit():
        raise CliExit(f"witness serve: --listen {args.listen!r} is not HOST:PORT", 2)
    keys = []
    for text in args.log_key:
        path = Path(text)
        lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else [text]
        try:
            keys += [Verifier.parse(line) for line in lines if line.strip()]
        except SigningKeyError as exc:
            raise CliExit(f"witness serve: --log-key: {exc}", 2) from exc
    cosigner = _cosigner(args.key)
    try:
        witness = Witness(WitnessState(args.state), cosigner, keys)
        server = make_server(witness, host, int(port))
    except (OSError, ValueError) as exc:
        raise CliExit(f"witness serve: {exc}", 1) from exc
    bound_port = server.server_address[1]
    listening = {"listening": f"{host}:{bound_port}", "key": cosigner.key.key_string(), "logs": len(keys)}
    print(json.dumps(listening), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
