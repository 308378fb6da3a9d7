"""The asset, line and tag a question names, resolved against the plant's namespace: never a guess.

In order: ids as written ("P-101", "p101", "L1", "P-101.vibration_mm_s"), the site's aliases (`[ask] aliases`,
"bomba 101" → P-101, matched exactly, then fuzzily with rapidfuzz: "bomva 101"), an equipment word and a number
("la bomba 101", "pump 102", "línea 1"), an equipment word alone ("el compresor": the one compressor; "la bomba" with
two pumps: which?), then the quantity the question names ("la vibración de la P-102" → P-102.vibration_mm_s) by the
names people use for it (TagInfo.names, es/en/pt). An id read aloud by its letters' names ("la pe ciento uno",
"sea two oh one", "tê três zero um") is read as written when its letters are those of an id of the namespace. An id the
namespace does not have, a name matching several things or several subjects at once give a Clarification with the
candidates.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from edge_agent.ask.answers import Clarification
from edge_agent.ask.resolve.numbers import spelled_numbers
from edge_agent.ask.resolve.text import fold, without_references
from edge_agent.ask.tools import AssetInfo, Namespace, TagInfo
from edge_agent.base.quantities import CANONICAL, NAMES

# 85: "bomva 101" scores 88.9 against the alias "bomba 101", "bomba 11" against "bomba 101" 94.1 but differs in
# its number (numbers must be equal, always); unrelated two-word phrases score under 60.
PHRASE_CUTOFF = 85.0
# One letter wrong, missing or extra in a word of 5 letters or more ("bomva" → "bomba", "vibrasion" → "vibracion");
# two from 9 letters. Not a similarity ratio: "leave" scores 80 against "level" (two edits in five letters).
_WORD_MIN = 5
_WORD_EDITS = ((9, 2), (_WORD_MIN, 1))
# Words of their own a letter off an equipment word: "tinha 5 alarmes" (had), "minha" (my) are no "linha 5".
_REAL_WORDS = frozenset({"tinha", "minha", "vinha", "linda", "lenha"})

# Equipment words per kind (es/en/pt, folded) and the letters that open the kind's ids in the usual P&ID numbering
# (P-101 a pump, C-201 or K-201 a compressor, T-301 a tank), so "la bomba 101" finds P-101 without an alias.
_KINDS: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {
    # (and as a floor says them small: "la bombita 101", "a bombinha 102")
    "pump": (frozenset({"bomba", "bombas", "pump", "pumps", "bombita", "bombitas", "bombinha", "bombinhas"}), ("p",)),
    "compressor": (
        frozenset({"compresor", "compresores", "compressor", "compressors", "compressores", "compresora"}),
        ("c", "k"),
    ),
    "tank": (frozenset({"tanque", "tanques", "tank", "tanks", "deposito", "reservatorio"}), ("t", "tk", "tq")),
    "motor": (frozenset({"motor", "motores", "motors"}), ("m",)),  # "el motor 4" where the plant has none: which?
}
# Shortenings people type for an equipment word, matched only as written ("compr" is a letter off "compa", a buddy;
# "the comp" is the compressor on an English-speaking floor).
_SHORT_KINDS = {"compr": "compressor", "comp": "compressor", "bba": "pump", "tq": "tank"}
# Equipment of other kinds ("the chiller", "la caldera"): named with no asset of the plant's found, the question is
# about equipment the plant does not have (or calls otherwise): asked back with the assets there are, never answered
# for the whole plant. Not "motor", "valvula", "filtro": a tag's, a stop reason's or an alarm's words as often.
_OTHER_EQUIPMENT = frozenset(
    "chiller chillers enfriador resfriador caldera calderas caldeira caldeiras boiler boilers horno forno furnace "
    "oven turbina turbine ventilador soplador blower fan mezclador misturador mixer agitador agitator reactor "
    "reator secador secadora dryer molino moinho mill chancadora trituradora britador crusher intercambiador "
    "trocador exchanger condensador condenser evaporador evaporator generador gerador generator transformador "
    "transformer extrusora extruder centrifuga centrifuge esteira conveyor silo tolva hopper autoclave envasadora "
    "llenadora enchedora filler etiquetadora labeler robot robo digestor digester "
    # the kinds of other trades' plants: mining, water, food and drink, pulp, cement, oil and gas, power
    "scrubber scrubbers lavador kiln kilns compactor compactadora clarifier clarificador clarificadores "
    "thickener thickeners espesador espesadores espessador cyclone ciclon ciclone hidrociclon hydrocyclone prensa "
    "prensas criba cribas zaranda peneira peneiras elevador elevadores elevator crane grua guindaste forklift "
    "montacargas empilhadeira winch hoist polipasto pasteurizer pasteurizador pasteurizadora homogenizer "
    "homogeneizador fermenter fermentador fermentadores burner quemador queimador incinerator incinerador "
    "freezer congelador grinder moledora pulverizer pulverizador separator separador separadora decanter "
    "decantador decantadores inyectora injetora palletizer paletizadora paletizador packer "
    "empacadora embaladora capper tapadora bottler embotelladora sealer selladora seladora sterilizer "
    "esterilizador clorador chlorinator alimentador dosificador dosificadora dosador camion camiones caminhao "
    "truck trucks excavadora escavadeira excavator cargador carregadeira loader perforadora perfuratriz "
    "refinador refiner calandra inversor inverter rectificador retificador rectifier subestacion subestacao "
    "substation chancador molinos moinhos mills crushers boilers chancadoras trituradoras pumpjack pumpjacks wellhead "
    "balancin fpso torre torres tower towers britadeira britadeiras".split()
)
# Where on a machine a temperature or a vibration is measured, when it is not where the plant's tag measures it
# ("the discharge temperature", "la temperatura del devanado", "vibração do motor"): asked back, never answered with
# the bearing's. Not for a flow: a pump's flow is its discharge's.
_POINTED = frozenset({"bearing_temperature", "temperature", "vibration"})
_POINTS = frozenset(
    "discharge descarga suction succion succao inlet outlet entrada salida saida winding windings devanado "
    "devanados enrolamento bobinado oil aceite oleo lube gas ambient ambiente stator estator rotor exhaust escape "
    "casing carcasa carcaca seal sello selo gearbox reductor reductora redutor coupling acople acoplamento motor "
    "shaft eje eixo housing cabezal cabecote cylinder cilindro".split()
)
# 3 words: "temperatura del aceite del motor", "discharge end bearing temperature" name their point within three.
_POINT_REACH = 3
# An equipment word typed against its number ("bomba101", "tanque301") and a number marked "#101": as "bomba 101"
# and "the 101".
_GLUED = re.compile(r"(?<![a-z0-9])(bombas?|pumps?|compresor|compressor|tanques?|tanks?|linea|line|linha)(\d{1,5})\b")
_HASH_NUMBER = re.compile(r"#\s*(\d{3,5})\b")
# A name taken back as it is said: "la pe ciento dos, no, perdón, la línea uno", "P-102, I mean C-201", "a P-101, ou
# melhor, a P-102": the name before the correction is not asked about.
_CORRECTED = re.compile(
    r"(?<![a-z0-9])(?:(?:la|el|the|a|o)\s+)?[a-z]{1,3}-\d{1,5}[\s,]+(?:no[\s,]+)?(?:perdon|digo|mejor dicho|i mean|"
    r"sorry|no wait|ou melhor|quer dizer|quero dizer|desculpa)\b"
)
# An id whose digits hold a letter typed for the digit it looks like: "p-10l", "c-2o1" (one letter among the digits).
_LETTER_DIGIT = re.compile(r"(?<![a-z0-9])[a-z]{1,3}-(?=\d*[lo]\d*(?![a-z0-9]))(?=[\dlo]{3,5}(?![a-z0-9]))[\dlo]+")
_AS_DIGIT = str.maketrans({"l": "1", "o": "0"})
# An id read aloud with its dash said: "p guion ciento uno", "c dash 201", "p hífen 101".
_SAID_DASH = re.compile(r"\b([a-z]{1,3})\s+(?:guion|dash|hyphen|hifen|traco|raya)\s+(?=\d)")
# Letters by their names as dictation writes them (es/en/pt folded, and the English homophones: "sea", "tea"), read
# as an id's only right before its number (`_letters_said`). Not names that are everyday words: de, el, en, em, ese.
_LETTER_NAMES: dict[str, str] = {
    name: letter
    for letter, names in {
        "b": "bee",
        "c": "ce cee see sea se",  # "se" as dictation hears Spanish "ce"
        "d": "dee",
        "f": "efe ef eff",
        "g": "ge gee",
        "h": "hache aga aitch",
        "j": "jota jay",
        "k": "ka kay ca",
        "l": "ele elle ell",
        "m": "eme",
        "n": "ene",
        "p": "pe pee pea",
        "q": "cu cue",
        "r": "erre ere",
        "s": "ess",
        "t": "te tee tea",
        "v": "uve ve vee",
        "x": "equis xis ex",
        "z": "zeta zee zed ze",
    }.items()
    # a consonant said as itself before its digits ("C two oh five"); vowels are words ("a", "e", "o", "y")
    for name in [*names.split(), letter]
}
_LETTER_NAME = "|".join(sorted(_LETTER_NAMES, key=len, reverse=True))
# One to three letter names, then digits (not an hour "10:30" nor "24h"): "te ka 301", "pe-101" (dash said).
_LETTERS_SAID = re.compile(
    rf"(?<![a-z0-9'])((?:(?:{_LETTER_NAME})\s+){{0,2}}(?:{_LETTER_NAME}))(?:\s*-\s*|\s+)(\d+)(?![a-z0-9]|[.,:]\d)"
)
# "see" the verb: "I see 150 alarms", "did you see 201", never C-150.
_SEEING = frozenset("i we you they he she to can could will would ll t not".split())
# Before them "dos", "uno", "one", "um" are numbers: "la línea dos" (not pt "linha dos", "of the").
_COUNTING = frozenset({"linea", "line"})
# Shortenings people type for a quantity, its verb ("vibrou quanto") and how hot it got, keyed by TagInfo.quantity,
# matched as written.
_SHORT_NAMES: dict[str, tuple[str, ...]] = {
    # plurals the names do not make by an "s" ("vibraciones", "vazões"), and instruments by their ISA letters ("el LT
    # del tanque", "el TT de rodamiento"); "gasto" is Mexico's flow
    "vibration": (
        "vib",
        "vibr",
        "vibro",
        "vibrou",
        "vibraba",
        "vibrava",
        "vibrated",
        "vibe",
        "vibes",
        "vibraciones",
        "vibracoes",
        "vt",
        # how it shook: "how much was the compressor shaking", "cuánto temblaba" (not "vibrando": "para la bomba
        # que está vibrando feo" is no question about its vibration)
        "shaking",
        "shook",
        "shake",
        "temblaba",
        "tremia",
        # how hard it shook, said with the verb: "¿qué tan fuerte llegó a vibrar…?", "o quanto chegou a tremer"
        "vibrar",
        "tremer",
        "tremeu",
        "temblar",
        "temblo",
        "shaken",
        # "how rough was pump P-101 running"
        "rough",
        "roughest",
        # its unit said for it: "¿cuántos mm/s marcó la P-101?"
        "mm/s",
        # Venezuela's and Mexico's "la vibra", and "trepidación" (a shudder); spelled as said ("vibrashun")
        "vibra",
        "vibrashun",
        "vibrasion",
        # its probe: "the compressor vibe probe"
        "vibe probe",
        "trepidacion",
        "trepidaciones",
    ),
    # how full a tank was: "¿qué tan lleno estaba el tanque?", "how full was the tank", "quão cheio"
    # ... and how empty: "¿qué tan vacío se puso el tanque?", "how empty did the tank get", "quão vazio"
    "level": (
        *("lvl", "levl", "niv", "niveles", "niveis", "lt", "lit", "lleno", "llena", "full", "cheio", "cheia"),
        *("vacio", "vacia", "empty", "emptiest", "vazio", "vazia"),
        # its unit said for it: "What % was the tank at?", "¿en qué por ciento estaba el tanque?"
        *("%", "percent", "per cent", "porcentaje", "percentagem", "porcentagem"),
    ),
    # how much water went through: "¿cuánta agua estaba pasando por la bomba?", "how much water was P-102 moving"
    "flow": (
        "flw",
        "caudales",
        "vazoes",
        "flujos",
        "fluxos",
        "gasto",
        "ft",
        "cuanta agua",
        "how much water",
        "quanta agua",
        # the instrument or the unit said for the flow: "el caudalímetro de la P-102", "the m³/h on P-101"
        "caudalimetro",
        "flujometro",
        "flowmeter",
        "flow meter",
        "medidor de vazao",
        "medidor de caudal",
        "m3/h",
        "m³/h",
        "cubes an hour",
        # "What was P-102 flowing at 13:45?"
        "flowing",
        "cubes per hour",
        "cubos por hora",
    ),
    "temperature": (
        "temp",
        # degrees said: "¿cuántos grados marcó el rodamiento…?"
        "grados",
        "graus",
        "degrees",
        "celsius",
        "tt",
        "tit",
        # how cold: "¿qué tan frío llegó a estar el rodamiento?", "qué tan helado", "how cold"
        *(
            _HOT := (
                *("hottest", "coldest", "warmest", "caliente", "quente", "hot", "hotter", "warmer", "colder"),
                *("frio", "fria", "cold", "helado", "helada", "gelado", "gelada", "warm"),
                # how far it heated: "até quanto esquentou o mancal", "¿cuánto se calentó el rodamiento?"
                *("esquentou", "esquentaram", "aqueceu", "calento", "calentaron", "heated"),
            )
        ),
    ),
    "bearing_temperature": (
        *_HOT,  # "the hottest that P-101 bearing got": how hot is a temperature
        "tt",
        "tit",
        "bearing temp",
        "brg temp",
        "brg",
        "temp rodamiento",
        "temp cojinete",
        "temp mancal",
        "temp",
        # the bearing's resistance thermometer: "the bearing RTD on P-101", "o RTD do mancal"
        "rtd",
        "grados",
        "graus",
        "degrees",
        "celsius",
        # its unit said for it: "o mancal da P-101 passou de 55 °C?"
        "°c",
        "ºc",
    ),
}
# "la 101", "101 vs 102", "how much was 102 shaking": an asset by its number alone, when the number has three digits
# or more (fewer are hours, counts and shift numbers) and one asset has it, unless a unit or a counted noun follows it
# ("más de 201 m3", "301 alarmas"; a letter alone is no unit: "la 101 y la 102, c/u").
_BARE_NUMBER_DIGITS = 3
_COUNTED_AFTER = frozenset(
    "m3 mm min mins minutes minutos degrees grados graus bar psi kg units unidades pieces piezas pecas alarms "
    "alarmas alarmes stops paradas paros times veces vezes samples muestras amostras checks controles am pm hs hrs "
    "horas hours".split()
)
# "each pump", "cada bomba", "every compressor", "per pump": every asset of the kind, as a plural.
_EACH = re.compile(
    r"\b(?:each|every|cada|ambas|ambos|both|per|por)\s+"
    r"(?:(?:of the|one of the|de las|de los|uma das|um dos)\s+)?([a-z]+)"
)
# "as bombas pararam quantas vezes, cada uma": each one of the equipment word the question names.
_EACH_ONE = re.compile(r"\b(?:cada (?:uno|una|um|uma|qual)|each(?: one| of them)?|ambas|ambos|both)\b")
# Which of a kind did more: each one's figure answers it ("Which pump ran hotter in shift B?", "¿cuál bomba vibró
# más ayer?", "qual das bombas teve mais paradas?").
_WHICH_MORE = re.compile(
    r"\b(?:which|what|que|qual|cual)\s+(?:of the\s+|de las\s+|de los\s+|das\s+|dos\s+)?(?:\w+\s+)?(?:pumps?|bombas?|"
    r"compressors?|compresores?|compressores?|tanks?|tanques?)\b[^.?!]{0,60}\b(?:more|most|less|least|higher|highest|"
    r"lower|lowest|hotter|hottest|colder|longer|longest|worse|worst|mas|menos|mayor|menor|maior|mais|peor|pior)\b"
)
# Several assets named as a list ("P-101, P-102 and C-201") are each asked about; with "or" the asker is asked which.
_OR = re.compile(r"\b(?:or|ou)\b|(?<![,ye] )\bo\s+(?:(?:la|el)\s+)?[a-z]{1,3}[\s\-_.]?\d")
# The plural equipment words: "las bombas" speaks of every pump, not of one still to be chosen.
_PLURALS = frozenset({"bombas", "pumps", "compresores", "compressors", "compressores", "tanques", "tanks"})
_LINE_WORDS = frozenset({"linea", "lineas", "line", "lines", "linha", "linhas"})
# A line named by a letter (not a word of one letter: "y", "e", "o", "a", "u", "i").
_LINE_LETTER = re.compile(r"\b(?:linea|line|linha)\s+([b-df-hj-np-tv-xz])\b")
_TOKEN = re.compile(r"[a-z0-9]+")
# An id as plants write them: one to three letters, a dash and digits ("P-999"), or letters and three or more digits.
# Not a clock's range: "(6 am-2 pm)".
_ID_SHAPED = re.compile(r"(?<![a-z0-9])(?!(?:am|pm)-)(?:[a-z]{1,3}-[0-9]{1,5}|[a-z]{1,2}[0-9]{3,5})(?![a-z0-9\-])")


# How much a machine was vibrating, asked: its vibration ("¿a cuánto estaba vibrando la bomba?", "how much was P-101
# vibrating"); "para la bomba que está vibrando feo" names no quantity.
_SHAKING_ASKED = re.compile(
    r"(\b(?:cuanto|que tanto|quanto|how much|how hard)\b[^.?!]{0,30}?\b(?:estaba|esta|estuvo|andaba|anda|estava|"
    r"tava|taba|ta|was|is)\s+)(?:vibrando|vibrating)\b"
)


# An instrument by its ISA letters and its equipment's number ("TT-101", "FT-102", "VT 201", "LT-301"): the letters
# name the quantity, the number the one asset numbered so.
_INSTRUMENT_ID = re.compile(
    r"(?<![a-z0-9])(tt|ti|te|tit|tic|tir|vt|vi|vit|vic|ft|fi|fit|fic|fir|fiq|fq|lt|li|lit|lic|lir|lia|pt|pi|pit|pic|"
    r"pir)[\s-]?(\d{3,5})(?![\d-])"
)
# Each measured variable's transmitter letters, as `_SHORT_NAMES` reads them: an indicator's or a controller's
# ("TI-101", "LIC-301", "FIC-102") stand for the same measurement.
_ISA_BASE = {"t": "tt", "v": "vt", "f": "ft", "l": "lt", "p": "pt"}


def _instrument_ids(folded: str, namespace: Namespace) -> str:
    """`folded` with each instrument id whose number is one asset's written as its letters and that asset's id."""

    def named(match: re.Match[str]) -> str:
        asset = _one_numbered([a.asset for a in namespace.assets], _digits(match.group(2)))
        if asset is None or _letters(fold(asset)) == match.group(1):  # "FT-100" where that is an asset's own id
            return match.group(0)
        letters = _ISA_BASE[match.group(1)[0]]
        # the asset named beside it too ("FT-101 de la P-101"): the letters alone, the asset once
        return letters if _mentions(folded, _id_pattern(asset)) else f"{letters} {fold(asset)}"

    return _INSTRUMENT_ID.sub(named, folded)


class Subject(BaseModel):
    """What a question is about. `tag` is set when the question names one tag; `quantity` is the quantity it names
    (e.g. "vibration"), and `tag_candidates` the tags that quantity may mean when it names none or several."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    line: str | None = None
    asset: str | None = None
    tag: str | None = None
    quantity: str | None = None
    tag_candidates: list[str] = Field(default_factory=list)


