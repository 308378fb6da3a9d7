"""Ingested text (log lines, MES free text) is untrusted data: flag what reads like an instruction, cut it to a
length, and fence it so it can never be mistaken for the prompt's own instructions.

The patterns catch the common phrasings in the plant's three languages; they are a tripwire that puts a flag in the
report for a human, not the defence itself. The defence is structural: untrusted text only ever appears fenced in the
user message, flagged text is withheld from the model entirely, and every claim in the narrative must match a fact.
"""

from __future__ import annotations

import re
import unicodedata

_PATTERNS = [
    # es
    r"ignor[ae]\w*\s+(?:\w+\s+){0,3}(?:instrucci|indicaci|orden|regla)",
    r"olvid[ae]\w*\s+(?:\w+\s+){0,3}(?:instrucci|indicaci|regla|anterior)",
    r"nuevas?\s+instrucciones",
    r"(?:act[uú]a|comp[oó]rtate)\s+como",
    r"(?:ahora\s+)?eres\s+(?:un|una|el|la)\b",
    r"responde\s+(?:solo|[uú]nicamente)",
    # en
    r"ignore\s+(?:\w+\s+){0,3}(?:instruction|prompt|rule|direction)",
    r"disregard\s+(?:\w+\s+){0,3}(?:instruction|prompt|rule|above|previous)",
    r"forget\s+(?:\w+\s+){0,3}(?:instruction|prompt|rule|above|previous)",
    r"new\s+instructions?",
    r"you\s+are\s+now\b",
    r"system\s+prompt",
    r"\bact\s+as\b",
    # pt
    r"ignor[ea]\w*\s+(?:\w+\s+){0,3}instru[cç]",
    r"esque[cç]\w*\s+(?:\w+\s+){0,3}(?:instru[cç]|regra|anterior)",
    r"novas?\s+instru[cç]",
    r"(?:aja|atue)\s+como",
    # markup that tries to open or close a prompt section
    r"<\s*/?\s*(?:system|assistant|user|im_start|im_end)\b",
    r"<<<|>>>",
]
_REGEX = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)
FENCE_OPEN = "<<<NOTE"
FENCE_CLOSE = "NOTE>>>"


def _fold(text: str) -> str:
    """Compatibility-normalise (full-width letters, ligatures) so look-alike characters do not dodge the patterns."""
    return unicodedata.normalize("NFKC", text)


def looks_like_instruction(text: str) -> bool:
    return _REGEX.search(_fold(text)) is not None


def clean(text: str, max_chars: int) -> str:
    """One line, control characters and fence markers removed, cut to `max_chars` (an ellipsis marks the cut)."""
    text = _fold(text)
    text = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    text = text.replace("<<<", "‹‹‹").replace(">>>", "›››")
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


def fence(label: str, text: str) -> str:
    return f"{FENCE_OPEN} {label}\n{text}\n{FENCE_CLOSE}"
