"""What a tool reads: the store (read only), the agent's config, a fixed `now` and the budget that bounds a read."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from edge_agent.config import AgentConfig
from edge_agent.reports.document import ReportRepository
from edge_agent.store import Store

# 31 days: the longest window a report covers (`reports.request.MAX_WINDOW`); an answer reads no more than a report.
MAX_WINDOW_S = 31 * 86_400
# 500 000 records: a 31-day window of a small plant's MES events and alarms, or about 10 h of 13 tags at 1 Hz; a read
# of this many takes ~3 s and ~0.5 GB on an edge box (what one question may cost, beside a report in generation).
MAX_ROWS = 500_000


@dataclass(frozen=True)
class Budget:
    """A window longer than `max_window_s` or a read of more than `max_rows` records is refused (`outside_budget`)."""

    max_window_s: int = MAX_WINDOW_S
    max_rows: int = MAX_ROWS


@dataclass
class ToolContext:
    """`now` is UTC and fixed by the caller: tools never read the clock, so an answer replays byte for byte.
    `reports`: the report repository the report tools read (None: they open the one beside the store).
    `aliases`: what people call an asset → its id (`[ask] aliases`), listed as the asset's names in the namespace."""

    store: Store
    config: AgentConfig
    now: datetime
    budget: Budget = field(default_factory=Budget)
    reports: ReportRepository | None = None
    aliases: dict[str, str] = field(default_factory=dict)