def resolve_subject(text: str, namespace: Namespace, aliases: dict[str, str]) -> Subject | Clarification:
    """The line, asset and tag `text` names (module docstring); an empty Subject when it names none."""
    assets = {a.asset: a for a in namespace.assets}
    lines = {line.line for line in namespace.lines}
    folded = _SHAKING_ASKED.sub(r"\1vibracion", _CORRECTED.sub(" ", without_references(said(text, [*assets, *lines]))))
    folded = _instrument_ids(folded, namespace)
    tokens = _TOKEN.findall(folded)
    tags = {t.tag: t for t in namespace.tags}
    known = set(assets) | lines | set(tags)

    found_tags = {tag for tag in tags if _mentions(folded, fold(tag))}
    found_assets = {a for a in assets if _mentions(folded, _id_pattern(a))}
    found_lines = {line for line in lines if _mentions(folded, _id_pattern(line))}
    # an id written with its kind's other letters ("TQ-301" where the tank is T-301) is that asset
    lettered = {m.group(0): _by_kind_letters(m.group(0), namespace) for m in _ID_SHAPED.finditer(folded)}
    found_assets |= {asset for asset in lettered.values() if asset is not None}
    unknown = sorted(
        m.group(0)
        for shaped in (_ID_SHAPED, _line_shaped(lines))
        for m in shaped.finditer(folded)
        if not any(_id_matches(m.group(0), k) for k in known) and lettered.get(m.group(0)) is None
    )
    if unknown:
        return Clarification(
            reason="unknown_name", candidates=_same_letters(unknown[0], sorted(assets) + sorted(lines))
        )

    targets = {
        fold(alias): target for alias, target in aliases.items() if target in known and _TOKEN.search(fold(alias))
    }
    for info in namespace.assets:
        targets.update({fold(name): info.asset for name in info.names if _TOKEN.search(fold(name))})
    by_alias = {target for alias, target in targets.items() if _mentions(folded, _phrase(alias))}
    if not (found_tags or found_assets or found_lines or by_alias):
        by_alias = _fuzzy_targets(tokens, targets)
        if len(by_alias) > 1:  # nearly two aliases at once: which one?
            return Clarification(reason="ambiguous_name", candidates=sorted(by_alias))
    found_tags |= by_alias & set(tags)
    found_assets |= by_alias & set(assets)
    found_lines |= by_alias & lines

    numbered = _numbered(tokens, namespace)
    if isinstance(numbered, Clarification):
        return numbered
    found_assets |= numbered[0]
    found_lines |= numbered[1]
    found_assets |= {tags[tag].asset for tag in found_tags}
    if found_assets:  # "la 101, la 102 y el compresor": the one asset of a kind said beside those named
        found_assets |= _bare_kinds_beside(tokens, namespace.assets, found_assets)

    for found in (found_tags, found_assets, found_lines):
        if len(found) > 1:
            return Clarification(reason="several_subjects", candidates=sorted(found))
    if not found_assets:
        bare = _bare_kind(tokens, namespace.assets)
        if isinstance(bare, Clarification):
            return bare
        found_assets = bare
    if not (found_assets or found_lines or found_tags) and _OTHER_EQUIPMENT.intersection(tokens):
        return Clarification(reason="unknown_name", candidates=sorted(assets))
    if (
        not found_lines
        and (letter := _LINE_LETTER.search(folded))
        and not any(fold(line).endswith(letter.group(1)) for line in lines)
    ):  # "la línea B" at a site whose one line is L1: asked back, not answered for L1
        return Clarification(reason="unknown_name", candidates=sorted(lines))
    if not found_lines and not found_assets and any(_is_word(t, _LINE_WORDS) for t in tokens):
        if len(lines) != 1:
            return Clarification(reason="ambiguous_name" if lines else "unknown_name", candidates=sorted(lines))
        found_lines = set(lines)

    asset = next(iter(found_assets), None)
    line = next(iter(found_lines), None)
    if found_tags:
        tag = next(iter(found_tags))
        return Subject(line=line, asset=asset, tag=tag, quantity=tags[tag].quantity, tag_candidates=[tag])
    return _with_quantity(Subject(line=line, asset=asset), folded, tokens, namespace.tags)


