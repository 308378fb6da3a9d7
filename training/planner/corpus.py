"""The planner's corpus: (question → reading) pairs, the reading being what `edge_agent.ask.model_planner` constrains
the model to — the intents asked about and the words of the question naming its subject and its time.

Questions are drawn per seed from wordings in es/en/pt: each intent's ways of asking (colloquial, terse, with or
without accents and question marks), subjects as people write them (ids as written and misspelt, equipment words
with a number, the names of a measured value), times (shifts, relative days, clock ranges, parts of the day), two
intents at once, and questions to leave alone (out of the plant, commands), whose reading is empty. The plants vary
by seed (their asset ids and equipment kinds), so the model learns to copy a name, not to know ours. The target is
the reading as the engine writes it under the schema: compact JSON, keys in the schema's order.

bench.ask's held-out questions are hand-written apart from this; tests/test_planner_corpus.py checks that none of
them is in the corpus.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from typing import Literal

from pydantic import BaseModel, ConfigDict

from edge_agent.ask.model_planner import PlanDraft, planner_messages
from edge_agent.llm.types import ChatMessage

Split = Literal["train", "test"]
Lang = Literal["es", "en", "pt"]
# Disjoint from the narrator's seeds (1000-1599 train, 0-39 test) and bench.ask's 4242.
TRAIN_SEEDS = range(20_000, 23_000)
TEST_SEEDS = range(29_000, 29_100)
LANGS: tuple[Lang, ...] = ("es", "en", "pt")

# Equipment kinds: the word per language (singular, its article) and the letters plants open their ids with.
_KINDS: dict[str, dict[str, tuple[str, str]]] = {
    "pump": {"es": ("bomba", "la"), "en": ("pump", "the"), "pt": ("bomba", "a")},
    "compressor": {"es": ("compresor", "el"), "en": ("compressor", "the"), "pt": ("compressor", "o")},
    "tank": {"es": ("tanque", "el"), "en": ("tank", "the"), "pt": ("tanque", "o")},
    "furnace": {"es": ("horno", "el"), "en": ("furnace", "the"), "pt": ("forno", "o")},
    "mixer": {"es": ("mezcladora", "la"), "en": ("mixer", "the"), "pt": ("misturador", "o")},
    "conveyor": {"es": ("banda", "la"), "en": ("conveyor", "the"), "pt": ("esteira", "a")},
    "boiler": {"es": ("caldera", "la"), "en": ("boiler", "the"), "pt": ("caldeira", "a")},
}
_LETTERS = {
    "pump": ("P",),
    "compressor": ("C", "K"),
    "tank": ("T", "TK"),
    "furnace": ("H", "F"),
    "mixer": ("M", "MX"),
    "conveyor": ("CV", "B"),
    "boiler": ("B", "CA"),
}
_LINE = {"es": ("línea", "la"), "en": ("line", ""), "pt": ("linha", "a")}
_OF = {"es": "de", "en": "of", "pt": "de"}
# Measured values by language: (name, the article it takes).
_QUANTITIES: dict[str, dict[str, tuple[str, str]]] = {
    "vibration": {"es": ("vibración", "la"), "en": ("vibration", "the"), "pt": ("vibração", "a")},
    "bearing_temp": {
        "es": ("temperatura del rodamiento", "la"),
        "en": ("bearing temperature", "the"),
        "pt": ("temperatura do mancal", "a"),
    },
    "temp": {"es": ("temperatura", "la"), "en": ("temperature", "the"), "pt": ("temperatura", "a")},
    "flow": {"es": ("caudal", "el"), "en": ("flow", "the"), "pt": ("vazão", "a")},
    "level": {"es": ("nivel", "el"), "en": ("level", "the"), "pt": ("nível", "o")},
    "pressure": {"es": ("presión", "la"), "en": ("pressure", "the"), "pt": ("pressão", "a")},
    "current": {"es": ("corriente", "la"), "en": ("current", "the"), "pt": ("corrente", "a")},
}
_HOURS = (6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 20, 22)

# Each intent's ways of asking: {s} the subject, {t} the time (a leading space is part of the time's phrase).
_ASK: dict[str, dict[str, tuple[str, ...]]] = {
    "stops": {
        "es": (
            "¿cuántas paradas tuvo {s}{t}?",
            "¿por qué se paró {s}{t}?",
            "paradas de {s}{t}",
            "¿{s} tuvo fallas{t}?",
            "cuanto tiempo estuvo parada {s}{t}",
            "¿cuál fue la parada más larga de {s}{t}?",
            "dame las detenciones de {s}{t}",
            "¿se detuvo {s}{t}?",
        ),
        "en": (
            "how many stops did {s} have{t}?",
            "why did {s} stop{t}?",
            "stops of {s}{t}",
            "any downtime on {s}{t}?",
            "what was the longest stop of {s}{t}",
            "did {s} trip{t}?",
            "how long was {s} down{t}?",
        ),
        "pt": (
            "quantas paradas teve {s}{t}?",
            "por que {s} parou{t}?",
            "paradas de {s}{t}",
            "{s} teve falhas{t}?",
            "quanto tempo {s} ficou parada{t}?",
            "qual foi a parada mais longa de {s}{t}?",
        ),
    },
    "production": {
        "es": (
            "¿cuánto produjo {s}{t}?",
            "producción de {s}{t}",
            "¿cuánto desecho hubo en {s}{t}?",
            "piezas buenas de {s}{t}",
            "¿cuál fue la producción de {s}{t}?",
            "¿cuánto produjo {s}{t}?",
            "¿cuánta producción hubo en {s}{t}?",
        ),
        "en": (
            "how much did {s} produce{t}?",
            "production of {s}{t}",
            "how much scrap on {s}{t}?",
            "what was the output of {s}{t}",
            "good parts from {s}{t}?",
            "how much did {s} make{t}?",
        ),
        "pt": (
            "quanto produziu {s}{t}?",
            "produção de {s}{t}",
            "quanto refugo teve {s}{t}?",
            "qual foi a produção de {s}{t}?",
            "quanto {s} produziu{t}?",
            "quanto teve de refugo {s}{t}?",
        ),
    },
    "quality_checks": {
        "es": ("¿cómo salieron los controles de calidad de {s}{t}?", "inspecciones de {s}{t}", "calidad de {s}{t}"),
        "en": ("quality checks on {s}{t}?", "how did the inspections of {s} go{t}?", "quality of {s}{t}"),
        "pt": ("inspeções de {s}{t}", "como foi a qualidade de {s}{t}?", "controles de qualidade de {s}{t}"),
    },
    "alarms": {
        "es": (
            "¿cuántas alarmas tuvo {s}{t}?",
            "alarmas de {s}{t}",
            "¿qué alarmas sonaron en {s}{t}?",
            "¿cuál fue la alarma más frecuente de {s}{t}?",
            "¿hay alarmas activas en {s}{t}?",
        ),
        "en": (
            "how many alarms did {s} raise{t}?",
            "alarms on {s}{t}",
            "which alarms went off on {s}{t}?",
            "most frequent alarm of {s}{t}",
            "any active alarms on {s}{t}?",
        ),
        "pt": (
            "quantos alarmes teve {s}{t}?",
            "alarmes de {s}{t}",
            "quais alarmes dispararam em {s}{t}?",
            "há alarmes ativos em {s}{t}?",
        ),
    },
    "alarm_performance": {
        "es": ("¿cómo estuvo el desempeño de alarmas de {s}{t}?", "tasa de alarmas de {s}{t}"),
        "en": ("alarm performance of {s}{t}", "what was the alarm rate on {s}{t}?", "alarm floods on {s}{t}?"),
        "pt": ("desempenho dos alarmes de {s}{t}", "taxa de alarmes de {s}{t}"),
    },
    "notes": {
        "es": ("¿qué notas dejaron sobre {s}{t}?", "notas de operador de {s}{t}", "comentarios sobre {s}{t}"),
        "en": ("what notes did operators leave about {s}{t}?", "operator notes on {s}{t}", "comments about {s}{t}"),
        "pt": ("quais notas deixaram sobre {s}{t}?", "anotações de {s}{t}", "comentários sobre {s}{t}"),
    },
    "oee": {
        "es": ("¿cuál fue el OEE de {s}{t}?", "oee de {s}{t}", "¿qué tal el OEE de {s}{t}?"),
        "en": ("what was the OEE of {s}{t}?", "oee of {s}{t}", "OEE for {s}{t}?"),
        "pt": ("qual foi o OEE de {s}{t}?", "oee de {s}{t}"),
    },
    "reliability": {
        "es": ("¿cuál es el MTBF de {s}{t}?", "mttr de {s}{t}", "confiabilidad de {s}{t}"),
        "en": ("what is the MTBF of {s}{t}?", "mttr for {s}{t}", "reliability of {s}{t}"),
        "pt": ("qual é o MTBF de {s}{t}?", "mttr de {s}{t}", "confiabilidade de {s}{t}"),
    },
}
# A measured value: {q} the quantity's phrase with its asset (the subject), {st} a statistic word.
_TAG: dict[str, tuple[str, ...]] = {
    "es": (
        "¿cuál fue {q}{t}?",
        "¿cuál fue el {st} de {q}{t}?",
        "{q}{t}",
        "¿cuánto marcaba {q}{t}?",
        "dame el {st} de {q}{t}",
    ),
    "en": ("what was {q}{t}?", "what was the {st} of {q}{t}?", "{q}{t}", "{st} of {q}{t}?", "show me {q}{t}"),
    "pt": ("qual foi {q}{t}?", "qual foi o {st} de {q}{t}?", "{q}{t}", "quanto marcava {q}{t}?"),
}
# A statistic written between the measured value and its asset ("la vibración máxima de la P-101"), agreeing with the
# value's article; English puts it before ("the highest vibration of P-101"), outside the subject's words.
_STAT_INSIDE: dict[str, dict[str, tuple[str, ...]]] = {
    "es": {"la": ("máxima", "mínima", "promedio", "media"), "el": ("máximo", "mínimo", "promedio", "medio")},
    "pt": {"a": ("máxima", "mínima", "média"), "o": ("máximo", "mínimo", "médio")},
}
_STAT_BEFORE = ("highest", "lowest", "average", "maximum", "minimum", "peak")
_TAG_INSIDE = {
    "es": ("¿cuál fue {a} {q}{t}?", "{a} {q}{t}", "¿cuál fue {a} {q}{t}?"),
    "en": ("what was the {st} {q}{t}?", "the {st} {q}{t}", "{st} {q}{t}?"),
    "pt": ("qual foi {a} {q}{t}?", "{a} {q}{t}"),
}
# Questions about the whole site: no subject.
_SITE: dict[str, dict[str, tuple[str, ...]]] = {
    "alarms": {
        "es": ("¿cuántas alarmas sonaron{t}?", "¿qué alarmas se activaron{t}?", "alarmas{t}"),
        "en": ("how many alarms were there{t}?", "which alarms went off{t}?", "alarms{t}"),
        "pt": ("quantos alarmes houve{t}?", "quais alarmes dispararam{t}?", "alarmes{t}"),
    },
    "stops": {
        "es": ("¿cuántas paradas hubo{t}?", "paradas{t}"),
        "en": ("how many stops were there{t}?", "stops{t}"),
        "pt": ("quantas paradas houve{t}?", "paradas{t}"),
    },
    "production": {
        "es": ("¿cuánto se produjo{t}?", "producción{t}"),
        "en": ("how much was produced{t}?", "production{t}"),
        "pt": ("quanto se produziu{t}?", "produção{t}"),
    },
}
_STATS = {
    "es": ("máximo", "mínimo", "promedio", "valor máximo", "pico"),
    "en": ("maximum", "minimum", "average", "highest value", "peak", "mean"),
    "pt": ("máximo", "mínimo", "média", "pico"),
}
_TWO = {"es": "{a} y {b}", "en": "{a} and {b}", "pt": "{a} e {b}"}
_TWO_ASK: dict[str, dict[str, str]] = {
    "es": {"stops": "paradas", "alarms": "alarmas", "notes": "notas", "production": "producción", "oee": "OEE"},
    "en": {"stops": "stops", "alarms": "alarms", "notes": "notes", "production": "production", "oee": "OEE"},
    "pt": {"stops": "paradas", "alarms": "alarmes", "notes": "notas", "production": "produção", "oee": "OEE"},
}
_TWO_FORM = {"es": "{x} de {s}{t}", "en": "{x} of {s}{t}", "pt": "{x} de {s}{t}"}
_REPORTS = {
    "es": (
        "¿qué reportes hay{t}?",
        "reportes aprobados{t}",
        "¿hay borradores de reporte pendientes{t}?",
        "lista los informes{t}",
    ),
    "en": (
        "which reports are there{t}?",
        "approved reports{t}",
        "any draft reports pending{t}?",
        "list the reports{t}",
    ),
    "pt": ("quais relatórios existem{t}?", "relatórios aprovados{t}", "há rascunhos de relatório pendentes{t}?"),
}
_LEAVE = {
    "es": (
        "¿cuál es la capital de Francia?",
        "escríbeme un poema",
        "¿qué tiempo hará mañana?",
        "cuéntame un chiste",
        "¿quién ganó el partido?",
        "traduce esto al inglés",
    ),
    "en": (
        "what is the capital of France?",
        "write me a poem",
        "what's the weather tomorrow?",
        "tell me a joke",
        "who won the game last night?",
        "how do I cook rice?",
    ),
    "pt": (
        "qual é a capital da França?",
        "escreva um poema",
        "como vai estar o tempo amanhã?",
        "conte uma piada",
        "quem ganhou o jogo?",
    ),
}
# Shares of the question kinds (of 100): one intent on an asset or line (eight intents), a measured value, two
# intents, reports, questions to leave alone. A measured value at 10, about the share of each other intent once the
# two-intent questions count: at 28 (r1) the model answered "tag" for stops and production questions.
_MIX = (("one", 54), ("tag", 12), ("two", 14), ("site", 6), ("reports", 6), ("leave", 8))


class PlannerSample(BaseModel):
    """One question and the reading the model should give for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    split: Split
    seed: int
    language: Lang
    question: str
    messages: list[ChatMessage]
    target: str


