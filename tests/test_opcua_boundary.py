"""The OPC UA input boundary: whatever one data value or event holds, converting it never raises.

It becomes a record the store keeps as it was converted, or a quarantine row with its reason; live, one bad value
is quarantined and counted while the values around it are stored.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from asyncua import ua
from asyncua.common.events import Event
from hypothesis import example, given
from hypothesis import strategies as st

from edge_agent.base.types import Record, utcnow
from edge_agent.base.values import PlausibleTimes
from edge_agent.config import OpcuaSourceConfig
from edge_agent.connectors.opcua import (
    QUARANTINED,
    Refused,
    convert_event,
    convert_history_event,
    convert_value,
    gap_record,
    overflowed,
)
from edge_agent.store import Store
from tests.fixtures.opcua import OpcuaServer, running_source, source_config, wait_until

T0 = datetime(2020, 3, 2, 6, 0, tzinfo=UTC)
VIB = "P-101.vibration_mm_s"
REASONS = {"schema_mismatch", "internal_error"}


class Unprintable:
    """A value whose str() fails: what an unforeseen server type may do."""

    def __str__(self) -> str:
        raise RuntimeError("no text for this value")


# --- strategies ---------------------------------------------------------------------------------------------------

texts = st.one_of(
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=20),
    st.sampled_from(["\ud800", "a\udfffb", "\x00", "nul\x00inside", "", "Vibración"]),
)
offsets = st.sampled_from([None, UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))])
datetimes = st.one_of(
    st.builds(
        lambda d, tz: d.replace(tzinfo=tz), st.datetimes(min_value=datetime.min, max_value=datetime.max), offsets
    ),
    st.sampled_from(
        [
            ua.uatypes.FILETIME_EPOCH_AS_UTC_DATETIME,
            ua.uatypes.MAX_FILETIME_EPOCH_AS_UTC_DATETIME,
            T0,
            datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        ]
    ),
    st.builds(lambda s: utcnow() + timedelta(seconds=s), st.floats(-3e8, 3e8)),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
    datetimes,
    st.binary(max_size=16),
    st.builds(ua.LocalizedText, st.one_of(st.none(), texts)),
    st.builds(lambda i: ua.NodeId(i, 2), st.integers(0, 2**32 - 1)),
    st.just(ua.StatusCode(ua.StatusCodes.BadSensorFailure)),
    st.just(Unprintable()),
)
values = st.one_of(scalars, st.lists(scalars, max_size=4), st.lists(st.lists(scalars, max_size=3), max_size=3))
status_codes = st.one_of(st.none(), st.builds(ua.StatusCode, st.integers(0, 2**32 - 1)))
timestamps = st.one_of(st.none(), datetimes)


def variant(value: Any) -> ua.Variant:
    """A Variant holding `value` as decoded, without asyncua's type guess (which refuses what a server can send)."""
    v = ua.Variant(0.0)
    object.__setattr__(v, "Value", value)
    return v


data_values = st.builds(
    lambda value, status, source, server: ua.DataValue(
        variant(value), StatusCode=status, SourceTimestamp=source, ServerTimestamp=server
    ),
    values,
    status_codes,
    timestamps,
    timestamps,
)
# Each field usually of its own type, sometimes anything, sometimes missing.
event_fields = st.fixed_dictionaries(
    {},
    optional={
        "EventId": st.one_of(st.binary(min_size=1, max_size=16), scalars),
        "Time": st.one_of(datetimes, scalars),
        "ReceiveTime": st.one_of(datetimes, scalars),
        "Severity": st.one_of(st.integers(0, 1000), scalars),
        "SourceName": st.one_of(texts, scalars),
        "Message": st.one_of(st.builds(ua.LocalizedText, texts), scalars),
        "ConditionName": st.one_of(texts, scalars),
        "ActiveState/Id": st.one_of(st.booleans(), scalars),
    },
)


def make_event(fields: dict[str, Any]) -> Event:
    """An event as a subscription decodes it: a missing value is a Null Variant. The conversion reads values, not
    their VariantType; Double is one asyncua does not check against the value."""
    event = Event()
    for name, value in fields.items():
        event.add_property(name, value, ua.VariantType.Null if value is None else ua.VariantType.Double)
    return event


# --- the store every property writes into -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store(tmp_path_factory.mktemp("boundary") / "store.sqlite3") as s:
        yield s


def assert_stored_as_converted(store: Store, record: Record) -> None:
    """The record survives the store unchanged, and its value is JSON without NaN or Infinity."""
    json.dumps(record.value, allow_nan=False).encode("utf-8")
    assert store.insert_records([record]).count == 1
    [back] = store.records(keys=[record.key], kinds=[record.kind], sources=[record.source])
    assert (back.value, back.source_time, back.quality, back.idempotency_key, back.historical) == (
        record.value,
        record.source_time,
        record.quality,
        record.idempotency_key,
        record.historical,
    )


