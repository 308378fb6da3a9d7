"""Report facts: pure functions from stored records to numbered, rounded, traceable statements.

This module selects a report's records (window, scope), runs each section's facts and numbers them; the facts of
each record kind are in their own module (`tags`, `alarms`, `mes`, `notes`, `gaps`), the plant KPIs' in `kpi`.

Every fact carries the ids of the records behind it (`record_ids`, the most telling first, at most
`RECORD_IDS_MAX`), how many there were (`record_count`) and a SHA-256 of all of them, so an auditor can re-run the
selection and check it.

Value keys follow one convention, which the grounding check reads:
  `*_s`   a duration in whole seconds          `*_at`  a time, ISO-8601 UTC with `Z`
  `count`, `*_count`  an exact count            other numbers: a measured value, rounded as below
  strings: names and ids (ids also listed in `ids`), or untrusted text (`text`, never checked as a claim)

Rounding rules (stated in every prompt and checked by the grounding check, `narrative.claims`):
  measured values → 2 decimals, half away from zero; means over the samples in the window, unweighted;
  durations → whole seconds (a downtime still open at the window end is cut there and marked `open`);
  counts are exact.

Never raises on anything the store can hold: a record a section reads but cannot use (a tag value that is an
object, an infinite count, an alarm severity of "high", a data gap without a start) is skipped and counted in a
`skipped_records` fact with its reason, and a report with skipped records or data gaps carries a `completeness`
fact saying it is incomplete.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TypeVar

from edge_agent.base.types import StoredRecord
from edge_agent.config.kpi import KpiConfig
from edge_agent.reports.facts.alarms import alarm_facts
from edge_agent.reports.facts.builder import Builder, Fact, FactRecord
from edge_agent.reports.facts.gaps import DATA_GAP, data_gap_facts
from edge_agent.reports.facts.kpi import kpi_facts
from edge_agent.reports.facts.mes import downtime_facts, production_facts, quality_facts
from edge_agent.reports.facts.notes import note_facts
from edge_agent.reports.facts.tags import state_facts, tag_facts
from edge_agent.reports.request import ResolvedRequest, Scope, iso

# The fact rules' version: raise it with any change that gives other facts for the same records, request and
# settings. Export bundles record it beside the code version (`audit export`), so an auditor who recomputes a
# bundle's facts (`audit verify-bundle --recompute`) knows which rules made them. 1: the rules of 0.2.0.
FACTS_VERSION = "1"
R = TypeVar("R", bound=FactRecord)


def record_asset(record: FactRecord) -> str | None:
    """The asset a record is about: tag `P-101.vibration_mm_s` → `P-101`; alarms and MES events key by asset; a data
    gap of a tag → the tag's asset (a gap keyed by a whole source, without a `.`, is about no single asset)."""
    if record.kind == "tag_value":
        return record.key.split(".", 1)[0]
    if record.kind in ("alarm", "mes_event"):
        return record.key
    if record.kind == DATA_GAP and "." in record.key:
        return record.key.split(".", 1)[0]
    return None


def in_scope(record: FactRecord, scope: Scope) -> bool:
    """Scope filters apply where a record carries the attribute: assets (log lines: mentioned in the text),
    line (MES events with a `line`), area (log lines, by the last topic level)."""
    value = record.value if isinstance(record.value, dict) else {}
    if scope.assets:
        asset = record_asset(record)
        if asset is not None and asset not in scope.assets:
            return False
        if record.kind == "log_line" and not any(a in str(value.get("text", "")) for a in scope.assets):
            return False
    if scope.line is not None and record.kind == "mes_event" and value.get("line") not in (None, scope.line):
        return False
    if scope.area is not None and record.kind == "log_line" and record.key.rsplit("/", 1)[-1] != scope.area:
        return False
    return True


_SECTIONS: dict[str, tuple[str, ...]] = {
    "shift_summary": ("counts", "tags", "states", "alarms", "downtime", "production", "quality", "notes"),
    "alarm_summary": ("counts", "alarms", "notes"),
    "downtime_analysis": ("counts", "downtime", "alarms", "notes"),
    "asset_history": ("counts", "tags", "states", "alarms", "downtime", "production", "quality", "notes"),
    "alarm_performance": ("counts", "alarms"),
}
# Value keys holding a ratio in [0, 1] (4 decimals), written as a percentage (`grounding` reads "87.5 %" against
# them); None when not computable. The plant KPIs' (`reports.kpi`).
RATIO_KEYS = frozenset({"availability", "performance", "quality", "oee"})


def is_ratio(name: str) -> bool:
    return name in RATIO_KEYS or name.endswith("_share")


