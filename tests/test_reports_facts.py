"""Report facts: pure functions over stored records."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from edge_agent.base.types import Record, StoredRecord, idempotency_key, ids_sha256
from edge_agent.reports.facts import DATA_GAP, Fact, compute_facts, round_value, traced_facts, traced_tag_stats
from edge_agent.reports.facts.builder import rounded_mean
from edge_agent.reports.narrative import report_records
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope, iso
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, shift_records, stored


def request(report_type: str = "shift_summary", hours: float = 8, assets: list[str] | None = None) -> ResolvedRequest:
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=hours), shift="A", timezone=TZ)
    return ResolvedRequest(type=report_type, language="es", window=window, scope=Scope(assets=assets or []))


def by_kind(facts: list[Fact], kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


class TestRounding:
    def test_half_away_from_zero(self) -> None:
        """2.675 rounds to 2.68 (float arithmetic and banker's rounding both give 2.67)."""
        assert round_value(2.675) == 2.68
        assert round_value(-2.675) == -2.68
        assert round_value(0.125) == 0.13

    def test_integers_stay_integers(self) -> None:
        """A count is never turned into a float."""
        assert round_value(1200) == 1200 and isinstance(round_value(1200), int)

    def test_a_mean_on_a_half_is_rounded_up_as_the_recorded_values_give_it(self) -> None:
        """58.0, 58.04, 58.11 and 58.03 average 58.045 as written; summed as floats, 58.044999999999995 (58.04)."""
        samples = [58.0, 58.04, 58.11, 58.03]
        assert sum(samples) / 4 == 58.044999999999995
        assert rounded_mean(samples) == 58.05
        assert rounded_mean([0.1, 0.2, 0.3, 0.4]) == 0.25 and rounded_mean([-1, -2]) == -1.5
        assert rounded_mean([58.87, 58.88]) == 58.88 and rounded_mean([1.004, 1.006, 2.0]) == 1.34


class TestTagStats:
    def test_min_max_mean_and_times(self, shift: list[StoredRecord]) -> None:
        """Vibration 3.1, 4.5, 7.86, 5.2, 4.0 → min 3.1 at 12:00Z, max 7.86 at 12:20Z, mean 4.93."""
        (fact,) = by_kind(compute_facts(shift, request()), "tag_stats")
        assert fact.subject == "P-101.vibration_mm_s"
        assert fact.values == {
            "samples_count": 5,
            "min": 3.1,
            "min_at": "2026-11-29T12:00:00Z",
            "max": 7.86,
            "max_at": "2026-11-29T12:20:00Z",
            "mean": 4.93,
            "first": 3.1,
            "last": 4.0,
        }

    def test_record_ids_point_at_the_extremes_first(self, shift: list[StoredRecord]) -> None:
        """The min, max, first and last samples lead the id list; all five are counted and hashed."""
        (fact,) = by_kind(compute_facts(shift, request()), "tag_stats")
        assert fact.record_ids == [1, 3, 5, 2, 4]  # min (id 1), max (3), first (1), last (5), then the rest
        assert fact.record_count == 5
        assert fact.record_ids_sha256 == ids_sha256([1, 2, 3, 4, 5])


class TestTagStatsAlone:
    """`traced_tag_stats`: the tag statistics of `traced_facts` without the other sections, from full records or
    the store's light rows (what the ask's `tag_stats` reads)."""

    @staticmethod
    def of_report(records: list[StoredRecord], req: ResolvedRequest) -> list[tuple[Any, ...]]:
        traced = [(f, s) for f, s in traced_facts(records, req) if f.kind == "tag_stats"]
        return [(f.model_copy(update={"id": ""}), s) for f, s in traced]

    @staticmethod
    def alone(records: Any, req: ResolvedRequest) -> list[tuple[Any, ...]]:
        return [(f.model_copy(update={"id": ""}), s) for f, s in traced_tag_stats(records, req)]

    def test_the_reports_tag_stats_from_records_and_from_light_rows(self, tmp_path: Path) -> None:
        """Bad samples (skipped), states, other kinds, records outside the window and a scope: the same facts and
        sources, whether from StoredRecords or from `Store.record_rows`, in any order."""
        extra = [
            rec("tag_value", "P-101.vibration_mm_s", 99.0, 5, quality="bad"),
            rec("tag_value", "P-101.vibration_mm_s", float("nan"), 6),
            rec("tag_value", "P-101.vibration_mm_s", 2.5, -10),
            rec("tag_value", "C-201.temp_c", 40.125, 7),
            rec("tag_value", "C-201.temp_c", 40.125, 9),
        ]
        with Store(tmp_path / "store.sqlite3") as store:
            store.insert_records([*shift_records(), *extra])
            records = store.records()
            rows = store.record_rows()
        shuffled = list(rows)
        random.Random(3).shuffle(shuffled)
        for req in (request(), request("asset_history", assets=["C-201"]), request(hours=40 / 60)):
            expected = self.of_report(records, req)
            assert expected  # the case is not empty
            assert self.alone(records, req) == expected
            assert self.alone(rows, req) == expected
            assert self.alone(shuffled, req) == expected
        assert self.alone(rows, request("alarm_summary")) == []  # no tags section, no tag statistics


class TestAlarms:
    def test_a_clear_is_not_an_alarm(self, shift: list[StoredRecord]) -> None:
        """One raise and one clear of the same condition count as one alarm."""
        facts = compute_facts(shift, request("alarm_summary"))
        (total,) = by_kind(facts, "alarm_total")
        assert total.values == {"count": 1, "assets_count": 1}
        (top,) = by_kind(facts, "top_alarm")
        assert (top.subject, top.values["count"], top.values["rank"]) == ("P-101", 1, 1)
        assert top.record_ids == [9]


class TestDowntime:
    def test_start_and_end_pair_by_downtime_id(self, shift: list[StoredRecord]) -> None:
        """downtime_start at +20 min and downtime_end at +105 min → one downtime of 5100 s."""
        facts = compute_facts(shift, request("downtime_analysis"))
        (total,) = by_kind(facts, "downtime_total")
        assert total.values == {"count": 1, "duration_s": 5100}
        (event,) = by_kind(facts, "downtime")
        assert event.values["open"] is False
        assert event.record_ids == [11, 12]

    def test_open_downtime_is_cut_at_the_window_end(self, shift: list[StoredRecord]) -> None:
        """A window ending one hour in sees the downtime open for 40 minutes."""
        (event,) = by_kind(compute_facts(shift, request("downtime_analysis", hours=1)), "downtime")
        assert event.values["duration_s"] == 2400
        assert event.values["open"] is True
        assert event.values["end_at"] == "2026-11-29T13:00:00Z"

    def test_causes_ranked_by_time_lost_then_by_stops_over_every_stop(self) -> None:
        """seal: 2 stops, 20 min; motor: 1 stop, 20 min; valve: 1 stop, 30 min → valve, seal, motor. Counted over
        all four stops even when the list shows two (list_max=2)."""
        events = [("P-101", "seal", 0, 10, 1), ("P-102", "motor", 20, 40, 2), ("C-201", "seal", 50, 60, 3)]
        events.append(("P-101", "valve", 70, 100, 4))
        records = []
        for asset, reason, start, end, n in events:
            records.append(
                rec("mes_event", asset, {"type": "downtime_start", "downtime_id": f"D{n}", "reason": reason}, start)
            )
            records.append(rec("mes_event", asset, {"type": "downtime_end", "downtime_id": f"D{n}"}, end))
        facts = compute_facts(stored(records), request("downtime_analysis"), list_max=2)
        causes = [(f.values, f.ids) for f in by_kind(facts, "downtime_cause")]
        assert causes == [
            ({"rank": 1, "reason": "valve", "count": 1, "duration_s": 1800}, ["P-101"]),
            ({"rank": 2, "reason": "seal", "count": 2, "duration_s": 1200}, ["C-201", "P-101"]),
        ]
        assert len(by_kind(facts, "downtime")) == 2
        assert [f.kind for f in facts][:6] == [
            "window",
            "record_counts",
            "downtime_total",
            "downtime_cause",
            "downtime_cause",
            "downtime_longest",
        ]
        # The longest over all four stops: P-101's valve stop (30 min), fourth in time, so not listed.
        (longest,) = by_kind(facts, "downtime_longest")
        assert (longest.subject, longest.values, longest.record_count) == (
            "P-101",
            {
                "reason": "valve",
                "start_at": "2026-11-29T13:10:00Z",
                "end_at": "2026-11-29T13:40:00Z",
                "duration_s": 1800,
                "open": False,
            },
            2,
        )

    def test_longest_stop_ties_go_to_the_earliest_and_one_stop_has_none(self) -> None:
        """Two 20 min stops: the first is the longest. A single stop needs no longest fact (it is the stop)."""
        records = []
        for asset, start, n in (("C-201", 0, 1), ("P-101", 30, 2)):
            start_fields = {"type": "downtime_start", "downtime_id": f"D{n}", "reason": "seal"}
            records.append(rec("mes_event", asset, start_fields, start))
            records.append(rec("mes_event", asset, {"type": "downtime_end", "downtime_id": f"D{n}"}, start + 20))
        (longest,) = by_kind(compute_facts(stored(records), request("downtime_analysis")), "downtime_longest")
        assert longest.subject == "C-201"
        assert by_kind(compute_facts(stored(records[:2]), request("downtime_analysis")), "downtime_longest") == []


class TestStateChanges:
    def test_each_change_of_a_boolean_tag(self, shift: list[StoredRecord]) -> None:
        """running true → false at +20 min and false → true at +105 min are two state changes."""
        changes = by_kind(compute_facts(shift, request()), "state_change")
        assert [(c.values["from"], c.values["to"], c.values["at"]) for c in changes] == [
            ("on", "off", "2026-11-29T12:20:00Z"),
            ("off", "on", "2026-11-29T13:45:00Z"),
        ]


class TestSelection:
    def test_same_facts_whatever_the_input_order(self, shift: list[StoredRecord]) -> None:
        """Facts depend on the records, not on the order they were handed over."""
        shuffled = list(shift)
        random.Random(7).shuffle(shuffled)
        assert compute_facts(shuffled, request()) == compute_facts(shift, request())

    def test_asset_scope_drops_other_assets(self, shift: list[StoredRecord]) -> None:
        """Scoped to L1, the P-101 tags, alarms and downtime disappear; L1 production stays."""
        facts = compute_facts(shift, request("asset_history", assets=["L1"]))
        assert by_kind(facts, "tag_stats") == []
        assert by_kind(facts, "alarm_total")[0].values["count"] == 0
        (production,) = by_kind(facts, "production")
        assert production.values == {"count": 1200, "unit": "kg"}

    def test_report_type_selects_sections(self, shift: list[StoredRecord]) -> None:
        """An alarm summary carries no tag statistics or production."""
        kinds = {f.kind for f in compute_facts(shift, request("alarm_summary"))}
        assert kinds == {"window", "record_counts", "alarm_total", "top_alarm", "operator_note"}

    def test_records_outside_the_window_are_ignored(self) -> None:
        """A record at the window end itself belongs to the next window."""
        records = stored(shift_records())
        facts = compute_facts(records, request(hours=40 / 60))  # ends at +40 min, on the fifth vibration sample
        (stats,) = by_kind(facts, "tag_stats")
        assert stats.values["samples_count"] == 4


def rec(kind: str, key: str, value: Any, minutes: float, quality: str = "good") -> Record:
    """One record `minutes` into the shift (negative: before it)."""
    at = SHIFT_START + timedelta(minutes=minutes)
    return Record(
        source="test",
        kind=kind,
        key=key,
        value=value,
        source_time=at,
        received_time=at,
        quality=quality,
        idempotency_key=idempotency_key(kind, key, at.isoformat(), repr(value)),
    )


def skipped(facts: list[Fact]) -> list[tuple[str, str, int, list[int]]]:
    return [
        (f.values["record_kind"], f.values["reason"], f.values["count"], f.record_ids)
        for f in by_kind(facts, "skipped_records")
    ]


class TestUnusableRecords:
    """Regressions found by tests/test_reports_property.py: each of these values made compute_facts raise."""

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            (10**400, "out_of_range"),
            (10**16, "out_of_range"),
            (float("inf"), "not_finite"),
            (float("nan"), "not_finite"),
            ({"v": 1}, "not_a_scalar"),
            ([1, 2], "not_a_scalar"),
            (None, "not_a_scalar"),
        ],
        ids=["10**400", "10**16", "inf", "nan", "object", "list", "null"],
    )
    def test_a_tag_value_that_is_no_measurement_is_skipped(self, value: Any, reason: str) -> None:
        """A huge integer (was OverflowError), an infinity (was InvalidOperation), NaN or an object is skipped with
        its reason; the tag's other samples still make its statistics."""
        records = stored([*shift_records(), rec("tag_value", "P-101.vibration_mm_s", value, 5)])
        facts = compute_facts(records, request())
        assert skipped(facts) == [("tag_value", reason, 1, [len(records)])]
        (stats,) = by_kind(facts, "tag_stats")
        assert stats.values["samples_count"] == 5

    def test_a_bad_quality_sample_is_counted_not_lost(self) -> None:
        """A sample the server marks bad stays out of the statistics and is counted as skipped."""
        records = stored([*shift_records(), rec("tag_value", "P-101.vibration_mm_s", 99.0, 5, quality="bad")])
        facts = compute_facts(records, request())
        assert skipped(facts) == [("tag_value", "bad_quality", 1, [len(records)])]
        assert by_kind(facts, "tag_stats")[0].values["max"] == 7.86

    @pytest.mark.parametrize(
        "severity",
        ["high", float("nan"), float("inf"), 10**400, [700], 1001, 700.5],
        ids=["text", "nan", "inf", "10**400", "list", "1001", "700.5"],
    )
    def test_an_alarm_with_an_unreadable_severity_is_skipped(self, severity: Any) -> None:
        """Severity "high" or NaN made int() raise; such an alarm is skipped and the others still count."""
        value = {"message": "x", "severity": severity, "condition": "C", "active": True}
        records = stored([*shift_records(), rec("alarm", "P-102", value, 30)])
        facts = compute_facts(records, request("alarm_summary"))
        assert skipped(facts) == [("alarm", "bad_severity", 1, [len(records)])]
        assert by_kind(facts, "alarm_total")[0].values == {"count": 1, "assets_count": 1}

    @pytest.mark.parametrize(("field", "value"), [("message", {"es": "x"}), ("condition", [1]), ("active", "no")])
    def test_an_alarm_with_a_field_of_the_wrong_type_is_skipped(self, field: str, value: Any) -> None:
        """An object as message, a list as condition, a string as `active`: skipped, naming the field."""
        fields = {"message": "x", "severity": 500, "condition": "C", "active": True, field: value}
        records = stored([*shift_records(), rec("alarm", "P-102", fields, 30)])
        facts = compute_facts(records, request("alarm_summary"))
        assert skipped(facts) == [("alarm", f"bad_{field}", 1, [len(records)])]

    def test_a_downtime_end_before_its_start_is_not_paired(self) -> None:
        """An end at +10 min before a start at +20 min of the same id gave -600 s; the later end at +30 pairs."""
        events = [
            ({"type": "downtime_end", "downtime_id": "D-9"}, 10),
            ({"type": "downtime_start", "downtime_id": "D-9", "reason": "r"}, 20),
            ({"type": "downtime_end", "downtime_id": "D-9"}, 30),
        ]
        records = stored([rec("mes_event", "P-102", v, m) for v, m in events])
        facts = compute_facts(records, request("downtime_analysis"))
        (event,) = by_kind(facts, "downtime")
        assert (event.values["duration_s"], event.values["open"], event.record_ids) == (600, False, [2, 3])

    def test_a_second_start_of_the_same_downtime_is_counted(self) -> None:
        """A repeated downtime_start of an open downtime is skipped as a duplicate, not silently ignored."""
        start = {"type": "downtime_start", "downtime_id": "D-1", "reason": "again"}
        records = stored([*shift_records(), rec("mes_event", "P-101", start, 30)])
        facts = compute_facts(records, request("downtime_analysis"))
        assert skipped(facts) == [("mes_event", "duplicate_downtime_id", 1, [len(records)])]
        assert by_kind(facts, "downtime_total")[0].values == {"count": 1, "duration_s": 5100}

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            ({"type": "production_count", "count": float("inf"), "unit": "kg"}, "count_not_finite"),
            ({"type": "production_count", "count": 10**400, "unit": "kg"}, "count_out_of_range"),
            ({"type": "production_count", "count": "12", "unit": "kg"}, "count_not_a_number"),
            ({"type": "production_count", "count": 12, "unit": {"si": "kg"}}, "bad_unit"),
            ({"type": "quality_check", "result": "maybe"}, "bad_result"),
            ({"type": "downtime_start", "reason": ["seal"]}, "bad_reason"),
            ({"type": ["downtime_start"]}, "bad_type"),
            ("downtime", "not_an_object"),
        ],
    )
    def test_an_unusable_mes_event_is_skipped_with_its_reason(self, value: Any, reason: str) -> None:
        """An infinite count raised in rounding; the other cases were dropped without a trace."""
        records = stored([*shift_records(), rec("mes_event", "L1", value, 30)])
        facts = compute_facts(records, request())
        assert skipped(facts) == [("mes_event", reason, 1, [len(records)])]
        assert by_kind(facts, "production")[0].values == {"count": 1200, "unit": "kg"}

    def test_a_log_line_whose_text_is_an_object_is_skipped(self) -> None:
        """A note is text; an object where the text belongs is counted, not shown as `{'a': 1}`."""
        records = stored([*shift_records(), rec("log_line", "plant/demo/log/utilities", {"text": {"a": 1}}, 30)])
        facts = compute_facts(records, request())
        assert skipped(facts) == [("log_line", "bad_text", 1, [len(records)])]
        assert len(by_kind(facts, "operator_note")) == 1

    def test_skipped_records_make_the_report_incomplete(self) -> None:
        """The second fact says so, with the count; the skipped records fact comes last."""
        records = stored([*shift_records(), rec("tag_value", "P-101.vibration_mm_s", float("nan"), 5)])
        facts = compute_facts(records, request())
        assert (facts[1].id, facts[1].kind, facts[1].values) == (
            "F02",
            "completeness",
            {"status": "incomplete", "data_gap_count": 0, "skipped_count": 1},
        )
        assert facts[-1].kind == "skipped_records"

    def test_a_complete_report_has_no_completeness_fact(self, shift: list[StoredRecord]) -> None:
        """Without gaps or skipped records the facts are exactly as before: no completeness fact."""
        assert by_kind(compute_facts(shift, request()), "completeness") == []