def reading_json(intents: list[str], subject: str | None, time: str | None) -> str:
    """The reading as the engine writes it under the schema: compact, keys in the schema's order."""
    draft = PlanDraft.model_validate({"intents": intents, "subject": subject, "time": time})
    return json.dumps(draft.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))


def _plant(rng: random.Random) -> list[tuple[str, str, str]]:
    """A plant's assets: (kind, id, the number people say), 3-6 of them."""
    assets = []
    for _ in range(rng.randint(3, 6)):
        kind = rng.choice(list(_KINDS))
        number = str(rng.choice((1, 2, 3, 4, 5)) * 100 + rng.randint(1, 12))
        letters = rng.choice(_LETTERS[kind])
        assets.append((kind, f"{letters}-{number}", number))
    return assets


def _typo(rng: random.Random, word: str) -> str:
    """One slip of a hand on a phone keyboard: a letter doubled, dropped or swapped with the next."""
    if len(word) < 5:
        return word
    i = rng.randrange(1, len(word) - 2)
    slip = rng.choice(("double", "drop", "swap"))
    if slip == "double":
        return word[: i + 1] + word[i] + word[i + 1 :]
    if slip == "drop":
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


def _asset_phrase(rng: random.Random, lang: str, asset: tuple[str, str, str]) -> str:
    kind, ident, number = asset
    word, article = _KINDS[kind][lang]
    if rng.random() < 0.1:
        word = _typo(rng, word)
    forms = [
        f"{article} {word} {number}".strip(),
        f"{word} {number}",
        f"{article} {ident}".strip(),
        ident,
        ident.replace("-", ""),
        ident.lower(),
        f"{article} {word} {ident}".strip(),
    ]
    return rng.choice(forms)