def assert_quarantinable(store: Store, refused: Refused) -> None:
    assert refused.reason in REASONS and refused.detail
    assert isinstance(refused.raw, bytes)
    store.quarantine("plc", refused.topic, refused.raw, refused.reason)


# --- properties ---------------------------------------------------------------------------------------------------


class TestConvertValueProperty:
    @given(dv=data_values, historical=st.booleans())
    @example(dv=ua.DataValue(variant(float("nan")), SourceTimestamp=T0), historical=False)
    @example(dv=ua.DataValue(variant("\ud800"), SourceTimestamp=T0), historical=False)
    def test_any_data_value_becomes_a_stored_record_or_a_quarantine_row(
        self, store: Store, dv: ua.DataValue, historical: bool
    ) -> None:
        """convert_value never raises: a record reads back from the store as converted, or a row is quarantined."""
        tag = f"T-{uuid.uuid4().hex}"
        converted = convert_value("plc", tag, dv, historical=historical)
        if isinstance(converted, Record):
            assert converted.key == tag and converted.historical is historical
            assert_stored_as_converted(store, converted)
        else:
            assert converted.topic == f"opcua/plc/{tag}"
            assert_quarantinable(store, converted)


class TestConvertEventProperty:
    @given(fields=event_fields, historical=st.booleans())
    def test_any_event_becomes_a_stored_alarm_or_a_quarantine_row(
        self, store: Store, fields: dict[str, Any], historical: bool
    ) -> None:
        """convert_event never raises, whatever fields an event has or lacks."""
        fields = {**fields, "EventId": uuid.uuid4().bytes} if "EventId" not in fields else fields
        converted = convert_event("plc", make_event(fields), historical=historical)
        if isinstance(converted, Record):
            assert converted.kind == "alarm" and converted.historical is historical
            json.dumps(converted.value, allow_nan=False).encode("utf-8")
            inserted = store.insert_records([converted])  # generated EventIds may repeat
            [held] = [r for r in store.records(kinds=["alarm"]) if r.idempotency_key == converted.idempotency_key]
            same = (held.value, held.source_time, held.key) == (converted.value, converted.source_time, converted.key)
            # New: stored as converted. Its EventId held already: a redelivery if the fields agree, else reused.
            assert (inserted.count, inserted.reused) == ((1, ()) if inserted.count else (0, () if same else (0,)))
            assert same or inserted.reused
        else:
            assert converted.topic == "opcua/plc/events"
            assert_quarantinable(store, converted)


# --- named cases --------------------------------------------------------------------------------------------------


def value_of(value: Any, **dv: Any) -> Record | Refused:
    return convert_value("plc", VIB, ua.DataValue(variant(value), **({"SourceTimestamp": T0} | dv)), historical=False)


