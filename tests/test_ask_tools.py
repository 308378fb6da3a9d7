"""The ask tools against a real store holding a simulated shift (harness.shift plus a few records written out
below): exact figures and record ids worked out here, agreement with a report's facts over the same window, the
budget and outside-data refusals, and the boundary property (any arguments → an output or a ToolError, the store
unchanged)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # mcp's dependency; ships no stubs
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from edge_agent.ask.plan import Plan, plan_schema
from edge_agent.ask.tools import TOOLS, Budget, ToolContext, ToolError, ToolOutput, build_namespace, run_tool
from edge_agent.base.quantities import quantity_of
from edge_agent.base.types import Record
from edge_agent.config import AgentConfig
from edge_agent.reports.document import ReportRepository
from edge_agent.reports.facts import Fact, compute_facts
from edge_agent.reports.narrative import report_records
from edge_agent.reports.request import ReportType, ResolvedRequest, ResolvedWindow, Scope
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, record, shift_records

SHIFT_END = SHIFT_START + timedelta(hours=8)
WINDOW = {"start": "2026-11-29T12:00:00Z", "end": "2026-11-29T20:00:00Z"}


def at(minutes: float) -> datetime:
    return SHIFT_START + timedelta(minutes=minutes)


def extra_records() -> list[Record]:
    """Ids 16-23 after shift_records(injection=True)'s 15 (1-5 P-101 vibration, 6-8 P-101.running, 9 the
    HighVibration alarm and 10 its clear, 11/12 the D-1 stop of 85 min, 13 1200 kg on L1, 14 and 15 the notes)."""
    mes = {"ts": "x", "line": "L1"}
    return [
        record("tag_value", "P-102.flow_m3h", 95.0, 0),  # 16
        record("tag_value", "P-102.flow_m3h", 97.5, 30),  # 17
        record("mes_event", "L1", {**mes, "id": "q1", "type": "quality_check", "result": "pass"}, 60),  # 18
        record("mes_event", "L1", {**mes, "id": "q2", "type": "quality_check", "result": "fail"}, 120),  # 19
        record(
            "mes_event",
            "L1",
            {**mes, "id": "p2", "type": "production_count", "count": 800, "unit": "kg", "scrap": 50},
            400,
        ),  # 20  fmt: skip
        record(
            "mes_event",
            "L1",
            {**mes, "id": "d2", "type": "downtime_start", "asset": "L1", "reason": "changeover", "downtime_id": "D-2"},
            420,
        ),  # 21: still open at 20:00  fmt: skip
        record("alarm", "C-201", {"condition": "HighTemperature", "message": "Temp", "severity": 900}, 200),  # 22
        record("alarm", "P-101", {"condition": "HighVibration", "message": "Vib", "severity": 700}, 240),  # 23
    ]


def config(state_dir: Path) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(state_dir)},
            "reports": {"kpi": {"downtime_classes": {"changeover": "planned"}}},
        }
    )


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolContext]:
    state = tmp_path_factory.mktemp("ask")
    with Store(state / "store.sqlite3") as store:
        inserted = store.insert_records([*shift_records(injection=True), *extra_records()])
        assert inserted.count == 23
        repo = ReportRepository(store.path, state / "reports")
        yield ToolContext(
            store=store, config=config(state), now=SHIFT_END, reports=repo, aliases={"bomba 101": "P-101"}
        )
        repo.close()


def run(ctx: ToolContext, name: str, **args: Any) -> dict[str, Any]:
    return run_tool(ctx, name, args).model_dump(mode="json")


def refusal(ctx: ToolContext, name: str, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        run_tool(ctx, name, args)
    return info.value.reason


def report_facts(
    ctx: ToolContext, kind: str, report_type: ReportType = "shift_summary", asset: str | None = None
) -> list[Fact]:
    """The facts of `kind` a report over the shift computes (what the tools must agree with)."""
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_END, timezone=TZ)
    request = ResolvedRequest(
        type=report_type, language="es", window=window, scope=Scope(assets=[asset] if asset else [])
    )
    facts = compute_facts(report_records(ctx.store, window), request, kpi=ctx.config.reports.kpi)
    return [f for f in facts if f.kind == kind]


class TestNamespace:
    def test_lines_assets_and_tags_of_the_last_week(self, plant: ToolContext) -> None:
        """L1 counts production, so it is a line; P-101 is on L1 by its MES events, C-201 raises alarms, P-102 has
        a tag; each tag's quantity, unit and names come from its key; the alias names P-101."""
        ns = run(plant, "namespace")
        assert (ns["site"], ns["timezone"]) == ("demo", TZ)
        assert ns["lines"] == [{"line": "L1"}]
        assert ns["assets"] == [
            {"asset": "C-201", "line": None, "names": []},
            {"asset": "P-101", "line": "L1", "names": ["bomba 101"]},
            {"asset": "P-102", "line": None, "names": []},
        ]
        assert [(t["tag"], t["asset"], t["quantity"], t["unit"]) for t in ns["tags"]] == [
            ("P-101.running", "P-101", "running", None),
            ("P-101.vibration_mm_s", "P-101", "vibration", "mm/s"),
            ("P-102.flow_m3h", "P-102", "flow", "m³/h"),
        ]
        assert ns["tags"][1]["names"] == {"es": ["vibración"], "en": ["vibration"], "pt": ["vibração"]}
        # the newest record of each asset and tag key: 22 (C-201), 23 (P-101), 8, 5, 17
        assert ns["record_ids"] == [22, 23, 8, 5, 17]

    def test_records_older_than_a_week_are_left_out(self, plant: ToolContext) -> None:
        """Eight days after the shift nothing is recent: only the configured lines would remain (none here)."""
        ns = build_namespace(plant.store, plant.config, SHIFT_END + timedelta(days=8))
        assert (ns.lines, ns.assets, ns.tags) == ([], [], [])

    @pytest.mark.parametrize(
        ("tag", "quantity", "unit", "es"),
        [
            ("T-301.level_pct", "level", "%", "nivel"),
            ("C-201.bearing_temp_c", "bearing_temperature", "°C", "temperatura del rodamiento"),
            ("P-9.discharge_pressure_bar", "discharge_pressure", "bar", "presión"),
            ("P-9.seal_wear_pct", "seal_wear", "%", "seal wear"),
            ("X.odd", "odd", None, "odd"),
        ],
    )
    def test_quantity_and_unit_from_the_key(self, tag: str, quantity: str, unit: str | None, es: str) -> None:
        """The unit is the key's suffix; a quantity the table lacks is called as its last word, or by its words."""
        q = quantity_of(tag)
        assert (q.quantity, q.unit, q.names["es"][0]) == (quantity, unit, es)


