"""Grounding check (pure): every number, asset/tag id, time, date and duration in a narrative must match a fact.

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

Binding (`check_bound`): a figure (number, time, date, duration) said after an asset or tag id in the same sentence
must be a figure of a fact naming that id, or of the window. "P-101.flow_m3h peaked at 887.86" fails when 887.86 is
C-201.flow_m3h's maximum, although 887.86 is a fact. `section_grounding` applies it to every section; in the notes
the notes' own figures are bound to nothing, since a note's time follows the asset the note is about.

Note ties (`check_note_ties`, the notes section): a sentence naming a note (its local time, or its author) may give
only assets, times, durations and numbers of that note, of stops and alarms of the assets the note's text names, of
the notes left off the list, or of the window. "At 13:46, after P-101's 26 min stop, john.smith left a note" fails
when john.smith's 13:46 note is about T-301, although P-101's stop is a fact of the section (another note names it).

The longest stop (`check_longest`): a sentence calling a stop the longest (es/en/pt) may name only assets, times
and durations of the longest stop (the `downtime_longest` fact, over every stop of the window; a listed stop as
long) or the window's. "The longest was P-101's 12:40-13:13
stop (34 min)" fails when P-101's 10:20-10:57 stop lasted longer, although every figure is P-101's.

A note left during or after a stop (`check_note_when`, the notes section): a sentence naming a note and saying it
was left while a stop went on ("mientras P-101 seguía parado", "with P-102 still down", "parado desde 16:19") needs
the note's time within a stop of an asset the note names; saying it was left after one ("tras la parada de 20 min",
"which had been down for 28 min"), at or after that stop's end. "At 23:52, while P-101 was still down" fails when
that stop ended at 23:13 (seen in `make demo`): the figures bind, the words do not.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict

from edge_agent.reports.facts import Fact, is_ratio, round_value
from edge_agent.reports.narrative.sections import Section, left_after, left_during, note_assets
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
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def check_bound(narrative: str, facts: list[Fact], tz_name: str, free: frozenset[str] = frozenset()) -> GroundingResult:
    """`check_narrative`, plus binding: in a sentence, each figure after an id must be a fact of that id's (or the
    window's); the nearest id before it is the one it is said of. A figure of a `free` fact (a note's time, which
    follows the asset the note is about, or how many notes are not listed) is bound to nothing."""
    result = check_narrative(narrative, facts, tz_name)
    window = {f.id for f in facts if f.kind == "window"} | free
    ends = [m.end() for m in _SENTENCE_END.finditer(narrative)]
    offending = list(result.offending)
    subject: Claim | None = None
    sentence = 0
    for claim in result.claims:
        here = bisect.bisect_right(ends, claim.start)  # sentence ends at or before the claim
        if here != sentence:
            subject, sentence = None, here
        if claim.kind == "id":
            subject = claim
        elif subject is not None and not set(claim.fact_ids) & (set(subject.fact_ids) | window):
            reason = f"no fact of {subject.text} has this figure"
            offending.append(Offence(start=claim.start, end=claim.end, text=claim.text, kind="binding", reason=reason))
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)


# "longest"/"más larga"/"mais longo", as the reference writer and the model word the longest stop.
_LONGEST = re.compile(r"\b(?:longest|más\s+larg[oa]s?|mais\s+long[oa]s?)\b", re.I)
_LONGEST_KINDS = frozenset({"id", "time", "datetime", "date", "duration"})


def check_longest(narrative: str, facts: list[Fact], result: GroundingResult) -> GroundingResult:
    """`result` plus an offence for each asset, time or duration in a sentence that calls a stop the longest and is
    not of a stop with the greatest duration (the `downtime_longest` fact, or a listed stop as long) or the window."""
    stops = [f for f in facts if f.kind == "downtime"]
    named = [f for f in facts if f.kind == "downtime_longest"]
    marked_at = [m.start() for m in _LONGEST.finditer(narrative)]
    if not (stops or named) or not marked_at:
        return result
    # Over every stop when the facts name it (only the first few stops may be listed), else over the listed ones.
    top = named[0].values["duration_s"] if named else max(f.values["duration_s"] for f in stops)
    longest = {f.id for f in [*named, *stops] if f.values["duration_s"] == top}
    longest |= {f.id for f in facts if f.kind == "window"}
    ends = [m.end() for m in _SENTENCE_END.finditer(narrative)]
    marked = {bisect.bisect_right(ends, at) for at in marked_at}
    offending = list(result.offending)
    for claim in result.claims:
        if claim.kind in _LONGEST_KINDS and bisect.bisect_right(ends, claim.start) in marked:
            if not set(claim.fact_ids) & longest:
                reason = "said of the longest stop, but no longest stop has it"
                offending.append(
                    Offence(start=claim.start, end=claim.end, text=claim.text, kind="longest", reason=reason)
                )
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)


_NOTE_TIME_KINDS = frozenset({"time", "datetime"})


def _author_pattern(author: object) -> re.Pattern[str] | None:
    """An author as a whole word of the text; none for a name holding a digit (the reference writer says "an
    operator" instead, and the model's copy of it is an id no fact names)."""
    name = str(author or "").strip()
    if len(name) < 2 or any(c.isdigit() for c in name):
        return None
    return re.compile(rf"(?<![\w.\-]){re.escape(name)}(?![\w\-])")


@dataclass
class _NotesNamed:
    """Which listed notes each sentence names (sentence index → note ids), by a note's local time or its author."""

    by_time: dict[int, set[str]] = field(default_factory=dict)
    by_author: dict[int, set[str]] = field(default_factory=dict)
    time_claims: list[tuple[int, Claim, set[str]]] = field(default_factory=list)  # claims that are only notes' times

    def named(self) -> dict[int, set[str]]:
        keys = self.by_time.keys() | self.by_author.keys()
        return {k: self.by_time.get(k, set()) | self.by_author.get(k, set()) for k in keys}


def _notes_named(narrative: str, notes: tuple[Fact, ...], result: GroundingResult, ends: list[int]) -> _NotesNamed:
    ids = {n.id for n in notes}
    out = _NotesNamed()
    for claim in result.claims:
        if claim.kind in _NOTE_TIME_KINDS and (times := set(claim.fact_ids) & ids):
            sentence = bisect.bisect_right(ends, claim.start)
            out.by_time.setdefault(sentence, set()).update(times)
            if set(claim.fact_ids) <= ids:  # only a note's time, not also a stop's or an alarm's
                out.time_claims.append((sentence, claim, times))
    for note in notes:
        if (pattern := _author_pattern(note.values.get("author"))) is not None:
            for m in pattern.finditer(narrative):
                out.by_author.setdefault(bisect.bisect_right(ends, m.start()), set()).add(note.id)
    return out


def check_note_ties(narrative: str, section: Section, result: GroundingResult) -> GroundingResult:
    """`result` plus an offence for each claim in a sentence that names a note (its time or its author) and is not
    that note's, of a stop or alarm of an asset its text names, of the unlisted notes, or of the window; and for a
    note's time given with an author who did not write a note at that time."""
    notes = section.notes
    if not notes:
        return result
    shared = {section.window.id} | {f.id for f in section.facts if f.kind == "operator_notes_not_listed"}
    tied = {
        n.id: {n.id, *shared, *(f.id for f in section.related if f.subject.split(".", 1)[0] in note_assets(n))}
        for n in notes
    }
    at_of = {n.id: str(n.values.get("at")) for n in notes}
    ends = [m.end() for m in _SENTENCE_END.finditer(narrative)]
    found = _notes_named(narrative, notes, result, ends)
    named = found.named()
    if not named:
        return result
    offending = list(result.offending)
    # "ana.silva wrote at 20:04" when the 20:04 note is luis.ramirez's: each half is a note, but not the same one.
    for sentence, claim, times in found.time_claims:
        if (authors := found.by_author.get(sentence)) and not times & authors:
            reason = f"the note at {claim.text} is not by the author this sentence names"
            offending.append(Offence(start=claim.start, end=claim.end, text=claim.text, kind="note_tie", reason=reason))
    for claim in result.claims:
        sentence = bisect.bisect_right(ends, claim.start)
        if sentence not in named:
            continue
        allowed = set().union(*(tied[n] for n in named[sentence]))
        if not set(claim.fact_ids) & allowed:
            said_with = ", ".join(sorted(at_of[n] for n in named[sentence]))
            reason = f"said of the note at {said_with}, which is not about this"
            offending.append(Offence(start=claim.start, end=claim.end, text=claim.text, kind="note_tie", reason=reason))
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)


