"""The checkpointing component: timer and shutdown checkpoints, built from the agent config."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from edge_agent.audit.checkpoint import Checkpoint, SignedNote
from edge_agent.audit.component import AuditCheckpointer, open_audit_log
from edge_agent.config import AgentConfig
from edge_agent.daemon.component import Component


def signed_size(audit_dir: Path) -> int:
    return Checkpoint.parse_body(SignedNote.parse((audit_dir / "checkpoint").read_bytes()).text).size


def config(tmp_path: Path) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": {"id": "comp-site"},
            "paths": {"state_dir": str(tmp_path)},
            "audit": {"checkpoint_every_entries": 1000},
        }
    )


async def test_checkpoints_on_the_timer_and_at_shutdown(tmp_path: Path) -> None:
    """Entries appended while running are signed by the next tick; those appended last, at cancellation."""
    audit = open_audit_log(config(tmp_path))
    try:
        component = AuditCheckpointer(audit, every_s=0.05)
        assert isinstance(component, Component)
        ready = asyncio.Event()
        task = asyncio.create_task(component.run(ready))
        await asyncio.wait_for(ready.wait(), 5)
        audit.append("agent.start", "agent", {})
        for _ in range(100):
            await asyncio.sleep(0.02)
            if (tmp_path / "audit" / "checkpoint").exists() and signed_size(tmp_path / "audit") == 2:
                break
        assert signed_size(tmp_path / "audit") == 2
        audit.append("agent.stop", "agent", {})
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert signed_size(tmp_path / "audit") == 3
    finally:
        audit.close()


def test_origin_defaults_to_the_site_id_and_the_keys_hash(tmp_path: Path) -> None:
    """Without audit.origin a new log is named edge-agent/<site id>/<16 hex of SHA-256 of its public key>."""
    with open_audit_log(config(tmp_path)) as audit:
        digest = hashlib.sha256(audit.verifier.public).hexdigest()[:16]
        assert audit.origin == f"edge-agent/comp-site/{digest}"
        assert audit.verifier.key_string().startswith(f"edge-agent/comp-site/{digest}+")
