"""Report request boundaries under generated input: whatever the bytes, only RequestError escapes, and a reply topic
outside the requester's namespace is never accepted. Named regressions for what Hypothesis found are at the end."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any
from zoneinfo import available_timezones

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.base.topic_filter import topic_matches
from edge_agent.config.reports import ShiftConfig
from edge_agent.reports.document import parse_signoff
from edge_agent.reports.errors import RequestError
from edge_agent.reports.request import ReportRequest, parse_request, reply_fields, resolve
from edge_agent.reports.service.topics import reply_topic_refusal

TZ = "America/Mexico_City"
ZONES = sorted(available_timezones())
NOW = datetime(2026, 11, 30, 16, 0, tzinfo=UTC)
FIELDS = [
    "request_id",
    "type",
    "window",
    "scope",
    "language",
    "formats",
    "progress",
    "reply_to",
    "correlation_id",
    "start",
    "end",
    "shift",
    "date",
    "assets",
    "line",
    "area",
    "report_id",
    "decision",
    "comment",
    "by",
]

# JSON values, keys drawn mostly from the real field names so that generated documents reach the validators.
json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=20,
)
# Strings as JSON text may hold lone surrogates (`"\ud800"`): json.dumps writes them as escapes.
documents = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), json_values, max_size=8)
times = st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.timezones())
iso_times = times.map(lambda t: t.isoformat()) | st.text(max_size=30)
windows = st.fixed_dictionaries(
    {},
    optional={
        "start": iso_times,
        "end": iso_times,
        "shift": st.sampled_from(["A", "C", "Z", ""]) | st.text(max_size=70),
        "date": st.dates().map(date.isoformat) | st.text(max_size=12),
    },
)
near_valid = st.fixed_dictionaries(
    {
        "request_id": st.from_regex(r"[A-Za-z0-9_.:@-]{1,12}", fullmatch=True) | st.text(max_size=12),
        "type": st.sampled_from(["shift_summary", "alarm_summary", "downtime_analysis", "asset_history", "weekly"]),
        "window": windows,
    },
    optional={
        "scope": st.fixed_dictionaries(
            {}, optional={"assets": st.lists(st.text(max_size=10), max_size=3), "line": st.text(max_size=5)}
        ),
        "language": st.sampled_from(["es", "en", "pt", "fr"]),
        "formats": st.lists(st.text(max_size=8)),
        "progress": json_scalars,
        "reply_to": st.text(max_size=30),
        "correlation_id": st.text(max_size=30),
    },
)


@st.composite
def valid_documents(draw: st.DrawFn) -> dict[str, Any]:
    """Requests that pass validation: a shift (any date of the calendar, or none) or an explicit window of up to 31
    days anywhere in years 1-9999, in any UTC offset."""
    if draw(st.booleans()):
        window: dict[str, Any] = {"shift": draw(st.sampled_from(["A", "B", "C", "Z"]))}
        if draw(st.booleans()):
            window["date"] = draw(st.dates()).isoformat()
    else:
        start = draw(
            st.datetimes(
                min_value=datetime(1, 1, 2),
                max_value=datetime(9999, 11, 29),
                timezones=st.sampled_from(
                    [UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12, minutes=-30))]
                ),
            )
        )
        end = start + draw(st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=31)))
        window = {"start": start.isoformat(), "end": end.isoformat()}
    return {"request_id": "r-1", "type": draw(st.sampled_from(["shift_summary", "alarm_summary"])), "window": window}


hhmm = st.from_regex(r"\d{2}:\d{2}", fullmatch=True)
shift_calendars = st.lists(
    st.builds(ShiftConfig, name=st.sampled_from(["A", "B", "C"]), start=hhmm, end=hhmm), max_size=3
)


def as_bytes(document: Any) -> bytes:
    return json.dumps(document).encode()


class TestParseRequestProperties:
    @given(st.binary(max_size=300))
    def test_arbitrary_bytes_raise_only_request_error(self, raw: bytes) -> None:
        """Any bytes either parse into a request or raise RequestError naming a field."""
        try:
            assert isinstance(parse_request(raw), ReportRequest)
        except RequestError as exc:
            assert exc.field

    @given(json_values)
    def test_arbitrary_json_raises_only_request_error(self, value: Any) -> None:
        """Any JSON document, object or not, parses or raises RequestError."""
        try:
            parse_request(as_bytes(value))
        except RequestError as exc:
            assert exc.field

    @given(st.one_of(documents, near_valid))
    def test_error_replies_are_encodable_and_bounded(self, document: dict[str, Any]) -> None:
        """A RequestError's field and reason encode as UTF-8, and the field is at most 128 characters."""
        try:
            parse_request(as_bytes(document))
        except RequestError as exc:
            (exc.field + exc.reason).encode("utf-8")
            assert len(exc.field) <= 128

    @given(st.one_of(documents, near_valid, json_values))
    def test_signoff_raises_only_request_error(self, document: Any) -> None:
        """A sign-off payload parses or raises RequestError, like a request."""
        try:
            parse_signoff(as_bytes(document))
        except RequestError as exc:
            assert exc.field