def _line_phrase(rng: random.Random, lang: str) -> str:
    n = rng.randint(1, 4)
    word, article = _LINE[lang]
    return rng.choice(
        (f"{article} {word} {n}".strip(), f"{word} {n}", f"L{n}", f"{article} L{n}".strip(), f"{word} L{n}")
    )


def _time_phrase(rng: random.Random, lang: str) -> str | None:
    """A time as people write it (None: the question names none, a third of the time)."""
    if rng.random() < 0.33:
        return None
    shift = rng.choice("ABC")
    h = rng.choice(_HOURS)
    h2 = h + rng.choice((1, 2, 3))
    n = rng.randint(2, 8)
    options = {
        "es": (
            f"en el turno {shift}",
            f"turno {shift}",
            "ayer",
            "hoy",
            "anoche",
            "esta mañana",
            f"entre las {h} y las {h2}",
            f"de {h} a {h2}",
            f"a las {h}",
            f"a las {h}:30",
            "la semana pasada",
            f"en las últimas {n} horas",
            f"ayer en el turno {shift}",
            f"el turno {shift} de ayer",
            "ayer por la tarde",
            "en este momento",
            "ahora",
        ),
        "en": (
            f"on shift {shift}",
            f"during shift {shift}",
            "yesterday",
            "today",
            "last night",
            "this morning",
            f"between {h} and {h2}",
            f"from {h}:00 to {h2}:00",
            f"at {h}",
            f"at {h}:30",
            "last week",
            f"in the last {n} hours",
            f"yesterday on shift {shift}",
            "yesterday afternoon",
            "right now",
            "now",
        ),
        "pt": (
            f"no turno {shift}",
            f"turno {shift}",
            "ontem",
            "hoje",
            "ontem à noite",
            "esta manhã",
            f"entre as {h} e as {h2}",
            f"das {h} às {h2}",
            f"às {h}",
            "a semana passada",
            f"nas últimas {n} horas",
            f"ontem no turno {shift}",
            "agora",
        ),
    }
    return rng.choice(options[lang])


