"""Properties of the store boundary: any record reads back as written, quarantine takes any input, and retention
deletes exactly what a naive model of its rules deletes (so never a young record while records fit their cap), and an
id reused for other content is reported, never mistaken for a redelivery."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from edge_agent.base.types import Record
from edge_agent.store import Inserted, RetentionPolicy, Store, storable
from edge_agent.store.retention import QUARANTINE, RECORDS, Table
from edge_agent.store.rows import _json_text, to_us

T0 = datetime(2026, 11, 29, 6, 0, tzinfo=UTC)
INT64 = 2**63 - 1

# Every code point, lone surrogates included (paho hands topics over as str; JSON escapes decode to surrogates).
any_text = st.text(st.characters(blacklist_categories=()))
# Text SQLite stores as is: everything but lone surrogates.
utf8_text = st.text(st.characters(blacklist_categories=("Cs",)))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-INT64 - 1, INT64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
times = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-6)), timezone(timedelta(hours=5, minutes=30))]),
)


# Record's str fields refuse lone surrogates (pydantic), so they get UTF-8 text; `value` is Any and gets any text.
record = st.builds(
    Record,
    source=utf8_text.filter(bool),
    kind=utf8_text.filter(bool),
    key=utf8_text.filter(bool),
    source_time=times,
    received_time=times,
    value=json_values,
    quality=utf8_text,
    raw=st.binary(max_size=64),
    idempotency_key=utf8_text.filter(bool),
    historical=st.booleans(),
)
# Distinct keys: a redelivery (same key) is stored once, which is tests/test_store.py's subject.
batches = st.lists(record, max_size=5, unique_by=lambda r: r.idempotency_key)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """One real store file for all examples of a property; each example empties the tables it uses first."""
    with Store(tmp_path_factory.mktemp("store") / "store.sqlite3") as s:
        yield s


def empty(store: Store, *tables: str) -> None:
    for table in tables:
        store._write(f"DELETE FROM {table}", [()])


class TestRecordRoundTrip:
    @given(batch=batches)
    @example(batch=[Record(source="s", kind="k", key="k", source_time=T0, value="\ud800", idempotency_key="i")])
    @example(batch=[Record(source="s", kind="k", key="k", source_time=T0, value=-INT64 - 1, idempotency_key="i")])
    @example(
        batch=[Record(source="s", kind="k", key="k", source_time=T0, value={"\ud800\udc00": 1}, idempotency_key="i")]
    )
    def test_any_record_reads_back_equal(self, store: Store, batch: list[Record]) -> None:
        """Any record (any JSON value, surrogates in it included, int64 extremes, any UTF-8 text) reads back equal
        as JSON holds it: a high and a low surrogate side by side are the one character they encode in JSON's
        escapes ("\\ud800\\udc00" is U+10000), so they read back as it; a lone one reads back as itself."""
        empty(store, "records")
        assert store.insert_records(batch) == Inserted(len(batch))
        got = sorted((r.model_dump(exclude={"id"}) for r in store.records()), key=lambda r: r["idempotency_key"])
        want = [r.model_dump() | {"value": json.loads(json.dumps(r.value))} for r in batch]
        assert got == sorted(want, key=lambda r: r["idempotency_key"])


class TestStoredTextUnchanged:
    """The row a record becomes is the one the store wrote before its fast paths (numbers' JSON text without the
    encoder, UTC times without to_utc): stored rows and the reused-id comparison see the same bytes."""

    @given(json_values | st.floats() | st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e300, 5e-324]))
    @example(2**70)  # beyond int64: text all the same
    def test_value_text(self, value: Any) -> None:
        before = json.dumps(value, ensure_ascii=False, sort_keys=True)
        if not before.isascii():
            try:
                before.encode("utf-8")
            except UnicodeEncodeError:
                before = json.dumps(value, ensure_ascii=True, sort_keys=True)
        assert _json_text(value) == before

    @given(times)
    def test_microseconds(self, when: datetime) -> None:
        expected = (when.astimezone(UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
        naive = when.replace(tzinfo=None) - (when.utcoffset() or timedelta(0))  # to_utc takes naive as UTC
        assert to_us(when) == to_us(when.astimezone(UTC)) == to_us(naive) == expected


# Few keys and few contents, so batches repeat keys, within a batch and across batches, with the same or other content.
keyed = st.tuples(
    st.sampled_from(["k1", "k2", "k3"]),
    st.sampled_from([b"", b"a", b"b"]),  # b"": a record without bytes (OPC UA), compared by its fields
    st.sampled_from([None, 1, "x"]),
    st.integers(0, 1),  # source_time offset in seconds
    st.booleans(),  # historical: not content (live and HistoryRead copies of one event are one record)
)


class TestReusedIds:
    @given(batches=st.lists(st.lists(keyed, max_size=6), min_size=1, max_size=4))
    def test_a_key_is_reported_reused_exactly_when_its_first_stored_content_differs(
        self, store: Store, batches: list[list[tuple[str, bytes, object, int, bool]]]
    ) -> None:
        """Across any batches: each record is new, a redelivery of its key's first content, or reported reused."""
        empty(store, "records")
        first: dict[str, tuple[object, ...]] = {}
        for batch in batches:
            records = [
                Record(
                    source="s",
                    kind="alarm",
                    key="P-101",
                    source_time=T0 + timedelta(seconds=dt),
                    received_time=T0 + timedelta(minutes=len(first)),  # not content either
                    value=value,
                    raw=raw,
                    idempotency_key=key,
                    historical=historical,
                )
                for key, raw, value, dt, historical in batch
            ]
            new = len({key for key, *_ in batch} - first.keys())
            expected = []
            for i, (key, raw, value, dt, _) in enumerate(batch):
                content = (raw,) if raw else (value, dt)
                if first.setdefault(key, content) != content:
                    expected.append(i)
            assert store.insert_records(records) == Inserted(new, tuple(expected))
        stored = store.records()
        held = {r.idempotency_key: (r.raw,) if r.raw else (r.value, (r.source_time - T0).seconds) for r in stored}
        assert held == first  # the first content per key, and nothing else


