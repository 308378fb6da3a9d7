"""Sealing a qualification: its JSON signed with the audit key, kept under the audit directory by its sha256 (where
the next `audit export` finds it), and the sha256 appended to the audit log as a `qualification` entry."""

from __future__ import annotations

import shutil
from pathlib import Path

from edge_agent.audit import AuditLog
from edge_agent.audit.bundle import QUALIFICATIONS
from edge_agent.audit.entry import AuditEntry
from edge_agent.base.canonical import sha256_hex
from edge_agent.qualify.report import HTML_NAME, JSON_NAME, SIGNATURE_NAME, Qualification, signature_text

EVENT = "qualification"


def seal(log: AuditLog, q: Qualification, out: Path, data: bytes, actor: str) -> AuditEntry:
    (out / SIGNATURE_NAME).write_text(signature_text(log.verifier.key_string(), log.sign(data)), encoding="ascii")
    digest = sha256_hex(data)
    kept = log.directory / QUALIFICATIONS
    kept.mkdir(mode=0o700, exist_ok=True)
    for name in (JSON_NAME, SIGNATURE_NAME, HTML_NAME):
        shutil.copyfile(out / name, kept / name.replace("qualification", digest, 1))
    entry = log.append(
        EVENT,
        actor,
        {"sha256": digest, "passed": q.passed, "failed": q.failed, "checks": len(q.checks), "out": str(out)},
    )
    if log.blocked is None:  # as `audit recover`: a log that does not match its checkpoints is not signed further
        log.checkpoint()
    return entry
