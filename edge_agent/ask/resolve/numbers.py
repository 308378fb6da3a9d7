"""Numbers written in words, as people dictate them, read as digits in folded text (es/en/pt): "la p ciento uno" →
"la p 101", "a las diez de la mañana" → "a las 10 de la manana", "bomba uno cero dos" → "bomba 102" (two or more
digit words in a row are read digit by digit, as ids are read aloud).

"un", "una", "uno", "um", "uma", "one" and "dos" alone stay words (articles, and Portuguese "dos" is "of the");
they count inside a number ("ciento uno", "ciento dos", "trinta e um"), and alone after a word of `counted_after`
("la linea dos", "ele um"). "once" is eleven only after "las", "a", "de", "y" or "hasta" ("de once a doce"); elsewhere
it is English.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

_UNITS = {
    **dict.fromkeys(("cero", "zero", "oh"), 0),
    **dict.fromkeys(("uno", "one", "um", "una", "uma", "un"), 1),
    **dict.fromkeys(("dos", "two", "dois", "duas"), 2),
    **dict.fromkeys(("tres", "three"), 3),
    **dict.fromkeys(("cuatro", "four", "quatro"), 4),
    **dict.fromkeys(("cinco", "five"), 5),
    **dict.fromkeys(("seis", "six"), 6),
    **dict.fromkeys(("siete", "seven", "sete"), 7),
    **dict.fromkeys(("ocho", "eight", "oito"), 8),
    **dict.fromkeys(("nueve", "nine", "nove"), 9),
}
# Words that are a number alone only inside a longer one.
_ARTICLE_LIKE = frozenset({"uno", "one", "um", "una", "uma", "un", "oh", "dos"})
# What is counted: "paró la línea dos veces" is twice, not line 2 (`counted_after`).
_COUNTS = frozenset(
    "veces vezes times horas hours minutos minutes dias days turnos shifts paradas paros stops alarmas alarmes "
    "alarms bombas pumps".split()
)
_ELEVEN_AFTER = frozenset({"las", "a", "de", "y", "hasta", "entre", "the"})
_TEENS = {
    **dict.fromkeys(("diez", "ten", "dez"), 10),
    **dict.fromkeys(("once", "eleven", "onze"), 11),
    **dict.fromkeys(("doce", "twelve", "doze"), 12),
    **dict.fromkeys(("trece", "thirteen", "treze"), 13),
    **dict.fromkeys(("catorce", "fourteen", "catorze", "quatorze"), 14),
    **dict.fromkeys(("quince", "fifteen", "quinze"), 15),
    **dict.fromkeys(("dieciseis", "sixteen", "dezesseis", "dezasseis"), 16),
    **dict.fromkeys(("diecisiete", "seventeen", "dezessete", "dezassete"), 17),
    **dict.fromkeys(("dieciocho", "eighteen", "dezoito"), 18),
    **dict.fromkeys(("diecinueve", "nineteen", "dezenove", "dezanove"), 19),
    "veintiuno": 21,
    "veintidos": 22,
    "veintitres": 23,
    "veinticuatro": 24,
    "veinticinco": 25,
    "veintiseis": 26,
    "veintisiete": 27,
    "veintiocho": 28,
    "veintinueve": 29,
}
_TENS = {
    **dict.fromkeys(("veinte", "twenty", "vinte"), 20),
    **dict.fromkeys(("treinta", "thirty", "trinta"), 30),
    **dict.fromkeys(("cuarenta", "forty", "quarenta"), 40),
    **dict.fromkeys(("cincuenta", "fifty", "cinquenta"), 50),
    **dict.fromkeys(("sesenta", "sixty", "sessenta"), 60),
    **dict.fromkeys(("setenta", "seventy"), 70),
    **dict.fromkeys(("ochenta", "eighty", "oitenta"), 80),
    **dict.fromkeys(("noventa", "ninety"), 90),
}
_HUNDREDS = {
    **dict.fromkeys(("cien", "ciento", "cem", "cento"), 100),
    **dict.fromkeys(("doscientos", "doscientas", "duzentos", "duzentas"), 200),
    **dict.fromkeys(("trescientos", "trescientas", "trezentos", "trezentas"), 300),
    **dict.fromkeys(("cuatrocientos", "quatrocentos"), 400),
    **dict.fromkeys(("quinientos", "quinhentos"), 500),
    **dict.fromkeys(("seiscientos", "seiscentos"), 600),
    **dict.fromkeys(("setecientos", "setecentos"), 700),
    **dict.fromkeys(("ochocientos", "oitocentos"), 800),
    **dict.fromkeys(("novecientos", "novecentos"), 900),
}
# English tens and units said together, with a hyphen or a space: "twenty-five past eleven", "forty five minutes".
_ENGLISH_TENS = frozenset(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"))
_ENGLISH_UNITS = frozenset(("one", "two", "three", "four", "five", "six", "seven", "eight", "nine"))
# What may follow a hundred and "e" in pt: "cento e um", "cento e doze", "cento e vinte e um".
_AFTER_E = frozenset(_UNITS) | frozenset(_TEENS) | frozenset(_TENS)
_WORD = re.compile(r"[a-z]+|\S+|\s+")
# What follows an id read aloud, never a number: a day, a preposition, punctuation.
_AFTER_AN_ID = frozenset("yesterday today between at from in on during last this over since , . ? ! ; :".split())
# Digit words joined by dashes, as an id is spelled out: "la bomba uno-cero-uno", "pump one-oh-one" (not
# "twenty-five": a ten is no digit word).
_DIGIT_DASH = re.compile(rf"\b({'|'.join(_UNITS)})-(?=(?:{'|'.join(_UNITS)})\b)")


# Dictation's "siento" for "ciento" (Latin American Spanish says both alike) before a unit: "la pe siento uno".
_SIENTO = re.compile(rf"\bsiento(?=\s+(?:{'|'.join(u for u in _UNITS if u not in ('un', 'una', 'uma', 'um'))})\b)")


def spelled_numbers(folded: str, counted_after: AbstractSet[str] = frozenset()) -> str:
    """`folded` with each number in words replaced by its digits (module docstring)."""
    parts = _WORD.findall(_DIGIT_DASH.sub(r"\1 ", _SIENTO.sub("ciento", folded)))
    words = [(i, p) for i, p in enumerate(parts) if not p.isspace()]
    out = list(parts)
    k = 0
    while k < len(words):
        taken, value = _read(words, k, counted_after)
        if taken == 0:
            k += 1
            continue
        first, last = words[k][0], words[k + taken - 1][0]
        out[first : last + 1] = [value] + [""] * (last - first)
        k += taken
    return "".join(out)


def _read(words: list[tuple[int, str]], k: int, counted_after: AbstractSet[str]) -> tuple[int, str]:
    """How many words from `k` make one number, and its digits; (0, "") when none starts there."""
    tokens = [w for _, w in words[k:]]
    digits = []
    for n, token in enumerate(tokens):  # "uno cero dos": two or more digit words read one by one
        if token in _UNITS and token not in ("una", "uma", "un"):
            digits.append(str(_UNITS[token]))
            continue
        # a recogniser's "to" for "two" ending an id read aloud: "pee one oh to yesterday" (not "one oh one to three")
        if len(digits) >= 2 and token in ("to", "too") and (n + 1 == len(tokens) or tokens[n + 1] in _AFTER_AN_ID):
            digits.append("2")
        break
    if len(digits) >= 2:
        return len(digits), "".join(digits)
    if tokens[0] == "once" and (k == 0 or words[k - 1][1] not in _ELEVEN_AFTER):
        return 0, ""
    counted = (
        k > 0
        and words[k - 1][1] in counted_after
        and tokens[0] not in ("una", "uma", "un")
        and not _COUNTS.intersection(tokens[1:2])
    )
    value, n = 0, 0
    if n < len(tokens) and tokens[n] in _HUNDREDS:
        value += _HUNDREDS[tokens[n]]
        n += 1
        if n + 1 < len(tokens) and tokens[n] == "e" and tokens[n + 1] in _AFTER_E:
            n += 1  # pt "cento e um", "trezentos e dois", "cento e vinte e um"
    if n < len(tokens) and tokens[n] in _TENS:
        tens = tokens[n]
        value += _TENS[tens]
        n += 1
        if n + 1 < len(tokens) and tokens[n] in ("y", "e", "and") and tokens[n + 1] in _UNITS:
            value += _UNITS[tokens[n + 1]]
            n += 2
        elif n < len(tokens) and tokens[n].startswith("-") and tokens[n][1:] in _ENGLISH_UNITS:  # "twenty-five"
            value += _UNITS[tokens[n][1:]]
            n += 1
        elif n < len(tokens) and tens in _ENGLISH_TENS and tokens[n] in _ENGLISH_UNITS:  # "twenty five"
            value += _UNITS[tokens[n]]
            n += 1
    elif n < len(tokens) and tokens[n] in _TEENS:
        value += _TEENS[tokens[n]]
        n += 1
    elif n < len(tokens) and tokens[n] in _UNITS and (n > 0 or counted or tokens[n] not in _ARTICLE_LIKE):
        value += _UNITS[tokens[n]]
        n += 1
    return (n, str(value)) if n else (0, "")