class TestReplyFieldsProperties:
    @given(st.binary(max_size=300) | st.one_of(documents, near_valid, json_values).map(as_bytes))
    def test_never_raises_and_returns_echoable_strings(self, raw: bytes) -> None:
        """reply_fields always returns three str-or-None values that encode as UTF-8 and fit in 1024 characters."""
        fields = reply_fields(raw)
        assert len(fields) == 3
        for value in fields:
            assert value is None or (isinstance(value, str) and len(value) <= 1024)
            if value is not None:
                value.encode("utf-8")


class TestResolveProperties:
    @settings(max_examples=200)  # each example resolves in up to three time zones' worth of shift arithmetic
    @given(
        valid_documents(),
        shift_calendars,
        st.sampled_from(ZONES),
        st.datetimes(min_value=datetime(1, 1, 3), max_value=datetime(9999, 12, 29), timezones=st.just(UTC)),
    )
    def test_valid_requests_resolve_or_raise_request_error(
        self, document: dict[str, Any], shifts: list[ShiftConfig], zone: str, now: datetime
    ) -> None:
        """Every valid request resolves against any shift calendar, time zone and `now`, or raises RequestError;
        a resolved window is in UTC."""
        try:
            request = parse_request(as_bytes(document))
        except RequestError as exc:  # only an explicit window that leaves years 1-9999 in UTC
            assert exc.reason == "outside the years 1-9999 in UTC"
            return
        try:
            resolved = resolve(request, shifts=shifts, tz_name=zone, default_language="es", now=now)
        except RequestError as exc:
            assert exc.field.startswith("window")
            return
        assert resolved.window.start.utcoffset() == timedelta(0) == resolved.window.end.utcoffset()


NAMESPACE = "edge/demo/reports/reply/operator"
RESERVED = [
    "edge/demo/reports/request/#",
    "edge/demo/reports/signoff/#",
    "plant/demo/mes/#",
    "edge/demo/reports/reply/operator/in/+",
]
levels = st.sampled_from(
    [
        "edge",
        "demo",
        "reports",
        "reply",
        "operator",
        "supervisor",
        "anonymous",
        "request",
        "in",
        "x",
        "",
        "+",
        "#",
        "$SYS",
        "a\0b",
        "é",
    ]
) | st.text(max_size=6)
topics = (
    st.lists(levels, min_size=1, max_size=8).map("/".join)
    | st.text(max_size=40)
    | st.builds(lambda tail: f"{NAMESPACE}/{tail}", st.text(max_size=1100))
)


class TestReplyTopicRuleProperties:
    @given(topics)
    def test_an_accepted_topic_is_inside_the_namespace_and_reserves_nothing(self, topic: str) -> None:
        """A topic the rule accepts is the namespace or below it, plain (no wildcard, NUL, empty level), at most
        1024 UTF-8 bytes, and matches none of the agent's own filters."""
        if reply_topic_refusal(topic, NAMESPACE, RESERVED) is not None:
            return
        assert topic == NAMESPACE or topic.startswith(NAMESPACE + "/")
        assert not set(topic) & {"+", "#", "\0"} and "" not in topic.split("/")
        assert 0 < len(topic.encode("utf-8")) <= 1024
        assert not any(topic_matches(f, topic) for f in RESERVED)


