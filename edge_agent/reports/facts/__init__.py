"""The facts wing: pure functions from stored records to numbered, rounded, traceable facts, the plant KPIs among
them (OEE, MTBF/MTTR, ISA-18.2 alarm performance). Code outside the wing uses these names only."""

from edge_agent.reports.facts.builder import Fact, round_value
from edge_agent.reports.facts.compute import FACTS_VERSION, compute_facts, is_ratio, traced_facts, traced_tag_stats
from edge_agent.reports.facts.gaps import DATA_GAP
from edge_agent.reports.facts.kpi import DEFAULT_CONSOLE

__all__ = [
    "compute_facts",
    "DATA_GAP",
    "DEFAULT_CONSOLE",
    "Fact",
    "FACTS_VERSION",
    "is_ratio",
    "round_value",
    "traced_facts",
    "traced_tag_stats",
]