class TestTags:
    def test_stats_of_the_shift(self, plant: ToolContext) -> None:
        """3.1, 4.5, 7.86, 5.2, 4.0 every 10 min from 12:00: min 3.1 at 12:00, max 7.86 at 12:20, mean 24.66/5 =
        4.932 → 4.93; ids: the extremes, first and last (1, 3, 5) first, then the rest."""
        out = run(plant, "tag_stats", tag="P-101.vibration_mm_s", window=WINDOW)
        assert out == {
            "record_ids": [1, 3, 5, 2, 4],
            "record_count": 5,
            "truncated": False,
            "tag": "P-101.vibration_mm_s",
            "unit": "mm/s",
            "count": 5,
            "min": 3.1,
            "min_at": "2026-11-29T12:00:00Z",
            "max": 7.86,
            "max_at": "2026-11-29T12:20:00Z",
            "mean": 4.93,
            "first": 3.1,
            "first_at": "2026-11-29T12:00:00Z",
            "last": 4.0,
            "last_at": "2026-11-29T12:40:00Z",
        }

    def test_stats_agree_with_the_report(self, plant: ToolContext) -> None:
        """The report's tag_stats fact over the shift has the same figures and ids."""
        (fact,) = [f for f in report_facts(plant, "tag_stats") if f.subject == "P-101.vibration_mm_s"]
        out = run(plant, "tag_stats", tag="P-101.vibration_mm_s", window=WINDOW)
        assert (out["min"], out["max"], out["mean"], out["count"]) == (
            fact.values["min"], fact.values["max"], fact.values["mean"], fact.values["samples_count"]
        )  # fmt: skip
        assert (out["record_ids"], out["record_count"]) == (fact.record_ids, fact.record_count)

    def test_a_window_without_samples_has_no_figures(self, plant: ToolContext) -> None:
        """13:00-14:00 holds no vibration sample: count 0, every figure None."""
        window = {"start": "2026-11-29T13:00:00Z", "end": "2026-11-29T14:00:00Z"}
        out = run(plant, "tag_stats", tag="P-101.vibration_mm_s", window=window)
        assert (out["count"], out["min"], out["record_ids"]) == (0, None, [])

    @pytest.mark.parametrize(
        ("moment", "value", "sampled", "record_id"),
        [
            ("2026-11-29T12:25:00Z", 7.86, "2026-11-29T12:20:00Z", 3),
            ("2026-11-29T12:30:00Z", 5.2, "2026-11-29T12:30:00Z", 4),  # at or before: a sample at `at` is it
            ("2026-11-29T08:30:00-06:00", 4.0, "2026-11-29T12:40:00Z", 5),  # 14:30 UTC
        ],
    )
    def test_value_at(self, plant: ToolContext, moment: str, value: float, sampled: str, record_id: int) -> None:
        """The newest sample at or before the moment."""
        out = run(plant, "tag_value_at", tag="P-101.vibration_mm_s", at=moment)
        assert (out["value"], out["sampled_at"], out["record_ids"]) == (value, sampled, [record_id])

    def test_value_before_the_first_sample_is_outside_the_data(self, plant: ToolContext) -> None:
        assert refusal(plant, "tag_value_at", tag="P-101.vibration_mm_s", at="2026-11-29T11:59:59Z") == "outside_data"

    def test_unknown_tag(self, plant: ToolContext) -> None:
        assert refusal(plant, "tag_stats", tag="P-101.vibration", window=WINDOW) == "unknown_tag"
        assert refusal(plant, "tag_value_at", tag="P-999.flow_m3h", at="2026-11-29T12:25:00Z") == "unknown_tag"


