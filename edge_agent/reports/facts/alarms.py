"""Facts from alarm records: the total of activations, and the most frequent alarms, ranked."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from edge_agent.base.types import StoredRecord
from edge_agent.reports.facts.builder import Alarm, Builder, parse_alarm
from edge_agent.reports.request import iso

# Top 5 alarms: what a shift handover reads; the full count is in alarm_total.
TOP_ALARMS = 5


def alarm_facts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    alarms = [a for r in by_kind.get("alarm", []) if (a := parse_alarm(b, r)) is not None]
    # An alarm record with active=false is the condition clearing; only activations count as alarms.
    raised = [a for a in alarms if a.active]
    assets = sorted({a.record.key for a in raised})
    b.add("alarm_total", {"count": len(raised), "assets_count": len(assets)}, [a.record for a in raised], ids=assets)
    groups: dict[tuple[str, str], list[Alarm]] = defaultdict(list)
    for a in raised:
        groups[(a.record.key, a.condition or a.message)].append(a)

    def severity(group: list[Alarm]) -> int:
        return max(a.severity for a in group)

    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), -severity(kv[1]), kv[0]))
    for rank, ((asset, condition), group) in enumerate(ranked[:TOP_ALARMS], start=1):
        values = {
            "rank": rank,
            "condition": condition,
            "message": group[0].message,
            "count": len(group),
            "max_severity": severity(group),
            "first_at": iso(group[0].record.source_time),
            "last_at": iso(group[-1].record.source_time),
        }
        b.add("top_alarm", values, [a.record for a in group], subject=asset)
