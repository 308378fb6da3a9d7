"""The reference writer's phrasebook: its wordings per language, as data (`wording/phrasebook/v2/<language>.toml`),
checked at load.

It sits beside `reports.prompts`' phrasebook, not in it. That one (`wording/prompts/v3/facts.<language>.txt`) is
what the model is shown, fact sentences and labels, and its SHA-256 goes into every report: replay refuses once it
changes.
This one is what the reference writer writes (several wordings per sentence kind, and the grammar that fills their
fields); a report names it through `reference.REFERENCE_VERSION`. The writer still takes durations, numbers and the
withheld label from the prompts' phrasebook, so a figure reads back the same in a prompt and in a reference text.

A language file is untrusted input like any other: `parse_phrasebook` turns its bytes into a `ReferencePhrasebook` or
a `PhrasebookError` naming the file and the key. Across languages (`check_parity`) every file has the same keys, and
each phrase kind the same placeholders; the grammar templates (`Words`) may name only the fields the writer fills
them with, since a span reads "entre las 06:20 y las 07:45" in Spanish and "from 06:20 to 07:45" in English.
"""

from __future__ import annotations

import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from edge_agent.base.canonical import sha256_hex
from edge_agent.reports.errors import TemplateError
from edge_agent.reports.narrative.names import Grammar
from edge_agent.reports.narrative.wording import WordingMissing, read_wording
from edge_agent.reports.request import Language

# v1: the wordings of reference writer r7, moved out of reference.py unchanged (the same texts, byte for byte).
# v2: v1 with tags named as people say them (reference writer r9): the process values' sentences write `{tag}` as
# "la vibración de la bomba P-101" and open with `{Tag}`, worded so no article meets "de" ("el de {tag}" is gone);
# `[words]` gains what names a tag (`kinds`, `feminine`, `masculine`, `quantities`: `narrative.names.Grammar`).
REFERENCE_PHRASEBOOK_VERSION = "v2"
LANGUAGES: tuple[str, ...] = get_args(Language)
# At least three wordings a kind: reports on different facts read differently.
MIN_WORDINGS = 3
# The fields the writer fills each grammar template with (`writer.SectionWriter`).
WORD_FIELDS: dict[str, frozenset[str]] = {
    "at": frozenset({"hhmm"}),
    "clock": frozenset({"hhmm"}),
    "on_day": frozenset({"day", "at"}),
    "span": frozenset({"a", "b", "at_a", "at_b", "clock_a", "clock_b"}),
    "span_days": frozenset({"a", "b"}),
    "quote": frozenset({"text"}),
    "peak_item": frozenset({"tag", "max", "at", "mean"}),
    "change": frozenset({"tag", "from_", "to", "at"}),
    "change_short": frozenset({"tag", "at"}),
}
# The words of `[words.agree]` that say a two-state tag's values (`slots.process_values`): a run state's, said
# of its asset ("en marcha", "parada"), and any other's, said of the tag ("activo", "inactivo").
STATE_WORDS = frozenset({"running", "stopped", "on", "off"})


class PhrasebookError(TemplateError):
    """A reference phrasebook file that is missing or malformed; `key` is the offending key's dotted path."""

    def __init__(self, name: str, key: str, reason: str) -> None:
        self.name, self.key, self.reason = name, key, reason
        super().__init__(f"reference phrasebook {name}: {key}: {reason}")


def fields(template: str) -> frozenset[str]:
    """The named fields of a `str.format` template; ValueError for a malformed one or a field that is not a plain
    name (positional, indexed, converted or formatted fields are not filled by the writer)."""
    names = set()
    for _, field, spec, conversion in string.Formatter().parse(template):
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            raise ValueError(f"{{{field}}} is not a plain named field")
        names.add(field)
    return frozenset(names)


def placeholders(template: str) -> frozenset[str]:
    """A phrase's fields with `{Name}` read as `name`: the writer fills both from the one value, capitalised."""
    return frozenset(f[:1].lower() + f[1:] for f in fields(template))


def _template(text: str) -> str:
    fields(text)
    return text


Template = Annotated[str, AfterValidator(_template)]
Pair = tuple[str, str]  # singular, plural; shift window, free window; one o'clock, any other hour


