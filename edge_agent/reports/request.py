"""What a report request looks like on the wire, and how its window is resolved.

A request arrives as JSON on `edge/<site>/reports/request[/<user>]`. MQTT 5 clients reply-address it with the
Response Topic and Correlation Data properties; MQTT 3.1.1 clients put `reply_to` and `correlation_id` in the payload.
Validation failures become `RequestError(field, reason)` so the error reply can name the field.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from datetime import datetime, time, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from edge_agent.base.canonical import ascii_json, sha256_hex
from edge_agent.base.types import Language
from edge_agent.base.values import ValueDomainError, check_json_domain
from edge_agent.config.reports import ShiftConfig
from edge_agent.reports.errors import RequestError

ReportType = Literal["shift_summary", "alarm_summary", "downtime_analysis", "asset_history", "alarm_performance"]
Format = Literal["json", "markdown", "html"]

# 1 MiB: a request is a few hundred bytes; anything near this is a mistake or an attack.
MAX_REQUEST_BYTES = 1024 * 1024
# 31 days: the longest window a report covers; longer ones would read millions of records on an edge box.
MAX_WINDOW = timedelta(days=31)
# A valid request nests 3 deep ({"scope": {"assets": [...]}}); 8 leaves room and stops pathological nesting long
# before anything recursive (pydantic, json.dumps, Python's recursion limit) sees it.
MAX_JSON_DEPTH = 8
# The longest string any request or sign-off field holds is a 2000-character comment; twice that is plenty.
MAX_STRING_CHARS = 4096
# The longest reply topic and correlation id echoed from a request: the MQTT topic limit we accept (docs/reports.md).
MAX_TOPIC_BYTES = 1024
# A field path named in an error reply is cut to this: an unknown key may be up to MAX_REQUEST_BYTES long.
MAX_FIELD_CHARS = 128
_ID_PATTERN = r"^[A-Za-z0-9_.:@-]+$"
_ID = re.compile(_ID_PATTERN)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Window(_Strict):
    """Either an explicit `start`/`end` (ISO-8601 with an offset) or a named `shift` (and optionally its `date`)."""

    start: datetime | None = None
    end: datetime | None = None
    shift: str | None = Field(None, min_length=1, max_length=64)
    date: dt.date | None = None

    @field_validator("start", "end")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("needs a UTC offset, e.g. 2026-11-29T06:00:00-06:00 or ...Z")
        try:
            return value.astimezone(dt.UTC) if value is not None else None
        except OverflowError as exc:  # e.g. 9999-12-31T23:00:00-05:00 is in year 10000 in UTC
            raise ValueError("outside the years 1-9999 in UTC") from exc

    @model_validator(mode="after")
    def _one_form(self) -> Window:
        explicit = self.start is not None or self.end is not None
        if explicit and self.shift is not None:
            raise ValueError("give either start/end or shift, not both")
        if not explicit and self.shift is None:
            raise ValueError("give start and end, or a shift name")
        if explicit and (self.start is None or self.end is None):
            raise ValueError("start and end go together")
        if self.date is not None and self.shift is None:
            raise ValueError("date goes with shift")
        if self.start is not None and self.end is not None:
            if self.end <= self.start:
                raise ValueError("end must be after start")
            if self.end - self.start > MAX_WINDOW:
                raise ValueError(f"window longer than {MAX_WINDOW.days} days")
        return self


class Scope(_Strict):
    area: str | None = Field(None, min_length=1, max_length=128)
    line: str | None = Field(None, min_length=1, max_length=128)
    assets: list[str] = Field(default_factory=list, max_length=64)

    @field_validator("assets")
    @classmethod
    def _asset_ids(cls, value: list[str]) -> list[str]:
        for asset in value:
            if not _ID.match(asset) or len(asset) > 128:
                raise ValueError(f"asset id {asset!r} must be letters, digits and _.:@-")
        return sorted(set(value))


def _json_only() -> list[Format]:
    return ["json"]


class ReportRequest(_Strict):
    request_id: str = Field(min_length=1, max_length=128, pattern=_ID_PATTERN)
    type: ReportType
    # None only for an alarm_performance review: the last `reports.kpi.alarm_review_days` whole local days.
    window: Window | None = None
    scope: Scope = Field(default_factory=Scope)
    language: Language | None = None
    formats: list[Format] = Field(default_factory=_json_only, min_length=1)
    # False: no accepted/generating messages, only the final one (for one-shot clients such as mosquitto_rr).
    progress: bool = True
    # MQTT 3.1.1 clients: where to reply and what to echo back (MQTT 5 clients use the packet properties).
    # Where a reply may go is decided by the service (`topics.reply_topic_refusal`), which knows the requester.
    reply_to: str | None = Field(None, min_length=1, max_length=MAX_TOPIC_BYTES)
    correlation_id: str | None = Field(None, max_length=MAX_TOPIC_BYTES)

    @field_validator("reply_to")
    @classmethod
    def _plain_topic(cls, value: str | None) -> str | None:
        if value is not None and any(c in value for c in "+#\0"):
            raise ValueError("a reply topic cannot contain wildcards")
        return value


class ResolvedWindow(_Strict):
    start: datetime
    end: datetime
    shift: str | None = None
    timezone: str

    def as_json(self) -> dict[str, Any]:
        return {"start": iso(self.start), "end": iso(self.end), "shift": self.shift, "timezone": self.timezone}


class ResolvedRequest(_Strict):
    """A request with defaults filled in and its window fixed: everything a report's content depends on."""

    type: ReportType
    language: Language
    window: ResolvedWindow
    scope: Scope

    def as_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "language": self.language,
            "window": self.window.as_json(),
            "scope": self.scope.model_dump(mode="json"),
        }


