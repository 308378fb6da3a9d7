"""The MES event vocabulary: the event types and fields of a `mes_event` record that the agent understands.

docs/records.md ("MES event JSON") describes them; the simulator publishes them; the report facts
(`edge_agent.reports.facts`) and the JSON parser (`edge_agent.connectors.mqtt.parsers`) read them. A route's event
mapping (`[mqtt.routes.events]`) may only translate a plant's MES into these names: a type or field outside them would
be stored and then read by nothing.
"""

from __future__ import annotations

# Every `type` the facts or the simulator know; the facts read the downtime, production and quality ones.
MES_EVENT_TYPES: tuple[str, ...] = (
    "work_order_start",
    "work_order_end",
    "downtime_start",
    "downtime_end",
    "quality_check",
    "production_count",
)

# Field → who reads it. `type` is not here: a mapping sets it from its `types` table, never copies it.
MES_FIELDS: dict[str, str] = {
    "id": "the message id: the record's idempotency key (mqtt parsers); a stop's id when it has no downtime_id",
    "ts": "the source time (connectors.mqtt.parsers)",
    "asset": "the record key (connectors.mqtt.parsers): the subject of stop, production and quality facts",
    "line": "the report scope's line filter (reports.facts.in_scope); listed with a stop",
    "work_order": "listed with a stop",
    "downtime_id": "pairs a downtime_end with its downtime_start",
    "reason": "a stop's cause (downtime_cause facts); planned or unplanned by reports.kpi.downtime_classes",
    "count": "production_count: the amount produced (production facts; OEE's produced quantity)",
    "scrap": "production_count: of `count`, the amount scrapped (OEE's quality rate, reports.kpi)",
    "unit": "production_count: the count's unit; quality_check: the measure's",
    "result": "quality_check: pass or fail (quality_checks facts)",
    "measure": "quality_check: what was measured",
    "value": "quality_check: the measured value",
    "text": "free text from the MES, stored as untrusted data",
}

# Fields an event of a type is useless without, present and neither null nor "". A stop needs its downtime_id on
# both ends: a start without one can never be closed and would read as down until the window's end.
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "downtime_start": ("downtime_id",),
    "downtime_end": ("downtime_id",),
    "production_count": ("count",),
    "quality_check": ("result",),
}

__all__ = ["MES_EVENT_TYPES", "MES_FIELDS", "REQUIRED_FIELDS"]