class TestStops:
    def test_stops_of_the_shift(self, plant: ToolContext) -> None:
        """D-1 (seal leak) 12:20-13:45 = 5100 s; D-2 (changeover, planned) 19:00 still open at 20:00 = 3600 s;
        ids: the longest's (11, 12) first, then every stop's record."""
        out = run(plant, "stops", window=WINDOW)
        assert out == {
            "record_ids": [11, 12, 21],
            "record_count": 3,
            "truncated": False,
            "count": 2,
            "total_s": 8700,
            "longest_s": 5100,
            "longest_at": "2026-11-29T12:20:00Z",
            "reasons": [
                {"reason": "mechanical_seal_leak", "count": 1, "total_s": 5100},
                {"reason": "changeover", "count": 1, "total_s": 3600},
            ],
            "planned_count": 1,
            "unplanned_count": 1,
            "open_count": 1,
        }

    def test_stops_agree_with_the_report(self, plant: ToolContext) -> None:
        (total,) = report_facts(plant, "downtime_total")
        out = run(plant, "stops", window=WINDOW)
        assert (out["count"], out["total_s"]) == (total.values["count"], total.values["duration_s"])
        assert sorted(out["record_ids"]) == sorted(total.record_ids)

    def test_asset_scope(self, plant: ToolContext) -> None:
        """P-101 alone: D-2 is L1's; the one stop is also the longest."""
        out = run(plant, "stops", asset="P-101", window=WINDOW)
        assert (out["count"], out["total_s"], out["longest_s"], out["open_count"]) == (1, 5100, 5100, 0)
        assert out["record_ids"] == [11, 12]

    def test_a_window_with_no_stop(self, plant: ToolContext) -> None:
        window = {"start": "2026-11-29T14:00:00Z", "end": "2026-11-29T15:00:00Z"}
        out = run(plant, "stops", window=window)
        assert (out["count"], out["total_s"], out["longest_s"], out["reasons"]) == (0, 0, None, [])

    def test_unknown_asset_and_line(self, plant: ToolContext) -> None:
        assert refusal(plant, "stops", asset="P-999", window=WINDOW) == "unknown_asset"
        assert refusal(plant, "production", line="L9", window=WINDOW) == "unknown_asset"