# The article joined to the word before it, as people write it ("del K-106", "do tanque"); the subject's span stays
# words of the question ("el K-106" is in "del K-106").
_CONTRACTIONS = ((" de el ", " del "), (" a el ", " al "), (" de o ", " do "), (" de a ", " da "), (" em o ", " no "))


def _contract(text: str) -> str:
    padded = f" {text} "
    for loose, joined in _CONTRACTIONS:
        padded = padded.replace(loose, joined)
    return padded[1:-1]


def _fill(template: str, subject: str, time: str | None) -> str:
    return _contract(template.replace("{s}", subject).replace("{t}", f" {time}" if time else ""))


_NO_ACCENTS = str.maketrans("áéíóúãõçâêôÁÉÍÓÚ", "aeiouaocaeoAEIOU")


def _finish(rng: random.Random, question: str, spans: list[str | None]) -> tuple[str, list[str | None]]:
    """How people type on a phone: sometimes no opening mark, no closing one, no accents, a capital; the spans
    follow the question, so each stays its exact words."""
    if rng.random() < 0.3:
        question = question.lstrip("¿")
    if rng.random() < 0.2:
        question = question.rstrip("?")
    if rng.random() < 0.15:
        question = question.translate(_NO_ACCENTS)
        spans = [None if span is None else span.translate(_NO_ACCENTS) for span in spans]
    if rng.random() < 0.4:
        capital = question[:1].upper() + question[1:]
        spans = [capital[: len(span)] if span and question.startswith(span) else span for span in spans]
        question = capital
    return question, spans


