"""Claims (pure): every number, asset/tag id, time, date and duration in a narrative, with the facts that support it.

Rules, in the order claims are read from the text (each span is read once):
  timestamps/dates  `2026-11-29`, `2026-11-29 06:15`, `2026-11-29T12:15:00Z` → a fact time (local, or exact UTC)
                    or a date of one (local)
  times             `06:15`, `6:15` → a fact time as local HH:MM
  durations         `85 min`, `1.4 h`, `1 h 25 min`, `40 s` (es/en/pt unit words) → a fact duration: minutes and
                    hours rounded half up to the decimals written, seconds exact
  ids               a token starting with a letter and holding a digit (`P-101`, `P-101.vibration_mm_s`, `WO-4711`)
                    → an id some fact names, or the text of an operator note not held for review holds
  percentages       `88.9 %`, `97%` → a ratio fact (`facts.is_ratio`: availability, performance, quality, oee,
                    `*_share`; held in [0, 1]) × 100, rounded half up to the decimals written (88.89 % may read
                    88.9 %, never 89 %), or a plain value as a number; a ratio is never read as a bare number
  numbers           `4.53`, `4,5` (comma or point as the decimal mark; no thousands separators) → a fact value
                    rounded half up to the decimals written; a non-integer value must be written with at least one
                    decimal (7.86 may be "7.9", never "8"); a duration's whole minutes and hours to one decimal;
                    the window's day, month and year. The sign is ignored.
Numbers spelt out in words are not read: the prompt asks for digits, and a word is not a figure a reader acts on.
Text inside quotes copied from a fact (alarm messages, reasons) is read like the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict

from edge_agent.reports.facts import Fact, is_ratio, round_value
from edge_agent.reports.request import from_iso


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int
    end: int
    text: str
    kind: str  # number | id | time | date | datetime | duration
    fact_ids: list[str]


class Offence(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    start: int
    end: int
    text: str
    kind: str
    reason: str


class GroundingResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ok: bool
    claims: list[Claim]
    offending: list[Offence]


_DATETIME = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?)?(?!\d)")
_TIME = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?(?![\d:])")
_H = r"(?:h|hr|hrs|horas?|hours?)"
_MIN = r"(?:min|mins|minutos?|minutes?)"
_S = r"(?:s|seg|segs|segundos?|sec|secs|seconds?)"
_NUM = r"\d+(?:[.,]\d+)?"
_COMPOSITE = re.compile(rf"(?<![\w.,])(\d+)\s*{_H}\.?\s*(?:y|e|and|,)?\s*(\d+)\s*{_MIN}\b", re.I)
_DURATION = re.compile(rf"(?<![\w.,])({_NUM})\s*({_H}|{_MIN}|{_S})\b", re.I)
_ID = re.compile(r"(?<![\w.\-])[A-Za-z][A-Za-z0-9_.\-]*\d[A-Za-z0-9_.\-]*")
_NUMBER = re.compile(rf"(?<![\w])({_NUM})(?![\w])")
# A percentage: "88.89 %", "97%", "12,5 %"; read against the ratio facts (`facts.is_ratio`) × 100, or a plain value.
_PERCENT = re.compile(rf"(?<![\w])({_NUM})\s*%")


@dataclass
class _Allowed:
    numbers: list[tuple[float, int, str]] = field(default_factory=list)  # value, decimals it has, fact id
    percents: list[tuple[Decimal, int, str]] = field(default_factory=list)  # ratio × 100, its decimals, fact id
    durations: list[tuple[int, str]] = field(default_factory=list)  # seconds, fact id
    times: dict[str, set[str]] = field(default_factory=dict)  # "HH:MM" local / ISO → fact ids
    dates: dict[str, set[str]] = field(default_factory=dict)
    ids: dict[str, set[str]] = field(default_factory=dict)


def _decimals(value: float | int) -> int:
    if isinstance(value, int) or float(value).is_integer():
        return 0
    exponent = Decimal(repr(float(value))).normalize().as_tuple().exponent
    assert isinstance(exponent, int)  # facts are finite (facts.py skips the rest): no NaN or infinity exponent
    return max(-exponent, 0)


def allowed_claims(facts: list[Fact], tz: ZoneInfo) -> _Allowed:
    allowed = _Allowed()
    for fact in facts:
        for ident in fact.ids:
            allowed.ids.setdefault(ident, set()).add(fact.id)
            allowed.ids.setdefault(ident.split(".", 1)[0], set()).add(fact.id)
        if fact.kind == "operator_note" and not fact.values.get("flagged"):
            # An id a note's text holds ("revisé P-102", "WO-4711") is the note's: saying the note names it is true.
            for m in _ID.finditer(str(fact.values.get("text", ""))):
                allowed.ids.setdefault(m.group(0).rstrip(".-_"), set()).add(fact.id)
        for name, value in fact.values.items():
            if isinstance(value, bool):
                continue
            if (name.endswith("_at") or name == "at") and isinstance(value, str):
                utc = from_iso(value)
                local = utc.astimezone(tz)
                for key in (local.strftime("%H:%M"), value, local.strftime("%Y-%m-%d %H:%M")):
                    allowed.times.setdefault(key, set()).add(fact.id)
                allowed.dates.setdefault(local.strftime("%Y-%m-%d"), set()).add(fact.id)
                if fact.kind == "window":
                    for part in (local.day, local.month, local.year):
                        allowed.numbers.append((part, 0, fact.id))
            elif name.endswith("_s") and isinstance(value, int):
                allowed.durations.append((value, fact.id))
                allowed.numbers.append((round_value(value / 60, 0), 0, fact.id))
                allowed.numbers.append((round_value(value / 3600, 1), 1, fact.id))
            elif is_ratio(name) and isinstance(value, (int, float)):
                # A ratio is written as a percentage only: 0.8889 as "88.89 %" or "88.9 %", never "0.89" or "89".
                percent = (Decimal(repr(float(value))) * 100).normalize()
                exponent = percent.as_tuple().exponent
                assert isinstance(exponent, int)  # finite: facts hold no NaN
                allowed.percents.append((percent, max(-exponent, 0), fact.id))
            elif isinstance(value, (int, float)):
                allowed.numbers.append((value, _decimals(value), fact.id))
        if fact.kind == "window" and fact.subject and re.fullmatch(r"\d+", fact.subject):
            allowed.numbers.append((int(fact.subject), 0, fact.id))
    return allowed


def _parse(text: str) -> tuple[Decimal, int]:
    normal = text.replace(",", ".")
    decimals = len(normal.split(".", 1)[1]) if "." in normal else 0
    return Decimal(normal), decimals


def _as_written(value: float | int, decimals: int) -> Decimal:
    """`value` rounded half up to `decimals`, without its sign; an integer exactly (a float holds only 2^53)."""
    if isinstance(value, int):
        return Decimal(abs(value))
    return Decimal(repr(round_value(abs(value), decimals)))


def _number_facts(text: str, allowed: _Allowed) -> list[str]:
    written, decimals = _parse(text)
    hits = []
    for value, value_decimals, fact_id in allowed.numbers:
        if value_decimals > 0 and decimals == 0:
            continue  # a non-integer fact quoted as an integer is a rounding too far
        if _as_written(value, decimals) == written:
            hits.append(fact_id)
    return sorted(set(hits))


def _percent_facts(text: str, allowed: _Allowed) -> list[str]:
    """Ratio facts whose percentage, rounded half up to the decimals written, is `text`; then, as before ratios were
    read, any plain value it equals ("62.5 %" of a tag `level_pct`)."""
    written, decimals = _parse(text)
    hits = []
    for percent, percent_decimals, fact_id in allowed.percents:
        if percent_decimals > 0 and decimals == 0:
            continue  # 88.89 % is not "89 %", as 7.86 is not "8"
        if percent.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP) == written:
            hits.append(fact_id)
    return sorted(set(hits) | set(_number_facts(text, allowed)))


def _duration_facts(amount: str, unit: str, allowed: _Allowed) -> list[str]:
    written, decimals = _parse(amount)
    unit = unit.lower()
    hits = []
    for seconds, fact_id in allowed.durations:
        if re.fullmatch(_S, unit):
            ok = decimals == 0 and seconds == written
        elif re.fullmatch(_MIN, unit):
            ok = Decimal(repr(round_value(seconds / 60, decimals))) == written
        else:
            ok = Decimal(repr(round_value(seconds / 3600, decimals))) == written
        if ok:
            hits.append(fact_id)
    return sorted(set(hits))


def check_narrative(narrative: str, facts: list[Fact], tz_name: str) -> GroundingResult:
    """Every claim in `narrative` with the facts that support it, and the spans no fact supports."""
    allowed = allowed_claims(facts, ZoneInfo(tz_name))
    taken = [False] * len(narrative)
    claims: list[Claim] = []
    offending: list[Offence] = []

    def free(m: re.Match[str]) -> bool:
        return not any(taken[m.start() : m.end()])

    def record(m: re.Match[str], kind: str, fact_ids: list[str] | set[str], reason: str) -> None:
        for i in range(m.start(), m.end()):
            taken[i] = True
        if fact_ids:
            claims.append(Claim(start=m.start(), end=m.end(), text=m.group(0), kind=kind, fact_ids=sorted(fact_ids)))
        else:
            offending.append(Offence(start=m.start(), end=m.end(), text=m.group(0), kind=kind, reason=reason))

    for m in _DATETIME.finditer(narrative):
        if m.group(4) is None:
            record(m, "date", allowed.dates.get(m.group(0), set()), "no fact falls on this date")
            continue
        hhmm = f"{m.group(1)}-{m.group(2)}-{m.group(3)} {int(m.group(4)):02d}:{m.group(5)}"
        key = m.group(0) if m.group(7) else hhmm
        if m.group(7) and m.group(7) != "Z":
            key = hhmm  # an explicit non-UTC offset: compare as written local time
        record(m, "datetime", allowed.times.get(key, set()), "no fact has this time")
    for m in _TIME.finditer(narrative):
        if free(m):
            key = f"{int(m.group(1)):02d}:{m.group(2)}"
            record(m, "time", allowed.times.get(key, set()), "no fact has this local time")
    for m in _COMPOSITE.finditer(narrative):
        if free(m):
            # Decimal, not int: int() refuses more than 4300 digits, and a narrative can hold any run of them.
            minutes = Decimal(m.group(1)) * 60 + Decimal(m.group(2))
            hits = sorted({f for s, f in allowed.durations if round_value(s / 60, 0) == minutes})
            record(m, "duration", hits, "no fact has this duration")
    for m in _DURATION.finditer(narrative):
        if free(m):
            record(m, "duration", _duration_facts(m.group(1), m.group(2), allowed), "no fact has this duration")
    for m in _PERCENT.finditer(narrative):
        if free(m):
            record(m, "percent", _percent_facts(m.group(1), allowed), "no fact has this percentage")
    for m in _ID.finditer(narrative):
        token = m.group(0).rstrip(".-_")
        if not free(m) or not token:
            continue
        span = re.match(re.escape(token), narrative[m.start() :])
        assert span is not None
        sub = re.compile(re.escape(token)).match(narrative, m.start())
        assert sub is not None
        record(sub, "id", allowed.ids.get(token, set()), "no fact names this asset or tag")
    for m in _NUMBER.finditer(narrative):
        if free(m):
            record(m, "number", _number_facts(m.group(1), allowed), "no fact has this value")
    claims.sort(key=lambda c: c.start)
    offending.sort(key=lambda o: o.start)
    if not narrative.strip():
        offending.append(Offence(start=0, end=0, text="", kind="narrative", reason="empty narrative"))
    return GroundingResult(ok=not offending, claims=claims, offending=offending)


# A sentence ends at . ! or ? followed by a space or the end: "9.12" and "P-101.flow" do not end one.
SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