# "por ciento", "por cento": "%" (not a hundred: "¿en qué por ciento estaba el tanque?").
_PER_CENT = re.compile(r"\bpor (?:ciento|cento)\b")


def said(text: str, ids: Iterable[str] = ()) -> str:
    """`text` folded, numbers in words read as digits, a said dash written ("p guion ciento uno" → "p-101"), an id of
    the letters of `ids` read by its letters' names ("la pe ciento uno" → "la p-101", `_letters_said`) and an id's digit
    typed as the letter like it ("p-10l" → "p-101", "c-2o1" → "c-201")."""
    shapes = _shapes(ids)
    named = {n for n, letter in _LETTER_NAMES.items() if any(s.startswith(letter) for s in shapes)}
    folded = _GLUED.sub(r"\1 \2", _HASH_NUMBER.sub(r" the \1", _PER_CENT.sub("%", fold(text))))
    folded = _SAID_DASH.sub(r"\1-", spelled_numbers(folded, counted_after=_COUNTING | named))
    folded = _letters_said(folded, shapes)
    return _LETTER_DIGIT.sub(lambda m: m.group(0).translate(_AS_DIGIT), folded)


def _shapes(ids: Iterable[str]) -> dict[str, frozenset[int]]:
    """The letters opening `ids` written as plants write them ("P-101", "L1"), each with the numbers of digits of its
    ids: "see 10 stops" is no C-10 where the C-s have three."""
    shapes: dict[str, set[int]] = {}
    for identifier in ids:
        if (m := re.fullmatch(r"([a-z]{1,3})[\s\-_.]?(\d{1,5})", fold(identifier))) is not None:
            shapes.setdefault(m.group(1), set()).add(len(m.group(2)))
    return {letters: frozenset(digits) for letters, digits in shapes.items()}


