"""`edge-agent draft import`: check a published EAGLE-3 / 3.1 head against the target and install it with a manifest.
(Building, training, exporting and measuring heads are training's: `python -m training draft ...`.)"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    draft = subparsers.add_parser("draft", help="import speculative-decoding draft heads")
    sub = draft.add_subparsers(dest="draft_command", required=True, metavar="ACTION")
    imp = sub.add_parser("import", help="check a published EAGLE-3 head against the target and copy it with a manifest")
    imp.add_argument("source", type=Path, metavar="SRC", help="head directory (llama_eagle3 or speculators layout)")
    imp.add_argument("--for", dest="model_dir", type=Path, required=True, metavar="MODEL_DIR", help="target model")
    imp.add_argument("--out", type=Path, help="new draft directory (default: MODEL_DIR-draft)")
    imp.add_argument("--name", help="head name in the manifest (default: SRC's directory name)")
    imp.add_argument("--no-progress", action="store_true", help="no progress bar while large files are hashed")
    imp.set_defaults(func=_import)


def _import(args: argparse.Namespace) -> int:
    from edge_agent.cli.common import CliExit
    from edge_agent.cli.model_cmd import print_imported
    from edge_agent.llm.head_import import import_head
    from edge_agent.llm.importer import ModelImportError
    from edge_agent.llm.types import ModelVerificationError

    out = args.out or args.model_dir.with_name(args.model_dir.name + "-draft")
    try:
        result = import_head(args.source, args.model_dir, out, name=args.name, show_progress=not args.no_progress)
    except (ModelImportError, ModelVerificationError) as exc:
        raise CliExit(f"edge-agent: draft import failed: {exc}", 1) from exc
    print_imported(result)
    return 0
