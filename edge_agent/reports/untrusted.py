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
    # markup that tries to open or close a prompt section, and chat-template control tokens
    r"<\s*/?\s*(?:system|assistant|user|im_start|im_end)\b",
    r"<<<|>>>",
    r"<\s*\|",
    r"<\s*/?\s*s\s*>",
    r"<<\s*/?\s*SYS\s*>>",
    r"\[\s*/?\s*INST\s*\]",
]
_REGEX = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)
FENCE_OPEN = "<<<NOTE"
FENCE_CLOSE = "NOTE>>>"
# Chat-template control tokens are written in the text a tokenizer reads, so ingested text could carry one into a
# prompt: ChatML `<|im_start|>`, `<|endoftext|>`, Llama-3 `<|eot_id|>`, `<s>`, `</s>`, `<<SYS>>`, SmolLM2's
# `<file_sep>`. Every `<` that could open one (before `|`, `/`, `!`, `<` or a letter) becomes `‹` (U+2039): visible,
# so a reader sees something was there; one character for one, so lengths hold; left alone by NFKC, so cleaning
# twice changes nothing; and the start of no special token of any tokenizer. A zero-width break would be invisible
# and lost on copy and paste. `<` before a digit or a space (`T < 80`, `<5 mm`) stays.
_TOKEN_OPEN = re.compile(r"<(?=[|/!<A-Za-z_])")
# Mistral and Llama-2 `[INST]`, `[/INST]`, `[SYSTEM_PROMPT]`, `[TOOL_CALLS]`: an upper-case word in brackets opens
# with `⟦` (U+27E6) instead, for the same reasons.
_BRACKET_TOKEN = re.compile(r"\[(?=/?[A-Z][A-Z_]*\])")


def _fold(text: str) -> str:
    """Compatibility-normalise (full-width letters, ligatures) so look-alike characters do not dodge the patterns."""
    return unicodedata.normalize("NFKC", text)


def looks_like_instruction(text: str) -> bool:
    return _REGEX.search(_fold(text)) is not None


def _neutralise(text: str) -> str:
    """Fence markers and chat-template control tokens made inert, after NFKC (`＜｜` folds to `<|`)."""
    text = _TOKEN_OPEN.sub("‹", _fold(text))
    return _BRACKET_TOKEN.sub("⟦", text).replace(">>>", "›››")


def clean(text: str, max_chars: int) -> str:
    """One line, control characters removed, fence markers and control tokens neutralised, cut to `max_chars` (an
    ellipsis marks the cut)."""
    text = "".join(" " if unicodedata.category(c).startswith("C") else c for c in _fold(text))
    text = _neutralise(text)
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


def fence(label: str, text: str) -> str:
    return f"{FENCE_OPEN} {label}\n{text}\n{FENCE_CLOSE}"
