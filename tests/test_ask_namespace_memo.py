"""The namespace read through the event memo gives exactly what it gave before the memo: the naive reference below
(the namespace as it read the week's MES events as StoredRecords, before event_memo.py) is checked against it on
Hypothesis-made stores, times and memo sizes, cold and warm; answers are the same bytes with the memo cold and warm."""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.ask.evidence import ReadingStore
from edge_agent.ask.pipeline import answer_question
from edge_agent.ask.tools import Namespace, ToolContext, build_namespace
from edge_agent.ask.tools.event_memo import EVENTS, EventMemo, EventSummary, summarize
from edge_agent.ask.tools.facts import record_ids
from edge_agent.ask.tools.models import AssetInfo, LineInfo, TagInfo
from edge_agent.ask.tools.namespace import RECENT, _most
from edge_agent.ask.tools.records import KEYS_MAX
from edge_agent.base.quantities import quantity_of
from edge_agent.base.types import Record
from edge_agent.config import AgentConfig
from edge_agent.reports.facts import DATA_GAP
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, shift_records


def reference_namespace(store: Store, config: AgentConfig, now: datetime, aliases: dict[str, str]) -> Namespace:
    """build_namespace as it was before the memo (commit 8c74e7d), the MES events read as StoredRecords."""
    newest = store.recent_keys(now - RECENT, KEYS_MAX)
    tag_keys = sorted(r.key for r in newest if r.kind in ("tag_value", DATA_GAP) and "." in r.key)
    event_keys = sorted(r.key for r in newest if r.kind in ("alarm", "mes_event"))
    events = store.records(now - RECENT, now, keys=event_keys, kinds=["mes_event"])
    lines_of: dict[str, Counter[str]] = defaultdict(Counter)
    counted: set[str] = set()
    for r in events:
        value = r.value if isinstance(r.value, dict) else {}
        line = value.get("line")
        if isinstance(line, str) and line:
            lines_of[r.key][line] += 1
        if value.get("type") == "production_count":
            counted.add(r.key)
    lines = {c.line for c in config.reports.kpi.lines} | counted | {line for c in lines_of.values() for line in c}
    quantities = {tag: quantity_of(tag) for tag in tag_keys}
    assets = ({q.asset for q in quantities.values()} | set(event_keys)) - lines
    names: dict[str, list[str]] = defaultdict(list)
    for alias, target in sorted(aliases.items()):
        names[target].append(alias)
    return Namespace(
        record_ids=record_ids(r.id for r in newest if r.key in assets or r.key in quantities),
        record_count=len(newest),
        truncated=len(newest) >= KEYS_MAX,
        site=config.site.id,
        timezone=config.site.timezone,
        lines=[LineInfo(line=line) for line in sorted(lines)],
        assets=[AssetInfo(asset=a, line=_most(lines_of.get(a)), names=names.get(a, [])) for a in sorted(assets)],
        tags=[
            TagInfo(tag=tag, asset=q.asset, quantity=q.quantity, unit=q.unit, names=q.names)
            for tag, q in sorted(quantities.items())
        ],
    )


def config_at(state: Path, kpi_lines: list[str] = []) -> AgentConfig:  # noqa: B006 - read only
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(state)},
            "reports": {"kpi": {"lines": [{"line": line, "ideal_rate_per_min": 1.0} for line in kpi_lines]}},
        }
    )


# --- the memo ------------------------------------------------------------------------------------------------------


class TestEventMemo:
    @pytest.mark.parametrize(
        ("text", "summary"),
        [
            ('{"line": "L1", "type": "downtime_start"}', EventSummary("L1", False)),
            ('{"line": "L2", "type": "production_count", "count": 3}', EventSummary("L2", True)),
            ('{"line": "", "type": "production_count"}', EventSummary(None, True)),  # an empty line names none
            ('{"line": 7}', EventSummary(None, False)),  # a line that is not a string names none
            ('["line", "L1"]', EventSummary(None, False)),  # not an object: nothing
            ('"production_count"', EventSummary(None, False)),
            (None, EventSummary(None, False)),  # no value at all
        ],
    )
    def test_a_summary_is_what_the_value_says(self, text: str | None, summary: EventSummary) -> None:
        assert EventMemo().summary(text) == summary == summarize(text)

    def test_the_oldest_text_is_forgotten_past_its_size(self) -> None:
        """size 2: a third text forgets the first; asked again, the first is parsed again, to the same summary."""
        memo = EventMemo(size=2)
        texts = ['{"line": "A"}', '{"line": "B"}', '{"line": "C"}']
        assert [memo.summary(t).line for t in texts] == ["A", "B", "C"]
        assert len(memo) == 2
        assert memo.summary(texts[0]) == EventSummary("A", False)
        assert len(memo) == 2

    def test_a_memo_holds_at_least_one_text(self) -> None:
        with pytest.raises(ValueError, match="at least 1 text, not 0"):
            EventMemo(size=0)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
EVENT_VALUE = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {},
        optional={
            "line": st.one_of(st.sampled_from(["L1", "L2", "", "Línea 3"]), JSON),
            "type": st.sampled_from(["production_count", "downtime_start", "quality_check", "x"]),
        },
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENT_VALUE, max_size=12), st.integers(min_value=1, max_value=4))
def test_the_memo_gives_what_parsing_gives(values: list[Any], size: int) -> None:
    """Any stored values, looked up twice through a memo of any size: each summary is the parse of its text."""
    memo = EventMemo(size=size)
    texts = [json.dumps(v, ensure_ascii=False, sort_keys=True) for v in values]
    for text in texts + texts:
        assert memo.summary(text) == summarize(text)
    assert len(memo) <= size


# --- the store's narrow read ---------------------------------------------------------------------------------------