# A note said to be left while a stop went on, as the reference writer words it (`nt.tie_during`) and the model
# copies it: "mientras P-101 seguía parado", "with P-102 still down", "parado por cavitation desde 16:19" (but not
# "down since 10:51 until 11:17", which says when the stop ended).
_DURING = re.compile(
    r"\bmientras\b|\benquanto\b|\b(?:seguía|seguia)\s+parad[oa]\b|\bstill\s+(?:down|stopped)\b"
    r"|\b(?:parad[oa]|detenid[oa]|down|stopped)\b[^.!?]*?\b(?:desde|since)\b(?![^.!?]*\b(?:until|till|hasta|até)\b)",
    re.I,
)
# A note said to be left after a stop had ended (`nt.tie_after`): "tras la parada de 20 min de C-201", "after its
# 26 min stop", "which had been down for 28 min", "após a parada". After an alarm ("tras la alarma") is not read.
_AFTER = re.compile(
    r"\b(?:tras|después\s+de)\s+(?:la|su)\s+parada\b|\bhabía\s+estado\s+parad[oa]\b"
    r"|\bafter\s+(?:the|its)\s+(?:[^\s.!?]+\s+){0,4}?stop\b|\bhad\s+been\s+(?:down|stopped)\b"
    r"|\b(?:após\s+[ao]|depois\s+d[ao])\s+parada\b|\btinha\s+ficado\s+parad[oa]\b",
    re.I,
)


