"""Audit: the log's size, its latest checkpoint, each witness with its state and cosignature, rollback findings; and
the auditor's bundle, built on request (a POST with the CSRF token) and downloaded as a .tar.gz.

Read through the audit package: the live AuditLog the agent shares with the console, and `anchor`'s readers of the
files the anchor keeps beside the log (witnesses.json, cosigned, ROLLBACK)."""

from __future__ import annotations

import asyncio
import base64
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import FileResponse, Response

from edge_agent.audit import AuditError, AuditLog
from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.rollback import read_marker
from edge_agent.audit.view import read_archive_state
from edge_agent.audit.witness_state import COSIGNED, read_witness_state
from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import context
from edge_agent.console.views.page import refuse, respond
from edge_agent.reports.document import StoreEvidence
from edge_agent.reports.request import from_iso


def _cosignatures(audit_dir: Path, log: AuditLog) -> dict[str, Any]:
    """The cosignatures kept on the newest cosigned checkpoint (`cosigned`), by signer name, and its size."""
    path = audit_dir / COSIGNED
    if not path.exists():
        return {"size": None, "by": {}}
    try:
        note = SignedNote.parse(path.read_bytes())
        size = Checkpoint.parse_body(note.text).size
    except (CheckpointError, OSError):
        return {"size": None, "by": {}}
    own = log.verifier
    return {
        "size": size,
        "by": {s.name: f"{s.key_hash:08x}" for s in note.signatures if (s.name, s.key_hash) != (own.name, own.hash)},
    }


def audit_data(log: AuditLog, audit_dir: Path) -> dict[str, Any]:
    checkpoint = log.last_checkpoint
    cosigned = _cosignatures(audit_dir, log)
    witnesses = [
        {
            "url": url,
            "state": w.state,
            "size": w.size,
            "detail": w.detail,
            "at": w.at,
            "failures": w.failures,
            "cosigned_size": cosigned["size"] if w.state == "cosigned" else None,
        }
        for url, w in sorted(read_witness_state(audit_dir).items())
    ]
    findings = read_marker(audit_dir) or []
    archive = read_archive_state(audit_dir)
    return {
        "origin": log.origin,
        "size": log.size,
        # Entries moved into archive bundles (`audit archive`): how many, and the bundles that hold them.
        "archived": {
            "entries": archive.first_kept if archive else 0,
            "bundles": [s.bundle for s in archive.segments] if archive else [],
        },
        "head_hash": log.head_hash,
        "checkpoint": None
        if checkpoint is None
        else {"size": checkpoint.size, "root": base64.b64encode(checkpoint.root).decode("ascii")},
        "blocked": log.blocked,
        "witnesses": witnesses,
        "cosignatures": cosigned["by"],
        "cosigned_size": cosigned["size"],
        "findings": [{"key": f.key, "message": f.message} for f in findings],
    }


@requires("audit")
async def view(request: Request) -> Response:
    ctx = context(request)
    data = await asyncio.to_thread(audit_data, ctx.audit, ctx.config.paths.audit_dir)
    return respond(request, "audit.html", data)


@requires("audit")
async def bundle(request: Request) -> Response:
    """Build the auditor's bundle of the entries between the form's `start` and `end` (ISO-8601, either empty for
    open) and send it; the export is itself an `audit.export` entry by the signed-in auditor."""
    from edge_agent.audit.export import export_bundle  # only when asked: the exporter brings the bundle verifier

    ctx = context(request)
    form = await request.form()
    bounds: dict[str, datetime | None] = {}
    for name in ("start", "end"):
        value = form.get(name) or None
        at = None
        if value is not None:
            try:
                at = from_iso(value) if isinstance(value, str) and len(value) <= 64 else None
            except ValueError:
                at = None
            if at is None or at.tzinfo is None:
                return refuse(request, 400, name, "an ISO-8601 time with an offset")
        bounds[name] = at
    stage = Path(tempfile.mkdtemp(prefix="console-bundle-"))
    out = stage / "audit-bundle.tar.gz"
    evidence = StoreEvidence(ctx.store, ctx.config.reports) if ctx.store is not None else None
    try:
        await asyncio.to_thread(
            export_bundle,
            ctx.config.paths.audit_dir,
            out,
            reports_dir=ctx.repo.reports_dir,
            start=bounds["start"],
            end=bounds["end"],
            log=ctx.audit,
            actor=f"operator:{request.state.session.name}",
            evidence=evidence,
        )
    except AuditError as exc:
        shutil.rmtree(stage, ignore_errors=True)
        return refuse(request, 400, "bundle", str(exc))
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    # Streamed from the file (a bundle holds every record its reports and answers cite: tens of MiB for a month),
    # and the staging folder removed once it is sent or the client has left.
    return FileResponse(
        out,
        media_type="application/gzip",
        filename="audit-bundle.tar.gz",
        background=BackgroundTask(shutil.rmtree, stage, ignore_errors=True),
    )
