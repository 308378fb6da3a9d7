"""The plant KPIs in reports: their narrative sections, the reference writer's text for them, the grounding that
binds a KPI to its value and asset, and the alarm_performance request."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from edge_agent.config.kpi import KpiLineConfig
from edge_agent.config.reports import ReportsConfig
from edge_agent.reports.errors import RequestError
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.narrative import (
    Section,
    build_prompt,
    reference_text,
    report_facts,
    report_records,
    split_sections,
)
from edge_agent.reports.narrative.grounding import check_narrative, section_grounding
from edge_agent.reports.narrative.phrasebook import load_reference_phrasebook
from edge_agent.reports.request import parse_request, resolve
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, record, stored
from tests.fixtures.reports import fact
from tests.test_reports_kpi import KPI, _alarms, _request, _shift

KPI_25 = KPI.model_copy(update={"lines": [KpiLineConfig(line="L1", ideal_rate_per_min=2.5)]})


def _section(name: str, language: str = "en") -> Section:
    report_type = "alarm_performance" if name == "alarm_performance" else "shift_summary"
    records = _alarms() if report_type == "alarm_performance" else _shift()
    request = _request(report_type).model_copy(update={"language": language})
    (section,) = [s for s in split_sections(compute_facts(stored(records), request, kpi=KPI_25)) if s.name == name]
    return section


def _ok(text: str, section: Section) -> bool:
    return section_grounding(text, section, TZ).ok


class TestSections:
    def test_kpi_sections_in_a_shift_summary(self) -> None:
        request = _request()
        names = [s.name for s in split_sections(compute_facts(stored(_shift()), request, kpi=KPI_25))]
        assert names[-2:] == ["oee", "maintenance"]

    def test_alarm_performance_review_has_its_section(self) -> None:
        request = _request("alarm_performance")
        names = [s.name for s in split_sections(compute_facts(stored(_alarms()), request))]
        assert names == ["alarms", "alarm_performance"]

    @pytest.mark.parametrize("language", ["es", "en", "pt"])
    @pytest.mark.parametrize("name", ["oee", "maintenance", "alarm_performance"])
    def test_reference_text_is_grounded(self, name: str, language: str) -> None:
        """The reference writer's KPI text passes the checks it is the net for, in every language."""
        section = _section(name, language)
        request = _request("alarm_performance" if name == "alarm_performance" else "shift_summary")
        text = reference_text(section, request.model_copy(update={"language": language}))
        assert _ok(text, section), text
        assert "%" in text or name == "maintenance"

    @pytest.mark.parametrize("language", ["es", "en", "pt"])
    def test_kpi_wordings_read_right_whatever_the_counts(self, language: str) -> None:
        """Reference writer r10: no wording agrees a verb with a count ("1 falla durante el turno dan"), none puts an
        article before an asset id ("A C-201"); every wording of a line with no planned stop leaves them out."""
        phrases = load_reference_phrasebook(language).phrases
        for wording in phrases["mt.asset"]:
            assert not re.search(r"\{failures\} \{during\} \w", wording), wording
            assert not re.search(r"\b(?:A|a|O|o|La|la|El|el) \{asset\}", wording), wording
        assert all("{planned}" not in w for w in phrases["oee.time_unplanned"])

    @pytest.mark.parametrize("language", ["es", "en", "pt"])
    def test_a_line_with_no_planned_stop_says_so(self, language: str) -> None:
        section = _section("oee", language)
        facts = tuple(
            f.model_copy(update={"values": {**f.values, "planned_downtime_s": 0}}) if f.kind == "oee" else f
            for f in section.facts
        )
        request = _request().model_copy(update={"language": language})
        text = reference_text(Section("oee", section.window, facts, section.related), request)
        said = {"es": "paradas planificadas", "en": "no planned", "pt": "paradas planejadas"}[language]
        assert said in text.casefold() and " 0 s" not in text, text
        assert not re.search(r"otros|a further|mais \d", text), text

    @pytest.mark.parametrize(
        ("language", "said"),
        [("es", "sin recuento de desecho"), ("en", "no scrap count"), ("pt", "sem contagem de refugo")],
    )
    def test_why_an_oee_is_not_computable_is_said_in_words(self, language: str, said: str) -> None:
        section = _section("oee", language)
        facts = tuple(
            f.model_copy(update={"values": {**f.values, "oee": None, "quality": None, "missing": "scrap"}})
            if f.kind == "oee"
            else f
            for f in section.facts
        )
        request = _request().model_copy(update={"language": language})
        text = reference_text(Section("oee", section.window, facts, section.related), request)
        assert said in text and "(scrap)" not in text and "of scrap" not in text, text

    def test_prompt_shows_ratios_as_percentages(self) -> None:
        user = build_prompt(_section("oee"), _request()).user
        assert "availability 88.89 %, performance 90 %, quality 97 %, OEE 77.6 %" in user