class TestProduction:
    def test_the_shift_without_scrap_on_every_count(self, plant: ToolContext) -> None:
        """1200 + 800 kg; the 1200 kg count says no scrap, so scrap and good are unknown."""
        out = run(plant, "production", window=WINDOW)
        assert (out["produced"], out["scrap"], out["good"], out["unit"]) == (2000, None, None, "kg")
        assert (out["record_ids"], out["record_count"]) == ([13, 20], 2)

    def test_scrap_and_good(self, plant: ToolContext) -> None:
        """From 18:00 only the 800 kg count with 50 kg scrap: 750 good."""
        window = {"start": "2026-11-29T18:00:00Z", "end": "2026-11-29T20:00:00Z"}
        out = run(plant, "production", line="L1", window=window)
        assert (out["produced"], out["scrap"], out["good"], out["record_ids"]) == (800, 50, 750, [20])


class TestQuality:
    def test_checks_newest_first_failed_ids_first(self, plant: ToolContext) -> None:
        out = run(plant, "quality_checks", window=WINDOW)
        assert (out["count"], out["passed"], out["failed"], out["record_ids"]) == (2, 1, 1, [19, 18])
        assert out["checks"] == [
            {"at": "2026-11-29T14:00:00Z", "asset": "L1", "result": "fail", "record_id": 19},
            {"at": "2026-11-29T13:00:00Z", "asset": "L1", "result": "pass", "record_id": 18},
        ]