class TestValueTexts:
    def test_the_keys_and_texts_of_what_records_returns(self, tmp_path: Path) -> None:
        """value_texts gives the key and the stored JSON of each record `records` gives, in its order."""
        with Store(tmp_path / "store.db") as store:
            store.insert_records(shift_records())
            start, end = SHIFT_START, SHIFT_START + timedelta(hours=8)
            for keys, kinds, limit in [(None, None, None), (["P-101"], ["mes_event"], None), (["P-101"], None, 2)]:
                texts = store.value_texts(start, end, keys=keys, kinds=kinds, limit=limit)
                records = store.records(start, end, keys=keys, kinds=kinds, limit=limit)
                assert texts and [(k, json.loads(t) if t else None) for k, t in texts] == [
                    (r.key, r.value) for r in records
                ]

    def test_the_evidence_of_an_answer_keeps_the_events_the_namespace_read(self, tmp_path: Path) -> None:
        """ReadingStore (what `audit export` carries as an answer's evidence) keeps every MES event of the week the
        namespace read as texts: an answer recomputed from its evidence alone sees the same lines."""
        with Store(tmp_path / "store.db") as store:
            store.insert_records(shift_records())
            events = {r.id for r in store.records(kinds=["mes_event"])}
        config = config_at(tmp_path)
        reading = ReadingStore(tmp_path / "store.db")
        with reading:
            build_namespace(reading, config, SHIFT_START + timedelta(hours=9))
            assert events and events <= set(reading.read)


# --- the namespace, cold and warm, against the reference -----------------------------------------------------------

KEYS = ["P-101", "P-102", "L1", "L2", "P-101.vibration_mm_s", "T-301.level_pct", "P-102.running"]
KINDS = ["mes_event", "mes_event", "alarm", "tag_value", DATA_GAP, "log_line"]
BASE = SHIFT_START
RECORD = st.tuples(
    st.sampled_from(KINDS), st.sampled_from(KEYS), EVENT_VALUE, st.integers(min_value=-12 * 24 * 60, max_value=24 * 60)
)


def records_of(drawn: list[tuple[str, str, Any, int]], tag: str) -> list[Record]:
    return [
        Record(
            source="test",
            kind=kind,
            key=key,
            value=value,
            source_time=BASE + timedelta(minutes=minutes),
            received_time=BASE,
            idempotency_key=f"{tag}-{i}",
        )
        for i, (kind, key, value, minutes) in enumerate(drawn)
    ]


@settings(max_examples=80, deadline=None)
@given(
    first=st.lists(RECORD, max_size=25),
    later=st.lists(RECORD, max_size=10),
    nows=st.lists(st.integers(min_value=-3 * 24 * 60, max_value=9 * 24 * 60), min_size=1, max_size=4),
    size=st.integers(min_value=1, max_value=6),
    kpi_lines=st.lists(st.sampled_from(["L1", "L3"]), max_size=2, unique=True),
)
def test_the_namespace_is_the_references_cold_and_warm(
    first: list[tuple[str, str, Any, int]],
    later: list[tuple[str, str, Any, int]],
    nows: list[int],
    size: int,
    kpi_lines: list[str],
) -> None:
    """Any records, any times, any memo size: the namespace (memo cold, then warm, then after more records arrive)
    is exactly the reference's."""
    aliases = {"bomba 101": "P-101", "la línea": "L1"}
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "store.db") as store:
        config = config_at(Path(tmp), kpi_lines)
        memo = EventMemo(size=size)
        store.insert_records(records_of(first, "a"))
        for batch in (None, later):
            if batch is not None:
                store.insert_records(records_of(batch, "b"))
            for minutes in nows:
                now = BASE + timedelta(minutes=minutes)
                expected = reference_namespace(store, config, now, aliases)
                for _ in ("cold", "warm"):
                    got = build_namespace(store, config, now, aliases=aliases, memo=memo)
                    assert got.model_dump_json() == expected.model_dump_json()


# --- answers, memo cold and warm -----------------------------------------------------------------------------------

QUESTIONS = [
    "¿Cuántas paradas tuvo la P-101 en el turno A?",
    "¿Cuántas paradas tuvo la línea L1 hoy?",
    "¿Cuál fue la vibración máxima de la P-101?",
    "How much did line L1 produce?",
    "Which alarms were raised?",
    "Quantas paradas teve a P-101?",
    "arranca la bomba P-101",
    "¿Cuál fue la vibración de la P-999?",
]


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, AgentConfig]]:
    tmp = tmp_path_factory.mktemp("memo_plant")
    with Store(tmp / "store.db") as store:
        store.insert_records(shift_records())
        config = AgentConfig.model_validate(
            {
                "site": {"id": "demo", "timezone": TZ},
                "paths": {"state_dir": str(tmp)},
                "reports": {"shifts": [{"name": "A", "start": "06:00", "end": "14:00"}]},
            }
        )
        yield store, config


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(QUESTIONS), st.integers(min_value=8 * 60, max_value=3 * 24 * 60))
def test_an_answer_is_the_same_bytes_with_the_memo_cold_and_warm(
    plant: tuple[Store, AgentConfig], question: str, minutes: int
) -> None:
    """Any question at any time from the shift's end to three days on: the answer with the process's memo emptied
    first, and again with it filled, are the same bytes."""
    store, config = plant
    ctx = ToolContext(store=store, config=config, now=SHIFT_START + timedelta(minutes=minutes))

    def answer() -> str:
        got = answer_question(ctx, question, user="operator", lang=None, aliases={}, shifts=config.reports.shifts)
        return got.model_dump_json()

    EVENTS.clear()
    cold = answer()
    assert len(EVENTS) > 0 or "arranca" in question  # the shift's events went through the memo (a refusal reads none)
    assert answer() == cold
