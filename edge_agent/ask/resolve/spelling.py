"""A question's words typed a letter off the ask's own words put right ("parads" → "paradas", "alrams" → "alarms",
"compresr" → "compresor", "stopage" → "stoppage"): read again when the question as typed
names nothing the planner knows (planner.reference_plan)."""

from __future__ import annotations

import functools
import re

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from edge_agent.ask.resolve.text import fold

# The nouns that decide what a question asks, es/en/pt (folded): what it counts, measures and names. No verb forms
# and no short words: "produto" is a letter off "produjo", "paras" (you stop) one off "paros".
WORDS = frozenset(
    """
    parada paradas stops stoppage stoppages downtime paragem paragens detencion detenciones
    alarma alarmas alarms alarme alarmes
    nivel level niveles levels vibracion vibration vibracao temperatura temperature caudal vazao
    produccion production producao scrap desecho desperdicio refugo merma
    calidad quality qualidade controles checks inspecciones inspections
    compresor compressor bomba pump tanque tank linea line linha compresores compressors compressores bombas pumps
    tanques tanks lineas lines linhas
    maximo maxima maximum minimo minima minimum promedio average media
    """.split()
)
# A word of five letters or more is put right when its closest of `WORDS` is a letter off (a swap of two counts as
# one), two for words of nine letters or more; shorter words are too often others ("para" is a letter off "paro").
_TOKEN = re.compile(r"[^\W\d_]{5,}")


@functools.lru_cache(maxsize=4096)
def _right(word: str) -> str:
    if word in WORDS:
        return word
    limit = 2 if len(word) >= 9 else 1
    found = process.extractOne(word, WORDS, scorer=DamerauLevenshtein.distance, score_cutoff=limit)
    return word if found is None else found[0]


def respelled(question: str, *, sure: bool = False) -> str:
    """`question` with each word a letter off one of `WORDS` put as that word (the others as written, case and all).
    `sure`: only the slips no other word is: a letter dropped, added or swapped ("refuggo"), or any slip of a word of
    nine letters or more ("desperdisio"); a letter changed in a shorter word is too often another word ("derecho" is
    a letter off "desecho", "steps" off "stops"), and a plural's "s" another form of a word ("check", "checks")."""

    def right(match: re.Match[str]) -> str:
        word = fold(match.group(0))
        put = _right(word)
        slip = len(put) >= 9 or one_edit(word, put, changes=False) and word.rstrip("s") != put.rstrip("s")
        return match.group(0) if put == word or sure and not slip else put

    return _TOKEN.sub(right, question)


def one_edit(word: str, target: str, *, changes: bool) -> bool:
    """`word` is `target` with one letter dropped, added or swapped with the next (or changed, when `changes`)."""
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target, strict=True)) if a != b]
        if len(diff) == 1:
            return changes
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and word[diff[0]] + word[diff[1]] == target[diff[1]] + target[diff[0]]
        )
    shorter, longer = sorted((word, target), key=len)
    if len(longer) - len(shorter) != 1:
        return False
    return any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))
