"""How the reference writer says things: one section's wordings, times, spans, counts and names, in its language.

`reference` decides what a section says (which facts, in which order, with which fallbacks); a `SectionWriter` turns
each of those into text, with the wordings and grammar of the reference phrasebook (`v2/<language>.toml`) and the
figures of the prompts' phrasebook (`format_number`, `format_duration`, `format_time`), so the grounding check reads
every figure back exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from edge_agent.base.canonical import CanonicalJsonError, canonical_json, sha256_hex
from edge_agent.base.quantities import quantity_of
from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.names import Grammar, Label
from edge_agent.reports.narrative.phrasebook import ReferencePhrasebook, Words, load_reference_phrasebook, tag_grammar
from edge_agent.reports.narrative.prompts import (
    Phrasebook,
    format_duration,
    format_number,
    format_time,
    load_phrasebook,
    safe_text,
    spans_days,
)
from edge_agent.reports.narrative.sections import Section
from edge_agent.reports.request import ResolvedRequest

# Record text that would read as a second sentence, or break the quoting, is left out of the prose.
_NOT_INLINE = re.compile(r"[.!?;]\s|[«»\"“”]")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class SectionWriter:
    """Formatting for one section: the phrasebooks (the prompts' for figures, the writer's for wordings), time zone,
    and the hash that picks each wording."""

    section: Section
    request: ResolvedRequest
    book: Phrasebook
    phrases: ReferencePhrasebook
    tz: ZoneInfo
    with_date: bool
    seed: str

    @classmethod
    def for_section(cls, section: Section, request: ResolvedRequest) -> SectionWriter:
        """The writer of `section` in the request's language, its wordings picked by a hash of the section's facts."""
        book, phrases = load_phrasebook(request.language), load_reference_phrasebook(request.language)
        tz = ZoneInfo(request.window.timezone)
        return cls(section, request, book, phrases, tz, spans_days(request), _seed(section, request.language))

    @property
    def words(self) -> Words:
        return self.phrases.words

    def phrase(self, kind: str, **fields: str) -> str:
        """The wording of `kind` this section's hash picks, filled in; `{Name}` fields are `name` capitalised."""
        variants = self.phrases.phrases[kind]
        text = variants[int(sha256_hex(self.seed + kind)[:8], 16) % len(variants)]
        shift = 0 if self.section.window.subject else 1
        base = {"during": self.words.during[shift], "end_of": self.words.end_of[shift], **fields}
        return text.format(**base, **{_cap(k): _cap(v) for k, v in base.items()})

    def count(self, noun: str, n: float) -> str:
        singular, plural = self.words.nouns[noun]
        return f"{format_number(n)} {singular if n == 1 else plural}"

    def listing(self, items: Sequence[str]) -> str:
        return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {self.words.and_} {items[-1]}"

    def dur(self, seconds: int) -> str:
        return format_duration(seconds, self.book)

    def local(self, iso_utc: str) -> tuple[str, str | None]:
        """(HH:MM, YYYY-MM-DD or None): the date is written only when the window spans days."""
        text = format_time(iso_utc, self.tz, self.with_date)
        if not self.with_date:
            return text, None
        day, _, hhmm = text.rpartition(" ")
        return hhmm, day

    @staticmethod
    def hour(pair: tuple[str, str], hhmm: str) -> str:
        """`words.at` or `words.clock` filled in: one o'clock is singular ("a la 01:15", "à 01:15")."""
        return pair[0 if hhmm.startswith("01:") else 1].format(hhmm=hhmm)

    def at(self, iso_utc: str) -> str:
        """ "a las 06:20", "at 06:20", "às 06:20" (with the date in front when the window spans days)."""
        hhmm, day = self.local(iso_utc)
        time = self.hour(self.words.at, hhmm)
        return time if day is None else self.words.on_day.format(day=day, at=time)

    def bare(self, iso_utc: str) -> str:
        """The time alone, after a preposition the template writes: "desde 06:20", "since 06:20"."""
        hhmm, day = self.local(iso_utc)
        return hhmm if day is None else f"{day} {hhmm}"

    def span(self, start: str, end: str) -> str:
        """ "entre las 06:20 y las 07:45", "from 06:20 to 07:45", "das 06:20 às 07:45"; with dates, "de A a B"."""
        a, b, w = self.bare(start), self.bare(end), self.words
        if self.with_date:
            return w.span_days.format(a=a, b=b)
        at_a, at_b, clock_a, clock_b = self.at(start), self.at(end), self.hour(w.clock, a), self.hour(w.clock, b)
        return w.span.format(a=a, b=b, at_a=at_a, at_b=at_b, clock_a=clock_a, clock_b=clock_b)

    def name(self, subject: str) -> str:
        """An asset or tag as the facts name it (ids are checked by the grounding check), cleaned like record text."""
        return safe_text(subject, self.book)

    @property
    def grammar(self) -> Grammar:
        return tag_grammar(self.request.language)

    def tag(self, subject: str) -> str:
        """A tag as people say it, with its article (`names.Grammar.tag`): "la vibración de la bomba P-101", "pump
        P-101's vibration"; a key that names no quantity of an asset as the facts name it. Cleaned like record text."""
        label = self.grammar.tag(subject)
        return self.name(subject) if label is None else safe_text(label.the, self.book)

    def agree(self, label: Label) -> dict[str, str]:
        """`[words.agree]` said of `label`, each word in the form that agrees with it: {"stopped": "parada", "it":
        "ella", ...} for "la bomba P-101", {"stopped": "parado", "it": "él", ...} for "el compresor C-201"."""
        return {word: self.grammar.agree(label, forms) for word, forms in self.words.agree.items()}

    def agreeing(self, asset: str) -> dict[str, str]:
        """`agree` for an asset by its id, of the gender its kind gives it ("P-101", a pump: "parada", "ella")."""
        return self.agree(self.grammar.asset(asset))

    def figure(self, value: float | int, subject: str, with_unit: bool = True) -> str:
        """A tag's value with its unit when its key has one ("9.12 mm/s"; `base.quantities`), as written."""
        unit = quantity_of(subject).unit if with_unit else None
        return f"{format_number(value)} {unit}" if unit else format_number(value)

    def inline(self, value: Any, max_chars: int = 80) -> str | None:
        """Record text fit to stand inside a sentence, or None (empty, withheld, or reads as more than one)."""
        text = safe_text(str(value), self.book, max_chars).strip().rstrip(".!?;:,…").strip()
        if not text or text == self.book.label("withheld") or _NOT_INLINE.search(text):
            return None
        return text

    def _reason(self, code: Any) -> Label | None:
        """A stop's reason as people say it (`names.Grammar.reason`), or None where `inline` has none (record text
        is cleaned, withheld or left out as `inline` does)."""
        text = self.inline(code)
        return None if text is None else self.grammar.reason(text)

    def reason(self, code: Any) -> str | None:
        """ "la cavitación", "una fuga en el sello mecánico", or None."""
        label = self._reason(code)
        return None if label is None else label.the

    def cause(self, reason: Any) -> str:
        """ " por la cavitación", pt " pela cavitação" (the preposition fused with the reason's article), or ""."""
        label = self._reason(reason)
        return "" if label is None else f" {self.grammar.join(self.words.for_, label)}"

    def alarm(self, fact: Fact, named: str | None) -> str:
        """The alarm with its noun, as the templates use it after an article: "alarma «X» de P-101"."""
        label = f" {self.words.quote.format(text=named)}" if named else ""
        return f"{self.words.alarm}{label} {self.words.on} {self.name(fact.subject)}"

    def short(self, fact: Fact, named: str | None) -> str:
        """The alarm without its noun, after one: "«X» en P-101", "en P-101"."""
        label = f"{self.words.quote.format(text=named)} " if named else ""
        return f"{label}{self.words.in_} {self.name(fact.subject)}"

    def alarm_names(self, fact: Fact) -> list[str | None]:
        """The alarm's name candidates, richest first: its message, its condition, none."""
        names: list[str | None] = []
        for key in ("message", "condition"):
            text = self.inline(fact.values.get(key, ""))
            if text and text not in names:
                names.append(text)
        return [*names, None]


def _seed(section: Section, language: str) -> str:
    content = [[f.id, f.kind, f.subject, f.values] for f in section.grounding_facts()]
    try:
        return sha256_hex(canonical_json([language, section.name, content]))
    except CanonicalJsonError:  # a lone surrogate in record text: hash its escaped form instead
        return sha256_hex(repr([language, section.name, content]).encode("utf-8", "backslashreplace"))