def gap(key: str, start: Any, end: Any, minutes: float, reason: Any = "history_unavailable", **extra: Any) -> Record:
    return rec(DATA_GAP, key, {"start": start, "end": end, "reason": reason, "source": "plc-1", **extra}, minutes)


def at(minutes: float) -> str:
    return iso(SHIFT_START + timedelta(minutes=minutes))


class TestDataGaps:
    def test_a_gap_in_the_window_is_a_fact_and_the_report_is_incomplete(self, shift: list[StoredRecord]) -> None:
        """A 25-minute gap of one tag is listed with its times and reason, and completeness counts it."""
        records = [*shift, *stored([gap("P-101.flow", at(30), at(55), 30)])]
        records[-1] = records[-1].model_copy(update={"id": 99})
        facts = compute_facts(records, request("alarm_summary"))
        (fact,) = by_kind(facts, DATA_GAP)
        assert (fact.subject, fact.ids, fact.record_ids) == ("P-101.flow", ["P-101", "P-101.flow"], [99])
        assert fact.values == {
            "reason": "history_unavailable",
            "source": "plc-1",
            "start_at": "2026-11-29T12:30:00Z",
            "end_at": "2026-11-29T12:55:00Z",
            "duration_s": 1500,
            "open": False,
        }
        assert facts[1].values == {"status": "incomplete", "data_gap_count": 1, "skipped_count": 0}

    def test_an_open_gap_that_began_before_the_window_is_cut_to_it(self) -> None:
        """A gap opened an hour before a one-hour window and never closed covers all of it, marked open."""
        facts = compute_facts(stored([gap("P-101.flow", at(-60), None, -60)]), request("downtime_analysis", hours=1))
        (fact,) = by_kind(facts, DATA_GAP)
        assert (fact.values["start_at"], fact.values["end_at"], fact.values["duration_s"], fact.values["open"]) == (
            "2026-11-29T12:00:00Z",
            "2026-11-29T13:00:00Z",
            3600,
            True,
        )

    def test_a_gap_that_ended_before_the_window_is_not_listed(self) -> None:
        """A gap that closed at the window start leaves the report complete."""
        facts = compute_facts(stored([gap("P-101.flow", at(-60), at(0), -60)]), request())
        assert by_kind(facts, DATA_GAP) == [] and by_kind(facts, "completeness") == []

    def test_a_gap_recorded_open_then_closed_is_one_gap(self) -> None:
        """The closing record is authoritative; both records are behind the fact."""
        facts = compute_facts(
            stored([gap("P-101.flow", at(10), None, 10), gap("P-101.flow", at(10), at(20), 10)]), request()
        )
        (fact,) = by_kind(facts, DATA_GAP)
        assert (fact.values["duration_s"], fact.values["open"], fact.record_ids) == (600, False, [2, 1])

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            ("gap", "not_an_object"),
            ({"start": "yesterday", "end": None, "reason": "x"}, "bad_start"),
            ({"start": "0001-01-01T00:00:00+01:00", "end": None, "reason": "x"}, "bad_start"),
            ({"start": at(10), "end": 12, "reason": "x"}, "bad_end"),
            ({"start": at(10), "end": at(5), "reason": "x"}, "end_before_start"),
            ({"start": at(10), "end": None, "reason": None}, "bad_reason"),
            ({"start": at(10), "end": None, "reason": "x", "source": ["plc"]}, "bad_source"),
        ],
    )
    def test_a_malformed_gap_is_skipped_and_the_report_is_incomplete(self, value: Any, reason: str) -> None:
        """A gap that cannot be read is counted, never ignored: the report still says it is incomplete."""
        facts = compute_facts(stored([rec(DATA_GAP, "P-101.flow", value, 10)]), request())
        assert skipped(facts) == [(DATA_GAP, reason, 1, [1])]
        assert facts[1].values == {"status": "incomplete", "data_gap_count": 0, "skipped_count": 1}

    def test_a_malformed_gap_from_before_the_window_is_not_counted(self) -> None:
        """Only this window's records can make it incomplete; an old unreadable gap would mark every later one."""
        facts = compute_facts(stored([rec(DATA_GAP, "P-101.flow", "gap", -60)]), request())
        assert by_kind(facts, "completeness") == []

    def test_asset_scope_keeps_gaps_of_its_assets_and_of_whole_sources(self) -> None:
        """Scoped to P-101: its tag's gap and a whole source's gap stay, another asset's tag gap goes."""
        records = stored(
            [
                gap("P-101.flow", at(10), at(20), 10),
                gap("P-102.flow", at(10), at(20), 10),
                gap("plc-1", at(30), at(40), 30),
            ]
        )
        facts = compute_facts(records, request("asset_history", assets=["P-101"]))
        assert [f.subject for f in by_kind(facts, DATA_GAP)] == ["P-101.flow", "plc-1"]

    def test_gaps_beyond_the_list_limit_are_counted(self) -> None:
        """With list_max 1, the second gap is in data_gaps_not_listed and still in the completeness count."""
        records = stored([gap("P-101.flow", at(10), at(20), 10), gap("P-101.level", at(30), at(40), 30)])
        facts = compute_facts(records, request(), list_max=1)
        assert [f.subject for f in by_kind(facts, DATA_GAP)] == ["P-101.flow"]
        assert by_kind(facts, "data_gaps_not_listed")[0].values == {"count": 1}
        assert facts[1].values["data_gap_count"] == 2

    def test_report_records_read_gaps_that_began_before_the_window(self, tmp_path: Path) -> None:
        """From the real store: a gap opened an hour before the window reaches the facts; older other records do not."""
        with Store(tmp_path / "store.sqlite3") as store:
            store.insert_records(
                [
                    *shift_records(),
                    gap("P-101.flow", at(-60), at(30), -60),
                    rec("tag_value", "P-101.vibration_mm_s", 1.0, -60),
                ]
            )
            records = report_records(store, request().window)
        assert [r.kind for r in records if r.source_time < SHIFT_START] == [DATA_GAP]
        (fact,) = by_kind(compute_facts(records, request()), DATA_GAP)
        assert (fact.values["start_at"], fact.values["end_at"]) == ("2026-11-29T12:00:00Z", "2026-11-29T12:30:00Z")
