"""Question text folded for matching: lower case, accents and ¿¡ dropped, whitespace collapsed, so "¿Cuál es la
vibración?" and "cual es la vibracion" match the same rules."""

from __future__ import annotations

import re
import unicodedata

_SPACE = re.compile(r"\s+")
# Dropped before matching: Spanish opening marks and the quotes people paste around names; ’ becomes '.
_DROPPED = str.maketrans({"¿": " ", "¡": " ", "“": " ", "”": " ", '"': " ", "«": " ", "»": " ", "’": "'"})


def fold(text: str) -> str:
    """`text` in lower case without accents (NFKD, combining marks removed) and with single spaces."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_DROPPED).casefold())
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _SPACE.sub(" ", bare).strip()