def _letters_said(folded: str, shapes: Mapping[str, AbstractSet[int]]) -> str:
    """Letter names right before a number read as an id's letters when they are the letters of one of `shapes` and
    the number has its digits: "el ce 201" → "el c-201", "te ka 301" → "tk-301"; "te doy", "tea at 10" stay."""

    def read(match: re.Match[str]) -> str:
        words, number = match.group(1).split(), match.group(2)
        before = _TOKEN.findall(folded[max(0, match.start() - 16) : match.start()])[-1:]
        for i in range(len(words)):
            letters = "".join(_LETTER_NAMES[w] for w in words[i:])
            seeing = words[i] == "see" and bool(_SEEING.intersection([*before, *words[:i]][-1:]))
            if len(number) in shapes.get(letters, ()) and not seeing:
                return " ".join([*words[:i], f"{letters}-{number}"])
        return match.group(0)

    return _LETTERS_SAID.sub(read, folded) if shapes else folded


def other_equipment(text: str) -> bool:
    """`text` names equipment of a kind the plant has none of (`_OTHER_EQUIPMENT`: "el digestor", "the chiller"), or
    an area by what it does (`_AREA`: "the packaging area", "el área de envasado"), which no record names."""
    folded = _AGENT_ADDRESSED.sub(" ", said(text))
    areas = [m.group(1) for pattern in _AREAS for m in pattern.finditer(folded)]
    return bool(_OTHER_EQUIPMENT.intersection(_TOKEN.findall(folded))) or any(a not in _NOT_AN_AREA for a in areas)


# The agent called a robot, asked what it knows or can tell: "O robô sabe dizer quanto…?", "¿el robot puede decirme…?",
# "can the robot tell me…": no robot of the plant's.
_AGENT_ADDRESSED = re.compile(
    r"\b(?:(?:el|o|the)\s+)?(?:robot|robo|robozinho|robotito)\b(?=,?\s+(?:sabe|sabes|sabia|know|knows|can|could|puede|"
    r"podria|pode|poderia|consegue|tem como|me (?:diz|diga|dice|passa|pasa)|tell|dime|diz)\b)"
    r"|\b(?:can|could|does|do)\s+(?:the\s+)?(?:robot|robo)\b"
)


