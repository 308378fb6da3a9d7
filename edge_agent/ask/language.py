"""Which of es/en/pt a question is in: cheap and deterministic, by counting each language's own words and letters."""

from __future__ import annotations

import re

from edge_agent.base.types import Language

# Words frequent in questions of one language and rare in the other two (accents kept: "é", "não", "à" tell
# Portuguese from Spanish where the folded words are the same; "como", both languages' and often unaccented in
# Spanish, tells neither).
_WORDS: dict[Language, frozenset[str]] = {
    "es": frozenset(
        "el la los las del al y que cuál cuáles cuántas cuántos cuánto cuánta qué hubo tuvo fue ayer hoy anoche "
        "turno entre paradas parada alarmas notas dejaron semana pasada mañana ahora esta este por cómo dónde "
        "cuándo producción desecho calidad vibración temperatura es son hay lista muestra dame reportes informes "
        "borradores y las se un una hola buenos buenas dime puedes pasó estuvo estás están cuál cuáles".split()
    ),
    "en": frozenset(
        "the what was were how many much did of in on at and between yesterday today last night shift stops "
        "alarms notes week this morning now is are which list show me reports draft highest lowest average "
        "temperature vibration production scrap quality make made by for hello hi please happened what's yday avg "
        "prev mins brg lvl downtime".split()
    ),
    "pt": frozenset(
        "o os as da do das dos na no nas nos qual quais quantas quantos quanto foi teve houve ontem hoje turno "
        "entre paradas alarmes notas deixaram semana passada manhã agora esta este por onde quando produção "
        "refugo qualidade vibração temperatura é são há lista mostre relatórios rascunhos e um uma não à olá oi "
        "você aconteceu ficou bem nível estivesse tivesse fosse ótimo muito pra pro vc tá em ao pela pelo isso essa "
        "esse até também depois parou tinha estava mancal vazão paragem paragens registos".split()
    ),
}
# Letters only one of the three writes.
_LETTERS: dict[Language, str] = {"es": "ñ¿¡", "en": "", "pt": "ãõçâêô"}
_WORD = re.compile(r"[^\W\d_]+")
# Ties and questions with no telling word: the order below (Spanish first, the language most of the demo plant's
# people write in; edge_agent/sim/plant.py writes most notes in Spanish).
_ORDER: tuple[Language, ...] = ("es", "en", "pt")


def detect_language(question: str) -> Language:
    """The language among es/en/pt with the most of its own words and letters in `question`; "es" when none."""
    lowered = question.casefold()
    words = _WORD.findall(lowered)
    scores = {lang: sum(word in _WORDS[lang] for word in words) for lang in _ORDER}
    for lang, letters in _LETTERS.items():
        scores[lang] += 2 * sum(lowered.count(letter) for letter in letters)
    return max(_ORDER, key=lambda lang: scores[lang])
