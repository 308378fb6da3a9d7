"""The audit log's witnesses: does each answer for this log now (the log's latest checkpoint submitted as the agent
submits it, C2SP tlog-witness), and how did the agent's last exchange with it end (`<audit>/witnesses.json`)."""

from __future__ import annotations

import asyncio

from edge_agent.audit.component import witness_targets
from edge_agent.audit.log import LATEST_CHECKPOINT
from edge_agent.audit.rollback import read_lines
from edge_agent.audit.witness_client import submit
from edge_agent.audit.witness_state import log_proofs, read_witness_state
from edge_agent.config import AgentConfig
from edge_agent.doctor.types import Check

ID = "audit_witness"
# 5 s per request: a witness answers in milliseconds, and doctor's network probes end within 30 s together.
TIMEOUT_S = 5.0
FIX = (
    "check the witness URL and that its operator registered this log's origin and key (edge-agent audit pubkey);"
    " docs/audit.md, Rollback and witnesses"
)

ROLLBACK_FIX = (
    "the log does not extend what the witness cosigned: find out who changed it (docs/audit.md, Rollback and"
    " witnesses), then edge-agent audit recover --reason '…'"
)


def witness_checks(config: AgentConfig) -> list[Check]:
    """One finding per configured witness: ok when it cosigns the log's latest checkpoint."""
    targets = witness_targets(config)
    if not targets:
        return [Check.ok(ID, "no witness configured: the retained MQTT checkpoint is the only copy kept outside")]
    audit_dir = config.paths.audit_dir
    if not (audit_dir / LATEST_CHECKPOINT).exists():
        return [Check.warn(ID, f"no signed checkpoint in {audit_dir} yet to submit", "start the agent once")]
    note = (audit_dir / LATEST_CHECKPOINT).read_bytes()
    proofs = log_proofs(read_lines(audit_dir))
    recorded = read_witness_state(audit_dir)
    checks = []
    for target in targets:
        state = recorded.get(target.url)
        answer = submit(target, note, proofs, state.size if state else 0, TIMEOUT_S)
        agent = f"; the agent's last exchange: {state.state}: {state.detail}" if state and state.failing else ""
        if answer.kind == "cosigned":
            checks.append(Check.ok(ID, f"{answer.detail}{agent}"))
        elif answer.kind in ("rollback", "fork"):
            checks.append(Check.fail(ID, f"{answer.detail}{agent}", ROLLBACK_FIX))
        else:
            checks.append(Check.fail(ID, f"{answer.kind}: {answer.detail}{agent}", FIX))
    return checks


async def check_audit_witnesses(config: AgentConfig) -> list[Check]:
    return await asyncio.to_thread(witness_checks, config)
