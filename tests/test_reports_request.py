"""Report requests: validation names the bad field; windows resolve from explicit times or the shift calendar."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from edge_agent.config.reports import ShiftConfig
from edge_agent.reports.errors import RequestError
from edge_agent.reports.request import iso, parse_request, resolve, shift_bounds

SHIFTS = [ShiftConfig(name="A", start="06:00", end="14:00"), ShiftConfig(name="C", start="22:00", end="06:00")]
TZ = "America/Mexico_City"


def payload(**overrides: object) -> bytes:
    data: dict[str, object] = {"request_id": "r-1", "type": "shift_summary", "window": {"shift": "A"}}
    data.update(overrides)
    return json.dumps(data).encode()


class TestValidation:
    @pytest.mark.parametrize(
        ("raw", "field"),
        [
            (b"not json", "<payload>"),
            (payload(type="weekly"), "type"),
            (payload(language="fr"), "language"),
            (payload(window={"start": "2026-11-29T06:00:00", "end": "2026-11-29T14:00:00Z"}), "window.start"),
            (payload(window={"start": "2026-11-29T14:00:00Z", "end": "2026-11-29T06:00:00Z"}), "window"),
            (payload(type="asset_history"), "scope.assets"),
            (payload(request_id="a b"), "request_id"),
            (payload(colour="red"), "colour"),
            (payload(reply_to="x/#"), "reply_to"),
        ],
    )
    def test_error_names_the_field(self, raw: bytes, field: str) -> None:
        """Each invalid request raises RequestError naming the offending field."""
        with pytest.raises(RequestError) as info:
            parse_request(raw)
        assert info.value.field == field

    def test_defaults(self) -> None:
        """Formats default to JSON, progress replies on, language from config at resolution."""
        request = parse_request(payload())
        assert (request.formats, request.progress, request.language) == (["json"], True, None)


class TestWindows:
    def test_shift_with_date_in_site_timezone(self) -> None:
        """Shift A on 2026-11-29 in Mexico City (UTC-6) is 12:00-20:00 UTC."""
        resolved = resolve(
            parse_request(payload(window={"shift": "A", "date": "2026-11-29"})),
            shifts=SHIFTS,
            tz_name=TZ,
            default_language="es",
            now=datetime(2026, 12, 1, tzinfo=UTC),
        )
        assert (iso(resolved.window.start), iso(resolved.window.end)) == (
            "2026-11-29T12:00:00Z",
            "2026-11-29T20:00:00Z",
        )
        assert resolved.language == "es"

    def test_night_shift_crosses_midnight(self) -> None:
        """Shift C 22:00-06:00 starting on the 29th ends on the 30th."""
        start, end = shift_bounds(SHIFTS[1], date(2026, 11, 29), ZoneInfo(TZ))
        assert (iso(start), iso(end)) == ("2026-11-30T04:00:00Z", "2026-11-30T12:00:00Z")

    def test_shift_without_date_is_the_last_one_ended(self) -> None:
        """At 10:00 local on the 30th, shift A of the 30th is running: the 29th's is the last one ended."""
        resolved = resolve(
            parse_request(payload()),
            shifts=SHIFTS,
            tz_name=TZ,
            default_language="en",
            now=datetime(2026, 11, 30, 16, 0, tzinfo=UTC),
        )
        assert iso(resolved.window.start) == "2026-11-29T12:00:00Z"

    def test_unknown_shift_names_the_field(self) -> None:
        """A shift not in the calendar is an error on window.shift listing the known ones."""
        with pytest.raises(RequestError) as info:
            resolve(
                parse_request(payload(window={"shift": "Z"})),
                shifts=SHIFTS,
                tz_name=TZ,
                default_language="es",
                now=datetime(2026, 11, 30, tzinfo=UTC),
            )
        assert (info.value.field, info.value.reason) == ("window.shift", "unknown shift 'Z' (known: A, C)")
