"""Grounding check: every number, id, time and duration in a narrative must match a fact."""

from __future__ import annotations

from datetime import timedelta

import pytest

from edge_agent.reports.facts import Fact, compute_facts
from edge_agent.reports.grounding import check_narrative
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.types import StoredRecord
from tests.fixtures.reports import SHIFT_START, TZ


@pytest.fixture
def facts(shift: list[StoredRecord]) -> list[Fact]:
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=8), shift="A", timezone=TZ)
    return compute_facts(shift, ResolvedRequest(type="shift_summary", language="es", window=window, scope=Scope()))


def offending(text: str, facts: list[Fact]) -> list[tuple[str, str]]:
    return [(o.text, o.kind) for o in check_narrative(text, facts, TZ).offending]


class TestNumbers:
    def test_invented_number_is_caught_with_its_span(self, facts: list[Fact]) -> None:
        """99.9 is in no fact: the result names it and where it is."""
        text = "La vibración de P-101 llegó a 99.9 mm/s."
        result = check_narrative(text, facts, TZ)
        assert result.ok is False
        (bad,) = result.offending
        assert (bad.text, bad.kind, bad.start, bad.end) == ("99.9", "number", 30, 34)
        assert text[bad.start : bad.end] == "99.9"

    def test_exact_and_rounded_values_are_accepted(self, facts: list[Fact]) -> None:
        """Max 7.86 may be written 7.86 or 7.9; mean 4.93 as 4.9; the count 1200 exactly."""
        result = check_narrative("Máximo 7.86 (7.9), media 4.9, producción 1200 kg.", facts, TZ)
        assert result.ok is True
        assert [(c.text, c.fact_ids) for c in result.claims] == [
            ("7.86", ["F03"]),
            ("7.9", ["F03"]),
            ("4.9", ["F03"]),
            ("1200", ["F11"]),
        ]

    def test_decimal_comma_is_read_as_a_decimal_point(self, facts: list[Fact]) -> None:
        """Spanish and Portuguese write 7,86."""
        assert check_narrative("Máximo de 7,86 mm/s.", facts, TZ).ok is True

    def test_a_non_integer_value_rounded_to_an_integer_is_refused(self) -> None:
        """7.86 written as 8 loses the figure a reader acts on (with no fact that is 8 itself)."""
        only = [
            Fact(
                id="F01",
                kind="tag_stats",
                subject="P-101.x",
                values={"max": 7.86},
                record_ids=[1],
                record_count=1,
                record_ids_sha256="-",
            )
        ]
        assert offending("Máximo de 8 mm/s.", only) == [("8", "number")]
        assert offending("Máximo de 7.9 mm/s.", only) == []

    def test_wrong_rounding_is_refused(self, facts: list[Fact]) -> None:
        """7.86 rounds to 7.9, never to 7.8."""
        assert offending("Máximo de 7.8 mm/s.", facts) == [("7.8", "number")]


class TestIdsTimesDurations:
    def test_unknown_asset_is_caught(self, facts: list[Fact]) -> None:
        """P-102 appears in no fact; P-101 and its tag do."""
        assert offending("P-101.vibration_mm_s subió; P-102 también.", facts) == [("P-102", "id")]

    def test_local_times_match_fact_times(self, facts: list[Fact]) -> None:
        """The maximum at 12:20Z is 06:20 in Mexico City; 07:00 is in no fact."""
        assert offending("Máximo a las 06:20, revisado a las 07:00.", facts) == [("07:00", "time")]

    def test_durations_in_minutes_hours_and_both(self, facts: list[Fact]) -> None:
        """5100 s is 85 min, 1.4 h, or 1 h 25 min; 90 min is wrong."""
        assert offending("Parada de 85 min (1.4 h, 1 h 25 min).", facts) == []
        assert offending("Parada de 90 minutos.", facts) == [("90 minutos", "duration")]

    def test_dates_must_be_a_fact_date(self, facts: list[Fact]) -> None:
        """The shift is on 2026-11-29 local; 2026-11-30 is not."""
        assert offending("Turno del 2026-11-29, no del 2026-11-30.", facts) == [("2026-11-30", "date")]

    def test_empty_narrative_is_not_grounded(self, facts: list[Fact]) -> None:
        """Nothing to check is not a checked narrative."""
        assert check_narrative("  ", facts, TZ).ok is False


class TestAnyNarrative:
    """Regressions found by tests/test_reports_property.py: narratives and facts that made the check raise."""

    def test_a_5000_digit_duration_is_an_offence(self, facts: list[Fact]) -> None:
        """`int()` refused more than 4300 digits (ValueError); now it is simply a duration no fact has."""
        text = "9" * 5000 + " h 5 min"
        assert offending(text, facts) == [(text, "duration")]

    def test_a_number_with_forty_decimals_is_read(self, facts: list[Fact]) -> None:
        """Rounding 7.86 to 40 decimals overflowed Decimal's default precision; 7.86 written so is still 7.86."""
        assert offending("Máximo " + "7.86" + "0" * 38 + ".", facts) == []
        assert offending("Máximo " + "7.86" + "0" * 37 + "1.", facts) == [("7.86" + "0" * 37 + "1", "number")]

    def test_an_integer_fact_beyond_float_range_is_compared_exactly(self) -> None:
        """A count of 10**400 raised OverflowError in float(); integers are compared exactly instead."""
        only = [
            Fact(
                id="F01",
                kind="production",
                subject="L1",
                values={"count": 10**400},
                record_ids=[1],
                record_count=1,
                record_ids_sha256="-",
            )
        ]
        assert offending("Producción " + "1" + "0" * 400 + ".", only) == []
        assert offending("Producción 1.", only) == [("1", "number")]