# An area named by what is done in it: "the packaging area", "the boiler house", "el sector de envasado", "a área de
# embalagem", or by its number. Not the plant as a whole ("the whole area", "el área de la planta", "the production
# area").
_AREAS = (
    re.compile(r"\b([a-z]+) (?:area|section|zone|department|dept|hall|house|building|warehouse|yard|room)\b"),
    re.compile(
        r"\b(?:area|sector|zona|seccion|departamento|setor|secao|galpon|galpao|nave|almacen|armazem|patio) "
        r"(?:de|del|da|do)(?: la| el| los| las| o| a| os| as)? ([a-z]+)"
    ),
    # ... or by its number: "Bloco 17", "el sector 3", "building 2"
    re.compile(
        r"\b(?:bloco|bloque|block|setor|sector|zona|zone|area|nave|galpao|galpon|pavilhao|pabellon|edificio|building|"
        r"hall|unidade|unidad|unit|modulo|module)\s+(?:n[o.]?\s*)?(\d+)\b"
    ),
)
_NOT_AN_AREA = frozenset(
    "a an la el o os as los las un una uma um de da do del en em in at on of to por per "
    "the this that whole entire plant plants all our my your same any every each which what whose its their his her "
    "data grey gray wide one other planta fabrica usina produccion producao production process proceso processo "
    "operacion operacao operation control mando controle "
    # a department signing a message ("Departamento de Calidad", "QA Dept."), no place whose equipment is asked about
    "calidad qualidade quality mantenimiento manutencao maintenance ingenieria engenharia engineering seguridad "
    "seguranca safety operaciones operacoes operations planificacion planeamento planejamento planning compras "
    "purchasing laboratorio laboratory lab fiabilidad confiabilidade fiabilidade reliability instrumentacion "
    "instrumentacao instrumentation".split()
)


def listed(text: str) -> bool:
    """The assets `text` names are a list to answer each of ("P-101, P-102 and C-201") or to compare ("¿cuál vibró más,
    la 101 o la 102?", "101 vs 102", "was the compressor or pump 102 down longer?"), not a choice ("P-101 or P-102",
    "la P-101 o la P-102")."""
    folded = said(text)
    return _OR.search(folded) is None or _COMPARING.search(folded) is not None or _EACH_ONE.search(folded) is not None


# Assets set against each other: by a comparative ("more", "más", "mais", "longer", "hotter", "harder") or "vs".
_COMPARING = re.compile(
    r"\b(?:more|most|less|least|higher|lower|longer|shorter|hotter|colder|harder|worse|worst|better|mas|menos|mayor|"
    r"menor|peor|mejor|maior|mais|pior|melhor|vs|versus|contra|against|compared|comparad[oa]s?|frente a)\b"
)


def plural_assets(text: str, namespace: Namespace) -> tuple[str, list[str]] | None:
    """ "las bombas", "the pumps", "cada bomba", "as bombas, cada uma", "which pump ran hotter": the equipment word as
    folded, and every asset of its kind (two or more); None when `text` holds no such word, or its kind has fewer than
    two assets."""
    folded = fold(text)
    tokens = _TOKEN.findall(folded)
    words = [m.group(1) for m in _EACH.finditer(folded)] + [t for t in tokens if t in _PLURALS]
    if _EACH_ONE.search(folded) or _WHICH_MORE.search(folded):
        words += [t for t in tokens if _kind_of(t, fuzzy=False) is not None]
    for token in words:
        if (kind := _kind_of(token)) is not None:
            assets = _assets_of_kind(kind, namespace.assets)
            return (token, assets) if len(assets) > 1 else None
    return None


# One of a kind, not said which: "una de las bombas", "one of the pumps", "uma das bombas".
_ONE_OF = re.compile(
    r"(?<!cada )(?<!each )\b(?:una de las|uno de los|alguna de las|alguno de los|one of the|one of our|uma das|um dos|"
    r"alguma das|algum dos)\s+(?:\w+\s+)?(?:bombas|pumps|compresores|compressors|compressores|tanques|tanks)\b"
)


def one_of(text: str) -> bool:
    """ "una de las bombas", "one of the pumps": one of a kind, which not said (asked back, never each answered)."""
    return _ONE_OF.search(fold(text)) is not None


def each_said(text: str) -> bool:
    """ "each pump", "cada bomba", "both pumps", "each one", "which pump ran hotter": every one of a kind asked for,
    not a plural told."""
    folded = fold(text)
    return any(pattern.search(folded) is not None for pattern in (_EACH, _EACH_ONE, _WHICH_MORE))


def only_asset(text: str, asset: str, named: list[str]) -> str:
    """`text` folded with every asset of `named` but `asset` taken out: "la P-101 y la P-102" asked of one of them."""
    folded = said(text, named)
    for other in named:
        if other != asset:
            folded = re.sub(_id_pattern(other), " ", folded)
            # ... and said by its number alone: "cada una de las bombas, la 101 y la 102"
            if (digits := _digits(other)) is not None and digits != _digits(asset):
                folded = re.sub(rf"(?<![a-z0-9\-]){digits}(?![0-9])", " ", folded)
    # ... and by its kind's word: "la 101, la 102 y el compresor" (another kind's than the asset's)
    others = {_kind_of_id(other) for other in named if other != asset} - {_kind_of_id(asset), None}
    return _TOKEN.sub(lambda m: " " if _kind_of(m.group(0), fuzzy=False) in others else m.group(0), folded)


def kinds_apart(assets: list[str]) -> bool:
    """Each of `assets` is of a kind none of the others is ("el compresor y el tanque", not "la bomba": which?)."""
    kinds = [_kind_of_id(asset) for asset in assets]
    return None not in kinds and len(set(kinds)) == len(kinds)


def _kind_of_id(asset: str) -> str | None:
    """The kind an asset's id says by its letters in the usual numbering (P-101 a pump), or None."""
    letters = _letters(fold(asset))
    return next((kind for kind, (_, opening) in _KINDS.items() if letters in opening), None)


def as_asset(text: str, asset: str) -> str:
    """`text` folded with every equipment word said in it put as `asset`: "las bombas y el compresor" asked of one."""
    return _TOKEN.sub(lambda m: asset if _kind_of(m.group(0), fuzzy=False) is not None else m.group(0), fold(text))


def _phrase(words: str) -> str:
    return r"(?<![a-z0-9])" + r"\s+".join(re.escape(w) for w in words.split()) + r"(?![a-z0-9])"


def _mentions(folded: str, pattern: str) -> bool:
    return _compiled(pattern).search(folded) is not None


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """A phrase or id pattern (or a plain name, as a whole word) compiled once: a site's names and aliases outnumber
    the 512 patterns `re` keeps compiled itself."""
    if not pattern.startswith("(?<!"):
        pattern = r"(?<![a-z0-9])" + re.escape(pattern) + r"(?![a-z0-9])"
    return re.compile(pattern)


def _id_pattern(identifier: str) -> str:
    """ "P-101" → matches "p-101", "p101", "p 101", "p_101" (its letter and digit runs, any one separator between),
    and "p-0101" (a number padded with zeros, as some tag lists write it)."""
    runs = re.findall(r"[a-z]+|\d+", fold(identifier))
    if not runs:
        return _phrase(fold(identifier))
    said = ("0*" + re.escape(r.lstrip("0")) if r.isdigit() and r.lstrip("0") else re.escape(r) for r in runs)
    return r"(?<![a-z0-9])" + r"[\s\-_.]?".join(said) + r"(?![a-z0-9])"


def _line_shaped(lines: AbstractSet[str]) -> re.Pattern[str]:
    """A line's id as people shorten it, with the letters of the site's lines: "L3" where the site has "L1"."""
    letters = sorted({_letters(fold(line)) for line in lines} - {""})
    if not letters:
        return re.compile(r"(?!)")
    return re.compile(rf"(?<![a-z0-9])(?:{'|'.join(map(re.escape, letters))})-?[0-9]{{1,3}}(?![a-z0-9\-])")


def _id_matches(written: str, identifier: str) -> bool:
    return (
        re.fullmatch(_id_pattern(identifier).removeprefix(r"(?<![a-z0-9])").removesuffix(r"(?![a-z0-9])"), written)
        is not None
    )


