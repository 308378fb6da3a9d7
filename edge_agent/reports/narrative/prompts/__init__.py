"""Versioned prompt templates and the phrasebook that turns facts into sentences.

The narrative is written one section at a time (`reports.sections`): `wording/prompts/v3/section.<language>.txt`
holds the instructions ([system], [strict]), the user message ([user], with `$section`, `$facts`, `$related` and
`$notes`) and the section names ([names]). `wording/prompts/v3/facts.<language>.txt` holds one sentence template per
fact kind and the labels the renderings use. Both files' SHA-256 go into every report, so a reader knows exactly
which wording produced it, and replay refuses when a file has changed since.

Trust boundary: the [system] part is ours alone. Facts are computed by code; any text that came from a record
(operator notes, alarm messages, reasons) is cleaned and length-limited, and operator notes are fenced between
`<<<NOTE` and `NOTE>>>` in the user message. Text that reads like an instruction is withheld from the model.
Chat-template control tokens (`<|im_start|>`, `</s>`, `[INST]`, ...) in record text are neutralised by
`untrusted.clean`, so the only control tokens in a tokenised prompt are the ones the engine's chat template puts there.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from edge_agent.llm.types import ChatMessage
from edge_agent.reports.errors import TemplateError
from edge_agent.reports.facts import Fact, is_ratio, round_value
from edge_agent.reports.narrative.sections import SECTIONS, NoteTie, Section, note_tie
from edge_agent.reports.narrative.wording import WordingFile, read_wording
from edge_agent.reports.request import ResolvedRequest, from_iso
from edge_agent.reports.untrusted import clean, fence, looks_like_instruction

# Templates v2: one prompt per narrative section. Phrasebook v2: v1's sentences and labels plus `downtime_cause`,
# `downtime_longest` and the notes' `note_tie`/`note_tie_none` lines (each changed the files, and so their hashes:
# replay refuses reports written before). v3: v2 and the plant KPIs (`reports.kpi`): the `oee`, `maintenance` and
# `alarm_performance` sections' names, their fact sentences (ratios as percentages, a figure not computable said so),
# the alarm performance review's title. A v2 section's prompt is the same text in v3; the files' hashes differ, so
# replay refuses v2 reports (their facts lack the KPIs, which every new report carries).
TEMPLATE_VERSION = "v3"
PHRASEBOOK_VERSION = "v3"
# 80 characters: an alarm message or downtime reason; longer text from a record is cut before it reaches a prompt.
SHORT_TEXT_MAX = 80
_PARTS = ("system", "strict", "user", "names", "labels")
_USER_FIELDS = ("$section", "$facts", "$related", "$notes")


def _sections(file: WordingFile) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in file.raw.decode("utf-8").splitlines():
        if line.startswith("#") and current is None:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1]
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items()}


@dataclass(frozen=True)
class Template:
    name: str  # "v2/section.es.txt"
    sha256: str
    system: str
    strict: str
    user: str
    names: dict[str, str]  # section → its name in the report language
    labels: dict[str, str]  # rendering text: `reference` marks a section the reference writer wrote


@dataclass(frozen=True)
class Phrasebook:
    name: str
    sha256: str
    facts: dict[str, str]
    labels: dict[str, str]

    def label(self, key: str, **kwargs: Any) -> str:
        return self.labels[key].format(**kwargs)


def _pairs(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition(" = ")
            out[key.strip()] = value.strip()
    return out


def load_template(language: str, version: str = TEMPLATE_VERSION) -> Template:
    file = read_wording("section", version, language)
    name, parts = file.name, _sections(file)
    missing = [s for s in _PARTS if s not in parts]
    if missing:
        raise TemplateError(f"prompt template {name} lacks section(s) {missing}")
    absent = [f for f in _USER_FIELDS if f not in parts["user"]]
    if absent:
        raise TemplateError(f"prompt template {name}: [user] must contain {absent}")
    names = _pairs(parts["names"])
    if set(names) != set(SECTIONS):
        raise TemplateError(f"prompt template {name}: [names] must name exactly {list(SECTIONS)}")
    labels = _pairs(parts["labels"])
    if "reference" not in labels:
        raise TemplateError(f"prompt template {name}: [labels] must define reference")
    return Template(name, file.sha256, parts["system"], parts["strict"], parts["user"], names, labels)


def load_phrasebook(language: str, version: str = PHRASEBOOK_VERSION) -> Phrasebook:
    file = read_wording("facts", version, language)
    parts = _sections(file)
    if "facts" not in parts or "labels" not in parts:
        raise TemplateError(f"phrasebook {file.name} needs [facts] and [labels]")
    return Phrasebook(file.name, file.sha256, _pairs(parts["facts"]), _pairs(parts["labels"]))


def format_number(value: float | int) -> str:
    """Plain digits, `.` as the decimal point, no trailing zeros: 4.50 → "4.5", 7.0 → "7"."""
    text = format(Decimal(repr(round_value(value))).normalize(), "f")
    return text


def format_percent(ratio: float) -> str:
    """A ratio in [0, 1] as a percentage to 2 decimals, trailing zeros dropped: 0.8889 → "88.89 %", 0.97 → "97 %"."""
    return f"{format_number(round_value(float(Decimal(repr(float(ratio))) * 100), 2))} %"


def format_duration(seconds: int, book: Phrasebook) -> str:
    """Whole minutes (half up) from a minute on, else seconds: the unit the grounding check reads back."""
    if seconds < 60:
        return book.label("duration.s", n=seconds)
    return book.label("duration.min", n=format_number(int(round_value(seconds / 60, 0))))


def format_time(iso_utc: str, tz: ZoneInfo, with_date: bool) -> str:
    local = from_iso(iso_utc).astimezone(tz)
    return local.strftime("%Y-%m-%d %H:%M" if with_date else "%H:%M")


def safe_text(value: str, book: Phrasebook, max_chars: int = SHORT_TEXT_MAX) -> str:
    """Record text shown inside a fact sentence: cleaned, cut, and withheld when it reads like an instruction."""
    return book.label("withheld") if looks_like_instruction(value) else clean(value, max_chars)


def spans_days(request: ResolvedRequest) -> bool:
    tz = ZoneInfo(request.window.timezone)
    last = request.window.end.timestamp() - 1
    return request.window.start.astimezone(tz).date() != datetime.fromtimestamp(last, tz).date()


def fact_sentence(fact: Fact, book: Phrasebook, request: ResolvedRequest) -> str | None:
    """The fact as one sentence in the report language; None for kinds with no sentence (operator notes)."""
    key = fact.kind
    if key == "window" and fact.subject:
        key = "window_shift"
    if key in ("downtime", "downtime_longest", "data_gap") and fact.values.get("open"):
        key += "_open"
    if key == "oee" and fact.values.get("missing"):
        key += "_missing"
    template = book.facts.get(key)
    if template is None:
        return None
    tz = ZoneInfo(request.window.timezone)
    with_date = spans_days(request)
    shown: dict[str, str] = {"subject": safe_text(fact.subject, book)}
    for name, value in fact.values.items():
        if value is None:
            shown[name] = book.label("not_computable")
        elif is_ratio(name) and isinstance(value, (int, float)):
            shown[name] = format_percent(value)
        elif name.endswith("_at") or name == "at":
            shown[name] = format_time(value, tz, with_date)
        elif name.endswith("_s") and isinstance(value, int):
            shown[name] = format_duration(value, book)
        elif isinstance(value, bool):
            shown[name] = str(value).lower()
        elif isinstance(value, (int, float)):
            shown[name] = format_number(value)
        else:
            shown[name] = safe_text(str(value), book)
    try:
        return template.format(**shown)
    except KeyError as exc:
        raise TemplateError(f"phrasebook {book.name}: {key} names {exc} which fact {fact.id} lacks") from exc


@dataclass(frozen=True)
class Prompt:
    template: Template
    phrasebook: Phrasebook
    user: str
    flagged_record_ids: tuple[int, ...]

    def messages(self, strict: bool = False) -> list[ChatMessage]:
        system = self.template.system + ("\n" + self.template.strict if strict else "")
        return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=self.user)]

    def sha256(self, strict: bool = False) -> str:
        canonical = "\0".join(f"{m.role}\0{m.content}" for m in self.messages(strict))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _note_label(note: Fact, book: Phrasebook, request: ResolvedRequest) -> tuple[str, str]:
    """A note's local time and author as the prompt shows them (its fence and the tie line say the same)."""
    when = format_time(note.values["at"], ZoneInfo(request.window.timezone), spans_days(request))
    return when, safe_text(str(note.values.get("author") or "-"), book, 40)