class Words(BaseModel):
    """Grammar, not data: nouns, linking words, and the templates that write times, spans, quotes and lists."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    nouns: dict[str, Pair]
    and_: str = Field(alias="and")
    for_: str = Field(alias="for")
    others: str
    an_operator: str
    alarm: str
    same_alarm: str
    on: str
    in_: str = Field(alias="in")
    during: Pair
    end_of: Pair
    at: tuple[Template, Template]
    clock: tuple[Template, Template]
    on_day: Template
    span: Template
    span_days: Template
    quote: Template
    peak_item: Template
    change: Template
    change_short: Template
    topic: dict[str, str]
    # A tag as people say it (`names.Grammar`): assets by their id's prefix, nouns the gender rule gets wrong, and a
    # quantity's name where a report says it otherwise than `base.quantities.NAMES` first does. Absent in v1.
    kinds: dict[str, str] = {}
    feminine: tuple[str, ...] = ()
    masculine: tuple[str, ...] = ()
    quantities: dict[str, str] = {}
    # A stop's reason code as people say it, with its article; a code not listed keeps its words. Absent in v1.
    reasons: dict[str, str] = {}
    # Why a KPI cannot be computed, per code of a fact's `missing` ("scrap": "sin recuento de desecho"). Absent in v1.
    missing: dict[str, str] = {}
    # Words said of an asset or a tag, (masculine, feminine): the writer fills each as a phrase's `{placeholder}` in
    # the form that agrees with the sentence's asset ("la bomba P-101" → "parada", "ella"; `names.Grammar.agree`),
    # and says a two-state tag's values with `STATE_WORDS`. Absent in v1.
    agree: dict[str, Pair] = {}

    @field_validator("kinds")
    @classmethod
    def _kind_fields(cls, value: dict[str, str]) -> dict[str, str]:
        for text in value.values():
            if fields(text) != {"id"}:
                raise ValueError(f"{text!r} must name {{id}}, and only it")
        return value

    @field_validator("agree")
    @classmethod
    def _state_words(cls, value: dict[str, Pair]) -> dict[str, Pair]:
        for word in value:
            if not word.isidentifier():
                raise ValueError(f"{word!r} is not a name a phrase can use as a {{placeholder}}")
        if value and not STATE_WORDS <= value.keys():
            raise ValueError(f"must hold {sorted(STATE_WORDS)}, the words of a two-state tag's values")
        return value

    @field_validator(*WORD_FIELDS)
    @classmethod
    def _known_fields(cls, value: str | tuple[str, ...], info: ValidationInfo) -> str | tuple[str, ...]:
        allowed = WORD_FIELDS[str(info.field_name)]
        for text in (value,) if isinstance(value, str) else value:
            unknown = fields(text) - allowed
            if unknown:
                raise ValueError(f"names {sorted(unknown)}; it may name only {sorted(allowed)}")
        return value


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    phrases: dict[str, Annotated[tuple[Template, ...], Field(min_length=MIN_WORDINGS)]]
    words: Words


@dataclass(frozen=True)
class ReferencePhrasebook:
    name: str  # "v1/es.toml"
    sha256: str
    phrases: dict[str, tuple[str, ...]]  # sentence kind → its wordings
    words: Words


def parse_phrasebook(name: str, raw: bytes) -> ReferencePhrasebook:
    """One language file's bytes as a phrasebook, or a PhrasebookError naming `name` and the offending key."""
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PhrasebookError(name, "(file)", f"not UTF-8 TOML: {exc}") from exc
    return phrasebook_from_data(name, data, sha256_hex(raw))


def phrasebook_from_data(name: str, data: Any, sha256: str = "-") -> ReferencePhrasebook:
    """Parsed file content (any value) as a phrasebook, or a PhrasebookError naming the first offending key."""
    try:
        content = _File.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        key = ".".join(str(part) for part in error["loc"]) or "(file)"
        raise PhrasebookError(name, key, error["msg"]) from exc
    return ReferencePhrasebook(name, sha256, content.phrases, content.words)


def _shape(book: ReferencePhrasebook) -> dict[str, frozenset[str]]:
    """Every key of the file with its placeholders (none for the words; `WORD_FIELDS` bounds their templates)."""
    shape = {f"phrases.{kind}": frozenset().union(*map(placeholders, v)) for kind, v in book.phrases.items()}
    shape |= {f"words.nouns.{noun}": frozenset() for noun in book.words.nouns}
    shape |= {f"words.topic.{topic}": frozenset() for topic in book.words.topic}
    shape |= {f"words.kinds.{kind}": frozenset() for kind in book.words.kinds}
    shape |= {f"words.quantities.{quantity}": frozenset() for quantity in book.words.quantities}
    shape |= {f"words.reasons.{code}": frozenset() for code in book.words.reasons}
    shape |= {f"words.missing.{code}": frozenset() for code in book.words.missing}
    shape |= {f"words.agree.{word}": frozenset() for word in book.words.agree}
    return shape


def check_parity(books: Mapping[str, ReferencePhrasebook]) -> None:
    """Every book has the first one's keys and no other, and each phrase kind the same placeholders."""
    (first, reference), *others = books.items()
    want = _shape(reference)
    for _, book in others:
        got = _shape(book)
        for key in sorted(want.keys() | got.keys()):
            if key not in got:
                raise PhrasebookError(book.name, key, f"missing (the {first} file has it)")
            if key not in want:
                raise PhrasebookError(book.name, key, f"not in the {first} file")
            if got[key] != want[key]:
                ours, theirs = sorted(got[key]), sorted(want[key])
                raise PhrasebookError(book.name, key, f"placeholders {ours} differ from the {first} file's {theirs}")


@cache
def load_phrasebooks(version: str = REFERENCE_PHRASEBOOK_VERSION) -> dict[str, ReferencePhrasebook]:
    """Every language's file of `version`, parsed and checked against each other (once per process)."""
    books = {}
    for language in LANGUAGES:
        try:
            file = read_wording("reference", version, language)
        except WordingMissing as exc:
            raise PhrasebookError(exc.name, "(file)", "missing") from exc
        books[language] = parse_phrasebook(file.name, file.raw)
    check_parity(books)
    return books


def load_reference_phrasebook(language: str, version: str = REFERENCE_PHRASEBOOK_VERSION) -> ReferencePhrasebook:
    return load_phrasebooks(version)[language]


def tag_grammar(language: str, version: str = REFERENCE_PHRASEBOOK_VERSION) -> Grammar:
    """How `language` names assets, tags and stop reasons (`names.Grammar`), from its phrasebook's `[words]`: the
    reports' and the ask's answers' one copy."""
    w = load_reference_phrasebook(language, version).words
    return Grammar(language, w.kinds, frozenset(w.feminine), frozenset(w.masculine), w.quantities, w.reasons)


__all__ = [
    "LANGUAGES",
    "REFERENCE_PHRASEBOOK_VERSION",
    "STATE_WORDS",
    "PhrasebookError",
    "ReferencePhrasebook",
    "Words",
    "check_parity",
    "load_phrasebooks",
    "load_reference_phrasebook",
    "parse_phrasebook",
    "phrasebook_from_data",
    "placeholders",
    "tag_grammar",
]