class TestGrounding:
    def test_the_right_kpi_passes(self) -> None:
        section = _section("oee")
        assert _ok("On L1 the OEE was 77.6 %, with availability 88.89 % and quality 97 %.", section)
        assert _ok("L1's availability was 88.9 %.", section)  # 88.89 rounded to the one decimal written

    @pytest.mark.parametrize(
        "text",
        [
            "On L1 availability was 89.5 %.",  # a wrong value
            "On L1 availability was 89 %.",  # 88.89 % rounded past its decimals
            "On L1 availability was 0.89.",  # a ratio not written as a percentage
            "The OEE of L1 was 88.89.",  # a percentage without its sign is a plain number, and no fact has it
        ],
    )
    def test_a_wrong_kpi_value_is_refused(self, text: str) -> None:
        assert not _ok(text, _section("oee"))

    def test_a_kpi_given_to_the_wrong_asset_is_refused(self) -> None:
        """P-101's 30 min MTTR said of C-201 (whose MTTR is 10 min): every figure is a fact, the binding is not."""
        section = _section("maintenance")
        assert _ok("P-101 had an MTTR of 30 min.", section)
        assert not _ok("C-201 had an MTTR of 30 min.", section)

    def test_an_alarm_share_bound_to_its_alarm(self) -> None:
        section = _section("alarm_performance")
        assert _ok("C-201 carried 53.33 % of the alarm load.", section)
        assert not _ok("P-101 carried 53.33 % of the alarm load.", section)

    def test_percentages_of_plain_values_still_pass(self) -> None:
        """A tag measured in percent (T-301.level_pct) written with a sign passes, as before ratios were read."""
        level = fact("F02", "tag_stats", "T-301.level_pct", max=62.5, mean=55.1)
        assert check_narrative("T-301.level_pct peaked at 62.5 %.", [level], TZ).ok
        assert not check_narrative("T-301.level_pct peaked at 63.5 %.", [level], TZ).ok


class TestRequest:
    def test_alarm_performance_without_a_window_is_the_last_days(self) -> None:
        request = parse_request(json.dumps({"request_id": "r1", "type": "alarm_performance"}).encode())
        now = datetime(2026, 12, 4, 15, 0, tzinfo=UTC)  # 09:00 in Mexico City
        resolved = resolve(request, shifts=[], tz_name=TZ, default_language="en", now=now, review_days=7)
        # 7 whole local days before 2026-12-04 00:00 local (06:00 UTC)
        assert (resolved.window.start, resolved.window.end) == (
            datetime(2026, 11, 27, 6, tzinfo=UTC),
            datetime(2026, 12, 4, 6, tzinfo=UTC),
        )

    def test_other_types_still_need_a_window(self) -> None:
        with pytest.raises(RequestError) as err:
            parse_request(json.dumps({"request_id": "r1", "type": "shift_summary"}).encode())
        assert err.value.field == "window"


def test_report_records_bring_the_alarms_before_the_window(tmp_path: Path) -> None:
    """From the real store: an alarm raised 30 h before the window and never cleared is standing and stale in the
    review (`generate.KPI_HISTORY`), while tag values from before the window stay out."""
    with Store(tmp_path / "store.sqlite3") as store:
        store.insert_records([*_alarms(), record("tag_value", "P-101.vibration_mm_s", 1.0, -60)])
        request = _request("alarm_performance")
        records = report_records(store, request.window)
    assert {r.kind for r in records if r.source_time < SHIFT_START} == {"alarm"}
    facts = report_facts(records, request, ReportsConfig())
    (stale,) = [f for f in facts if f.kind == "alarm_stale"]
    assert stale.values["count"] == 1
