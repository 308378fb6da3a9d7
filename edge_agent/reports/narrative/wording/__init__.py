"""The wording's one home: every text the agent writes from, as versioned data files below this package.

- `prompts/<version>/section.<language>.txt`: a narrative section's prompt (what the model is told);
- `prompts/<version>/facts.<language>.txt`: the prompts' phrasebook (what the model is shown, fact by fact);
- `phrasebook/<version>/<language>.toml`: the reference writer's wordings;
- `ask/<version>/answers.toml`: the ask answer writer's wordings, every language in one file;
- `ask/<version>/planner.txt`: the model planner's instructions (the question's language is the model's to read).

`read_wording` reads one file by kind, language and version and returns its bytes with its name (`v3/facts.es.txt`,
the name a report records) and SHA-256. Parsing stays with each reader (`prompts`, `phrasebook`, `ask.wording`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from edge_agent.base.canonical import sha256_hex
from edge_agent.reports.errors import TemplateError
from edge_agent.reports.request import Language

WordingKind = Literal["section", "facts", "reference", "ask", "planner"]
KINDS: tuple[str, ...] = get_args(WordingKind)
LANGUAGES: tuple[str, ...] = get_args(Language)
_DIR = Path(__file__).resolve().parent
# kind → (its folder, its file name in a version folder); "{language}" is filled in, the ask file holds them all.
_FILES: dict[str, tuple[str, str]] = {
    "section": ("prompts", "section.{language}.txt"),
    "facts": ("prompts", "facts.{language}.txt"),
    "reference": ("phrasebook", "{language}.toml"),
    "ask": ("ask", "answers.toml"),
    "planner": ("ask", "planner.txt"),
}
_VERSION = re.compile(r"v\d+")


class WordingMissing(TemplateError):
    """No wording file for a kind, language and version; `name` is the file looked for (`v0/es.toml`)."""

    def __init__(self, kind: str, name: str) -> None:
        self.kind, self.name = kind, name
        super().__init__(f"{kind} wording {name} is missing")


@dataclass(frozen=True)
class WordingFile:
    kind: str
    name: str  # the path below its kind's folder: "v3/section.es.txt", the name reports record
    raw: bytes
    sha256: str


def wording_name(kind: str, version: str, language: str | None = None) -> str:
    """The file's name below its kind's folder; ValueError for an unknown kind or language or a malformed version."""
    if kind not in _FILES:
        raise ValueError(f"wording kind {kind!r} is not one of {list(KINDS)}")
    if not _VERSION.fullmatch(version):
        raise ValueError(f"wording version {version!r} is not v<number>")
    per_language = "{language}" in _FILES[kind][1]
    if per_language and language not in LANGUAGES:
        raise ValueError(f"{kind} wording needs a language of {list(LANGUAGES)}, not {language!r}")
    if not per_language and language is not None:
        raise ValueError(f"{kind} wording holds every language in one file; it takes none")
    return f"{version}/{_FILES[kind][1].format(language=language)}"


def read_wording(kind: WordingKind, version: str, language: str | None = None) -> WordingFile:
    """One wording file's bytes; WordingMissing when the version has no such file."""
    name = wording_name(kind, version, language)
    try:
        raw = (_DIR / _FILES[kind][0] / name).read_bytes()
    except FileNotFoundError as exc:
        raise WordingMissing(kind, name) from exc
    return WordingFile(kind, name, raw, sha256_hex(raw))


__all__ = ["KINDS", "WordingFile", "WordingKind", "WordingMissing", "read_wording", "wording_name"]