def draw(rng: random.Random, lang: Lang) -> tuple[str, list[str], str | None, str | None]:
    """One question, its intents and the words naming its subject and its time."""
    assets = _plant(rng)
    kind = rng.choices([k for k, _ in _MIX], weights=[w for _, w in _MIX])[0]
    time = _time_phrase(rng, lang)
    if kind == "leave":
        return rng.choice(_LEAVE[lang]), [], None, None
    if kind == "reports":
        question = _fill(rng.choice(_REPORTS[lang]), "", time)
        return question, ["reports"], None, time
    if kind == "tag":
        asset = rng.choice(assets)
        name, article = _QUANTITIES[rng.choice(list(_QUANTITIES))][lang]
        phrase = _contract(f"{article} {name} {_OF[lang]} {_asset_phrase(rng, lang, asset)}".strip())
        subject = phrase if rng.random() < 0.7 else phrase.removeprefix(f"{article} ")
        if rng.random() < 0.5:  # the statistic among the subject's words (es, pt) or just before them (en)
            named = _asset_phrase(rng, lang, asset)
            if lang == "en":
                subject = f"{name} of {named}"
                template = rng.choice(_TAG_INSIDE[lang]).replace("{st}", rng.choice(_STAT_BEFORE))
            else:
                subject = _contract(f"{name} {rng.choice(_STAT_INSIDE[lang][article])} {_OF[lang]} {named}")
                template = rng.choice(_TAG_INSIDE[lang]).replace("{a}", article)
        else:
            template = rng.choice(_TAG[lang]).replace("{st}", rng.choice(_STATS[lang]))
        question = _fill(template.replace("{q}", subject), "", time)
        return question, ["tag"], subject, time
    if kind == "site":
        intent = rng.choice(list(_SITE))
        return _fill(rng.choice(_SITE[intent][lang]), "", time), [intent], None, time
    on_line = kind != "tag" and rng.random() < 0.3
    subject = _line_phrase(rng, lang) if on_line else _asset_phrase(rng, lang, rng.choice(assets))
    if kind == "two":
        a, b = rng.sample(list(_TWO_ASK[lang]), 2)
        both = _TWO[lang].format(a=_TWO_ASK[lang][a], b=_TWO_ASK[lang][b])
        question = _fill(_TWO_FORM[lang].replace("{x}", both), subject, time)
        return question, [a, b], subject, time
    intent = rng.choice(list(_ASK))
    question = _fill(rng.choice(_ASK[intent][lang]), subject, time)
    return question, [intent], subject, time


def build_samples(seeds: Iterable[int], split: Split, per_seed: int = 1) -> Iterator[PlannerSample]:
    """`per_seed` questions a seed, the language by seed; one `random.Random(seed)` draws everything."""
    for seed in seeds:
        rng = random.Random(seed)
        for k in range(per_seed):
            lang = LANGS[(seed + k) % len(LANGS)]
            question, intents, subject, time = draw(rng, lang)
            if intents:  # the questions to leave alone are kept as written
                question, (subject, time) = _finish(rng, question, [subject, time])
            yield PlannerSample(
                id=f"{split}-planner-{seed}-{k}",
                split=split,
                seed=seed,
                language=lang,
                question=question,
                messages=planner_messages(question),
                target=reading_json(intents, subject, time),
            )
