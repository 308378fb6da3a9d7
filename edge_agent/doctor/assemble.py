"""Every check over one config, in the order the table shows them: the config, the host, the engine's files, then
the network peers. Doctor is a composition root: it reaches the connectors to talk to the broker and the servers
exactly as the agent does."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from edge_agent.config import AgentConfig
from edge_agent.doctor import config as config_checks
from edge_agent.doctor import files, host, llm
from edge_agent.doctor.audit_rollback import check_audit_rollback
from edge_agent.doctor.audit_witness import check_audit_witnesses
from edge_agent.doctor.mqtt import check_mqtt
from edge_agent.doctor.opcua import check_opcua_source
from edge_agent.doctor.runner import AsyncProbe, Probe, run_local, run_probes
from edge_agent.doctor.types import Check


@dataclass(frozen=True)
class Host:
    """What doctor reads of the machine, given so a test can say it: the environment, the user, the unit path."""

    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    euid: int = field(default_factory=os.geteuid)
    unit: Path = host.DEFAULT_UNIT


def probes(config_path: Path, config: AgentConfig, on: Host) -> list[Probe | AsyncProbe]:
    engine = llm.LlmChecks(config)
    state_dir = config.paths.state_dir
    return [
        Probe("config", partial(config_checks.check_config, config_path, config)),
        Probe("security", partial(config_checks.check_security, config, on.environ)),
        Probe("state_dir", partial(files.check_state_dir, state_dir, on.euid)),
        Probe("audit_key", partial(files.check_audit_key, config)),
        Probe("audit_rollback", partial(check_audit_rollback, config)),
        Probe("disk", partial(files.check_disk, config)),
        Probe("clock", lambda: host.check_clock(datetime.now(UTC), host.installed_at())),
        Probe("clock.ntp", lambda: host.check_ntp(*host.query_ntp())),
        Probe("unit", partial(host.check_unit, on.unit)),
        Probe("model", engine.model),
        Probe("draft", engine.draft),
        Probe("compile", partial(llm.check_compile, config, on.environ)),
        AsyncProbe("mqtt", partial(check_mqtt, config.mqtt)),
        AsyncProbe("audit_witness", partial(check_audit_witnesses, config)),
        *(
            AsyncProbe(f"opcua.{s.name}", partial(check_opcua_source, s, config.paths.pki_dir))
            for s in config.opcua.sources
        ),
    ]


# The probes a running agent can repeat whenever its console's Health page is read: files and the clock, no network,
# no subprocess, no model hashing (0.4 ms together on a fresh install; the others take seconds or talk to peers).
LOCAL_IDS = ("config", "security", "state_dir", "audit_key", "audit_rollback", "disk", "clock")


def local_checks(config_path: Path, config: AgentConfig, on: Host | None = None) -> list[Check]:
    """The cheap local checks (`LOCAL_IDS`), in the table's order: what the console's Health page shows."""
    chosen = [p for p in probes(config_path, config, on or Host()) if isinstance(p, Probe) and p.id in LOCAL_IDS]
    return run_local(chosen)


async def diagnose(config_path: Path, config: AgentConfig, on: Host | None = None) -> list[Check]:
    """Every finding for the install `config` describes; never raises for one check's sake."""
    return await run_probes(probes(config_path, config, on or Host()))