def compute_facts(
    records: Sequence[StoredRecord],
    request: ResolvedRequest,
    *,
    list_max: int = 24,
    notes_max: int = 12,
    kpi: KpiConfig | None = None,
) -> list[Fact]:
    """All facts for one report, in a fixed order; `records` are those of the window (any order), plus any
    `data_gap` records that started before it (`generate.report_records`), which count where they overlap it.

    Lists keep their newest `list_max` entries, operator notes their newest `notes_max`; the rest are counted. The
    notes section's prompt shows every listed note, so what the model reads, what the reference writer may cite and
    what grounding accepts are the same notes.

    `kpi`: the plant's KPI settings (`[reports.kpi]`); the KPI facts (`reports.kpi`: OEE, MTBF/MTTR, alarm
    performance) are computed only with them, or always for an alarm performance review. The records may include
    stops and alarms from before the window (`generate.report_records`), which only the KPIs read."""
    return [fact for fact, _ in traced_facts(records, request, list_max=list_max, notes_max=notes_max, kpi=kpi)]


def traced_facts(
    records: Sequence[StoredRecord],
    request: ResolvedRequest,
    *,
    list_max: int = 24,
    notes_max: int = 12,
    kpi: KpiConfig | None = None,
) -> list[tuple[Fact, frozenset[int]]]:
    """`compute_facts`, each fact with every record id behind it (the ids its `record_ids_sha256` hashes; its
    `record_ids` lists at most `RECORD_IDS_MAX` of them): what an export bundle carries as evidence."""
    start, end = request.window.start, request.window.end
    scoped, rows = _selected(records, request)
    b = Builder()
    b.add(
        "window",
        {"start_at": iso(start), "end_at": iso(end), "duration_s": int((end - start).total_seconds())},
        [],
        subject=request.window.shift or "",
    )
    by_kind: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in rows:
        by_kind[r.kind].append(r)
    gaps = data_gap_facts(b, [r for r in scoped if r.kind == DATA_GAP and r.source_time < end], start, end, list_max)
    for section in _SECTIONS[request.type]:
        _SECTION_FUNCS[section](b, by_kind, end, notes_max if section == "notes" else list_max)
    if kpi is not None or request.type == "alarm_performance":
        kpi_facts(b, request.type, scoped, rows, start, end, kpi or KpiConfig(), list_max)
    skipped = _skipped(b)
    if gaps or skipped:
        b.add("completeness", {"status": "incomplete", "data_gap_count": gaps, "skipped_count": skipped}, [])
        b.move(len(b.facts) - 1, 1)  # right after the window: the first thing a reader must know
    return list(zip(b.numbered(), b.sources, strict=True))


def traced_tag_stats(records: Sequence[FactRecord], request: ResolvedRequest) -> list[tuple[Fact, frozenset[int]]]:
    """The `tag_stats` facts `traced_facts` gives for the same records and request (its tags section: the same
    figures, record ids and ids behind each), without the other sections: for a reader of tag values alone, which
    may hand in the store's light rows (`Store.record_rows`) instead of a StoredRecord per sample. Numbered among
    themselves (F01, F02, ...), not as in the whole report."""
    if "tags" not in _SECTIONS[request.type]:
        return []
    _, rows = _selected(records, request)
    b = Builder()
    tag_facts(b, {"tag_value": [r for r in rows if r.kind == "tag_value"]}, request.window.end, 0)
    return list(zip(b.numbered(), b.sources, strict=True))


def _selected(records: Iterable[R], request: ResolvedRequest) -> tuple[list[R], list[R]]:
    """The records in the request's scope, oldest first (ties by id), and those of them within its window."""
    start, end = request.window.start, request.window.end
    scoped = sorted((r for r in records if in_scope(r, request.scope)), key=lambda r: (r.source_time, r.id))
    return scoped, [r for r in scoped if start <= r.source_time < end]


def _counts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    values = {f"{kind}_count": len(by_kind.get(kind, [])) for kind in ("tag_value", "alarm", "mes_event", "log_line")}
    b.add("record_counts", values, [r for rs in by_kind.values() for r in rs])


def _skipped(b: Builder) -> int:
    """One `skipped_records` fact per record kind and reason; returns how many records were skipped."""
    groups: dict[tuple[str, str], list[FactRecord]] = defaultdict(list)
    for record, reason in b.skipped.values():
        groups[(record.kind, reason)].append(record)
    for (kind, reason), rs in sorted(groups.items()):
        rs.sort(key=lambda r: (r.source_time, r.id))
        b.add("skipped_records", {"count": len(rs), "record_kind": kind, "reason": reason}, rs)
    return len(b.skipped)


_SECTION_FUNCS: dict[str, Callable[[Builder, dict[str, list[StoredRecord]], datetime, int], None]] = {
    "counts": _counts,
    "tags": tag_facts,
    "states": state_facts,
    "alarms": alarm_facts,
    "downtime": downtime_facts,
    "production": production_facts,
    "quality": quality_facts,
    "notes": note_facts,
}