class TestAlarms:
    def test_activations_by_priority_and_the_most_frequent(self, plant: ToolContext) -> None:
        """Raised: 9 (P-101, 700), 22 (C-201, 900), 23 (P-101, 700); 10 is a clear. 700 is medium, 900 high (the
        default bands 400/800)."""
        out = run(plant, "alarms", window=WINDOW)
        assert out["count"] == 3
        assert out["by_priority"] == {"high": 1, "medium": 2, "low": 0}
        assert out["most_frequent"] == [
            {"condition": "HighVibration", "asset": "P-101", "count": 2},
            {"condition": "HighTemperature", "asset": "C-201", "count": 1},
        ]
        assert (out["active_at"], out["active_count"]) == (None, None)
        assert (out["record_ids"], out["record_count"]) == ([9, 23, 22], 3)

    def test_active_at_a_moment(self, plant: ToolContext) -> None:
        """At 16:30 C-201 has stood since 15:20 and P-101 since 16:00 (its 12:15 alarm cleared at 12:18); at 12:16
        only P-101's first."""
        out = run(plant, "alarms", window=WINDOW, active_at="2026-11-29T16:30:00Z")
        assert out["active_at"] == [
            {"condition": "HighTemperature", "asset": "C-201", "since": "2026-11-29T15:20:00Z"},
            {"condition": "HighVibration", "asset": "P-101", "since": "2026-11-29T16:00:00Z"},
        ]
        assert out["record_ids"][:2] == [22, 23]
        early = run(plant, "alarms", window=WINDOW, active_at="2026-11-29T12:16:00Z")
        assert early["active_at"] == [{"condition": "HighVibration", "asset": "P-101", "since": "2026-11-29T12:15:00Z"}]

    def test_active_count_is_the_number_standing(self, plant: ToolContext) -> None:
        """The count an answer states ("2 alarmas activas") is held in the output, so it is a fact, not a number the
        writer made up (bench.ask found "5 alarmas activas" with no 5 in the facts)."""
        assert run(plant, "alarms", window=WINDOW, active_at="2026-11-29T16:30:00Z")["active_count"] == 2
        assert run(plant, "alarms", window=WINDOW, active_at="2026-11-29T12:16:00Z")["active_count"] == 1
        assert run(plant, "alarms", window=WINDOW, active_at="0001-01-01T00:00:00Z")["active_count"] == 0

    def test_active_at_the_ends_of_the_calendar(self, plant: ToolContext) -> None:
        """Nothing stood before year 1; at the calendar's last microsecond the two alarms never cleared still stand:
        neither is an error."""
        assert run(plant, "alarms", window=WINDOW, active_at="0001-01-01T00:00:00Z")["active_at"] == []
        last = run(plant, "alarms", window=WINDOW, active_at="9999-12-31T23:59:59.999999Z")
        assert [(a["asset"], a["since"]) for a in last["active_at"]] == [
            ("C-201", "2026-11-29T15:20:00Z"),
            ("P-101", "2026-11-29T16:00:00Z"),
        ]

    def test_an_alarm_raised_days_ago_and_never_cleared_stands(self, tmp_path: Path) -> None:
        """A transmitter fault raised 5 days before the moment stands at it, however long ago (the simulator's is
        raised 26 h before its history); one raised and cleared 6 days before does not."""
        days = 24 * 60
        alarm = {"condition": "LevelTransmitterFault", "message": "Falla", "severity": 500, "active": True}
        cleared = {"condition": "HighLevel", "message": "Alto", "severity": 500}
        with Store(tmp_path / "store.sqlite3") as store:
            store.insert_records(
                [
                    record("alarm", "T-301", {**cleared, "active": True}, -6 * days),
                    record("alarm", "T-301", {**cleared, "active": False}, -6 * days + 5),
                    record("alarm", "T-301", alarm, -5 * days),
                    record("tag_value", "T-301.level_pct", 50.0, 0),
                ]
            )
            ctx = ToolContext(store=store, config=config(tmp_path), now=SHIFT_END)
            out = run(ctx, "alarms", window=WINDOW, active_at="2026-11-29T16:30:00Z")
        assert out["active_at"] == [
            {"condition": "LevelTransmitterFault", "asset": "T-301", "since": "2026-11-24T12:00:00Z"}
        ]
        assert (out["active_count"], out["count"]) == (1, 0)

    def test_count_agrees_with_the_report(self, plant: ToolContext) -> None:
        (total,) = report_facts(plant, "alarm_total")
        out = run(plant, "alarms", window=WINDOW)
        assert out["count"] == total.values["count"]
        assert sorted(out["record_ids"]) == sorted(total.record_ids)


class TestNotes:
    def test_newest_first_with_the_injection_flagged(self, plant: ToolContext) -> None:
        out = run(plant, "notes", window=WINDOW)
        assert (out["count"], out["record_ids"]) == (2, [15, 14])
        assert [(n["at"], n["author"], n["flagged"]) for n in out["notes"]] == [
            ("2026-11-29T13:55:00Z", "x.y", True),
            ("2026-11-29T13:50:00Z", "juan.perez", False),
        ]

    def test_asset_scope_keeps_notes_that_mention_it(self, plant: ToolContext) -> None:
        """Only the 13:50 note names P-101."""
        assert run(plant, "notes", asset="P-101", window=WINDOW)["record_ids"] == [14]


