"""The reports' side of a bundle's evidence (audit/evidence*.py hold its format and the id checks): which records
each report's facts came from, for `audit export`, and recomputing the facts from them, for `audit verify-bundle
--recompute`. Both call the fact code the agent writes reports with (`facts.traced_facts`, `facts.compute_facts`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from edge_agent.audit.evidence import FactDifference, ReportEvidence
from edge_agent.base.types import StoredRecord
from edge_agent.config.kpi import KpiConfig
from edge_agent.config.reports import ReportsConfig
from edge_agent.reports.facts import FACTS_VERSION, compute_facts, traced_facts
from edge_agent.reports.narrative import report_records
from edge_agent.reports.request import ResolvedRequest
from edge_agent.store import Store


def fact_settings(config: ReportsConfig) -> dict[str, Any]:
    """The settings a report's facts depend on besides its request (`generate.report_facts`'s arguments)."""
    return {"list_max": config.list_facts_max, "notes_max": config.notes_max, "kpi": config.kpi.model_dump(mode="json")}


def _facts(records: Sequence[StoredRecord], request: ResolvedRequest, settings: Mapping[str, Any]) -> list[Any]:
    kpi = settings["kpi"]
    return compute_facts(
        records,
        request,
        list_max=settings["list_max"],
        notes_max=settings["notes_max"],
        kpi=None if kpi is None else KpiConfig.model_validate(kpi),
    )


def _dumped(facts: Sequence[Any]) -> list[dict[str, Any]]:
    return [f.model_dump(mode="json") for f in facts]


class StoreEvidence:
    """Each report's evidence read from the store, under the plant's current fact settings (`[reports]`).

    A report whose facts the store's records no longer give (records removed by retention, late data in its window,
    the settings changed since) gets none, with that reason. Otherwise its evidence is the records behind its facts,
    or, if those alone would give other facts (a record read but cited by no fact), every record it read."""

    facts_version = FACTS_VERSION

    def __init__(self, store: Store, config: ReportsConfig) -> None:
        self.store = store
        self.settings = fact_settings(config)

    def evidence(self, report_id: str, document: Mapping[str, Any]) -> ReportEvidence | str:
        body = document["body"]
        try:
            request = ResolvedRequest.model_validate(body["request"])
        except (ValidationError, KeyError, TypeError) as exc:
            return f"its request cannot be read: {exc}"
        records = report_records(self.store, request.window)
        traced = traced_facts(
            records,
            request,
            list_max=self.settings["list_max"],
            notes_max=self.settings["notes_max"],
            kpi=KpiConfig.model_validate(self.settings["kpi"]),
        )
        if _dumped([f for f, _ in traced]) != body["facts"]:
            return (
                "the store's records give other facts than the report's now (records removed by retention or"
                " arrived late in its window, or reports.list_facts_max, notes_max or [reports.kpi] changed since)"
            )
        behind = frozenset().union(*(ids for _, ids in traced))
        cited = [r for r in records if r.id in behind]
        used = cited if _dumped(_facts(cited, request, self.settings)) == body["facts"] else records
        return ReportEvidence(
            records=sorted(used, key=lambda r: r.id),
            facts={f.id: ids for f, ids in traced},
            settings=self.settings,
        )


def recompute(
    report_id: str, document: Mapping[str, Any], records: Sequence[StoredRecord], settings: Mapping[str, Any]
) -> list[FactDifference]:
    """Every fact of the report recomputed from `records` with its recorded request and `settings`; the differences
    from the facts it holds, member by member (none: every fact equal)."""
    body = document["body"]
    try:
        request = ResolvedRequest.model_validate(body["request"])
        facts = _dumped(_facts(records, request, settings))
    except (ValidationError, KeyError, TypeError, ValueError) as exc:
        return [FactDifference(report_id, "*", "request or settings", "readable", f"{type(exc).__name__}: {exc}")]
    recorded = {str(f["id"]): f for f in body["facts"]}
    found = {str(f["id"]): f for f in facts}
    differences: list[FactDifference] = []
    for fact_id in sorted(recorded.keys() | found.keys()):
        expected, got = recorded.get(fact_id), found.get(fact_id)
        if expected is None or got is None:
            differences.append(FactDifference(report_id, fact_id, "fact", _label(expected), _label(got)))
            continue
        for member, (was, now) in _members(expected, got).items():
            differences.append(FactDifference(report_id, fact_id, member, was, now))
    return differences


def _label(fact: Mapping[str, Any] | None) -> str | None:
    return None if fact is None else f"{fact['kind']} {fact.get('subject') or ''}".strip()


def _members(expected: Mapping[str, Any], found: Mapping[str, Any], prefix: str = "") -> dict[str, tuple[Any, Any]]:
    """Members that differ, as dotted paths (`values.max`), with (expected, found)."""
    out: dict[str, tuple[Any, Any]] = {}
    for key in sorted(expected.keys() | found.keys()):
        was, now = expected.get(key), found.get(key)
        if isinstance(was, dict) and isinstance(now, dict):
            out.update(_members(was, now, f"{prefix}{key}."))
        elif was != now or type(was) is not type(now):
            out[f"{prefix}{key}"] = (was, now)
    return out


__all__ = ["StoreEvidence", "fact_settings", "recompute"]
