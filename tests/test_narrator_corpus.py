"""The narrator's corpus: simulated days stored as ingest would store them, section prompts drawn from them
deterministically, targets from the reference writer that pass the grounding check, and the JSONL file form."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_args
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from edge_agent.base.canonical import canonical_json
from edge_agent.base.types import StoredRecord
from edge_agent.llm.types import ChatMessage
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.narrative import build_prompt
from edge_agent.reports.narrative.grounding import check_narrative
from edge_agent.reports.request import ReportType, ResolvedRequest, ResolvedWindow, Scope, shift_bounds
from edge_agent.reports.untrusted import looks_like_instruction
from edge_agent.sim.plant import LogLine, tag_names
from edge_agent.sim.records import Gap, plant_records
from training.narrator.corpus import (
    INJECTIONS,
    SHIFTS,
    TEST_SEEDS,
    TRAIN_SEEDS,
    NarratorSample,
    build_samples,
    case_messages,
    draw_day,
    draw_request,
    read_corpus,
    section_cases,
    write_corpus,
)

START = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
ALARM_FIELDS = {"event_id", "message", "severity", "condition", "active"}


def whole_span(records: list[StoredRecord], start: datetime, hours: float, report_type: ReportType) -> ResolvedRequest:
    window = ResolvedWindow(start=start, end=start + timedelta(hours=hours + 1), timezone="UTC")
    scope = Scope(assets=["P-101"]) if report_type == "asset_history" else Scope()
    return ResolvedRequest(type=report_type, language="en", window=window, scope=scope)


class TestPlantRecords:
    def test_each_kind_is_stored_as_its_connector_stores_it(self) -> None:
        """Tag values and alarms come from the OPC UA source `sim`, MES events and log lines from MQTT ingest."""
        records = plant_records(3, START, 6.0)
        by_kind = {r.kind: r for r in records}
        assert set(by_kind) == {"tag_value", "alarm", "mes_event", "log_line"}
        assert {r.key for r in records if r.kind == "tag_value"} == set(tag_names())
        assert (by_kind["tag_value"].source, by_kind["alarm"].source) == ("sim", "sim")
        assert set(by_kind["alarm"].value) == ALARM_FIELDS
        assert by_kind["mes_event"].source == "mqtt"
        assert by_kind["mes_event"].value["ts"].endswith("Z") and by_kind["mes_event"].key == "L1"
        assert by_kind["log_line"].key.startswith("plant/demo/log/")
        assert set(by_kind["log_line"].value) == {"text", "author"}

    def test_every_record_is_received_when_it_happens(self) -> None:
        """Live ingest: the receive time is the source time, so a run does not depend on the wall clock."""
        records = plant_records(3, START, 1.0)
        assert all(r.received_time == r.source_time for r in records)

    def test_the_same_seed_gives_the_same_records(self) -> None:
        """Alarm event ids included (the live server's are random; ours derive from the alarm)."""
        assert plant_records(8, START, 2.0) == plant_records(8, START, 2.0)
        assert plant_records(8, START, 2.0) != plant_records(9, START, 2.0)

    def test_tag_every_keeps_every_nth_ticks_values(self) -> None:
        """30 ticks of 10 s with tag_every=4: ticks 0, 4, ..., 28, i.e. 8 samples per tag."""
        records = plant_records(1, START, 300 / 3600, tag_every=4)
        times = sorted({r.source_time for r in records if r.kind == "tag_value"})
        assert times == [START + timedelta(seconds=40 * i) for i in range(8)]
        assert sum(r.kind == "tag_value" for r in records) == 8 * len(tag_names())

    def test_a_gap_drops_what_it_loses_and_adds_its_record(self) -> None:
        """The tag's values in [start, end) are gone; the data_gap record is the connector's, received at the end."""
        gap = Gap(START + timedelta(minutes=20), START + timedelta(minutes=50), "P-101.flow_m3h", "queue_overflow")
        records = plant_records(2, START, 1.0, gaps=[gap])
        lost = [r for r in records if r.key == gap.tag and gap.start <= r.source_time < gap.end]
        [found] = [r for r in records if r.kind == "data_gap"]
        assert [r.kind for r in lost] == ["data_gap"]
        assert found.value == {
            "start": "2025-03-01T10:20:00+00:00",
            "end": "2025-03-01T10:50:00+00:00",
            "reason": "queue_overflow",
            "source": "sim",
            "tag": "P-101.flow_m3h",
        }
        assert (found.source_time, found.received_time, found.historical) == (gap.start, gap.end, True)
        facts = compute_facts(records, whole_span(records, START, 1.0, "shift_summary"))
        assert [f.values for f in facts if f.kind == "completeness"] == [
            {"status": "incomplete", "data_gap_count": 1, "skipped_count": 0}
        ]

    def test_an_event_gap_drops_the_alarms_in_it(self) -> None:
        """A gap without a tag is the source's event history: its alarms are lost, its values kept."""
        everything = plant_records(4, START, 12.0, tag_every=30)
        first_alarm = next(r for r in everything if r.kind == "alarm").source_time
        gap = Gap(first_alarm, first_alarm + timedelta(minutes=1), None, "event_history_unavailable")
        records = plant_records(4, START, 12.0, tag_every=30, gaps=[gap])
        assert not [r for r in records if r.kind == "alarm" and r.source_time == first_alarm]
        assert sum(r.kind == "tag_value" for r in records) == sum(r.kind == "tag_value" for r in everything)

    def test_an_extra_note_is_stored_as_a_log_line(self) -> None:
        """A note published besides the plant's own is parsed like them: author and text apart."""
        line = LogLine(START + timedelta(minutes=5), "operations", "x.y", INJECTIONS[0])
        records = plant_records(2, START, 0.5, notes=[line])
        [stored] = [r for r in records if r.kind == "log_line" and r.value.get("author") == "x.y"]
        assert stored.value == {"text": INJECTIONS[0], "author": "x.y"}
        assert (stored.key, stored.source_time) == ("plant/demo/log/operations", START + timedelta(minutes=5))

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [({"tag_every": 0}, "tag_every"), ({"hours": -1.0}, "hours"), ({"tick_s": 0.0}, "tick_s")],
    )
    def test_bad_arguments_are_refused(self, kwargs: dict[str, float], message: str) -> None:
        """ValueError naming the argument, before anything is simulated."""
        arguments: dict[str, float] = {"hours": 1.0, **kwargs}
        with pytest.raises(ValueError, match=message):
            plant_records(1, START, **arguments)  # type: ignore[arg-type]

    def test_a_gap_needs_aware_ordered_times(self) -> None:
        with pytest.raises(ValueError, match="end after start"):
            Gap(START, START, "P-101.flow_m3h", "queue_overflow")

    @settings(max_examples=min(100, settings.default.max_examples))
    @given(
        seed=st.integers(0, 2**32),
        ticks=st.integers(0, 400),
        tick_s=st.floats(0.1, 600.0),
        tag_every=st.integers(1, 5),
        start=st.datetimes(datetime(2000, 1, 2), datetime(2026, 1, 1), timezones=st.just(UTC)),
    )
    def test_any_run_gives_valid_ordered_records_that_facts_read(
        self, seed: int, ticks: int, tick_s: float, tag_every: int, start: datetime
    ) -> None:
        """Records validate, ids are 1..n, source times never go back, and compute_facts never raises on them."""
        hours = ticks * tick_s / 3600
        records = plant_records(seed, start, hours, tick_s, tag_every=tag_every)
        assert [r.id for r in records] == list(range(1, len(records) + 1))
        assert all(StoredRecord.model_validate(r.model_dump()) == r for r in records)
        assert all(a.source_time <= b.source_time for a, b in zip(records, records[1:], strict=False))
        for report_type in get_args(ReportType):
            facts = compute_facts(records, whole_span(records, start, hours, report_type))
            assert facts[0].kind == "window"