class TestQuarantineTakesAnything:
    @settings(max_examples=300)  # one fsync per row
    @given(source=any_text, topic=any_text, raw=st.binary(max_size=256), reason=any_text, received=times)
    @example(source="", topic="\udcff\x00", raw=b"", reason="\ud800", received=T0)
    def test_any_input_is_kept(
        self, store: Store, source: str, topic: str, raw: bytes, reason: str, received: datetime
    ) -> None:
        """quarantine() never raises on any str or bytes: raw bytes exact, text as `storable` keeps it."""
        empty(store, "quarantine")
        qid = store.quarantine(source, topic, raw, reason, received)
        [item] = store.quarantined()
        assert (item.id, item.source, item.topic, item.raw, item.reason, item.received_time) == (
            qid,
            storable(source),
            storable(topic),
            raw,
            storable(reason),
            received,
        )


def model_survivors(rows: list[tuple[int, int, int]], cutoff_us: int, max_bytes: int) -> list[int]:
    """The naive rule, straight from the docs: drop rows older than the cutoff, then the oldest (by time, then id)
    until the rest fit max_bytes. rows: (id, time_us, estimated bytes)."""
    young = sorted((r for r in rows if r[1] >= cutoff_us), key=lambda r: (r[1], r[0]))
    excess = sum(r[2] for r in young) - max_bytes
    while excess > 0:
        excess -= young.pop(0)[2]
    return sorted(r[0] for r in young)


def sized_rows(store: Store, table: Table) -> list[tuple[int, int, int]]:
    return store._query(f"SELECT id, {table.time_column}, {table.size} FROM {table.name}")


class TestRetentionModel:
    @settings(max_examples=200)  # one fsync per quarantined row
    @given(
        record_rows=st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 3000)), max_size=30),
        quarantine_rows=st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 3000)), max_size=15),
        max_age_s=st.integers(1, 2000),
        records_cap=st.integers(0, 60_000),
        quarantine_cap=st.integers(0, 30_000),
    )
    def test_each_table_loses_exactly_what_its_own_rule_says(
        self,
        store: Store,
        record_rows: list[tuple[int, int]],
        quarantine_rows: list[tuple[int, int]],
        max_age_s: int,
        records_cap: int,
        quarantine_cap: int,
    ) -> None:
        """Records and quarantine each keep what the naive model keeps from that table alone: so while the young
        records fit their cap none of them is deleted, whatever quarantine holds."""
        empty(store, "records", "quarantine")
        store.insert_records(
            [
                Record(
                    source="s",
                    kind="k",
                    key="k",
                    source_time=T0,
                    received_time=T0 + timedelta(seconds=age),
                    raw=b"r" * size,
                    idempotency_key=str(i),
                )
                for i, (age, size) in enumerate(record_rows)
            ]
        )
        for age, size in quarantine_rows:
            store.quarantine("mqtt", "t", b"q" * size, "bad", T0 + timedelta(seconds=age))
        now = T0 + timedelta(seconds=1000)
        cutoff_us = (now - timedelta(seconds=max_age_s) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
        records_before, quarantine_before = sized_rows(store, RECORDS), sized_rows(store, QUARANTINE)
        policy = RetentionPolicy(
            max_age=timedelta(seconds=max_age_s),
            records_max_bytes=records_cap,
            quarantine_max_bytes=quarantine_cap,
            dead_letter_max_bytes=0,
        )
        store.apply_retention(policy, now=now)
        kept_records = sorted(r[0] for r in sized_rows(store, RECORDS))
        assert kept_records == model_survivors(records_before, cutoff_us, records_cap)
        assert sorted(r[0] for r in sized_rows(store, QUARANTINE)) == model_survivors(
            quarantine_before, cutoff_us, quarantine_cap
        )
        young = [r for r in records_before if r[1] >= cutoff_us]
        if sum(r[2] for r in young) <= records_cap:
            assert kept_records == sorted(r[0] for r in young)