class TestKpis:
    @pytest.mark.parametrize(("kind", "fact_kinds"), [("oee", ["oee"]), ("reliability", ["mtbf", "mttr"])])
    def test_same_facts_as_the_report(self, plant: ToolContext, kind: str, fact_kinds: list[str]) -> None:
        """The KPI facts a shift summary over the window carries, figures and ids."""
        out = run(plant, "kpis", kind=kind, window=WINDOW)
        expected = [f for k in fact_kinds for f in report_facts(plant, k)]
        assert [(f["kind"], f["subject"], f["values"]) for f in out["facts"]] == [
            (f.kind, f.subject, f.values) for f in expected
        ]

    def test_oee_of_l1(self, plant: ToolContext) -> None:
        """28 800 s planned busy; D-1 5100 s unplanned; D-2 3600 s planned: availability 20 100 / 25 200 = 0.7976."""
        (fact,) = run(plant, "kpis", kind="oee", line="L1", window=WINDOW)["facts"]
        assert fact["subject"] == "L1"
        assert fact["values"]["availability"] == 0.7976
        assert (fact["values"]["planned_downtime_s"], fact["values"]["unplanned_downtime_s"]) == (3600, 5100)

    def test_alarm_performance(self, plant: ToolContext) -> None:
        out = run(plant, "kpis", kind="alarm_performance", window=WINDOW)
        rate = next(f for f in out["facts"] if f["kind"] == "alarm_rate")
        assert (rate["values"]["count"], rate["values"]["per_hour_mean"]) == (3, 0.38)  # 3 / 8 h = 0.375


class TestReports:
    def test_list_and_get(self, plant: ToolContext) -> None:
        """A stored report is listed (any window, its status) and read back with its facts."""
        assert plant.reports is not None
        facts = report_facts(plant, "downtime_total")
        body = {
            "request": {"type": "shift_summary", "window": WINDOW, "scope": {}},
            "facts": [f.model_dump(mode="json") for f in facts],
            "narrative": "Una parada.",
        }
        document = {
            "report_id": "r-1", "request_id": "q-1", "requested_by": "ana", "requested_at": "2026-11-29T20:05:00Z",
            "body": body, "body_sha256": "0" * 64, "status": "draft",
        }  # fmt: skip
        plant.reports.insert(document, "0" * 64)
        listed = run(plant, "reports_list")["reports"]
        assert [(r["report_id"], r["type"], r["status"]) for r in listed] == [("r-1", "shift_summary", "draft")]
        assert run(plant, "reports_list", status="approved")["reports"] == []
        assert run(plant, "reports_list", window=WINDOW)["reports"] == []  # stored now, not in 2026-11-29
        got = run(plant, "report_get", report_id="r-1")
        assert (got["status"], got["narrative"], got["requested_at"]) == (
            "draft",
            "Una parada.",
            "2026-11-29T20:05:00Z",
        )
        assert [f["kind"] for f in got["facts"]] == ["downtime_total"]
        assert got["record_ids"] == facts[0].record_ids

    def test_unknown_report(self, plant: ToolContext) -> None:
        assert refusal(plant, "report_get", report_id="nope") == "outside_data"


class TestBudgetAndData:
    def test_a_window_longer_than_the_budget(self, plant: ToolContext) -> None:
        small = ToolContext(plant.store, plant.config, plant.now, budget=Budget(max_window_s=3600))
        assert refusal(small, "stops", window=WINDOW) == "outside_budget"

    def test_a_read_over_the_row_budget(self, plant: ToolContext) -> None:
        """Five vibration samples against a budget of four rows."""
        small = ToolContext(plant.store, plant.config, plant.now, budget=Budget(max_rows=4))
        assert refusal(small, "tag_stats", tag="P-101.vibration_mm_s", window=WINDOW) == "outside_budget"

    def test_the_default_budget_is_a_report_window(self, plant: ToolContext) -> None:
        """31 days is accepted, a second more is not."""
        start = SHIFT_START - timedelta(days=30)
        ok = {"start": start.isoformat(), "end": (start + timedelta(days=31)).isoformat()}
        over = {"start": start.isoformat(), "end": (start + timedelta(days=31, seconds=1)).isoformat()}
        assert run(plant, "stops", window=ok)["count"] == 2
        assert refusal(plant, "stops", window=over) == "outside_budget"

    @pytest.mark.parametrize(
        "window",
        [
            {"start": "2026-11-28T00:00:00Z", "end": "2026-11-29T12:00:00Z"},  # ends where the data begins
            {"start": "2026-11-29T19:00:01Z", "end": "2026-11-30T00:00:00Z"},  # after the newest record (19:00)
        ],
    )
    def test_a_window_outside_the_stored_data(self, plant: ToolContext, window: dict[str, str]) -> None:
        for name in ("stops", "production", "quality_checks", "alarms", "notes"):
            assert refusal(plant, name, window=window) == "outside_data"
        assert refusal(plant, "tag_stats", tag="P-101.vibration_mm_s", window=window) == "outside_data"

    def test_an_alarm_raised_before_the_data_is_no_data_of_its_day(self, tmp_path: Path) -> None:
        """A condition standing when the agent connected comes with the time it was raised, two days before any tag
        value: the data still begins at the oldest tag value, so that day's stops are not "none" but outside it."""
        standing = record("alarm", "T-301", {"condition": "LevelTransmitterFault", "severity": 500}, -2 * 24 * 60)
        with Store(tmp_path / "store.sqlite3") as store:
            store.insert_records([standing, *shift_records()])
            ctx = ToolContext(store, config(tmp_path), SHIFT_END)
            day_before = SHIFT_START - timedelta(days=2)
            window = {"start": day_before.isoformat(), "end": (day_before + timedelta(days=1)).isoformat()}
            assert refusal(ctx, "stops", window=window) == "outside_data"
            assert run(ctx, "stops", window=WINDOW)["count"] == 1

    def test_an_empty_store(self, tmp_path: Path) -> None:
        with Store(tmp_path / "store.sqlite3") as store:
            ctx = ToolContext(store, config(tmp_path), SHIFT_END)
            assert refusal(ctx, "alarms", window=WINDOW) == "outside_data"
            assert run(ctx, "namespace")["tags"] == []