def _by_kind_letters(written: str, namespace: Namespace) -> str | None:
    """The one asset of the kind whose usual letters open `written`, with its digits ("tq-301" → T-301), or None."""
    match = re.fullmatch(r"([a-z]{1,3})-?(\d{2,5})", written)
    kind = _LETTER_KINDS.get(match.group(1)) if match is not None else None
    if match is None or kind is None:
        return None
    return _one_numbered(_assets_of_kind(kind, namespace.assets), match.group(2))


def _one_numbered(assets: list[str], digits: str | None) -> str | None:
    """The one asset of `assets` whose number is `digits` (`_digits`), or None when none or several are."""
    hits = [a for a in assets if _digits(a) == digits]
    return hits[0] if len(hits) == 1 else None


def _same_letters(written: str, ids: list[str]) -> list[str]:
    """The known ids opening with the letters of an unknown one ("P-999" → the P-s), or all of them."""
    same = [i for i in ids if _letters(fold(i)) == _letters(written)]
    return same or ids


def _letters(identifier: str) -> str:
    opening = re.match(r"[a-z]*", identifier)
    return opening.group(0) if opening is not None else ""


def _digits(identifier: str) -> str | None:
    """The number in an id, leading zeros dropped ("P-0101" → "101"); compared as text, whatever its length."""
    runs = re.findall(r"[0-9]+", identifier)
    return ("".join(runs).lstrip("0") or "0") if runs else None


def _is_word(token: str, words: Iterable[str]) -> bool:
    """`token` is one of `words`, or a letter off one of five letters or more (two off one of nine: `_WORD_EDITS`)."""
    if token in words:
        return True
    if len(token) < _WORD_MIN or token.isdigit() or token in _REAL_WORDS:
        return False
    return _near_word(token, words if isinstance(words, frozenset) else frozenset(words))


@functools.lru_cache(maxsize=1 << 16)
def _near_word(token: str, words: frozenset[str]) -> bool:
    """`_is_word`'s edit-distance half, remembered: the same words meet the same tokens question after question."""
    return any(
        Levenshtein.distance(token, w, score_cutoff=_edits(w)) <= _edits(w) for w in words if len(w) >= _WORD_MIN
    )


def _edits(word: str) -> int:
    return next(edits for length, edits in _WORD_EDITS if len(word) >= length)


def _kind_of(token: str, fuzzy: bool = True) -> str | None:
    """The equipment kind `token` names; a letter off one only where `fuzzy` ("bomva 101": a number follows); said
    big or small ("el compresorzote", "o compressorzão", "el tanquecito")."""
    if token in _SHORT_KINDS:
        return _SHORT_KINDS[token]
    for word in (token, _SIZED.sub("", token)):
        for kind, (words, _) in _KINDS.items():
            if word in words or (fuzzy and _is_word(word, words)):
                return kind
    return None


# The endings that make an equipment word big or small: "compresorzote", "compressorzão" (folded "zao"),
# "tanquecito", "tanquinho", "bombota".
_SIZED = re.compile(r"(?<=[a-z]{5})(?:zote|zota|zotes|zao|zoes|cito|cita|citos|zinho|zinha|inho|inha|ote|ota|ito|ita)$")


_LETTER_KINDS = {letters: kind for kind, (_, all_letters) in _KINDS.items() for letters in all_letters}


def _assets_of_kind(kind: str, assets: list[AssetInfo]) -> list[str]:
    words, letters = _KINDS[kind]
    out = []
    for info in assets:
        named = any(_is_word(t, words) for name in info.names for t in _TOKEN.findall(fold(name)))
        if _letters(fold(info.asset)) in letters or named:
            out.append(info.asset)
    return sorted(out)


def _numbered(tokens: list[str], namespace: Namespace) -> tuple[set[str], set[str]] | Clarification:
    """Assets and lines named by an equipment word and a number ("bomba 101", "line 1", "the 101 pump"), or by an
    article and an asset's own number of three digits or more ("la 101", "o 201": the one asset numbered so)."""
    assets: set[str] = set()
    lines: set[str] = set()
    for word, number in zip(tokens, tokens[1:], strict=False):
        if not number.isdigit():
            continue
        # a kind by its word, or by its usual letters before a number of three digits ("tk 302")
        kind = _kind_of(word) or (_LETTER_KINDS.get(word) if len(number) >= _BARE_NUMBER_DIGITS else None)
        if kind is not None:
            of_kind = _assets_of_kind(kind, namespace.assets)
            hits = [a for a in of_kind if _digits(a) == _digits(number)]
            exact = [a for a in hits if _letters(fold(a)) == word]  # "tk 301" is TK-301 where T-301 is there too
            hits = exact or hits
            if not hits:
                return Clarification(reason="unknown_name", candidates=of_kind or [a.asset for a in namespace.assets])
            assets.update(hits)
        elif _is_word(word, _LINE_WORDS):
            all_lines = sorted(line.line for line in namespace.lines)
            hits = [line for line in all_lines if _digits(line) == _digits(number)]
            if not hits:
                return Clarification(reason="unknown_name", candidates=all_lines)
            lines.update(hits)
    for k, number in enumerate(tokens):
        after = tokens[k + 1] if k + 1 < len(tokens) else ""
        bare = number.isdigit() and len(number) >= _BARE_NUMBER_DIGITS and after not in _COUNTED_AFTER
        before = tokens[k - 1] if k else ""
        # (after a letter said, "te ka trescientos uno", "sea two oh one", the letters are an id's the plant lacks)
        said_letters = before in _LETTER_NAMES or len(before) == 1 and before not in "aoey"
        if bare and not said_letters and _kind_of(before) is None and not _is_word(before, _LINE_WORDS):
            if (one := _one_numbered([a.asset for a in namespace.assets], _digits(number))) is not None:
                assets.add(one)
    # the number before its kind's word, as English says it: "the 101 pump", "that 201 compressor"
    for number, word in zip(tokens, tokens[1:], strict=False):
        if number.isdigit() and len(number) >= _BARE_NUMBER_DIGITS and (kind := _kind_of(word)) is not None:
            if (one := _one_numbered(_assets_of_kind(kind, namespace.assets), _digits(number))) is not None:
                assets.add(one)
    return assets, lines


def _kinds_said(tokens: list[str]) -> set[str]:
    """The kinds of equipment the words name: exact words only, but for long ones ("thanks" is a letter off "tanks",
    "compa" off "compr"; no word of nine letters or more is that near "compressor" but its slips, "compresser")."""
    return {kind for token in tokens if (kind := _kind_of(token, fuzzy=len(token) >= 9)) is not None}


def _bare_kinds_beside(tokens: list[str], assets: list[AssetInfo], found: set[str]) -> set[str]:
    """The site's one asset of each kind said by its word alone beside assets named ("la bomba 101 y el compresor":
    C-201), where none of that kind is named already."""
    beside: set[str] = set()
    for kind in _kinds_said(tokens):
        of_kind = _assets_of_kind(kind, assets)
        if len(of_kind) == 1 and of_kind[0] not in found:
            beside.add(of_kind[0])
    return beside