class TestDraws:
    def test_seed_ranges_are_disjoint(self) -> None:
        """A test sample never comes from a simulated day training saw."""
        assert set(TRAIN_SEEDS).isdisjoint(TEST_SEEDS)
        assert (len(TRAIN_SEEDS), len(TEST_SEEDS)) == (600, 40)

    def test_every_injection_is_flagged(self) -> None:
        """The hostile notes are ones the report withholds, so the model learns to write around them."""
        assert all(looks_like_instruction(text) for text in INJECTIONS)

    def test_hostile_days_occur_among_the_test_seeds(self) -> None:
        days = [draw_day(random.Random(seed)) for seed in TEST_SEEDS]
        assert sum(bool(d.gaps) for d in days) >= 4
        assert sum(bool(d.notes) for d in days) >= 4

    @given(seed=st.integers(0, 2**64))
    def test_every_draw_fits_the_simulated_day(self, seed: int) -> None:
        """Shifts A, B, C and free windows of 1-12 h lie inside the day; an asset history names one asset."""
        rng = random.Random(seed)
        day = draw_day(rng)
        tz = ZoneInfo(day.tz_name)
        local = day.start.astimezone(tz)
        assert (local.hour, local.minute) == (4, 0)
        for shift in SHIFTS:
            start, end = shift_bounds(shift, local.date(), tz)
            assert day.start <= start < end <= day.end
        for gap in day.gaps:
            assert day.start <= gap.start < gap.end <= day.end
        for _ in range(5):
            request = draw_request(rng, day)
            window = request.window
            assert day.start <= window.start < window.end <= day.end
            if window.shift is None:
                assert timedelta(hours=1) <= window.end - window.start <= timedelta(hours=12)
            assert len(request.scope.assets) == (1 if request.type == "asset_history" else 0)

    def test_section_cases_are_deterministic(self) -> None:
        """Same seed, same requests, sections and strict draws; another seed, others."""
        assert section_cases(5, 2) == section_cases(5, 2)
        assert [c.id for c in section_cases(5, 2)] != [c.id for c in section_cases(6, 2)]

    def test_messages_are_build_prompts(self) -> None:
        """Each case's messages are exactly `build_prompt(section, request).messages(strict)`."""
        cases = [c for seed in (0, 1) for c in section_cases(seed)]
        assert cases and any(c.strict for c in cases) and not all(c.strict for c in cases)
        templates: dict = {}
        for case in cases:
            expected = build_prompt(case.section, case.request).messages(case.strict)
            assert case_messages(case, templates) == expected