class TestValueDomains:
    @pytest.mark.parametrize(("number", "text"), [(math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity")])
    def test_non_finite_float_is_stored_as_its_name_and_uncertain(self, number: float, text: str) -> None:
        """NaN and ±Infinity are stored as the strings "NaN", "Infinity", "-Infinity" with quality uncertain."""
        record = value_of(number)
        assert isinstance(record, Record)
        assert (record.value, record.quality) == (text, "uncertain")

    def test_non_finite_float_keeps_a_bad_status_quality(self) -> None:
        """A NaN the server already marked bad stays bad."""
        record = value_of(math.nan, StatusCode=ua.StatusCode(ua.StatusCodes.BadSensorFailure))
        assert isinstance(record, Record) and (record.value, record.quality) == ("NaN", "bad")

    def test_non_finite_inside_an_array_marks_it_uncertain(self) -> None:
        """An array with one NaN keeps its other numbers and is uncertain."""
        record = value_of([1.5, math.nan])
        assert isinstance(record, Record) and (record.value, record.quality) == ([1.5, "NaN"], "uncertain")

    def test_integer_beyond_int64_is_stored_as_exact_decimal_text(self) -> None:
        """A UInt64 near its top is kept digit for digit as a string; one within int64 stays a number."""
        assert value_of(2**64 - 1).value == "18446744073709551615"  # type: ignore[union-attr]
        assert value_of(2**63 - 1).value == 2**63 - 1  # type: ignore[union-attr]

    def test_lone_surrogate_is_quarantined_as_schema_mismatch(self) -> None:
        """A string with a lone surrogate cannot be UTF-8: it is refused with the index."""
        refused = value_of("ab\ud800")
        assert isinstance(refused, Refused)
        assert (refused.reason, refused.detail) == ("schema_mismatch", "string: lone surrogate at index 2")

    def test_nul_in_a_string_is_kept(self, store: Store) -> None:
        """A NUL is valid text: stored and read back unchanged."""
        record = convert_value("plc", "T-nul", ua.DataValue(variant("a\x00b"), SourceTimestamp=T0), historical=False)
        assert isinstance(record, Record) and record.value == "a\x00b"
        assert_stored_as_converted(store, record)

    def test_null_source_time_falls_back_to_server_time(self) -> None:
        """OPC UA's DateTime 0 (1601-01-01) means no source time: the server timestamp is used."""
        record = value_of(1.0, SourceTimestamp=ua.uatypes.FILETIME_EPOCH_AS_UTC_DATETIME, ServerTimestamp=T0)
        assert isinstance(record, Record) and record.source_time == T0

    @pytest.mark.parametrize(
        "when",
        [
            datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
            datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-1))),
        ],
    )
    def test_source_time_outside_utc_range_is_quarantined(self, when: datetime) -> None:
        """A timestamp that overflows when converted to UTC is refused, not raised."""
        refused = value_of(1.0, SourceTimestamp=when)
        assert isinstance(refused, Refused)
        assert (refused.reason, refused.detail) == ("schema_mismatch", f"timestamp {when!r} cannot be expressed in UTC")

    @pytest.mark.parametrize(
        "when",
        [datetime(1999, 12, 31, 23, 59, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)],
    )
    def test_implausible_source_time_is_quarantined(self, when: datetime) -> None:
        """Source times before 2000 or more than a day ahead are refused, naming the time and the bound."""
        refused = value_of(1.0, SourceTimestamp=when)
        assert isinstance(refused, Refused)
        assert refused.reason == "schema_mismatch"
        assert re.fullmatch(
            rf"source time {re.escape(when.isoformat())} is (before time_min 2000-01-01T00:00:00\+00:00"
            r"|more than time_max_future_s 86400 after the receive time .*)",
            refused.detail,
        )

    def test_a_source_sets_its_own_plausible_times(self) -> None:
        """[[opcua.sources]] time_min and time_max_future_s move the window, as [mqtt]'s do."""
        config = OpcuaSourceConfig(name="plc", endpoint="opc.tcp://h:4840", time_min="2020-03-03T00:00:00Z")
        times = PlausibleTimes(config.time_min, timedelta(seconds=config.time_max_future_s))
        dv = ua.DataValue(ua.Variant(1.0, ua.VariantType.Double), SourceTimestamp=T0)
        refused = convert_value("plc", VIB, dv, historical=False, times=times)
        assert isinstance(refused, Refused)
        assert refused.detail == ("source time 2020-03-02T06:00:00+00:00 is before time_min 2020-03-03T00:00:00+00:00")
        assert isinstance(convert_value("plc", VIB, dv, historical=False), Record)

    def test_unforeseen_failure_is_an_internal_error_naming_its_type(self) -> None:
        """A value whose conversion fails unexpectedly is quarantined as internal_error with the exception type."""
        refused = value_of(Unprintable())
        assert isinstance(refused, Refused)
        assert (refused.reason, refused.detail) == ("internal_error", "RuntimeError: no text for this value")
        assert refused.raw.startswith(b"DataValue(")  # no binary encoding for it: its repr is the evidence

    def test_refused_value_keeps_its_binary_encoding(self) -> None:
        """A refused value that encodes is kept as OPC UA binary, decodable back to the same DataValue."""
        dv = ua.DataValue(ua.Variant(1.0), SourceTimestamp=datetime(1990, 1, 1, tzinfo=UTC))
        refused = convert_value("plc", VIB, dv, historical=False)
        assert isinstance(refused, Refused)
        assert ua.ua_binary.struct_from_binary(ua.DataValue, ua.utils.Buffer(refused.raw)).Value.Value == 1.0


class TestEventDomains:
    def test_event_without_fields_is_an_alarm_of_an_unknown_asset(self) -> None:
        """An event lacking every field is stored: asset "unknown", severity 0, empty message and condition."""
        record = convert_event("plc", make_event({}), historical=True)
        assert isinstance(record, Record) and (record.key, record.historical) == ("unknown", True)
        assert record.value == {"event_id": "", "message": "", "severity": 0, "condition": "", "active": None}

    @pytest.mark.parametrize(
        ("fields", "detail"),
        [
            ({"Severity": "high"}, "event Severity 'high' is not an integer in 0..1000"),
            ({"Severity": 70000}, "event Severity 70000 is not an integer in 0..1000"),
            ({"ActiveState/Id": 1}, "event ActiveState/Id 1 is not a Boolean"),
            ({"SourceName": "P-\udc00"}, "string: lone surrogate at index 2"),
            ({"Time": "yesterday"}, "timestamp 'yesterday' is a str, not a DateTime"),
        ],
    )
    def test_odd_field_is_quarantined_as_schema_mismatch(self, fields: dict[str, Any], detail: str) -> None:
        """An event field outside its type or range refuses the event with a detail naming the field."""
        refused = convert_event("plc", make_event({"EventId": b"\x01", "Time": T0} | fields), historical=False)
        assert isinstance(refused, Refused) and (refused.reason, refused.detail) == ("schema_mismatch", detail)

    def test_history_fields_that_do_not_match_the_clauses_are_an_internal_error(self) -> None:
        """An event field list shorter than the select clauses is quarantined, with the list as evidence."""
        clause = ua.SimpleAttributeOperand()
        clause.BrowsePath = [ua.QualifiedName("Severity", 0)]
        fields = ua.HistoryEventFieldList()
        fields.EventFields = []
        refused = convert_history_event("plc", [clause, clause], fields)
        assert isinstance(refused, Refused)
        assert (refused.reason, refused.detail) == ("internal_error", "IndexError: list index out of range")