def too_few(text: str, namespace: Namespace) -> Clarification | None:
    """ "los dos compresores", "both compressors", "as três bombas" where the site has fewer of that kind: asked back
    with the ones there are, never answered for those alone."""
    for m in _COUNTED.finditer(fold(text)):
        kind = _kind_of(m.group(2), fuzzy=False)
        said_count = _COUNT_WORDS.get(m.group(1).split()[-1], 0)
        if kind is not None and len(of_kind := _assets_of_kind(kind, namespace.assets)) < said_count:
            return Clarification(reason="unknown_name", candidates=of_kind or sorted(a.asset for a in namespace.assets))
    return None


# A number of assets said with their kind's plural word: "the two pumps", "ambos compresores", "os três tanques".
_COUNT_WORDS = {"both": 2, "ambos": 2, "ambas": 2, "two": 2, "dos": 2, "dois": 2, "duas": 2, "three": 3, "tres": 3,
                "four": 4, "cuatro": 4, "quatro": 4}  # fmt: skip
# (Spanish "dos" only after its article: Portuguese "dos compressores" is "of the compressors".)
_COUNTED = re.compile(
    r"\b(both|ambos|ambas|two|three|four|(?:los|las) dos|dois|duas|tres|cuatro|quatro)\s+"
    r"(?:of the\s+|de los\s+|de las\s+|dos\s+|das\s+)?([a-z]+)"
)


def _bare_kind(tokens: list[str], assets: list[AssetInfo]) -> set[str] | Clarification:
    """ "el compresor" alone: the site's one compressor; "la bomba" with two pumps asks which."""
    kinds = sorted(_kinds_said(tokens))
    if not kinds:
        return set()
    candidates = sorted({a for kind in kinds for a in _assets_of_kind(kind, assets)})
    if len(candidates) == 1:
        return set(candidates)
    reason = "ambiguous_name" if candidates else "unknown_name"
    return Clarification(reason=reason, candidates=candidates or sorted(a.asset for a in assets))


def _fuzzy_targets(tokens: list[str], targets: dict[str, str]) -> set[str]:
    """Targets whose alias the text nearly spells (PHRASE_CUTOFF), with the same numbers; several → all of them."""
    found: set[str] = set()
    for alias, target in targets.items():
        words = _TOKEN.findall(alias)
        if not words or len(" ".join(words)) < _WORD_MIN:
            continue
        numbers = [w for w in words if w.isdigit()]
        for i in range(len(tokens) - len(words) + 1):
            window = tokens[i : i + len(words)]
            if [w for w in window if w.isdigit()] != numbers:
                continue
            if fuzz.ratio(" ".join(window), " ".join(words)) >= PHRASE_CUTOFF:
                found.add(target)
    return found


def _match_length(folded: str, tokens: list[str], names: frozenset[str], exact: AbstractSet[str] = frozenset()) -> int:
    """How long a name of `names` (or of `exact`, matched only as written) the text holds as a phrase; 1 for a word
    a letter off one of `names` (`_is_word`); 0 for none."""
    best = max((len(n) for n in names | exact if n and _holds_phrase(folded, n)), default=0)
    if best == 0 and any(_is_word(t, _single_words(names)) for t in tokens):
        return 1
    return best


def _holds_phrase(folded: str, name: str) -> bool:
    """`folded` holds `name` as a phrase (`_phrase`); a word of it missing from the text settles it without one."""
    return all(w in folded for w in name.split()) and _mentions(folded, _phrase(name))


@functools.cache
def _single_words(names: frozenset[str]) -> frozenset[str]:
    return frozenset(n for n in names if " " not in n)


# Letters and units of quantities a plant often has no tag of, to ask back rather than answer with another quantity.
_ABSENT_SHORT = {
    "pressure": frozenset({"pt", "pit", "psi", "kpa", "mpa"}),
    # "What RPM was C-201 running at", "los amperes del motor", "how many kW"
    "speed": frozenset({"rpm", "rpms"}),
    "current": frozenset({"amps", "amperes", "amperios", "amperaje", "amperagem"}),
    "power": frozenset({"kw", "kilowatts", "hp"}),
}


def _names_quantity(folded: str, tokens: list[str], quantity: str) -> bool:
    """The text holds one of a quantity's names (`_match_length`), or its instrument's letters or units where the
    plant may have no tag of it ("el PT del tanque", "en kPa")."""
    return _match_length(folded, tokens, _quantity_names(quantity)) > 0 or bool(
        _ABSENT_SHORT.get(quantity, frozenset()) & set(tokens)
    )


@functools.cache
def _quantity_names(quantity: str) -> frozenset[str]:
    return frozenset(fold(n) for group in NAMES[quantity].values() for n in group)


def _name_score(folded: str, tokens: list[str], tag: TagInfo) -> int:
    """How long a name of `tag` the text holds (`_match_length`)."""
    names, exact = _tag_names(tag.quantity, tuple(n for group in tag.names.values() for n in group))
    return _match_length(folded, tokens, names, exact)