def _note_fences(notes: tuple[Fact, ...], book: Phrasebook, request: ResolvedRequest, note_max_chars: int) -> str:
    fenced = []
    for note in notes:
        when, author = _note_label(note, book, request)
        text = book.label("withheld") if note.values.get("flagged") else clean(note.values["text"], note_max_chars)
        fenced.append(fence(f"{when} · {author}", text))
    return "\n".join(fenced) if fenced else "-"


def _tie_sentence(tie: NoteTie | None, book: Phrasebook, request: ResolvedRequest) -> str:
    """Which listed note the related event is tied to, by its time and author, or that none is: finding the one note
    among a dozen that names the asset is code's job (r7 took the author or time of the next note in 7 of 32 notes
    sections)."""
    if tie is None:
        return book.facts["note_tie_none"]
    at, author = _note_label(tie.note, book, request)
    return book.facts["note_tie"].format(at=at, author=author, asset=tie.asset)


def build_prompt(
    section: Section,
    request: ResolvedRequest,
    *,
    template: Template | None = None,
    book: Phrasebook | None = None,
    note_max_chars: int = 280,
) -> Prompt:
    """The prompt for one narrative section: its facts as sentences, related facts, its fenced notes (every listed
    one: `compute_facts` keeps the newest `notes_max`), nothing else."""
    template = template or load_template(request.language)
    book = book or load_phrasebook(request.language)

    def lines(facts: tuple[Fact, ...], more: tuple[str, ...] = ()) -> str:
        said = [s for f in facts if (s := fact_sentence(f, book, request)) is not None]
        return "\n".join(f"- {s}" for s in (*said, *more)) or "-"

    flagged = tuple(rid for f in section.notes if f.values.get("flagged") for rid in f.record_ids)
    tie = (_tie_sentence(note_tie(section.notes, section.related), book, request),) if section.notes else ()
    user = string.Template(template.user).substitute(
        section=template.names[section.name],
        facts=lines((section.window, *section.facts)),
        related=lines(section.related, tie),
        notes=_note_fences(section.notes, book, request, note_max_chars),
    )
    return Prompt(template, book, user, flagged)