class TestArguments:
    @pytest.mark.parametrize(
        ("name", "args", "reason"),
        [
            ("drop_table", {}, "unknown_tool"),
            ("stops", {"window": WINDOW, "limit": 5}, "bad_arguments"),  # unknown field
            ("stops", {}, "bad_arguments"),
            ("stops", {"window": {"start": WINDOW["end"], "end": WINDOW["start"]}}, "bad_arguments"),
            ("stops", {"window": {"start": "2026-11-29T12:00:00", "end": "2026-11-29T20:00:00"}}, "bad_arguments"),
            ("stops", {"window": WINDOW, "asset": "P 101; DROP"}, "bad_arguments"),
            ("kpis", {"kind": "mtbf", "window": WINDOW}, "bad_arguments"),
            ("tag_value_at", {"tag": "", "at": "2026-11-29T12:25:00Z"}, "bad_arguments"),
        ],
    )
    def test_refused_arguments(self, plant: ToolContext, name: str, args: dict[str, Any], reason: str) -> None:
        """Unknown tools and fields, missing or reversed windows, naive times, ids outside the id rule."""
        with pytest.raises(ToolError) as info:
            run_tool(plant, name, args)
        assert info.value.reason == reason

    def test_every_tool_has_typed_models_and_a_description(self) -> None:
        for tool in TOOLS.values():
            assert issubclass(tool.output_model, ToolOutput)
            assert tool.input_model.model_config.get("extra") == "forbid"
            assert tool.description


def _stored_rows(ctx: ToolContext) -> tuple[object, ...]:
    stats = ctx.store.stats()
    assert ctx.reports is not None
    return (stats["records"], stats["quarantined"], stats["outbox_pending"], stats["dead_letter"],
            ctx.reports.list(limit=1000))  # fmt: skip