@functools.cache
def _tag_names(quantity: str, said: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """A tag's names folded, and those matched only as written: once per tag, not per question (planning the bench's
    3,530 questions took 5.25 ms each before, 4.72 ms after)."""
    names = {fold(n) for n in said} | {fold(quantity.replace("_", " "))}
    # Shortenings and plurals only as written: "temps" is a letter off "tempo" (time), "vibs" off nothing useful.
    exact = names | set(_SHORT_NAMES.get(quantity, ()))
    exact |= {f"{n}s" for n in exact if n and not n.endswith("s")}  # "temps", "bearing temps", "flows"
    return frozenset(names), frozenset(exact)


def _other_point(tokens: list[str], tag: TagInfo) -> str | None:
    """A measuring point the text names for a temperature or a vibration other than the tag's own (`_POINTS`),
    within `_POINT_REACH` words of the quantity's ("la temperatura del aceite"; not "after its seal job … bearing
    temp")."""
    if tag.quantity not in _POINTED:
        return None
    own = {w for group in tag.names.values() for n in group for w in _TOKEN.findall(fold(n))}
    said = own | set(_SHORT_NAMES.get(tag.quantity, ())) | {fold(tag.quantity.replace("_", " "))}
    near = {i + d for i, t in enumerate(tokens) if t in said for d in range(-_POINT_REACH, _POINT_REACH + 1)}
    return next((t for i, t in enumerate(tokens) if i in near and t in _POINTS and t not in own), None)


def _with_quantity(subject: Subject, folded: str, tokens: list[str], tags: list[TagInfo]) -> Subject:
    scores = {tag.tag: _name_score(folded, tokens, tag) for tag in tags}
    named = {tag.tag: tag for tag in tags if scores[tag.tag] > 0}
    if len({t.quantity for t in named.values()}) > 1:  # "how rough was P-101 running": its vibration ("running" a verb)
        named = {key: t for key, t in named.items() if t.quantity != "running"}
    others: list[str] = []
    if all(t.quantity == "running" for t in named.values()):  # none named, or "running" alone
        others = [q for q in NAMES if q != "running" and _names_quantity(folded, tokens, q)]
        if others:
            named = {}  # "What RPM was C-201 running at": the RPM, which no tag measures ("running" its verb)
    if not named:
        # A quantity the plant has no tag of ("la presión del compresor"): asked back with the tags there are.
        absent = others[0] if others else next((q for q in NAMES if _names_quantity(folded, tokens, q)), None)
        if absent is None:
            return subject
        own = sorted(t.tag for t in tags if subject.asset is None or t.asset == subject.asset)
        return subject.model_copy(update={"quantity": CANONICAL.get(absent, absent), "tag_candidates": own})
    quantity = max(named.values(), key=lambda t: (scores[t.tag], t.tag)).quantity
    scope = [t for t in named.values() if subject.asset is None or t.asset == subject.asset]
    if not scope:  # the asset has no tag of that quantity: its own tags are the candidates
        own = sorted(t.tag for t in tags if t.asset == subject.asset)
        return subject.model_copy(update={"quantity": quantity, "tag_candidates": own})
    top = max(scores[t.tag] for t in scope)
    best = sorted(t.tag for t in scope if scores[t.tag] == top)
    quantity = named[best[0]].quantity
    point = _other_point(tokens, named[best[0]])
    if point is not None:  # "the discharge temperature" where the tag is the bearing's: a point the plant lacks
        own = sorted(t.tag for t in tags if subject.asset is None or t.asset == subject.asset)
        return subject.model_copy(update={"quantity": f"{point}_{quantity}", "tag_candidates": own})
    if len(best) == 1 and subject.asset is not None:
        return subject.model_copy(update={"tag": best[0], "quantity": quantity, "tag_candidates": best})
    return subject.model_copy(update={"quantity": quantity, "tag_candidates": best})


# Assets left out of what is asked: "las bombas menos la 101", "every asset bar the tank", "sin contar el tanque",
# "tirando o tanque", "fora a P-101", "all the pumps except 101". "menos", "but" and "bar" leave out only after the
# plural they take from ("¿cuál vibró menos la 101 o la 102?" compares).
_LEAVING_OUT = (
    r"excepto|exceto|salvo|sin contar(?: a| con)?|sin|sem contar(?: com| a| o)?|sem|tirando|fora|except(?: for)?|"
    r"other than|apart from|aside from|not counting|excluding|quitando|sacando|aparte del?|leave out|leaving out|"
    # "la bomba que no es la 101", "a bomba que não é a 101"
    r"que no es|que no sea|que nao e|que nao seja"
)
_LEFT_OUT = re.compile(
    rf"(?P<lead>[,;:]?\s*)\b(?:(?P<after_plural>menos|but|bar|not|nao|(?<=, )no)|{_LEAVING_OUT})\s+"
    r"(?P<what>(?:(?:el|la|los|las|o|a|os|as|the|al)\s+)?(?:(?:dos|duas|two|both)\s+)?[a-z0-9-]+"
    r"(?:\s*(?:,|\by\b|\be\b|\band\b|\bni\b|\bnor\b)\s*(?:(?:el|la|los|las|o|a|os|as|the)\s+)?[a-z0-9-]+)*)"
)
# What the rest is taken from: every asset ("cada equipo", "every asset", "todos los equipos"), or another of the kind
# ("la otra bomba", "a outra bomba", "the other pump").
_ANY_ASSET = re.compile(
    # (not "activos"/"ativos": "alarmas activas", "alarmes ativos" are standing ones)
    r"\b(?:equipos?|equipment|assets?|equipamentos?|maquinas?|machines?|equipments|kit)\b"
)
# The machines that turn, pumps and compressors: "all the rotating kit bar the compressor", "los equipos rotativos".
_ROTATING = re.compile(
    r"\brotating (?:equipment|kit|machines|machinery|assets)\b|\b(?:equipos?|maquinas?|equipamentos?) rotativ[oa]s?\b"
)
_OTHER_OF_KIND = re.compile(r"\b(?:la otra|el otro|a outra|o outro|the other)\s+([a-z]+)\b")
_JOINERS = frozenset({"el", "la", "los", "las", "o", "a", "os", "as", "the", "al", "y", "e", "and", "ni", "nor"})


def without_left_out(text: str, namespace: Namespace) -> str | None:
    """`text` folded with the assets it leaves out taken away from what it asks about (`_LEFT_OUT`): the rest named
    by their ids in the place of the plural or the other one ("de las bombas menos la 101" asks of P-102); `text`
    folded as it is when it leaves none out; None when it leaves out every asset it asks about."""
    folded = fold(text)
    assets = [info.asset for info in namespace.assets]
    for match in _LEFT_OUT.finditer(folded):
        left_out = _assets_said(match.group("what"), namespace)
        if not left_out:
            continue
        before, after = folded[: match.start()], folded[match.end() :]
        plural = plural_assets(before + " " + after, namespace)
        recent = before[-40:]
        if (
            match.group("after_plural")
            and (plural is None or plural[0] not in recent)
            and not (_ANY_ASSET.search(recent) or _ROTATING.search(recent) or _OTHER_OF_KIND.search(recent))
        ):
            continue
        rest = before + match.group("lead")[:1] + " " + after
        said_kinds = {_kind_of_id(asset) for asset in left_out}
        if (other := _OTHER_OF_KIND.search(rest)) is not None and (kind := _kind_of(other.group(1))) is not None:
            scope, place = _assets_of_kind(kind, namespace.assets), other
        elif (found := _ROTATING.search(rest)) is not None:
            scope = [a for turning in ("pump", "compressor") for a in _assets_of_kind(turning, namespace.assets)]
            place = found
        elif plural is not None and (found := re.search(rf"\b{plural[0]}\b", rest)) is not None:
            scope, place = plural[1], found
        elif (found := _ANY_ASSET.search(rest)) is not None:
            scope, place = assets, found
        elif len(said_kinds) == 1 and (kind := said_kinds.pop()) and (found := _kind_word(rest, kind)) is not None:
            # "la bomba que no es la 101": the rest of its kind
            scope, place = _assets_of_kind(kind, namespace.assets), found
        else:
            return rest  # "Del tanque nomás, sin las bombas": the asset it names
        kept = [asset for asset in scope if asset not in left_out]
        if not kept:
            return None
        return rest[: place.start()] + ", ".join(kept) + rest[place.end() :]
    return folded


def _kind_word(folded: str, kind: str) -> re.Match[str] | None:
    """The first word of `folded` that names equipment of `kind`."""
    return next((m for m in _TOKEN.finditer(folded) if _kind_of(m.group(0), fuzzy=False) == kind), None)


def _assets_said(words: str, namespace: Namespace) -> set[str]:
    """The assets the words open with name: by id, number or kind ("la 101 y la 102", "el tanque", "as duas bombas");
    empty when the first word that is not an article or a joiner names none."""
    found: set[str] = set()
    ids = [info.asset for info in namespace.assets]
    tokens = [
        t for t in words.replace(",", " ").split() if t not in _JOINERS and t not in ("dos", "duas", "two", "both")
    ]
    for at, token in enumerate(tokens):
        following = tokens[at + 1] if at + 1 < len(tokens) else ""
        asset = next((a for a in ids if _id_matches(token, fold(a))), None)
        if asset is None and token.isdigit() and len(token) >= _BARE_NUMBER_DIGITS:
            asset = _one_numbered(ids, _digits(token))
        if asset is not None:
            found.add(asset)
        elif (kind := _kind_of(token, fuzzy=False)) is None:
            break
        elif not following[:1].isdigit():  # "la bomba 101": the number says which
            found |= set(_assets_of_kind(kind, namespace.assets))
    return found
