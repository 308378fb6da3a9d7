"""The audit log's rollback state: a rollback the agent found at start (`<audit>/ROLLBACK`, audit/rollback.py), or a
missing log beside a store that holds data."""

from __future__ import annotations

from edge_agent.audit.log import ENTRIES
from edge_agent.audit.rollback import read_marker
from edge_agent.config import AgentConfig
from edge_agent.doctor.types import Check


def check_audit_rollback(config: AgentConfig) -> Check:
    audit_dir = config.paths.audit_dir
    findings = read_marker(audit_dir)
    if findings:
        more = f" (+{len(findings) - 1} more in {audit_dir / 'ROLLBACK'})" if len(findings) > 1 else ""
        return Check.fail(
            "audit_rollback",
            f"the agent found a rollback and signs nothing: {findings[0].message}{more}",
            "find out who changed the audit log or the store; then edge-agent audit recover --reason '…'"
            " (docs/audit.md, Rollback and witnesses)",
        )
    store = config.paths.store_path
    if not (audit_dir / ENTRIES).exists() and store.exists() and store.stat().st_size > 0:
        return Check.fail(
            "audit_rollback",
            f"{audit_dir / ENTRIES} is missing beside the store {store}: the agent refuses to start",
            "restore the audit directory from backup, or: edge-agent audit init --new-log --reason '…'",
        )
    return Check.ok("audit_rollback", "no rollback recorded")