_WHEN = (("during", _DURING, left_during), ("after", _AFTER, left_after))


def _left(note: Fact, stops: list[Fact], said: set[str], holds: Callable[[Fact, Fact], bool]) -> bool:
    """Whether `holds` of the note and a stop of an asset it names (of those `said`, when the sentence names any)."""
    assets = (note_assets(note) & said) or note_assets(note)
    return any(f.subject in assets and holds(note, f) for f in stops)


def check_note_when(narrative: str, section: Section, result: GroundingResult) -> GroundingResult:
    """`result` plus an offence for a sentence that names a note (by a time only notes have, else by its author, else
    by a time) and says it was left while a stop went on, or after one, when no note it names was left so with
    respect to a stop of an asset the note's text names (of the one the sentence names, when it names one). "At
    23:52, while P-101 was still down" fails when P-101's stop ended at 23:13, although every figure is the note's or
    the stop's."""
    if not section.notes:
        return result
    ends = [m.end() for m in _SENTENCE_END.finditer(narrative)]
    found = _notes_named(narrative, section.notes, result, ends)
    notes = {n.id: n for n in section.notes}
    stops = [f for f in section.related if f.kind == "downtime"]
    only_notes: dict[int, set[str]] = {}  # a time that is also a stop's may mean the stop: the author decides then
    for sentence, _, times in found.time_claims:
        only_notes.setdefault(sentence, set()).update(times)
    offending = list(result.offending)
    for kind, pattern, holds in _WHEN:
        firsts: dict[int, re.Match[str]] = {}  # sentence → its first such wording
        for m in pattern.finditer(narrative):
            firsts.setdefault(bisect.bisect_right(ends, m.start()), m)
        for sentence, mark in firsts.items():
            named = only_notes.get(sentence) or found.by_author.get(sentence) or found.by_time.get(sentence)
            if not named:
                continue
            said = {c.text for c in result.claims if c.kind == "id" and bisect.bisect_right(ends, c.start) == sentence}
            if not any(_left(notes[n], stops, said, holds) for n in named):
                at = ", ".join(sorted(str(notes[n].values.get("at")) for n in named))
                reason = f"the note at {at} was not left {kind} a stop of an asset it names"
                offending.append(
                    Offence(start=mark.start(), end=mark.end(), text=mark.group(), kind=kind, reason=reason)
                )
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)


def section_grounding(text: str, section: Section, tz_name: str) -> GroundingResult:
    """The grounding a section's text must pass: on the section's facts, bound (in the notes, a note's own figures
    excepted, and a sentence naming a note held to that note's ties); the longest stop must be the longest."""
    facts = section.grounding_facts()
    if section.name == "notes":  # "X wrote about P-101 at 08:29": a note's time follows what it is about
        bound = check_bound(text, facts, tz_name, free=frozenset(f.id for f in section.facts))
        tied = check_note_ties(text, section, check_longest(text, facts, bound))
        return check_note_when(text, section, tied)
    return check_longest(text, facts, check_bound(text, facts, tz_name))