class TestGapRecord:
    def test_gap_record_follows_the_data_gap_contract(self) -> None:
        """A data_gap record: key the tag, source time its start, value start/end/reason/source/tag, historical."""
        gap = gap_record("plc", VIB, T0, T0 + timedelta(minutes=5), "history_unavailable")
        assert (gap.kind, gap.key, gap.source, gap.source_time, gap.historical) == ("data_gap", VIB, "plc", T0, True)
        assert gap.value == {
            "start": "2020-03-02T06:00:00+00:00",
            "end": "2020-03-02T06:05:00+00:00",
            "reason": "history_unavailable",
            "source": "plc",
            "tag": VIB,
        }

    def test_event_gap_is_keyed_by_the_source(self) -> None:
        """A gap in the event history has the source name as key, no tag, and may be open-ended."""
        gap = gap_record("plc", None, T0, None, "event_history_unavailable")
        assert (gap.key, gap.value["tag"], gap.value["end"]) == ("plc", None, None)

    def test_same_gap_has_the_same_key_and_another_reason_another(self) -> None:
        """The idempotency key is (source, tag, start, end, reason): found twice, stored once."""
        end = T0 + timedelta(seconds=1)
        first = gap_record("plc", VIB, T0, end, "queue_overflow")
        assert first.idempotency_key == gap_record("plc", VIB, T0, end, "queue_overflow").idempotency_key
        assert first.idempotency_key != gap_record("plc", VIB, T0, end, "history_unavailable").idempotency_key

    def test_unknown_reason_is_refused(self) -> None:
        """Only the four documented reasons exist."""
        with pytest.raises(ValueError, match="gap reason 'lost' is not one of"):
            gap_record("plc", VIB, T0, None, "lost")


class TestOverflowBit:
    @pytest.mark.parametrize(
        ("code", "expected"),
        [
            (0x00000480, True),  # Good, InfoType DataValue, Overflow
            (0x40000480, True),  # Uncertain with the same info bits
            (0x00000080, False),  # Overflow bit without InfoType DataValue means nothing
            (0x00000400, False),  # InfoType DataValue, no overflow
            (0x00000000, False),
        ],
    )
    def test_overflow_needs_the_data_value_info_type(self, code: int, expected: bool) -> None:
        """The Overflow bit counts only with InfoType DataValue (OPC 10000-4 §7.39.1)."""
        assert overflowed(ua.StatusCode(code)) is expected


@pytest.mark.opcua
class TestLiveIsolation:
    async def test_bad_value_is_quarantined_and_the_values_around_it_stored(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """A value stamped far in the future is quarantined and counted; the values before and after are stored."""
        before = QUARANTINED.labels("plc", "schema_mismatch")._value.get()
        config = source_config(opcua_server.endpoint, [VIB])
        async with running_source(config, tmp_path / "agent") as agent:
            await opcua_server.write({VIB: 1.0}, T0)
            await opcua_server.write({VIB: 2.0}, datetime(9000, 1, 1, tzinfo=UTC))
            await opcua_server.write({VIB: math.nan}, T0 + timedelta(seconds=2))
            await wait_until(lambda: any(r.value == "NaN" for r in agent.tag_values(VIB)), what="the NaN value")
            # Records commit before the batch's quarantine rows: wait for the row too.
            await wait_until(lambda: bool(agent.store.quarantined()), what="the quarantine row")
            stored = [
                (r.source_time, r.value, r.quality)
                for r in agent.tag_values(VIB)
                if r.source_time < T0 + timedelta(days=1)
            ]
            quarantined = agent.store.quarantined()
        assert stored == [(T0, 1.0, "good"), (T0 + timedelta(seconds=2), "NaN", "uncertain")]
        assert [(q.source, q.topic, q.reason) for q in quarantined] == [("plc", f"opcua/plc/{VIB}", "schema_mismatch")]
        assert QUARANTINED.labels("plc", "schema_mismatch")._value.get() == before + 1
