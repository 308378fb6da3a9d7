"""What a published section must read like, besides being grounded (pure): prose, not the prompt echoed back.

A small model's usual failures, each a reason to reject a section's text: a sentence said twice, a word said twice
in a row, a prompt header or fence copied into the text, a fact line copied word for word (the facts list already
says it), and nothing left once the token limit cut it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# Headers of the v2 section prompt in the three languages, and the notes fence: never part of a narrative.
_PROMPT_TEXT = re.compile(
    r"<<<|>>>|\b(?:FACTS|HECHOS|FATOS|RELATED|RELACIONADOS|OPERATOR NOTES|NOTAS DE OPERADOR|NOTAS DO OPERADOR)\b"
    r"|\b(?:Section|Sección|Seção)\s*:|\[(?:system|strict|user|names|labels)\]",
)
# A word of letters said twice in a row, whatever the case ("2 controles fallidos fallidos de 16"): a small model's
# stutter. English allows these doubles ("P-102.running from off to on on 2025-05-11"); Spanish and Portuguese have
# none a report would use.
_DOUBLED_WORD = re.compile(r"\b([^\W\d_]{2,})\s+\1\b", re.IGNORECASE)
_GRAMMATICAL_DOUBLES = frozenset({"had", "that", "on"})
# A sentence ends at . ! ? followed by a space or the end; "7.86" and "P-101." inside a sentence stay whole.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


# A list of one-word items ("juan.perez, john.smith y otros", "P-101, C-201 and T-301"): items open with a letter
# (figures are never touched), joined by commas and a last "y"/"e"/"and".
_ITEM = r"[^\W\d_][\w.\-]*(?<![.\-])"
_JOIN = r"(?:,\s+|\s+(?:y|e|and)\s+)"
_LIST = re.compile(rf"(?<![\w.\-]){_ITEM}(?:{_JOIN}{_ITEM})+(?![\w\-])")


def dedupe_lists(text: str) -> str:
    """`text` with an item said twice in one list said once: "juan.perez, juan.perez, john.smith y otros" →
    "juan.perez, john.smith y otros". A small model lists a note's author once per note (the prompt fences each note
    with its author); the reference writer names each author once (`slots.notes`). Lists without a repeat stay as
    written, byte for byte."""

    def once(m: re.Match[str]) -> str:
        items = re.split(_JOIN, m.group(0))
        seen = list(dict.fromkeys(items))
        if len(seen) == len(items):
            return m.group(0)
        if len(seen) == 1:
            return seen[0]
        last = re.findall(_JOIN, m.group(0))[-1]
        joiner = last if last.strip() != "," else ", "
        return ", ".join(seen[:-1]) + joiner + seen[-1]

    return _LIST.sub(once, text)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _norm(sentence: str) -> str:
    folded = unicodedata.normalize("NFKC", sentence).casefold()
    return " ".join(re.sub(r"[^\w.:\-]+", " ", folded).split()).rstrip(".")


def prose_problems(text: str, fact_lines: Iterable[str]) -> list[str]:
    """Why `text` is not publishable prose (empty: it is). `fact_lines` are the sentences the prompt listed."""
    said = sentences(text)
    if not said:
        return ["no full sentence"]
    problems = []
    if _PROMPT_TEXT.search(text):
        problems.append("prompt text in the output")
    seen: set[str] = set()
    for s in said:
        key = _norm(s)
        if key in seen:
            problems.append(f"repeated sentence: {s[:80]}")
        seen.add(key)
    problems += [
        f"word repeated: {m.group(0)}"
        for m in _DOUBLED_WORD.finditer(text)
        if m.group(1).casefold() not in _GRAMMATICAL_DOUBLES
    ]
    copied = {_norm(line.lstrip("- ")) for line in fact_lines}
    problems += [f"fact line copied verbatim: {s[:80]}" for s in said if _norm(s) in copied]
    return problems
