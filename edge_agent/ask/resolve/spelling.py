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
    produccion production producao scrap desecho refugo merma
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


def respelled(question: str) -> str:
    """`question` with each word a letter off one of `WORDS` put as that word (the others as written, case and all)."""

    def right(match: re.Match[str]) -> str:
        word = fold(match.group(0))
        return match.group(0) if _right(word) == word else _right(word)

    return _TOKEN.sub(right, question)