def sample(index: int, **overrides: object) -> NarratorSample:
    fields: dict[str, object] = {
        "id": f"test-0-{index}-alarms",
        "split": "test",
        "seed": 0,
        "language": "es",
        "report_type": "alarm_summary",
        "section": "alarms",
        "strict": index % 2 == 1,
        "messages": [ChatMessage(role="system", content="s"), ChatMessage(role="user", content="Señal: ñ")],
        "target": f"Hubo {index} alarmas.",
    }
    return NarratorSample.model_validate({**fields, **overrides})


class TestCorpusFile:
    def test_round_trip(self, tmp_path: Path) -> None:
        """One canonical-JSON object a line; read back equal; nothing left beside the file."""
        path = tmp_path / "corpus.jsonl"
        samples = [sample(0), sample(1)]
        assert write_corpus(path, iter(samples)) == 2
        assert path.read_bytes() == b"".join(canonical_json(s.model_dump(mode="json")) + b"\n" for s in samples)
        assert read_corpus(path) == samples
        assert read_corpus(path, limit=1) == samples[:1]
        assert [p.name for p in tmp_path.iterdir()] == ["corpus.jsonl"]

    def test_a_missing_directory_is_made(self, tmp_path: Path) -> None:
        """`make narrator` on a fresh checkout: var/narrator does not exist yet."""
        path = tmp_path / "var" / "narrator" / "corpus.jsonl"
        assert write_corpus(path, iter([sample(0)])) == 1
        assert read_corpus(path) == [sample(0)]

    def test_the_data_command_rebuilds_a_corpus_made_by_other_wording(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A current corpus is kept; one whose first seed no longer rebuilds the same (prompts, facts or reference
        wording changed since) is rebuilt, not trained on."""
        import training.narrator.corpus as corpus_mod
        from training.cli import main

        monkeypatch.setattr(corpus_mod, "TRAIN_SEEDS", range(1000, 1002))
        path = tmp_path / "corpus.jsonl"
        recipe = tmp_path / "narrator.toml"
        recipe.write_text(f'[train]\ncorpus = "{path}"\n')
        current = list(build_samples(range(1000, 1002), "train"))
        write_corpus(path, iter([current[0].model_copy(update={"target": "Texto de otra versión."}), *current[1:]]))
        assert main(["narrator", "data", "--config", str(recipe)]) == 0
        assert "rebuilding" in capsys.readouterr().out and read_corpus(path) == current
        assert main(["narrator", "data", "--config", str(recipe)]) == 0
        assert "already built and current" in capsys.readouterr().out

    def test_a_sample_is_strict_about_its_fields(self) -> None:
        with pytest.raises(ValidationError):
            sample(0, split="dev")
        with pytest.raises(ValidationError):
            sample(0, extra=1)


@pytest.fixture(scope="module")
def reference_samples() -> Iterator[list[NarratorSample]]:
    pytest.importorskip("edge_agent.reports.narrative.reference")
    yield list(build_samples(range(3), "test"))


class TestTargets:
    def test_build_samples_is_deterministic(self, reference_samples: list[NarratorSample]) -> None:
        assert list(build_samples(range(3), "test")) == reference_samples

    def test_samples_carry_their_cases(self, reference_samples: list[NarratorSample]) -> None:
        """Every sample's messages are the prompt of the case it names, and its target is not empty."""
        cases = {f"test-{c.id}": c for seed in range(3) for c in section_cases(seed)}
        assert [s.id for s in reference_samples] == list(cases)
        for s in reference_samples:
            case = cases[s.id]
            assert s.messages == build_prompt(case.section, case.request).messages(case.strict)
            assert (s.language, s.report_type, s.section, s.strict) == (
                case.request.language,
                case.request.type,
                case.section.name,
                case.strict,
            )
            assert s.target.strip()

    def test_every_target_is_grounded(self, reference_samples: list[NarratorSample]) -> None:
        """The reference text of each section passes the grounding check against that section's facts."""
        cases = {f"test-{c.id}": c for seed in range(3) for c in section_cases(seed)}
        for s in reference_samples:
            case = cases[s.id]
            result = check_narrative(s.target, case.section.grounding_facts(), case.request.window.timezone)
            assert result.ok, (s.id, s.target, result.offending)