def request(**overrides: Any) -> bytes:
    return as_bytes({"request_id": "r-1", "type": "shift_summary", "window": {"shift": "A"}, **overrides})


SHIFTS = [ShiftConfig(name="A", start="06:00", end="14:00")]


class TestRegressions:
    def test_deep_nesting_is_a_payload_error(self) -> None:
        """100 000 nested arrays (RecursionError inside json.loads) is an error on <payload>, not a crash."""
        with pytest.raises(RequestError) as info:
            parse_request(b'{"scope": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
        assert (info.value.field, info.value.reason) == ("<payload>", "nested more than 8 levels deep")

    def test_nesting_past_the_limit_names_the_path(self) -> None:
        """Nine levels of objects is refused at the eighth level's path."""
        with pytest.raises(RequestError) as info:
            parse_request(b'{"scope": {"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}}')
        assert (info.value.field, info.value.reason) == ("scope.a.b.c.d.e.f.g", "nesting deeper than max_json_depth 8")

    def test_lone_surrogate_names_the_field(self) -> None:
        """A correlation_id holding "\\ud800" cannot be echoed as UTF-8: an error on correlation_id."""
        with pytest.raises(RequestError) as info:
            parse_request(request(correlation_id="\ud800"))
        reason = "string has a lone surrogate U+D800 at index 0"
        assert (info.value.field, info.value.reason) == ("correlation_id", reason)

    def test_reply_fields_drops_a_lone_surrogate_but_keeps_the_rest(self) -> None:
        """reply_fields reads None for an unencodable correlation_id and still returns request_id and reply_to."""
        assert reply_fields(request(reply_to="r/1", correlation_id="\udfff")) == ("r-1", "r/1", None)

    def test_huge_integer_is_a_payload_error(self) -> None:
        """An integer of 5000 digits (ValueError in json.loads) is an error on <payload>."""
        with pytest.raises(RequestError) as info:
            parse_request(b'{"progress": ' + b"9" * 5000 + b"}")
        assert info.value.field == "<payload>"

    def test_start_beyond_year_9999_in_utc(self) -> None:
        """An end of 9999-12-31T23:00-05:00 is in year 10000 in UTC (OverflowError): an error on window.end."""
        with pytest.raises(RequestError) as info:
            parse_request(request(window={"start": "9999-12-31T20:00:00Z", "end": "9999-12-31T23:00:00-05:00"}))
        assert (info.value.field, info.value.reason) == ("window.end", "outside the years 1-9999 in UTC")

    def test_shift_on_the_last_day_of_the_calendar(self) -> None:
        """Shift C of 9999-12-31 would end in year 10000: resolve raises RequestError on window.date."""
        night = [ShiftConfig(name="C", start="22:00", end="06:00")]
        parsed = parse_request(request(window={"shift": "C", "date": "9999-12-31"}))
        with pytest.raises(RequestError) as info:
            resolve(parsed, shifts=night, tz_name=TZ, default_language="es", now=NOW)
        assert info.value.field == "window.date"

    def test_shift_on_the_first_day_east_of_utc(self) -> None:
        """Shift A of 0001-01-01 in Asia/Tokyo starts before year 1 in UTC: RequestError on window.date."""
        parsed = parse_request(request(window={"shift": "A", "date": "0001-01-01"}))
        with pytest.raises(RequestError) as info:
            resolve(parsed, shifts=SHIFTS, tz_name="Asia/Tokyo", default_language="es", now=NOW)
        assert info.value.field == "window.date"

    def test_timezone_that_is_not_a_zone_key(self) -> None:
        """A site timezone of "" (ValueError in ZoneInfo, not ZoneInfoNotFoundError) is a RequestError."""
        with pytest.raises(RequestError) as info:
            resolve(parse_request(request()), shifts=SHIFTS, tz_name="", default_language="es", now=NOW)
        assert (info.value.field, info.value.reason) == ("window", "site timezone '' is unknown")
