"""`edge-agent doctor`: checks a live install (config, host, model and draft head, broker, OPC UA servers) and says,
for each finding that is not ok, how to fix it. Nothing here changes the install or starts the engine.

Modules: `types` (the `Check` result), `runner` (runs every probe whatever one of them raises), one module per group
of checks (`config`, `files`, `host`, `llm`, `mqtt`, `opcua`), `assemble` (all of them over one config), `table`
(the terminal rendering), `runbook` (the entry of docs/troubleshooting.md the table points each finding at). The
names below are the public ones.
"""

from edge_agent.doctor.assemble import Host, diagnose, probes
from edge_agent.doctor.runner import AsyncProbe, Probe, run_probes
from edge_agent.doctor.table import render
from edge_agent.doctor.types import Check, Status, worst

__all__ = ["AsyncProbe", "Check", "Host", "Probe", "Status", "diagnose", "probes", "render", "run_probes", "worst"]
