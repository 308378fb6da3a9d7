"""Report facts: pure functions over stored records."""

from __future__ import annotations

import random
from datetime import timedelta

from edge_agent.reports.facts import Fact, compute_facts, ids_sha256, round_value
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.types import StoredRecord
from tests.fixtures.reports import SHIFT_START, TZ, shift, shift_records, stored  # noqa: F401 (fixture)


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


class TestTagStats:
    def test_min_max_mean_and_times(self, shift: list[StoredRecord]) -> None:
        """Vibration 3.1, 4.5, 7.86, 5.2, 4.0 → min 3.1 at 12:00Z, max 7.86 at 12:20Z, mean 4.93."""
        (fact,) = by_kind(compute_facts(shift, request()), "tag_stats")
        assert fact.subject == "P-101.vibration_mm_s"
        assert fact.values == {
            "samples_count": 5, "min": 3.1, "min_at": "2026-11-29T12:00:00Z", "max": 7.86,
            "max_at": "2026-11-29T12:20:00Z", "mean": 4.93, "first": 3.1, "last": 4.0,
        }

    def test_record_ids_point_at_the_extremes_first(self, shift: list[StoredRecord]) -> None:
        """The min, max, first and last samples lead the id list; all five are counted and hashed."""
        (fact,) = by_kind(compute_facts(shift, request()), "tag_stats")
        assert fact.record_ids == [1, 3, 5, 2, 4]  # min (id 1), max (3), first (1), last (5), then the rest
        assert fact.record_count == 5
        assert fact.record_ids_sha256 == ids_sha256([1, 2, 3, 4, 5])


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