def iso(value: datetime) -> str:
    """UTC, whole seconds, `Z`: the one time format inside a report body."""
    return value.astimezone(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def from_iso(text: str) -> datetime:
    """A report-body time (`iso`'s format) back to an aware UTC datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def parse_request(payload: bytes) -> ReportRequest:
    """Bytes → a validated request, or `RequestError` naming the first bad field."""
    if len(payload) > MAX_REQUEST_BYTES:
        raise RequestError("<payload>", f"{len(payload)} bytes, more than {MAX_REQUEST_BYTES}")
    data = json_object(payload)
    try:
        request = ReportRequest.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise RequestError(field_name(err["loc"]), err["msg"].removeprefix("Value error, ")) from exc
    if request.window is None and request.type != "alarm_performance":
        raise RequestError("window", "Field required")
    if request.type == "asset_history" and not request.scope.assets:
        raise RequestError("scope.assets", "asset_history needs at least one asset")
    return request


def reply_fields(payload: bytes) -> tuple[str | None, str | None, str | None]:
    """(request_id, reply_to, correlation_id) read leniently, so even an invalid request can be answered. Never
    raises; a value that could not be echoed safely (not a valid id, too long, not encodable) reads as None."""
    try:
        data = json.loads(payload.decode("utf-8")) if len(payload) <= MAX_REQUEST_BYTES else None
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        data = None
    if not isinstance(data, dict):
        return None, None, None
    request_id = data.get("request_id")
    if not (isinstance(request_id, str) and len(request_id) <= 128 and _ID.match(request_id)):
        request_id = None
    reply_to, correlation_id = (_echoable(data.get(k)) for k in ("reply_to", "correlation_id"))
    return request_id, reply_to, correlation_id


def _echoable(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) > MAX_TOPIC_BYTES or _has_surrogate(value):
        return None
    return value


def json_object(payload: bytes) -> dict[str, Any]:
    """UTF-8 JSON object → dict, or `RequestError` naming where: deep nesting, lone surrogates, huge numbers and
    strings included (`edge_agent.base.values.check_json_domain`, the rule every JSON input is held to)."""
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RequestError("<payload>", f"not UTF-8 JSON: {exc}") from exc
    except RecursionError as exc:
        raise RequestError("<payload>", f"nested more than {MAX_JSON_DEPTH} levels deep") from exc
    except ValueError as exc:  # an integer of more than 4300 digits
        raise RequestError("<payload>", f"not usable JSON: {exc}") from exc
    try:
        check_json_domain(data, max_depth=MAX_JSON_DEPTH, max_string_chars=MAX_STRING_CHARS)
    except ValueDomainError as exc:
        raise RequestError(field_name([exc.path] if exc.path else []), exc.reason) from exc
    if not isinstance(data, dict):
        raise RequestError("<payload>", "must be a JSON object")
    return data


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def field_name(loc: tuple[str | int, ...] | list[str | int]) -> str:
    """A dotted field path for an error reply, cut to MAX_FIELD_CHARS and safe to encode."""
    name = ".".join(str(p) for p in loc) or "<payload>"
    name = name.encode("utf-8", "backslashreplace").decode("utf-8")
    return name if len(name) <= MAX_FIELD_CHARS else name[: MAX_FIELD_CHARS - 1] + "…"


def request_sha256(request: ReportRequest) -> str:
    """Hash of what the requester asked for, minus where to reply: a reused request_id must ask the same thing."""
    content = request.model_dump(mode="json", exclude={"reply_to", "correlation_id", "progress"})
    # The older ASCII form, not canonical_json: stored digests are compared with new ones (edge_agent.base.canonical).
    return sha256_hex(ascii_json(content))


def resolve(
    request: ReportRequest,
    *,
    shifts: list[ShiftConfig],
    tz_name: str,
    default_language: Language,
    now: datetime,
    review_days: int = 7,
) -> ResolvedRequest:
    """Fill defaults and fix the window. A shift without a date is the most recent one that has ended by `now`; no
    window (an alarm_performance review) is the last `review_days` whole local days before `now`'s."""
    try:
        tz = ZoneInfo(tz_name)
    except (ZoneInfoNotFoundError, ValueError) as exc:  # ValueError: not a zone key at all ("", "../x")
        raise RequestError("window", f"site timezone {tz_name!r} is unknown") from exc
    window = request.window
    if window is None:
        return ResolvedRequest(
            type=request.type,
            language=request.language or default_language,
            window=review_window(tz, tz_name, now, review_days),
            scope=request.scope,
        )
    try:
        resolved = _resolve_window(window, shifts, tz, tz_name, now)
    except OverflowError as exc:  # a date at the ends of the calendar (0001-01-01, 9999-12-31) has no shift
        field = "window.date" if window.date is not None else "window"
        raise RequestError(field, "outside the years 1-9999 once resolved in the site timezone") from exc
    return ResolvedRequest(
        type=request.type, language=request.language or default_language, window=resolved, scope=request.scope
    )


def _resolve_window(
    window: Window, shifts: list[ShiftConfig], tz: ZoneInfo, tz_name: str, now: datetime
) -> ResolvedWindow:
    if window.shift is None:
        assert window.start is not None and window.end is not None  # guaranteed by Window._one_form
        return ResolvedWindow(start=window.start, end=window.end, timezone=tz_name)
    shift = next((s for s in shifts if s.name == window.shift), None)
    if shift is None:
        known = ", ".join(s.name for s in shifts) or "none configured"
        raise RequestError("window.shift", f"unknown shift {window.shift!r} (known: {known})")
    start, end = shift_bounds(shift, window.date, tz) if window.date is not None else last_ended_shift(shift, tz, now)
    return ResolvedWindow(start=start, end=end, shift=shift.name, timezone=tz_name)


def review_window(tz: ZoneInfo, tz_name: str, now: datetime, days: int) -> ResolvedWindow:
    """The `days` whole local days that ended at the last local midnight before `now`."""
    today = now.astimezone(tz).date()
    end = datetime.combine(today, time(0, 0), tzinfo=tz)
    start = datetime.combine(today - timedelta(days=days), time(0, 0), tzinfo=tz)
    return ResolvedWindow(start=start.astimezone(dt.UTC), end=end.astimezone(dt.UTC), timezone=tz_name)


def shift_bounds(shift: ShiftConfig, day: dt.date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The shift starting on local `day`, in UTC. An end at or before the start is on the next day."""
    start_t, end_t = _hhmm(shift.start), _hhmm(shift.end)
    start = datetime.combine(day, start_t, tzinfo=tz)
    end_day = day + timedelta(days=1) if end_t <= start_t else day
    end = datetime.combine(end_day, end_t, tzinfo=tz)
    return start.astimezone(dt.UTC), end.astimezone(dt.UTC)


def last_ended_shift(shift: ShiftConfig, tz: ZoneInfo, now: datetime) -> tuple[datetime, datetime]:
    local_today = now.astimezone(tz).date()
    for back in range(0, 3):
        start, end = shift_bounds(shift, local_today - timedelta(days=back), tz)
        if end <= now:
            return start, end
    raise AssertionError("a shift ends within two days of its start")


def _hhmm(value: str) -> time:
    hours, minutes = (int(p) for p in value.split(":"))
    if hours > 23 or minutes > 59:
        raise RequestError("window.shift", f"shift time {value!r} is not a time of day")
    return time(hours, minutes)
