"""The MQTT ingest boundary: whatever the bytes, parsing raises only ParseError, and every record it returns is one
a real store keeps and gives back unchanged. Properties (Hypothesis) over arbitrary payloads, JSON documents and
times; named cases for each value-domain rule (docs/records.md, "Value domains")."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from edge_agent.base.types import Record
from edge_agent.base.values import INT64_MAX, INT64_MIN, ValueDomainError, check_json_domain
from edge_agent.config.mqtt import MqttConfig, RouteConfig
from edge_agent.connectors.mqtt import MqttMessage
from edge_agent.connectors.mqtt.ingest import split_reused_ids
from edge_agent.connectors.mqtt.parsers import (
    DEFAULT_LIMITS,
    InputLimits,
    JsonParser,
    ParseError,
    QuarantineReason,
    TextParser,
)
from edge_agent.connectors.mqtt.routes import RouteTable
from edge_agent.store import Store

RECEIVED = datetime(2026, 11, 29, 7, 0, tzinfo=UTC)
ROUTES = [
    RouteConfig(topic="plant/+/mes/#", parser="json", kind="mes_event", required=["ts", "type"]),
    RouteConfig(topic="plant/+/log/#", parser="text", kind="log_line"),
    RouteConfig(topic="plant/+/raw/#", parser="json", kind="raw_event"),  # no required fields, default mapping
]
TABLE = RouteTable.from_config(ROUTES, max_payload_bytes=256 * 1024)
TOPICS = ["plant/s1/mes/a", "plant/s1/log/a", "plant/s1/raw/a", "elsewhere/x"]
ASSESSOR_TIMES = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Iterator[Path]]:
    """Fresh store paths (one per example: ~7 ms each, and no key collides with an earlier example's)."""
    root = tmp_path_factory.mktemp("stores")
    yield (root / f"store-{i}.sqlite3" for i in itertools.count())


def assert_round_trips(record: Record, path: Path) -> None:
    """The record is inserted into a real store and read back with every field equal."""
    with Store(path) as store:
        assert store.insert_records([record]).count == 1
        [back] = store.records()
    assert back.model_dump(exclude={"id"}) == record.model_dump()
    path.unlink()


def parse_json(payload: bytes | str, limits: InputLimits = DEFAULT_LIMITS, topic: str = "plant/s1/mes/a") -> Record:
    data = payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else payload
    return JsonParser("mes_event", {}, ["ts"], limits=limits).parse(topic, data, RECEIVED)


def refusal(payload: bytes | str, limits: InputLimits = DEFAULT_LIMITS) -> ParseError:
    with pytest.raises(ParseError) as err:
        parse_json(payload, limits)
    return err.value


def limits(**overrides: Any) -> InputLimits:
    return InputLimits.from_config(MqttConfig(**overrides))


def mes(**fields: Any) -> str:
    return json.dumps({"ts": "2026-11-29T06:15:00Z", "type": "x", **fields})


# --- strategies ------------------------------------------------------------------------------------------------------

# Any code point, lone surrogates included (they reach us as "\ud800" escapes, or as invalid UTF-8 when raw).
characters = st.characters(codec=None) | st.characters(categories=["Cs"])
strings = st.text(characters, max_size=20)
# Integers around every edge that matters (64-bit, 2**64, beyond), and plain ones.
integers = (
    st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([INT64_MIN - 1, INT64_MIN, INT64_MAX, INT64_MAX + 1, 2**64, -(2**64)])
)
floats = st.floats(allow_nan=False)  # infinities render as 1e400 (below); NaN has no JSON spelling
scalars = st.none() | st.booleans() | integers | floats | strings


def nested(leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaf,
        lambda children: st.lists(children, max_size=4) | st.dictionaries(strings, children, max_size=4),
        max_leaves=12,
    )


@st.composite
def deep(draw: st.DrawFn) -> Any:
    """A value wrapped in up to 40 levels of arrays/objects, around the default max_json_depth of 32."""
    value = draw(nested(scalars))
    for _ in range(draw(st.integers(0, 40))):
        value = [value] if draw(st.booleans()) else {draw(strings): value}
    return value


def render(value: Any) -> str:
    """JSON text for `value`, spelling infinities as 1e400 (what a publisher sends; Python's json decodes it to inf)."""
    if isinstance(value, float) and math.isinf(value):
        return "1e400" if value > 0 else "-1e400"
    if isinstance(value, list):
        return "[" + ",".join(render(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{render(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)  # ensure_ascii: a lone surrogate becomes its \udXXX escape


# ISO-8601-shaped times at every year and offset, including those UTC cannot hold, and arbitrary text.
iso_times = st.builds(
    lambda when, offset, sep: when.isoformat(sep=sep) + offset,
    st.datetimes(),
    st.sampled_from(["", "Z", "+00:00", "+01:00", "-01:00", "+14:00", "-12:00", "+23:59", "-23:59"]),
    st.sampled_from(["T", " "]),
)
times = iso_times | st.sampled_from(ASSESSOR_TIMES) | strings


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A MES-like JSON text: maybe ts/id/asset/type (well or badly typed), plus arbitrary nested content."""
    fields: dict[str, Any] = draw(st.dictionaries(strings, deep(), max_size=3))
    for name, strategy in (
        ("ts", times | scalars),
        ("id", strings | integers),
        ("asset", strings | scalars),
        ("type", strings),
    ):
        if draw(st.booleans()):
            fields[name] = draw(strategy)
    return render(fields)


# --- properties ------------------------------------------------------------------------------------------------------


class TestBoundaryProperties:
    @settings(max_examples=200)  # a store round trip per accepted example
    @given(topic=st.sampled_from(TOPICS), payload=st.binary(max_size=300))
    def test_arbitrary_bytes_raise_only_parse_error(self, stores: Iterator[Path], topic: str, payload: bytes) -> None:
        """Any payload on any route is a record the store keeps unchanged, or a ParseError."""
        try:
            record = TABLE.parse(topic, payload, RECEIVED)
        except ParseError as error:
            event(error.reason)  # --hypothesis-show-statistics shows how the examples split
            return
        event("stored")
        assert_round_trips(record, next(stores))

    @settings(max_examples=300)
    @given(text=documents(), ascii_only=st.booleans())
    def test_arbitrary_documents_raise_only_parse_error(
        self, stores: Iterator[Path], text: str, ascii_only: bool
    ) -> None:
        """Any JSON document (huge numbers, surrogates, deep nesting, odd times) is a storable record or a
        ParseError."""
        payload = text.encode("ascii") if ascii_only else text.encode("utf-8", "surrogatepass")
        try:
            record = TABLE.parse("plant/s1/raw/a", payload, RECEIVED)
        except ParseError as error:
            assert error.reason in {
                QuarantineReason.INVALID_JSON,
                QuarantineReason.INVALID_UTF8,
                QuarantineReason.SCHEMA_MISMATCH,
            }
            event(error.reason)
            return
        event("stored")
        assert_round_trips(record, next(stores))

    @given(ts=times)
    @example(ts=ASSESSOR_TIMES[0])
    @example(ts=ASSESSOR_TIMES[1])
    def test_any_time_is_a_plausible_source_time_or_schema_mismatch(self, ts: str) -> None:
        """A `ts` becomes a source time within [time_min, receive + time_max_future_s], or a schema_mismatch."""
        try:
            record = parse_json(json.dumps({"ts": ts, "type": "x"}))
        except ParseError as error:
            assert error.reason is QuarantineReason.SCHEMA_MISMATCH
            return
        assert DEFAULT_LIMITS.time_min <= record.source_time <= RECEIVED + DEFAULT_LIMITS.time_max_future

    @settings(max_examples=300)
    @given(stamp=times, rest=strings)
    def test_any_log_line_is_kept_or_refused_as_empty(self, stores: Iterator[Path], stamp: str, rest: str) -> None:
        """A log line with any leading time is a storable record timed plausibly, or a ParseError."""
        payload = f"{stamp} {rest}".encode("utf-8", "surrogatepass")
        try:
            record = TextParser("log_line").parse("plant/s1/log/a", payload, RECEIVED)
        except ParseError:
            return
        assert DEFAULT_LIMITS.time_min <= record.source_time <= RECEIVED + DEFAULT_LIMITS.time_max_future
        assert_round_trips(record, next(stores))

    @given(value=deep())
    def test_domain_check_raises_only_value_domain_error(self, value: Any) -> None:
        """check_json_domain accepts a value or raises ValueDomainError whose path is valid UTF-8."""
        try:
            check_json_domain(value, max_depth=32, max_string_chars=1000)
        except ValueDomainError as error:
            str(error).encode("utf-8")


# --- named cases -----------------------------------------------------------------------------------------------------


class TestSourceTimeDomain:
    @pytest.mark.parametrize("ts", ASSESSOR_TIMES)
    def test_assessor_times_are_schema_mismatch(self, ts: str) -> None:
        """The two times that crash-looped ingest (no UTC equivalent) are refused, naming the field."""
        error = refusal(mes(ts=ts))
        assert error.reason is QuarantineReason.SCHEMA_MISMATCH
        assert error.detail == f"ts: {ts!r} is outside the representable time range"

    def test_time_before_time_min_is_refused(self) -> None:
        """A time one second before time_min is refused."""
        error = refusal(mes(ts="1999-12-31T23:59:59Z"))
        assert error.detail == "ts: 1999-12-31T23:59:59+00:00 is before time_min 2000-01-01T00:00:00+00:00"

    def test_time_at_time_min_is_accepted(self) -> None:
        """time_min itself is a plausible time."""
        assert parse_json(mes(ts="2000-01-01T00:00:00Z")).source_time == datetime(2000, 1, 1, tzinfo=UTC)

    def test_time_beyond_the_future_limit_is_refused(self) -> None:
        """A time one second beyond receive time + time_max_future_s is refused."""
        error = refusal(mes(ts="2026-11-30T07:00:01Z"))
        assert error.detail == (
            "ts: 2026-11-30T07:00:01+00:00 is more than time_max_future_s 86400 after the receive time"
            " 2026-11-29T07:00:00+00:00"
        )

    def test_time_at_the_future_limit_is_accepted(self) -> None:
        """Exactly receive time + time_max_future_s is accepted."""
        assert parse_json(mes(ts="2026-11-30T07:00:00Z")).source_time == RECEIVED + timedelta(days=1)

    def test_configured_limits_apply(self) -> None:
        """[mqtt] time_min and time_max_future_s move the plausible range."""
        narrow = limits(time_min="2026-01-01T00:00:00Z", time_max_future_s=60)
        assert refusal(mes(ts="2025-12-31T23:59:59Z"), narrow).reason is QuarantineReason.SCHEMA_MISMATCH
        assert refusal(mes(ts="2026-11-29T07:01:01Z"), narrow).reason is QuarantineReason.SCHEMA_MISMATCH
        assert parse_json(mes(ts="2026-11-29T07:01:00Z"), narrow).source_time == RECEIVED + timedelta(seconds=60)

    def test_mapped_time_path_is_named(self) -> None:
        """A custom source_time mapping is named by its dotted path in the detail."""
        parser = JsonParser("mes_event", {"source_time": "meta.time"}, [])
        with pytest.raises(ParseError) as err:
            parser.parse("t", b'{"meta": {"time": "1970-01-01T00:00:00Z"}}', RECEIVED)
        assert err.value.detail.startswith("meta.time: 1970-01-01T00:00:00+00:00 is before time_min")

    @pytest.mark.parametrize("stamp", [*ASSESSOR_TIMES, "1999-12-31T23:59:59Z", "2099-01-01T00:00:00Z"])
    def test_implausible_leading_time_keeps_the_whole_log_line(self, stamp: str) -> None:
        """A log line whose leading time is implausible is kept whole as text, timed on receipt (nothing lost)."""
        line = f"{stamp} ana: cambio de sello"
        record = TextParser("log_line").parse("plant/s1/log/a", line.encode(), RECEIVED)
        assert (record.value, record.source_time) == ({"text": line}, RECEIVED)


class TestNumberDomain:
    @pytest.mark.parametrize(("literal", "shown"), [("1e400", "inf"), ("-1e400", "-inf")])
    def test_overflowing_float_is_refused(self, literal: str, shown: str) -> None:
        """`1e400` decodes to inf in Python's json; it is refused with its path."""
        error = refusal('{"ts": "2026-11-29T06:15:00Z", "data": {"v": [' + literal + "]}}")
        assert (error.reason, error.detail) == (
            QuarantineReason.SCHEMA_MISMATCH,
            f"data.v[0]: number is not finite ({shown})",
        )

    def test_underflowing_float_is_zero(self) -> None:
        """`1e-400` is a finite number (0.0), accepted."""
        assert parse_json('{"ts": "2026-11-29T06:15:00Z", "v": 1e-400}').value["v"] == 0.0

    @pytest.mark.parametrize("number", [2**64, INT64_MAX + 1, INT64_MIN - 1, -(2**64)])
    def test_integer_beyond_64_bits_is_refused(self, number: int) -> None:
        """An integer outside the signed 64-bit range is refused with its path."""
        assert refusal(mes(count=number)).detail == "count: integer outside the signed 64-bit range"

    @pytest.mark.parametrize("number", [INT64_MAX, INT64_MIN])
    def test_integer_at_64_bit_edges_is_accepted(self, number: int) -> None:
        """The signed 64-bit extremes are accepted."""
        assert parse_json(mes(count=number)).value["count"] == number

    def test_integer_beyond_the_decoders_digit_limit_is_invalid_json(self) -> None:
        """An integer of more than 4300 digits is refused by the decoder itself (invalid_json)."""
        assert refusal(mes(count=0).replace("0}", "9" * 5000 + "}")).reason is QuarantineReason.INVALID_JSON


class TestStringDomain:
    def test_lone_surrogate_in_a_string_is_refused(self) -> None:
        """A `\\ud800` escape in a value is refused, naming the field and the code point."""
        error = refusal('{"ts": "2026-11-29T06:15:00Z", "text": "ab\\ud800"}')
        assert (error.reason, error.detail) == (
            QuarantineReason.SCHEMA_MISMATCH,
            "text: string has a lone surrogate U+D800 at index 2",
        )

    def test_lone_surrogate_in_a_key_is_refused(self) -> None:
        """A lone surrogate in an object key is refused; the path shows it escaped."""
        error = refusal('{"ts": "2026-11-29T06:15:00Z", "a": {"\\udfff": 1}}')
        assert error.detail == "a.\\udfff: object key has a lone surrogate U+DFFF at index 0"

    def test_surrogate_pair_is_accepted(self) -> None:
        """A correct surrogate pair escape is one astral character, accepted."""
        assert parse_json('{"ts": "2026-11-29T06:15:00Z", "t": "\\ud83d\\ude00"}').value["t"] == "\U0001f600"

    def test_string_over_max_string_chars_is_refused(self) -> None:
        """A string one character over max_string_chars is refused; at the limit it is accepted."""
        small = limits(max_string_chars=30)  # the ts field itself is 20 characters
        assert refusal(mes(text="x" * 31), small).detail == "text: string of 31 characters exceeds max_string_chars 30"
        assert parse_json(mes(text="x" * 30), small).value["text"] == "x" * 30

    def test_key_over_max_string_chars_is_refused(self) -> None:
        """An object key over max_string_chars is refused; the path shows it cut short."""
        error = refusal(mes(**{"k" * 100: 1}), limits(max_string_chars=50))
        assert error.detail == f"{'k' * 64}…: object key of 100 characters exceeds max_string_chars 50"

    def test_log_line_over_max_string_chars_is_refused(self) -> None:
        """A text-route line longer than max_string_chars is refused as schema_mismatch."""
        with pytest.raises(ParseError) as err:
            TextParser("log_line", limits=limits(max_string_chars=10)).parse("t", b"x" * 11, RECEIVED)
        assert (err.value.reason, err.value.detail) == (
            QuarantineReason.SCHEMA_MISMATCH,
            "text: line of 11 characters exceeds max_string_chars 10",
        )


class TestDepthDomain:
    def test_depth_at_max_json_depth_is_accepted(self) -> None:
        """A document nested exactly max_json_depth deep (the document itself is level 1) is accepted."""
        assert parse_json('{"ts": "2026-11-29T06:15:00Z", "a": [[[0]]]}', limits(max_json_depth=4)).value["a"] == [
            [[0]]
        ]

    def test_one_level_deeper_is_refused(self) -> None:
        """One level beyond max_json_depth is refused, naming the path to the container that is too deep."""
        error = refusal('{"ts": "2026-11-29T06:15:00Z", "a": [[[[0]]]]}', limits(max_json_depth=4))
        assert error.detail == "a[0][0][0]: nesting deeper than max_json_depth 4"

    @pytest.mark.parametrize("levels", [10_000, 100_000])
    def test_very_deep_input_is_schema_mismatch(self, levels: int) -> None:
        """10k and 100k levels (beyond the decoder's recursion limit) are schema_mismatch, not a RecursionError."""
        error = refusal("[" * levels + "]" * levels)
        assert (error.reason, error.detail) == (
            QuarantineReason.SCHEMA_MISMATCH,
            "(document): nesting deeper than max_json_depth 32",
        )

    def test_unterminated_deep_input_is_schema_mismatch(self) -> None:
        """100k opening brackets and nothing else are refused, not a crash."""
        assert refusal("[" * 100_000).reason is QuarantineReason.SCHEMA_MISMATCH


class TestCheckJsonDomain:
    def test_valid_document_passes(self) -> None:
        """A document within every domain returns None."""
        document = {"a": [1, -2.5, None, True, "é"], "b": {"c": INT64_MAX}}
        assert check_json_domain(document, max_depth=3, max_string_chars=10) is None

    def test_first_violation_in_document_order_is_reported(self) -> None:
        """With several violations, the one first in the document is reported."""
        with pytest.raises(ValueDomainError) as err:
            check_json_domain({"a": [1, math.inf], "b": 2**64}, max_depth=8, max_string_chars=10)
        assert (err.value.path, err.value.reason) == ("a[1]", "number is not finite (inf)")

    def test_root_violation_has_empty_path(self) -> None:
        """A scalar document outside its domain is reported at path "" (shown as "(document)")."""
        with pytest.raises(ValueDomainError) as err:
            check_json_domain(math.inf, max_depth=8, max_string_chars=10)
        assert (err.value.path, str(err.value)) == ("", "(document): number is not finite (inf)")

    def test_non_json_type_is_refused(self) -> None:
        """A value json.loads never returns (bytes) is refused."""
        with pytest.raises(ValueDomainError) as err:
            check_json_domain({"a": b"x"}, max_depth=8, max_string_chars=10)
        assert str(err.value) == "a: bytes is not a JSON value"

    def test_deep_value_does_not_recurse(self) -> None:
        """The walk is iterative: a value nested 5000 levels deep (beyond Python's recursion limit) is walked."""
        value: Any = 2**64
        for _ in range(5000):
            value = [value]
        with pytest.raises(ValueDomainError) as err:
            check_json_domain(value, max_depth=10_000, max_string_chars=10)
        assert (err.value.path, err.value.reason) == ("[0]" * 5000, "integer outside the signed 64-bit range")


class TestParseErrorDetail:
    def test_long_detail_is_cut(self) -> None:
        """A detail over DETAIL_MAX_CHARS is cut and says how long it was."""
        error = ParseError(QuarantineReason.SCHEMA_MISMATCH, "x" * 1000)
        assert error.detail == "x" * 300 + "… (1000 chars)"

    def test_detail_with_a_lone_surrogate_is_encodable(self) -> None:
        """A detail quoting a lone surrogate carries it escaped, so logs and audit entries can encode it."""
        assert ParseError(QuarantineReason.INTERNAL_ERROR, "bad \ud800").detail == "bad \\ud800"


class TestReusedIds:
    """A message id stored before: the same bytes again are a redelivery (skipped), other bytes an id reused for other
    content (refused as `duplicate_id`), so no message is ever dropped without a trace."""

    @settings(max_examples=60, deadline=None)
    @given(
        st.lists(
            st.tuples(st.sampled_from(["mes-1", "mes-2", "mes-3"]), st.integers(0, 3), st.integers(1, 4)),
            min_size=1,
            max_size=20,
        )
    )
    def test_every_message_is_stored_a_redelivery_or_quarantined_by_the_first_content_per_id(
        self, stores: Iterator[Path], stream: list[tuple[str, int, int]]
    ) -> None:
        """Messages (id, content) committed in batches of any size, as the ingest commits them."""

        def message(msg_id: str, count: int) -> MqttMessage:
            doc = {"id": msg_id, "ts": "2026-11-29T06:15:00Z", "type": "production_count", "count": count}
            return MqttMessage("plant/s1/mes/a", json.dumps(doc).encode(), 1, False, 0, RECEIVED)

        first: dict[str, bytes] = {}
        path = next(stores)
        with Store(path) as store:
            i = 0
            while i < len(stream):
                batch = stream[i : i + stream[i][2]]
                i += len(batch)
                parsed = [(m, TABLE.parse(m.topic, m.payload, RECEIVED)) for m in (message(d, c) for d, c, _ in batch)]
                kept, reused = split_reused_ids(parsed, store.insert_records([r for _, r in parsed]).reused)
                assert len(kept) + len(reused) == len(parsed)
                assert all(e.reason is QuarantineReason.DUPLICATE_ID for _, e in reused)
                kept_ids = {id(m) for m, _ in kept}
                assert {id(m) for m, _ in reused} == {id(m) for m, _ in parsed} - kept_ids  # each in exactly one
                for m, _ in parsed:
                    stored = first.setdefault(json.loads(m.payload)["id"], m.payload)
                    assert (id(m) in kept_ids) == (m.payload == stored)
            assert sorted(r.raw for r in store.records()) == sorted(first.values())
        path.unlink()