# The shift's records are 12:00-19:00 UTC on 2026-11-29.
_near = st.datetimes(min_value=datetime(2026, 11, 29, 6), max_value=datetime(2026, 11, 29, 20), timezones=st.just(UTC))
_iso = (_near | _near | st.datetimes(timezones=st.timezones())).map(lambda t: t.isoformat())
_ordered = st.builds(
    lambda start, seconds: {"start": start.isoformat(), "end": (start + timedelta(seconds=seconds)).isoformat()},
    _near,
    st.integers(1, 12 * 3600) | st.integers(1, 40 * 86_400),
)
# Mostly a window a question would name, else any pair of times or any object.
_window = (
    _ordered
    | _ordered
    | _ordered
    | st.fixed_dictionaries({"start": _iso, "end": _iso})
    | st.dictionaries(st.sampled_from(["start", "end", "shift"]), st.text(max_size=8) | st.integers())
)
_ids = st.sampled_from(["P-101", "P-102", "C-201", "L1", "P-999", "P-101.vibration_mm_s", "P-102.flow_m3h"])
_values: dict[str, st.SearchStrategy[Any]] = {
    "window": _window,
    "tag": _ids | st.text(max_size=300),
    "asset": st.none() | _ids | st.none() | _ids | st.none() | st.text(max_size=20),
    "line": st.none() | _ids | st.none() | _ids | st.none() | st.text(max_size=20),
    "at": _iso,
    "active_at": _iso | st.none(),
    "kind": st.sampled_from(["oee", "reliability", "alarm_performance", "x"]),
    "status": st.sampled_from(["draft", "approved", "rejected", "x"]) | st.none(),
    "report_id": st.sampled_from(["r-1", "nope"]) | st.text(max_size=300),
}
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def _calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """Mostly a real tool with some of its own fields (each value plausible or not), else any name and any object."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(max_size=12)), draw(st.dictionaries(st.text(max_size=8), _json, max_size=4))
    name = draw(st.sampled_from(sorted(TOOLS)))
    fields = TOOLS[name].input_model.model_fields
    required = [k for k, f in fields.items() if f.is_required()] if draw(st.integers(0, 7)) else []
    optional = sorted(k for k in fields if k not in required)
    keys = required + (draw(st.lists(st.sampled_from(optional), unique=True)) if optional else [])
    args = {k: draw(_values[k]) for k in keys}
    if draw(st.integers(0, 9)) == 0:
        args[draw(st.text(max_size=8))] = draw(_json)
    return name, args


class TestBoundary:
    @settings(max_examples=300)  # each example may compute a shift's facts twice
    @given(call=_calls())
    def test_any_arguments_give_an_output_or_a_reason(
        self, plant: ToolContext, call: tuple[str, dict[str, Any]]
    ) -> None:
        """Whatever the arguments: the tool's typed output or a ToolError with a reason, and the store unchanged."""
        name, args = call
        before = _stored_rows(plant)
        try:
            out = run_tool(plant, name, args)
            event(f"{name}: output")
        except ToolError as exc:
            event(f"{name if name in TOOLS else '<other>'}: {exc.reason}")
            assert exc.reason in ("unknown_tool", "bad_arguments", "outside_budget", "outside_data", "unknown_tag",
                                  "unknown_asset")  # fmt: skip
        else:
            assert isinstance(out, TOOLS[name].output_model)
            assert len(out.record_ids) <= 50
            json.loads(out.model_dump_json())
        assert _stored_rows(plant) == before


class TestPlan:
    def test_the_schema_is_a_json_schema_that_holds_plans(self) -> None:
        schema = plan_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        plan = {"calls": [{"tool": "stops", "args": {"window": WINDOW}}]}
        jsonschema.validate(plan, schema)
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"calls": [{"tool": "write_setpoint", "args": {}}]}, schema)
        assert sorted(schema["$defs"]["ToolCall"]["properties"]["tool"]["enum"]) == sorted(TOOLS)

    @pytest.mark.parametrize(
        "calls",
        [
            [{"tool": "write_setpoint", "args": {}}],
            [],
            [{"tool": "stops", "args": {}}] * 5,
            [{"tool": "stops", "args": {}, "why": "x"}],
        ],
    )
    def test_a_plan_refuses_unknown_tools_and_bad_lengths(self, calls: list[dict[str, Any]]) -> None:
        with pytest.raises(ValidationError):
            Plan.model_validate({"calls": calls})


class TestStoreReads:
    def test_recent_keys_and_newest_first(self, plant: ToolContext) -> None:
        """The store's skip scan lists each key with a record since the time given, by its newest record."""
        keys = plant.store.recent_keys(at(399), 10)
        assert [(r.key, r.id) for r in keys] == [("L1", 21)]
        assert [r.id for r in plant.store.records(limit=2, newest_first=True)] == [21, 20]
