"""The time window a question speaks of, in the site's timezone and its `[[reports.shifts]]`, in es/en/pt.

Deterministic: `now` and the timezone are arguments, the clock is never read, so a question asked again at the same
`now` resolves to the same window. Rules, first match wins (text folded: lower case, no accents):

- a window said to run until now ("de ontem às 18h até agora", "from 6 pm yesterday until now", "desde ayer hasta
  ahora", "entre ayer a las 18 y ahora", "de ontem até hoje"): from the start of what the rest names to now ("to/a now"
  only after a time said with "from/desde/de", "and now" after "between/entre"; "until today 2 am" ends then);
- spans back from now: "las últimas 3 horas", "last 2 days" (N × 24 h), "the last 2 weeks/the past fortnight" (N × 7
  days), a weekend (Saturday 00:00 to Monday 00:00: "last weekend/el fin de semana pasado/o fim de semana passado" the
  latest that has ended, so on a Saturday or Sunday the one before the weekend under way; "two weekends ago/hace dos
  fines de semana/há dois fins de semana", "the weekend before last" counted back among those ended; "this
  weekend/el finde/no fim de semana" the latest begun, so far), "last week" (the calendar week before this one,
  Monday 00:00 to Monday 00:00), "the week before last/la semana antepasada" (the one before that), "this week",
  a calendar quarter ("last quarter/el trimestre pasado/o trimestre passado": the one before this; "this quarter",
  "the quarter before last", "the third quarter", "el cuarto trimestre de 2025", "Q3 2025": by its number, in the
  year said, else the latest begun), a month ("en marzo", "March 2019", "the month of March", "diciembre pasado", "el
  pasado mes de octubre": the latest ended; its year said by place: "last year in December", "en diciembre del año
  pasado"), a year ("en 2019", "last year/el año pasado", "this year" so far), "last month", "this month", "en lo que
  va de la semana/del mes";
- a day: "hoy/today/hoje", "ayer/yesterday/ontem" (chat's "yday", pt "ont" and "hj", "ytd" beside a clock time
  ("ytd 8pm"; alone it is year to date); a one-letter slip: "ayr", "otem"), "anteayer/anteontem", a weekday ("el
  lunes": the latest one up to today), days back ("hace 2 días", "há uma semana": 7 days, "quatro dias atrás", "four
  days back", "a fortnight ago/hace
  quince días/há quinze dias": 14, "a month ago": the same day of last month), a day of this month or the last ("el
  primero de este mes", "no dia primeiro deste mês", "the 15th of last month", "el último día del mes pasado"), a date
  ("3 de marzo", "March 3", "2026-03-03", "3/3": read by dateparser; "del año pasado/last year" puts it in that year),
  a day of the calendar ("Christmas Eve/la Nochebuena/a véspera de Natal", "Christmas/Navidad/o Natal", "New Year's
  Eve/Nochevieja/réveillon", "New Year's Day/Año Nuevo/on New Year", "May Day/Labour Day/Día del Trabajo/Dia do
  Trabalho" 1 May, "São João" 24 June (said as the feast: "no São João", "festa de São João"), "Día de Muertos/Finados"
  2 November, Thanksgiving (the fourth Thursday of November), Good Friday/Viernes Santo/Sexta-feira Santa and
  Easter/Pascua/Páscoa: in the year said, "last/pasada" the latest gone by, "this/esta" this year's, else the latest
  begun);
- an hour range whose two ends say their own days or nights, with or without "from/de" before it ("de las 8 de la
  noche de anteayer a las 6 de la mañana de ayer", "entre las 22:00 horas de anteayer y las 06:00 horas de ayer",
  "from 8 pm on the 4th to 6 am on the 5th", "8pm yesterday through to 6 this morning", "from 8 last night to 6 this
  morning": an end said with a night is the night's own hour, 6 to 11 the evening, and an end said with no day is in
  that night: "desde las 8 de anoche hasta las 6"), or whose end anchors a vague start ("from 8PM the other night up
  to 6AM yesterday": the last 20:00 before);
- within the day (or today): "last night/anoche/ontem à noite" (20:00 to 06:00 before the day named; "antenoche", "the
  night before last", Tagalog "gabi bago kagabi" the one before, spelled "anteanoche", "ante anoche", "antes de anoche"
  too; a night by its dates, "la noche del 5 al 6 de diciembre", "a noite de 4 para 5", "the night of December 5th": the
  first day's; hours said in it run across midnight: "anoche de 11 a 2" is 23:00 to 02:00; "since 6 last night/desde las
  6 de anoche/desde anoche a las 6" is from that evening hour to now), a shift, read before the night it runs in ("turno
  A", "yesterday's shift B", "in B shift", "in A shift" (a capital A mid-sentence; "in a shift" is the article): the
  occurrence that starts on that day (the day or night said with its start, "que entró antes de ayer", "the one that
  started last night at ten", or its end, "that ended at 6 am yesterday", first; a night named, "el turno C de anoche":
  the one starting in it); alone, the latest that has started; "el turno de noche", "the morning/days shift", "turno da
  tarde": the one shift starting 18:00-04:00, 04:00-10:00 or 10:00-18:00, asked back when the site has none or several),
  "este turno/this shift/en lo q va del turno" (with today said too: "hj nesse turno até agora"), "el turno
  anterior/last shift/the shift before this one" (Caribbean "de shift before dis one"; "the shift that just ended/el
  turno que acaba de terminar/o turno que acabou", said with no day or time after it), a shift's letter said after it
  ("en el turno de anoche, el C", "last night's shift, the C"), from a clock time said in a "since" clause to now
  ("since the night crew came on at 10 last night", "desde que o pessoal da noite entrou às 22h de ontem": read before
  the shift the clause names), an hour range ("entre las 10 y las 11", "from 10 to 11:30", "between 10pm and 2am", "8pm
  hanggang 6am", "yesterday 0600 to noon", "1400 to 1800": the latest that has started when no day is named; a bare end
  hour below a bare start hour before noon ends after noon, a day range: "6 till 2", "de 7 a 3" are 06:00-14:00 and
  07:00-15:00, while a night named, the end's part of the day, am/pm or a 24-hour "02:00" keep it across midnight: "de
  10 a 2 de la madrugada", "10pm to 2"), "before noon/antes de las 10/after 3pm" (from the day's start to that time or
  from it to the day's end; a part of the day named bounds it instead), one clock time ("a las 10", "reading 2 o'clock",
  or said bare next to a day word: "ayer 0800", "ontem 14h30", "yday 1130": the hour from 10:00, the latest that has
  started; `find_instant` gives the instant itself), a part of the day ("this morning" 06:00–12:00, "afternoon/tarde"
  12:00–18:00, "evening" 18:00–22:00, "tonight/esta noche" 20:00–06:00);
- the day alone: 00:00 to the next 00:00.

Clock times are read as people say them: "las once y media", "a las 11 y 20", "11 menos cuarto", "meio-dia e meia",
"quinze para as onze", "às 10 horas e 15 minutos", "las 22:00 horas", "das 20 horas", "at 2200 hours" (the clock alone),
"las 12 del mediodía", "12 noon" (12:00), "half past ten", "quarter to 11" (Scots "quarter tae ten"), British "half ten"
(10:30), "a la una", "à 1 e meia", "between one and two in the afternoon", Tagalog "ng 3:15 PM", with an article ("at
the 16:30") or a word for exactly ("a las 15:00 exactas", "at 15:00 sharp", "às 15h em ponto"), roughly ("a eso de las
10", "alrededor de las 10", "lá pelas 10h", "at about 10": that clock, yielding to one said exactly in the same
question), the midnight between two days said with them ("a la medianoche de ayer a hoy", "na virada da meia-noite de
ontem pra hoje": the second day's 00:00); a bare 12 is midnight when the small hours are named ("ayer en la madrugada,
de 12 a 6", "in the early hours, from 12 to 6": 00:00 to 06:00); a bare hour is after noon when the afternoon or evening
is named ("ayer por la tarde a las 3", Australian "yesterday arvo, between 2 and 6", "6 this evenin"), in the morning
with "this morning/yesterday morning" after it ("till 6 yesterday morning"), after noon when it ends a range begun after
noon ("between noon and one"), and the night's own in a night named or said after it ("between ten and eleven at night",
"às dez da noite", a calque's "between 7 and 9 of the night": 6 to 11 the evening, 12 midnight, 1 to 5 the small hours).
A number before a plural noun is a count, not an hour ("as duas bombas", "at 2 pumps"). A clock time that cannot be ("at
37 o'clock", "a las 25:00", "at 14:75") leaves the question with no window read (None), never another time. A colon
after a clock time or its day is punctuation ("hasta las 6:00 de ayer: ...").

`find_instant` reads, besides one clock time, the start or end of a shift, a day or another span said with it ("at
the start of yesterday's A shift" 06:00, "al inicio del turno B de ayer", "no começo do turno A de ontem", "at the end
of yesterday's A shift" 14:00, "al final del día de ayer" the next 00:00, "no fim do turno C de anteontem", "al terminar
el turno"; a shift's only with the site's shifts given; an end still to come asks back).

A window still under way ends at `now`. A question with no time at all gets the current shift so far (today so far
when no shift covers `now`). A window wholly in the future, or a shift the site does not have, gives a Clarification.
"""

from __future__ import annotations

import re
from calendar import monthrange
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from zoneinfo import ZoneInfo

import dateparser
from rapidfuzz.distance import DamerauLevenshtein

from edge_agent.ask.answers import Clarification
from edge_agent.ask.resolve.numbers import spelled_numbers
from edge_agent.ask.resolve.spelling import one_edit
from edge_agent.ask.resolve.text import fold, without_references
from edge_agent.ask.tools import Window
from edge_agent.config import ShiftConfig

# "Night" as people say it in the three languages: from dinner to the usual 06:00 start of the day shift.
NIGHT_START = time(20, 0)
NIGHT_END = time(6, 0)
# Parts of the day: (start, end) local; the morning starts with the usual first shift (06:00).
_PARTS: dict[str, tuple[time, time]] = {
    "small_hours": (time(0, 0), time(6, 0)),
    "early_morning": (time(5, 0), time(8, 0)),
    "morning": (time(6, 0), time(12, 0)),
    "afternoon": (time(12, 0), time(18, 0)),
    "evening": (time(18, 0), time(22, 0)),
}
# Dates before 1970 are not read as dates: no plant record is that old, and year 1 has no UTC instant west of UTC.
_FIRST_YEAR = 1970
# The longest "last N hours/days/months" read whole: ten years, past any `ask.max_window_days` (the tools refuse a
# window over the plant's budget, so "the last 40 days" is refused there rather than read as 31).
_MAX_SPAN_H = 3660 * 24

_N = r"(\d{1,3}|un|una|uma|um|a|an|one|dos|two|duas|dois|tres|three|cuatro|four|quatro|cinco|five|seis|six)"
_NUMBERS = {
    "un": 1,
    "una": 1,
    "uma": 1,
    "um": 1,
    "a": 1,
    "an": 1,
    "one": 1,
    "dos": 2,
    "two": 2,
    "duas": 2,
    "dois": 2,
    "tres": 3,
    "three": 3,
    "cuatro": 4,
    "four": 4,
    "quatro": 4,
    "cinco": 5,
    "five": 5,
    "seis": 6,
    "six": 6,
}
_LAST = r"(?:last|past|previous|ultimas?|ultimos?|pasadas?|pasados?|passadas?|passados?)"
_HOURS = re.compile(
    # (not "the last hour before handover, 5 to 6 am", "la última hora del turno": an hour of another window)
    # (nor "noite passada 20h-06h": a night, then its hours)
    rf"(?<!noite )(?<!noche )(?<!night )(?<!semana )(?<!week )"
    rf"\b{_LAST}\s+(?:{_N}\s*)?(?:horas?|hours?|hrs?|h)\b(?!\s+(?:before|of|antes|del|de|do|da)\b)(?!\s*-\s*\d)"
    rf"|\b{_N}\s*(?:horas?|hours?|h)\s+{_LAST}\b"
)
# "the last half hour", "la última media hora", "os últimos 45 minutos": minutes back from now.
_MINUTES_SPAN = re.compile(
    rf"\b{_LAST}\s+(?:(?P<half>half(?:\s+an|-an)?[\s-]hour|media hora|meia hora)|"
    rf"{_N}\s*(?:minutos?|minutes?|mins?)\b)(?!\s+(?:before|of|antes|del|de|do|da)\b)"
    rf"|\b{_N}\s*(?:minutos?|minutes?|mins?)\s+{_LAST}\b"
)
_DAYS = re.compile(rf"\b{_LAST}\s+{_N}\s+(?:dias?|days?)\b|\b{_N}\s+(?:dias?|days?)\s+{_LAST}\b")
_MONTHS_SPAN = re.compile(rf"\b{_LAST}\s+{_N}\s+(?:months?|mes|meses)\b|\b{_N}\s+(?:months?|mes|meses)\s+{_LAST}\b")
# "the last 2 weeks", "las últimas 2 semanas", "the past fortnight" (written "2 weeks"): N × 7 days back from now.
_WEEKS = re.compile(rf"\b{_LAST}\s+{_N}\s+(?:semanas?|weeks?)\b|\b{_N}\s+(?:semanas?|weeks?)\s+{_LAST}\b")
# Weekends, Saturday 00:00 to Monday 00:00 (Spanish chat "finde"): counted back among those that have ended ("last
# weekend", "el fin de semana pasado", "hace dos fines de semana", "the weekend before last"), or the latest begun
# ("this weekend", "el fin de semana", "no fim de semana"; the one under way, so far, on a Saturday or Sunday).
_WEEKEND = r"(?:weekend|week-end|wknd|fin de semana|finde|fim de semana|fim-de-semana)"
_WEEKENDS_AGO = re.compile(
    rf"\b(?:hace|ha|faz)\s+{_N}\s+(?:fines de semana|fins de semana|findes|fins-de-semana|{_WEEKEND})\b"
    rf"|\b{_N}\s+(?:weekends?|wknds?|week-ends?)\s+(?:ago|back)\b"
    rf"|\b{_N}\s+(?:fines de semana|fins de semana|findes|fins-de-semana|{_WEEKEND})\s+atras\b"
)
_WEEKEND_BEFORE_LAST = re.compile(rf"\b(?:{_WEEKEND} before last|{_WEEKEND} (?:antepasado|antepassado|retrasado))\b")
_LAST_WEEKEND = re.compile(
    rf"\b(?:(?:last|previous|this past)\s+{_WEEKEND}|{_WEEKEND}\s+(?:pasado|passado|anterior)|"
    rf"(?:pasado|passado|ultimo)\s+{_WEEKEND}|{_WEEKEND}\s+before\s+(?:this|the current)(?: one)?)\b"
)
_THIS_WEEKEND = re.compile(
    rf"\b(?:this|the|el|este|o|no|neste|nesse|esse|del|do|durante el|durante o)\s+{_WEEKEND}\b(?!-)"
)
_LAST_WEEK = re.compile(
    r"\b(?:last week|previous week|(?:la |a )?semana pasada|(?:la |a )?semana passada|"
    r"(?:la |a )?semana anterior)\b"
)
# The week, month, quarter or year before the last one: "the week before last", "la semana antepasada", "a semana
# retrasada", "el trimestre antepasado".
_BEFORE_LAST = re.compile(
    r"\b(?:the |la |a |el |o )?(?:(week|month|quarter|year) before last|(semana|mes|trimestre|ano) "
    r"(?:antepasad[ao]|antepassad[ao]|retrasad[ao]))\b"
)
_THIS_WEEK = re.compile(r"\b(?:this week|esta semana|nesta semana|lo (?:que|q|k) va de (?:la )?semana)\b")
_LAST_MONTH = re.compile(
    r"\b(?:last month|previous month|(?:the )?past month|(?:el |o )?mes pasado|(?:o )?mes passado|"
    r"(?:el |o )?mes anterior)\b"
)
# A day of this month or the last by its number: "el primero de este mes", "the first of this month", "no dia
# primeiro deste mês", "el 1 de este mes", "the 15th of last month", "el último día del mes pasado".
_MONTH_DAY = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th|o)?|(primero|primer|primeiro|first)|(ultimo|last)(?=\s+(?:dia|day)))"
    r"(?:\s+(?:dia|day))?\s+(?:"
    r"(?:(?:de|of|do|del)\s+(?:este|esse|this|the current)|deste|desse)\s+(?:mes|month)"
    r"|(?:(?:de|of|do|del)\s+(?:(?:el|o|the)\s+)?)(?P<last>(?:mes|month)\s+(?:pasado|passado|anterior)|"
    r"(?:last|previous|past)\s+month))\b"
)
_THIS_MONTH = re.compile(r"\b(?:this month|este mes|neste mes|lo (?:que|q|k) va del mes)\b")
_LAST_YEAR = re.compile(
    r"\b(?:last year|previous year|(?:el )?ano pasado|(?:o )?ano passado|(?:el |o )?ano anterior|"
    # a financial year past: "the last financial year", "el ejercicio fiscal anterior", "o ano fiscal passado"
    r"(?:last|previous) (?:financial|fiscal) year|(?:el )?(?:ano|ejercicio) fiscal (?:pasado|anterior)|"
    r"(?:o )?(?:ano|exercicio) fiscal (?:passado|anterior))\b"
)
_THIS_YEAR = re.compile(
    r"\b(?:this year|(?:de )?este ano|neste ano|deste ano|"
    # from the year's start: "desde principios de año", "since the beginning of the year", "desde o começo do ano"
    r"(?:the )?(?:beginning|start) of (?:the|this) year|year to date|so far this year|(?:principios|inicio|comienzo) "
    r"(?:de|del) ano|(?:comeco|inicio|principio) do ano|en lo que va del ano|no que vai do ano)\b"
)
# A year said after a month by its place ("December last year", "diciembre del año pasado", "dezembro deste ano").
_YEAR_AFTER = re.compile(
    rf",?\s+(?:(?:of|de|del|do|in)\s+)?(?:the\s+)?(?:{_LAST_YEAR.pattern}|{_THIS_YEAR.pattern}|{_BEFORE_LAST.pattern})"
)
# A calendar quarter: the one before this ("last quarter", "el trimestre pasado"; not "the last quarter of an hour"),
# this one so far, or one by its number ("the third quarter", "el cuarto trimestre de 2025", "Q3 2025").
_LAST_QUARTER = re.compile(
    r"\b(?:(?:last|previous|past) quarter(?! (?:of|an|hour)\b)|trimestre (?:pasado|passado|anterior))\b"
)
_THIS_QUARTER = re.compile(
    r"\b(?:this quarter|current quarter|este trimestre|neste trimestre|trimestre (?:actual|atual)|"
    r"lo (?:que|q|k) va del trimestre|no que vai do trimestre)\b"
)
_NTH_QUARTER = re.compile(
    r"\b(?:(first|1st|primer|primero|primeiro|1er|1o)|(second|2nd|segundo|2o)|(third|3rd|tercer|tercero|terceiro|"
    r"3er|3o)|(fourth|4th|cuarto|quarto|4o))\s+(?:quarter|trimestre)\b(?:,?\s+(?:(?:of|de|del|do)\s+)?((?:19|20)\d\d))?"
    r"|\bq([1-4])\s+(?:(?:of|de|del|do)\s+)?((?:19|20)\d\d)\b"
)
# Days of the calendar every year: (pattern, the day in a year). Before one, "last/pasada" is the latest gone by,
# "this/esta" this year's, else the latest begun; a year said with it wins. Not a greeting ("Merry Christmas").
_LAST_BEFORE = (
    r"(?P<last>\b(?:last|this past|past|previous|(?:la |el )?pasad[ao]|(?:o |a )?(?:passad[ao]|ultim[ao]))\s+)?"
)
_THIS_BEFORE = r"(?P<this>\b(?:this|esta|este|neste|nesta)\s+)?"
_LAST_AFTER = r"(?P<after>\s+(?:pasad[ao]|passad[ao]|anterior)\b)?"
_NOT_GREETING = r"(?<!merry )(?<!happy )(?<!feliz )(?<!felices )(?<!prospero )(?<!boas )(?<!boa )"
# "natal" is Christmas after an article or preposition ("no Natal", "dia de Natal"), not in "cidade natal".
_NATAL = r"(?:(?<=\bno )|(?<=\bo )|(?<=\bdo )|(?<=\bde )|(?<=\bao )|(?<=\bpelo )|(?<=\bate o )|(?<=\bultimo ))natal"
# "São João" is the feast (24 June) said as one ("no São João", "festa de São João"), not a place ("usina São João").
_SAO_JOAO = (
    r"(?:(?:dia|festa|festas|noite|vespera) de |(?<=\bno )|(?<=\bo )|(?<=\bpelo )|(?<=\bate o )|(?<=\bon ))sao joao"
)
# "New Year" alone is its day after a word that places a day ("on New Year", "over the New Year").
_NEW_YEAR = r"(?:(?<=\bon )|(?<=\bat )|(?<=\bover )|(?<=\bover the )|(?<=\bduring the )|(?<=\blast ))new year(?!'?s)"


def _fixed(month: int, day: int) -> Callable[[int], date]:
    return lambda year: date(year, month, day)


def _thanksgiving(year: int) -> date:
    """The fourth Thursday of November (US)."""
    first = date(year, 11, 1)
    return first + timedelta(days=(3 - first.weekday()) % 7 + 21)


def _easter(year: int) -> date:
    """Easter Sunday (Gregorian computus, Meeus/Jones/Butcher)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday) // 451
    month, day = divmod(h + weekday - 7 * m + 114, 31)
    return date(year, month, day + 1)


_HOLIDAYS: tuple[tuple[re.Pattern[str], Callable[[int], date]], ...] = tuple(
    (re.compile(rf"{_LAST_BEFORE}{_THIS_BEFORE}{_NOT_GREETING}\b(?:{core})\b{_LAST_AFTER}"), on)
    for core, on in (
        (
            r"christmas eve|xmas eve|nochebuena|noche buena|vispera de navidad|(?:vespera|noite) d[eo] natal",
            _fixed(12, 24),
        ),
        (rf"christmas(?: day)?(?! eve)|xmas(?! eve)|(?:el dia de )?navidad|(?:dia d[eo] )?{_NATAL}", _fixed(12, 25)),
        (r"new year'?s eve|noche ?vieja|v[ie]spera de ano (?:nuevo|novo)|noite de ano novo|reveillon", _fixed(12, 31)),
        (rf"new year'?s day|{_NEW_YEAR}|(?:el dia de )?ano nuevo|(?:o dia de )?ano novo|primero de ano", _fixed(1, 1)),
        (
            r"dia del trabajo|dia del trabajador|dia do trabalho|dia dos? trabalhador(?:es)?|may day|labou?r day|"
            r"(?:international )?workers'? day",
            _fixed(5, 1),
        ),
        (_SAO_JOAO, _fixed(6, 24)),
        (r"dia de (?:los )?(?:muertos|fieles difuntos|difuntos)|day of the dead|(?:dia de )?finados", _fixed(11, 2)),
        (r"thanksgiving(?: day)?|dia de accion de gracias|dia de acao de gracas", _thanksgiving),
        (
            r"good friday|viernes santo|sexta(?:-| )feira (?:santa|da paixao)",
            lambda year: _easter(year) - timedelta(days=2),
        ),
        (r"easter(?: sunday| day)?|domingo de (?:pascua|resurreccion|pascoa)|pascua|pascoa", _easter),
    )
)
# A year said right after a day of the calendar: "Christmas 2024", "la Navidad de 2024".
_HOLIDAY_YEAR = re.compile(r",?\s+(?:(?:of|de|del|do)\s+)?((?:19|20)\d\d)\b")

# "antenoche", "the night before last" are the night that began the day before yesterday (read in `_night_of`).
_DAY_BEFORE = re.compile(
    r"\b(?:anteayer|antier|anteontem|antes de (?:ayer|ontem)|day before yesterday|antenoche|"
    r"night before last|gabi bago kagabi)\b"
)
_YESTERDAY = re.compile(r"\b(?:ayer|yesterday|ontem|el dia de ayer|kahapon)(?:'s)?\b")
_TODAY = re.compile(
    r"\b(?:hoy|today|hoje|tonight|tdy)(?:'s)?\b|\b(?:esta|this|nesta) (?:manana|morning|manha|"
    r"tarde|afternoon|evening|noche|noite)\b|\blo (?:que|q|k) (?:va|llevamos|lleva) del? dia\b"
)
_WEEKDAYS = {
    0: "lunes|monday|segunda(?:-feira| feira)?",
    1: "martes|tuesday|terca(?:-feira| feira)?",
    2: "miercoles|wednesday|quarta(?:-feira| feira)?",
    3: "jueves|thursday|quinta(?:-feira| feira)?",
    4: "viernes|friday|sexta(?:-feira| feira)?",
    5: "sabado|saturday",
    6: "domingo|sunday",
}
# "el lunes", "on Monday": the last one up to today; "el lunes pasado", "last Monday", "na segunda passada": the last
# one before today (said on a Monday, a week ago).
_WEEKDAY = re.compile(
    r"\b(?:el|on|na|no|(last|el pasado|o ultimo|a ultima))\s+(" + "|".join(_WEEKDAYS.values()) + r")\b"
    r"(\s+(?:pasad[oa]|passad[oa]|anterior)\b)?"
)
_MONTHS = (
    r"(?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|"
    r"janeiro|fevereiro|marco|maio|junho|julho|setembro|outubro|novembro|dezembro|january|february|march|"
    r"april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|"
    r"oct|nov|dec)"
)
_MONTH_NUMBERS: tuple[tuple[str, ...], ...] = (
    ("enero", "janeiro", "january"),
    ("febrero", "fevereiro", "february"),
    ("marzo", "marco", "march"),
    ("abril", "april"),
    ("mayo", "maio", "may"),
    ("junio", "junho", "june"),
    ("julio", "julho", "july"),
    ("agosto", "august"),
    ("septiembre", "setiembre", "setembro", "september"),
    ("octubre", "outubro", "october"),
    ("noviembre", "novembro", "november"),
    ("diciembre", "dezembro", "december"),
)
_MONTH_NAMES = "|".join(name for names in _MONTH_NUMBERS for name in names)
# A whole month: "en marzo de 2019", "in January 2018", "em janeiro de 2018", "durante marzo" (no year: the latest
# March that has begun; "el pasado marzo", "março passado": the latest ended). Not a day of it ("3 de marzo" is a
# date, read below).
_MONTH_LEAD = "en|in|em|durante|during|for|last|this past|past|pasado|passado|ultimo|todo|toda|all of|all|whole"
_MONTH = re.compile(
    # (a number before the lead is no day of it: "la línea 1 en noviembre")
    rf"(?:\b(?:{_MONTH_LEAD})\s+|(?<!\d )(?<!\d de )(?<!\d of )\b(?:(?:de|of)\s+)?)"
    rf"({_MONTH_NAMES})"
    rf"(?:(?:\s+(?:de|of|del))?\s+(\d{{4}}))?\b(?!\s+\d{{1,2}}\b)"
)
_DATE = re.compile(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"
    rf"|\b\d{{1,2}}\s+de\s+{_MONTHS}(?:\s+de\s+\d{{4}})?\b"
    rf"|\b{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTHS}\b"
)
# "hace una semana", "há três dias", "faz um mês", "a week ago", "2 days back": the day that many days, weeks (7
# days) or months (the same day of that month, or its last) before today.
# A day by its number alone: "el 5", "el día 5", "on the 5th", "no dia 5" (not "el 5 de la tarde", "the 5 stops", "on
# 3rd shift": the third shift).
_DAY_NUMBER = re.compile(
    r"\b(?:on the|on|the)\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:shift|turno))"
    r"|\b(?:el|el dia|no dia|o dia|do dia|dia)\s+(\d{1,2})\b(?!\s*(?::|h\b|hs\b|horas?|am\b|pm\b|y\b|e\b|de la|da|"
    r"do|de|min|minutos|a las|%|\.\d|,\d))"
)
# Said after the count too: "four days back", "quatro dias atrás", "uma semana atrás", "tres días atrás".
_AGO = re.compile(
    rf"\b(?:hace|ha|faz)\s+{_N}\s+(dias?|semanas?|mes|meses|anos?)\b"
    rf"|\b{_N}\s+(days?|weeks?|months?|years?|dias?|semanas?|mes|meses|anos?)\s+(?:ago|back|atras)\b"
)

_LAST_NIGHT = re.compile(
    r"\b(?:anoche|antenoche|last night|yesterday (?:at |in the )?night|overnight|night before last|"
    r"kagabi)\b"
    r"|\b(?:ayer|ontem|anteayer|antier|anteontem)\s+(?:(?:en la|por la|a la|de la|de|a|na|em|durante la)\s+)?"
    r"(?:noche|noite)\b"
    r"|\b(?:noche (?:pasada|anterior)|noite (?:passada|anterior))\b"
    # a day's night by its weekday: "Friday night", "el viernes por la noche", "na sexta à noite"
    r"|\b(?:" + "|".join(_WEEKDAYS.values()) + r")\s+(?:(?:en la|por la|a la|de la|de|a|na|em|at|durante la)\s+)?"
    r"(?:noche|noite|night)\b"
)
# A day word and how many days back from today it is.
_DAYS_BACK = {
    "day before yesterday": 2,
    "anteayer": 2,
    "antier": 2,
    "anteontem": 2,
    "antes de ayer": 2,
    "antes de ontem": 2,
    "ayer": 1,
    "ontem": 1,
    "yesterday": 1,
    "hoy": 0,
    "hoje": 0,
    "today": 0,
}
# "la noche de anteayer a ayer", "a noite de ontem para hoje", "the night from yesterday to today": the first day's.
_NIGHT_FROM = re.compile(
    r"\b(?:noche|noite|night)\s+(?:de|del|from|of)\s+("
    + "|".join(sorted(_DAYS_BACK, key=len, reverse=True))
    + r")\s+(?:para|pra|a|al|ao|to|into|till|until|hasta|ate)\s+(?:(?:o|el|la)\s+)?[a-z]"
)
# A night by its dates: "la noche del 5 al 6 de diciembre", "la noche del 5", "a noite de 5 para 6 de dezembro", "na
# noite do dia 5", "the night of December 5th", "the night of the 5th (to the 6th)", "the night of 5 December": the
# night that begins on the first day's evening. A number after "de"/"of" is that day only with its ordinal, a month or
# "para"/"pra" the next day ("la noche de 8 a 6" gives hours, read by the range rules).
_NIGHT_TO = r"(?:\s*-\s*|\s+(?:al|a|ao|para|pra|to|into|till|until)\s+)(?:(?:el|o|the|dia)\s+){0,2}"
_NIGHT_DATE = re.compile(
    r"\b(?:noche|noite|night)\s+(?:"
    r"(?:del|do)\s+(?:dia\s+)?(?P<del>\d{1,2})"
    r"|(?:de|da)\s+(?:(?:el|o)\s+)?dia\s+(?P<dia>\d{1,2})"
    r"|(?:of|from)\s+(?:the\s+)?(?P<ordinal>\d{1,2})(?:st|nd|rd|th)"
    rf"|(?:of|from|de|del|do)\s+(?:the\s+)?(?P<month_first>{_MONTHS})\s+(?P<after_month>\d{{1,2}})(?:st|nd|rd|th)?"
    rf"|(?:of|from|de)\s+(?P<before_month>\d{{1,2}})(?:st|nd|rd|th)?(?=(?:{_NIGHT_TO}\d{{1,2}}(?:st|nd|rd|th)?)?"
    rf",?\s+(?:(?:de|of)\s+)?{_MONTHS}\b|\s+(?:para|pra)\s+(?:o\s+)?(?:dia\s+)?\d))\b"
    rf"(?:,?\s+(?:(?:de|of)\s+)?(?P<month>{_MONTHS})\b)?"
    rf"(?:{_NIGHT_TO}(?P<to>\d{{1,2}})"
    rf"(?:st|nd|rd|th)?\b(?:,?\s+(?:(?:de|of)\s+)?(?P<to_month>{_MONTHS})\b)?)?"
)
_TONIGHT = re.compile(r"\b(?:tonight|esta noche|esta noite|hoje a noite|hoy en la noche)\b")
_PART = {
    # "de madrugada", "the small hours": midnight to 06:00 ("a las 3 de la madrugada" is a clock time, read first)
    "small_hours": re.compile(r"\b(?:madrugada|madrugadita|small hours|wee hours|early hours)\b"),
    # "de manhãzinha", "early in the morning", "a primera hora": 05:00 to 08:00
    "early_morning": re.compile(
        r"\b(?:manhazinha|mananita|early morning|early in the morning|first thing in the morning|a primera hora|"
        r"de manha cedo|manha cedo|temprano en la manana|bien temprano)\b"
    ),
    "morning": re.compile(r"\b(?:morning|manana|manha)\b"),
    "afternoon": re.compile(r"\b(?:afternoon|tarde)\b"),
    "evening": re.compile(r"\bevening\b"),
}
# "So far" said of the shift, the day, the week, the month: "en lo que va del turno" (chat: "lo q va", "lo k va"),
# "no que vai do turno", "so far in the shift", "in the shift so far".
_SO_FAR = r"(?:lo (?:que|q|k) (?:va|llevamos|lleva)|(?:no|o) que (?:vai|levamos))"
_CURRENT_SHIFT = (
    r"\b(?:this shift|dis shift|current shift|este turno|turno actual|turno atual|neste turno|deste turno|nesse turno|"
    r"desse turno)\b"
    rf"|\b{_SO_FAR} (?:del?|do|de este|deste) turno\b|\bso far (?:in|on|during) (?:the )?shift\b"
    r"|\b(?:in|on|during) (?:the )?shift so far\b|\bturno ate (?:agora|o momento)\b"
)
_THIS_SHIFT = re.compile(rf"{_CURRENT_SHIFT}|\b(?:el turno|o turno|the shift)\b")
# Said with today ("hj nesse turno até agora"), only these name the shift under way rather than the day.
_TODAYS_SHIFT = re.compile(_CURRENT_SHIFT)
_JUST_ENDED = (
    r"(?:ended|finished|termino|terminado|acabo|acabado|terminou|acabou|finalizo|finalizou|finalizado|gone|closed|"
    r"wrapped(?: up)?|wound up|knocked off)"
)
_PREVIOUS_SHIFT = re.compile(
    r"\b(?:last shift|previous shift|prev shift|prev\. shift|prior shift|turno anterior|ultimo turno|turno pasado|"
    r"turno passado|turno previo|shift anterior|ultimo shift|shift pasado|shift passado|shift previo)\b"
    # "el turno inmediatamente anterior (al que está en curso)", "the shift immediately before this one"
    r"|\b(?:turno|shift)\s+(?:inmediatamente|imediatamente|immediately|justo|directly)\s+(?:anterior|previo|before|prior)\b"
    # "the shift before this one", "the one before this shift", "el turno antes de este", "o turno antes deste"
    r"|\b(?:shift|turno|one|uno)\s+(?:(?:right|just|justo)\s+)?(?:before|antes(?:\s+(?:de|del|do|da))?|"
    r"anterior(?:\s+(?:a|al|ao))?)\s+(?:this|the current|current|este|esta|deste|desta|esse|desse|el actual|"
    r"o atual|actual|atual)\b"
    # the shift that just ended: "the shift that (has) just finished", "el turno que acaba de terminar", "el turno
    # recién terminado", "o turno que acabou de terminar", "the just-finished shift", "the shift just gone"
    r"|\b(?:shift|turno|one|uno)\s+(?:(?:que|q|that|which)(?:'s|\s+(?:has|is))?\s+)?(?:just|recien|recem|apenas)[\s-]+"
    rf"{_JUST_ENDED}\b"
    r"|\b(?:shift|turno|one|uno)\s+(?:que|q)\s+(?:acaba|acabou|acabo)\s+de\s+(?:terminar|acabar|finalizar|salir|sair|"
    r"cerrar|fechar)\b"
    rf"|\b(?:just|recien|recem)[\s-]+{_JUST_ENDED}\s+(?:shift|turno)\b"
    # ... or "the shift that ended", "o turno que acabou", "el turno que terminó" with no day or time after it
    r"|\b(?:el|the|o|no|do|del|al|ao|last|ese|esse)\s+(?:turno|shift)\s+(?:que|q|that|which)\s+(?:ended|finished|"
    r"termino|acabo|terminou|acabou|finalizo|finalizou)(?:\s+(?:agora|ahora|now|recien|recently|recentemente))?"
    r"\s*(?:[?.!,;:)]|$)"
    # the asker's own shift's predecessor: "the shift before mine", "el turno antes del mío", "the one that handed
    # over to me", "o turno que me passou", "la guardia que me entregó"
    r"|\b(?:shift|turno|guardia|one|uno)\s+(?:right\s+|just\s+|justo\s+)?(?:before|antes)\s+(?:mine|del mio|do meu|"
    r"da minha|de la mia)\b"
    r"|\b(?:that|which|que)\s+(?:just\s+)?(?:handed over to (?:me|us)|handed (?:me|us) over|(?:me|nos) entrego|"
    r"(?:me|nos) entregou|(?:me|nos) paso|(?:me|nos) passou)\b"
)
# Shifts counted back from the one under way: "hace 3 turnos", "two shifts ago", "há 5 turnos", "3 shifts back"; the
# one before the previous ("el turno antes del anterior", "el penúltimo turno", "the shift before last"); and the one
# under way as it ran the day before ("el mismo turno de ayer", "the same shift yesterday", "o mesmo turno de ontem").
_SHIFTS_BACK = re.compile(
    rf"\b(?:hace|ha|faz)\s+{_N}\s+(?:turnos?|shifts?)\b|\b{_N}\s+(?:shifts?|turnos?)\s+(?:ago|back|atras)\b"
    # (not "the night shift before last": the night shift before last night's)
    r"|(?<!night )(?<!morning )(?<!afternoon )(?<!evening )(?<!day )(?<!graveyard )(?<!swing )(?<!\b[a-z] )"
    r"\b(?P<two>(?:turno|shift|one|uno)\s+(?:antes|before)\s+(?:del?|do|da|the)?\s*(?:anterior|last|previous(?: one)?|"
    r"one before)|(?:turno|shift)\s+anterior\s+(?:al|ao)\s+anterior|"
    r"penultimo\s+(?:turno|shift)|(?:turno|shift)\s+penultimo|second[- ]to[- ]last shift|last shift but one)\b"
    r"|\b(?P<three>antepenultimo\s+(?:turno|shift)|third[- ]to[- ]last shift)\b"
)
_SAME_SHIFT_YESTERDAY = re.compile(
    r"\b(?:mismo|mesmo|same)\s+(?:turno|shift)\s+(?:pero\s+|mas\s+|but\s+)?(?:(?:de|do|of)\s+)?(?:ayer|ontem|yesterday)\b"
    r"|\byesterday'?s same shift\b"
)
# A shift called by the part of the day it starts in ("el turno de noche", "the morning shift", "turno da tarde"):
# the site's one shift starting in that span of clock hours, [first, last), wrapping past midnight for the night.
_SHIFT_BY_PART: dict[str, tuple[re.Pattern[str], time, time]] = {
    "morning": (
        re.compile(
            r"\b(?:morning shift|days? shift|early shift|turno (?:de (?:la )?)?manana|turno matutino|turno da manha|"
            # the UK's "earlies", "lates" and "nights" name the shifts
            r"turno de dia|turno diurno|earlies)\b"
        ),
        time(4, 0),
        time(10, 0),
    ),
    "afternoon": (
        re.compile(
            r"\b(?:afternoon shift|evening shift|back shift|late shift|turno (?:de (?:la )?)?tarde|turno vespertino|"
            r"turno da tarde|lates)\b"
        ),
        time(10, 0),
        time(18, 0),
    ),
    "night": (
        re.compile(
            r"\b(?:nights? shift|graveyard(?: shift)?|turno (?:de (?:la )?)?noche|turno nocturno|turno da noite|"
            r"turno noturno|(?:on|over|during) nights)\b"
        ),
        time(18, 0),
        time(4, 0),
    ),
}
_NAMED_SHIFT = re.compile(
    # not "the shift I'm handing over"
    r"\b(?:turno|shift)\s+([a-z0-9]{1,12})\b(?!')|\b(?:the|el|o)\s+([a-z0-9]{1,12})\s+shift\b"
    r"|\b(?:yesterday'?s|today'?s|last|this)\s+([a-z0-9])\s+shift\b"
    # "during b shift": a letter before "shift" other than the article "a" (or "i"); "A shift" is read before folding
    r"|(?<![\w'-])([b-hj-z])\s+shift\b"
    # the letter alone after the day, a shift said before it: "The shift I'm handing over is today's A, 6 am to 2 pm"
    r"|\b(?:turno|shift)\b[^.?!]{0,40}\b(?:yesterday'?s|today'?s)\s+([a-z])(?=\s*(?:[,.;:?!]|$))"
)
# A shift's letter said after it, set off: "en el turno de anoche, el C", "last night's shift, the C", "no turno de
# ontem (o B)" (a letter alone, not an id: "the C-201").
_SHIFT_APPOSITIVE = re.compile(
    r"\b(?:turno|shift)\b[^.?!()]{0,40}?(?:,|\(|\s-)\s*(?:el|the|o)\s+(?:(?:turno|shift)\s+)?([a-z])(?![\w-])"
    r"(?=\s*(?:[,.;:?!)]|$|(?:one|uno|um|shift|turno)\b))"
)
# "in A shift", "yesterday A shift": a capital A before "shift" mid-sentence is the shift, which folded would read as
# the article ("in a shift"); opening a sentence it may be the article, and is left so.
_CAPITAL_A_SHIFT = re.compile(r"(?<=[\w,;:] )A\s+(?i:shift)\b")
# The part of the day after a clock time says am or pm: "a las 3 de la tarde" is 15:00, "às 3 à tarde" too. The night
# ("de la noche", "at night", "à noite"; in a Spanish speaker's English "of the night") makes 6 to 11 the evening, 12
# midnight, 1 to 5 the small hours.
_NIGHT_WORDS = (
    "de la noche",
    "en la noche",
    "por la noche",
    "de noche",
    "da noite",
    "a noite",
    "na noite",
    "pela noite",
    "de noite",
    "at night",
    "in the night",
    "of the night",
)
_PM_WORDS = (
    "pm",
    "p.m.",
    "de la tarde",
    "en la tarde",
    "por la tarde",
    "da tarde",
    "a tarde",
    "na tarde",
    "pela tarde",
    "in the afternoon",
    "in the evening",
    "of the afternoon",
    "of the evening",
)
# A bare hour (no am/pm) in a question that names the afternoon or evening elsewhere is after noon: "ayer por la tarde
# a las 3" is 15:00.
# not the greetings; the English Midlands' "lates" (the afternoon shift: "yesterday's lates, 2 till 10")
_AFTERNOON = re.compile(r"(?<!\bgood )(?<!\bboa )\b(?:afternoon|tarde|evening|lates)\b")
_CLOCK = (
    # "6h da manhã": the hour's "h" before the part of the day that says which 6
    r"(\d{1,2})(?:[:h.](\d{2}))?(?:h(?=\s+(?:de la|da|de|en la|por la|a|na|pela) (?:manana|tarde|noche|madrugada|"
    # (not the night that names a day: "das 20h às 6h da noite passada", "de la noche anterior")
    r"manha|noite)\b))?(?:\s*(am|pm|a\.m\.|p\.m\.|hrs|hs|h|(?:de|en|por) la (?:manana|tarde|"
    r"noche(?!\s+(?:pasada|anterior)))|de la madrugada|da (?:manha|tarde|noite(?!\s+(?:passada|anterior))|madrugada)|"
    r"(?:in|of) the (?:morning|afternoon|evening|night)|at night|"
    r"de noche|(?:a|na|pela|de) (?:noite|tarde))(?![a-z]))?"
)
# Where a clock time (or the day said with it) ends: no digit goes on, nor minutes after a colon; a colon that is
# punctuation ends it ("desde las 20:00 de anteayer hasta las 6:00 de ayer: el supervisor...").
_CLOCK_END = r"(?!\d|:\d)"
_HOUR_RANGE = re.compile(
    rf"\b(?:entre|between|from|de|desde|da|das)\s+(?:(?:las|la|as|a)\s+)?{_CLOCK}"
    # "das 4 pras 6", "das 4 para as 6" (pt): to
    rf"(?:\s*-\s*|\s+(?:y|and|e|a|as|ao|al|to|till|until|hasta|ate|pras|pra as|para as)\s+)(?:(?:las|la|as|a)\s+)?"
    rf"{_CLOCK}{_CLOCK_END}"
    # "yesterday 6 to 12", "ayer 6-12": two clock times alone, never digits of an id ("P-101 a 102")
    rf"|(?<![\w.:/-]){_CLOCK}(?:\s*-\s*|\s+(?:to|till|until|hasta|ate|a|as|hanggang)\s+){_CLOCK}(?![\w:/-])"
)
# Portuguese "à 1h30" (singular "à", folded "a") and Tagalog "ng 3:15 PM" bring a clock only with its minutes, "h" or
# part of the day: "a 12" alone is a quantity ("bajó a 12"). A clock said roughly is still that clock: "a eso de las
# 10", "alrededor de las 10", "cerca de las 10", "como a las 10", "pelas 10h", "lá pelas 10", "perto das 10", "at about
# 10" ("around 10", "por volta das 10" too).
_APPROX_LEAD = (
    r"(?:a )?eso de las?|alrededor de las?|cerca de las?|como a las?|a cosa de las?|(?:la )?pelas?|perto das?|"
    r"cerca das?|at (?:about|around|approximately|approx|roughly|circa)"
)
_ROUGH_LEAD = re.compile(rf"(?:{_APPROX_LEAD}|around|por volta d[ae]s?)\s")
_AT_CLOCK = re.compile(
    rf"\b(?:{_APPROX_LEAD}|a las|a la|at|around|as|al|ao|hacia las|sobre las|por volta das|por volta de|"
    r"(?:a|ng)(?=\s+\d{1,2}(?::\d{2}|h\b|h\d{2}|\s*(?:am|pm|a\.m\.|p\.m\.|da |de la |(?:in|of) the |at night))))"
    rf"\s+{_CLOCK}{_CLOCK_END}"
    # a number before a plural noun counts it: "as duas bombas" (the two pumps) is no "às duas"; a clock said with its
    # minutes ("a las 15:00 exactas") or a word for exactly after it ("a las 3 exactas") counts nothing
    r"(?:(?<=[:h]\d\d)|(?!\s+(?!(?:horas|hours|minutos|minutes|menos|mais|pues|antes|despues|depois|this|plus|"
    r"exactas|exactos|exatas|exatos|justas|certas|certinhas|cabales)\b)[a-z]{3,}s\b))"
)
# A clock time that cannot be: "at 37 o'clock", "a las 25:00", "at 14:75", "às 27h15", "às trinta e sete horas" (hour
# past 24 or minutes past 59, said as a clock: H:MM, HhMM, HHMM hours, o'clock/am/pm, "horas/h", or "a las N" ending
# the phrase; "at 37" alone may be a value). No window is read from such a question, rather than another time.
_CLOCK_LEAD_WORDS = (
    r"a las|a la|as|ao|at|around|al|hacia las|sobre las|por volta das|desde las|desde as|since|from|between|entre las|"
    r"entre as|until|till|hasta las|ate as|before|after|b4|to|and|y las|e as|de las|das|a|ng"
)
_IMPOSSIBLE_CLOCK = re.compile(
    rf"\b(?:{_CLOCK_LEAD_WORDS})\s+(\d{{1,2}}):(\d{{2}})(?![\d:])"
    rf"|\b(?:at|around|since|from|between|until|till|before|after|b4|to|and)\s+(\d{{1,2}})\s*"
    r"(?:o'?clock|am|pm|a\.m\.|p\.m\.)(?![a-z])"
    r"|\b(?:a las|a la|as|ao|hacia las|sobre las|por volta das|desde las|desde as|hasta las|ate as|y las|e as)\s+"
    r"(\d{1,2})(?:\s*(?:horas?|hrs?|hs|h)\b|\s+(?:en punto|em ponto)\b)"
    r"|\b(?:a las|hasta las|desde las|y las|entre las|as|ate as|desde as)\s+(\d{1,2})(?=\s*(?:[?.!,;]|$|"
    r"(?:y|e)\s+(?:media|cuarto|meia|quarto|\d)|"
    r"de la\b|del\b|de (?:ayer|hoy|anteayer)\b|ayer\b|hoy\b))"
    # "às 27h15": an hour and its minutes joined by "h", whatever leads; "2900 hours"
    r"|\b(\d{1,2})h(\d{2})\b|\b(\d{2})(\d{2})\s*(?:hours|hrs|horas)\b"
)
# Noon and midnight are clock times: read as "12:00" and "0:00" before any rule ("between 10 and noon").
# Their article goes with them ("entre el mediodía y la una", "entre o meio-dia e a uma" read as "entre 12:00 ..."),
# and so does the 12 said before them: "de las 12 del mediodía", "ao 12 do meio-dia", "12 noon", "12 at midday".
_NOON = re.compile(
    r"(?:\b12(?::00)?\s+(?:(?:horas|hours)\s+)?(?:(?:del?|do|da|al|ao|at|in the)\s+)?(?:(?:el|o|the)\s+)?"
    r"|\b(?:el|o) )?\b(?:mediodia|meio[- ]dia|noon|midday)\b"
    # "las 12 del día", "ao 12 do dia": noon (not "las 12 del día 5", the 5th)
    r"|\b12(?::00)?\s+(?:del|do) dia\b(?!\s+(?:\d|de\b))"
)
# "from midnight to midnight", "de medianoche a medianoche": a whole day, its day said elsewhere ("…line stop
# yesterday? Mi mean how many stops line 1 have, from midnight to midnight."), not today's midnight up to now.
_MIDNIGHT_TO_MIDNIGHT = re.compile(
    r"\b(?:from |de |desde |da )?(?:midnight|medianoche|meia[- ]noite) (?:to|till|until|a|hasta|ate|as) "
    r"(?:midnight|medianoche|meia[- ]noite)\b"
)
# Midnight opening a range is its day's first hour, whatever part of the day ends it: "de la medianoche hasta las 2 de
# la tarde" is 00:00 to 14:00.
_MIDNIGHT_START = re.compile(
    r"\b(de la|desde la|desde a|from|since) (?:medianoche|meia[- ]noite|midnight)(?=\s+(?:hasta|to|until|till|a las|"
    r"ate|as)\b)"
)
# "12 midnight", "las 12 de la medianoche": the 12 goes with it, as with noon.
_MIDNIGHT = re.compile(r"(?:\b12(?::00)?\s+(?:(?:de la|da|at)\s+)?)?\b(?:medianoche|meia[- ]noite|midnight)\b")
# Hour words that alone read as articles ("las dos bombas" is both pumps) are the hour after a clock word when a clock
# goes on after them or they end the phrase: "a la una", "a las dos y media", "à uma e meia", "at one pm".
_ARTICLE_HOUR_VALUES = {
    "la una": "la 1",
    "las dos": "las 2",
    "a uma": "as 1",  # "à uma", folded
    "da uma": "da 1",
    "at one": "at 1",
    "to one": "to 1",
    "past one": "past 1",
    "half one": "half 1",
    "between one": "between 1",
    "from one": "from 1",
    "around one": "around 1",
    "until one": "until 1",
    "till one": "till 1",
    "before one": "before 1",
    "after one": "after 1",
}
_ARTICLE_HOURS = re.compile(
    rf"\b(?:{'|'.join(_ARTICLE_HOUR_VALUES)})\b"
    r"(?=\s+(?:(?:y|e|and|a|as|to|till|until|hasta|ate)\s+(?:(?:las|as)\s+)?(?:\d+|dos|media|meia|"
    r"(?:un |um )?(?:cuarto|quarto))|menos|(?:de la|da) (?:manana|tarde|noche|madrugada|manha|noite)|en punto|"
    r"em ponto|o'?clock|am|pm|horas?|h|\d+|de (?:ayer|hoy|anteayer)|ayer|hoy|ontem|hoje|yesterday|today|"
    r"(?:in|of) the (?:morning|afternoon|evening|night)|at night|(?:a|na|pela) (?:tarde|noite)|(?:en|por) la "
    r"(?:tarde|noche))\b"
    r"|\s*(?:[?.,!;-]|$))"
)
# The hour word that ends a range begun with a clock time is the hour: "between 12:00 and one", "entre 12:00 y la
# una", "entre 12:00 e a uma" (noon read first).
_HOUR_WORD_ENDING = re.compile(
    r"(\b(?:between|entre|from|de|desde|das|da)\s+(?:(?:las|la|as|a)\s+)?\d{1,2}(?::[0-5]\d)?\s*(?:am|pm|h|hs|hrs)?"
    r"\s+(?:and|y|e|to|till|until|a|as|hasta|ate|-)\s+(?:(?:la|las|a|as)\s+)?)(?:one|una|uma)\b"
    # ... where it ends the phrase or a time or day goes on: "de 3 a una alarma" is a count
    r"(?=\s*(?:[?.,!;:)]|$)|\s+(?:am|pm|p\.m\.|de la|da|do|de|del|in the|o'?clock|en punto|em ponto|h|hs|horas?|"
    r"hours?|ayer|hoy|ontem|hoje|yesterday|today|on|en|em|no|na|y|e|and|of the)\b)"
)
# "horas"/"hours" said after a clock time is the clock alone: "las 22:00 horas de anteayer", "das 20 horas às 6",
# "from 2200 hours" (four digits written "22:00"). A bare hour or four digits only after a word that brings a clock
# ("a las", "desde las", "das", "às", "from", "until"), not a span ("las 3 horas pasadas", "3 hours ago"), not minutes
# that go on ("às 10 horas e 15", read by `_SAID_MINUTES`), and never an hour that cannot be ("às 37 horas" stays
# asked back).
_HOURS_SAID = re.compile(
    r"(?:(?P<lead>\b(?:(?:a|de|desde|hasta|entre|y)\s+las|(?:e|ate)\s+as|as|das|at|from|since|until|till|"
    r"between|to|and)\s+)(?:(?P<mil>(?:[01]\d|2[0-3])[0-5]\d)|(?P<hour>\d{1,2}))|\b(?P<clock>\d{1,2}:[0-5]\d))"
    rf"\s*(?:horas|hours)(?![\w-])(?!\s+(?:y|e|and)\s+\d|\s+(?:{_LAST}|ago|back|atras|antes|before|later|"
    r"despues|depois|after|more|mas|mais|anteriores|siguientes|seguintes|previas)\b)"
)
# The word that brings a clock time ("a las", "às", "at"), but not the first end of "entre las 10 y 11".
_CLOCK_LEAD = r"(?:(?<=\bla )|(?<=\blas )|(?<=\ba )|(?<=\bas )|(?<=\bat )|(?<=\bao ))(?<!entre las )(?<!entre as )"
# Minutes said with the hour (folded text, numbers already digits), each with the sign of its minutes: after the hour
# ("11 y media", "meio-dia e meia" → "12:00 e meia", "a las 11 y 20", "quarter past 10", "a quarter after 10", British
# "half 10", "at 10 30")
# or before it ("11 menos cuarto", "quarter to 11", "at 20 to 11", "15 para as 11" → "as 10:45", keeping its "as").
_MINUTE_WORDS = {"media": 30, "meia": 30, "half": 30, "cuarto": 15, "quarto": 15, "quarter": 15}
_SAID_MINUTES: tuple[tuple[re.Pattern[str], int], ...] = (
    (
        re.compile(r"\b(?P<hour>\d{1,2})(?::00)?\s+(?:y|e)\s+(?:(?:un|um)\s+)?(?P<minutes>media|meia|cuarto|quarto)\b"),
        1,
    ),
    (re.compile(rf"{_CLOCK_LEAD}(?P<hour>\d{{1,2}})\s+(?:y|e)\s+(?P<minutes>\d{{1,2}})\b(?![:\d])"), 1),
    (  # "às 10 horas e 15 minutos", "a las 10 horas y 15", "at 10 hours 15"
        re.compile(
            rf"{_CLOCK_LEAD}(?P<hour>\d{{1,2}})\s*(?:horas?|hours?|hrs?|hs|h)\s+(?:(?:y|e|and)\s+)?(?P<minutes>\d{{1,2}})"
            r"(?:\s*(?:minutos?|minutes?|mins?)\b)?(?![:\d])"
        ),
        1,
    ),
    (
        re.compile(
            rf"{_CLOCK_LEAD}(?P<hour>\d{{1,2}})\s+menos\s+(?:(?:un|um)\s+)?(?P<minutes>cuarto|quarto|\d{{1,2}})\b(?!:)"
        ),
        -1,
    ),
    (
        re.compile(
            r"\b(?:a\s+)?(?P<minutes>half|quarter|\d{1,2})\s+(?:minutes\s+)?(?:past|after)\s+(?P<hour>\d{1,2}|one)(?::00)?"
            r"\b(?!:)"
        ),
        1,
    ),
    (re.compile(r"\b(?:a\s+)?(?P<minutes>quarter)\s+(?:to|till?|before)\s+(?P<hour>\d{1,2}|one)(?::00)?\b(?!:)"), -1),
    (re.compile(r"(?<=\bat )(?P<minutes>\d{1,2})\s+(?:minutes\s+)?to\s+(?P<hour>\d{1,2})(?::00)?\b(?!:)"), -1),
    (
        re.compile(
            r"\b(?:um\s+)?(?P<minutes>quarto|\d{1,2})\s+(?:minutos\s+)?(?:para|pras?)\s+(?P<lead>as|a)\s+"
            r"(?P<hour>\d{1,2})(?::00)?\b(?!:)"
        ),
        -1,
    ),
    # "às cinco pras seis" (folded "as 5 pras 6"): after "às" a clock, not the range "das 4 pras 6"
    (re.compile(r"(?<=\bas )(?P<minutes>[1-9]|[1-5]\d)\s+pras\s+(?P<hour>\d{1,2})(?::00)?\b(?!:)"), -1),
    (re.compile(r"\b(?P<minutes>half)\s+(?P<hour>\d{1,2})\b(?![:\d])"), 1),
    (re.compile(rf"{_CLOCK_LEAD}(?P<hour>\d{{1,2}})\s+(?P<minutes>[0-5]\d)\b(?![:\d])"), 1),
)
# "desde ayer a las 18 (hasta ahora)", "since 2 pm yesterday", "desde ontem às 18h", "desde antenoche a las 9": from
# that time to now.
_SINCE = re.compile(
    r"\b(?:desde|since|from|a partir de|a partir das)\s+"
    r"(?:(?:(?:ontem|ayer|anteontem|anteayer|antier) (?:a|de|na|en la|por la) (?:noite|noche)|ayer|yesterday|ontem|"
    r"hoy|today|hoje|anteayer|antier|anteontem|anoche|antenoche|last night|(?:the )?night before last|"
    # a day of the month: "desde el 5 a las 6 de la tarde" (`_day` reads which)
    rf"(?:el |o |the |on )?(?:dia |day )?\d{{1,2}}(?:st|nd|rd|th)?(?:\s+(?:de|of)\s+{_MONTHS})?,?)\s+)?"
    rf"(?:(?:a las|a la|at|as|las|la|the|a|o|ao|al)\s+)?{_CLOCK}{_CLOCK_END}"  # "desde a meia-noite", "ao meio-dia"
)
# "since the night crew came on at 10 last night", "desde que o pessoal da noite entrou às 22h de ontem", "desde que
# entró el turno ayer a las 22": from the clock time said in a "since" clause to now, whatever the clause's subject
# (it outranks the shift named in it: from that time, not the shift whole).
_SINCE_CLAUSE = re.compile(
    r"\b(?:ever since|since|desde que|desde q|desde el momento (?:en )?que|desde o momento (?:em )?que|desde quando|"
    r"a partir (?:de|do momento) (?:em )?que)\b[^.?!;,]{0,60}?\b(?:at|a las|a la|as|ao)\s+"
    rf"{_CLOCK}{_CLOCK_END}(?!\s+(?:y|and|e|a|as|ao|al|to|till|until|hasta|ate)\s+(?:las?\s+|as\s+)?\d)"
)
# "before noon", "b4 10am", "antes del mediodía", "hasta las 10": from the day's start to that time; "after 3pm",
# "después del mediodía", "depois das 14h": from it to the day's end (a part of the day named bounds both instead).
_BEFORE = re.compile(
    r"\b(?:before|b4|until|till|antes\s+(?:del?|do|das?|de\s+las?)|hasta|ate)\s+"
    rf"(?:(?:the|las?|as?)\s+)?{_CLOCK}{_CLOCK_END}"
)
_AFTER = re.compile(
    rf"\b(?:after|despues\s+(?:del?|de\s+las?)|depois\s+(?:do|das?|de))\s+(?:(?:the|las?|as?)\s+)?{_CLOCK}{_CLOCK_END}"
)
# A day said with one end of an hour range, before or after its clock time: "ayer a las 8", "de anteayer",
# "del 4", "on the 5th", "do dia 5" (`_DAYS_BACK`).
_DAY_WORD = "|".join(_DAYS_BACK)
# The midnight between two days said with them is the second day's 00:00: "a la medianoche de ayer a hoy", "midnight
# between yesterday and today", "na virada da meia-noite de ontem pra hoje" ("na virada de ontem pra hoje" too).
_VIRADA = re.compile(rf"\bvirada\s+(?:(?:da|de)\s+0:00\s+|do dia\s+)?(?=(?:de|do|del)\s+(?:{_DAY_WORD})\s)")
_MIDNIGHT_BETWEEN = re.compile(
    rf"\b0:00,?\s+(?:(?:na|en el|en la|in the|on the|at the)\s+(?:passagem|paso|pasaje|transicao|transicion|virada|"
    r"cambio|turn|changeover)\s+)?(?:(?:de|del|do|da|from|between|of)\s+)?"
    rf"({_DAY_WORD})\s+"
    rf"(?:a|al|ao|pra|para|to|into|and|e|y|hasta|ate)\s+(?:(?:o|el)\s+)?({_DAY_WORD})\b"
)
# "at the 16:30" (a Spanish or Portuguese speaker's "a las", "às"): the article before a clock time said with its
# minutes or am/pm goes ("at the 5th", "at the 2 pumps" keep it).
_ARTICLE_CLOCK = re.compile(
    r"\b(at|around|from|since|until|till|before|after|between|to|and) the "
    r"(?=\d{1,2}(?::[0-5]\d|h[0-5]\d|\s*(?:am|pm|a\.m\.|p\.m\.)(?![a-z])))"
)
# An end may say its day only vaguely ("from 8pm the other night up to 6am yesterday"): the other end anchors it.
_VAGUE_DAY = (
    r"the other (?:night|evening|day)|the night before|(?:la |esa )?otra noche|el otro dia|(?:a |aquela )?outra noite|"
    r"(?:o )?outro dia|la noche anterior|a noite anterior"
)
# An end may say the night it is in ("from 8 last night to 6 this morning"): the night's own hours, and an end
# that says no day of its own is in that night too ("desde las 8 de anoche hasta las 6").
_NIGHT_DAY = (
    r"last night|anoche|kagabi|(?:night before last|antenoche)"
    r"|(?:ontem|ayer|anteontem|anteayer) (?:a|de|na|en la|por la) (?:noite|noche)"
)
_RANGE_END = (
    rf"(?:({_DAY_WORD})\s+(?:(?:a las|a la|at|as|las|la)\s+)?)?{_CLOCK}"
    rf"(?:,?\s+(?:(?:de|del|do|da|on|of)\s+)?(?:(?:el|o|the|dia)\s+){{0,2}}"
    rf"(?:({_NIGHT_DAY})|({_DAY_WORD})|(\d{{1,2}})(?:st|nd|rd|th)?|({_VAGUE_DAY}))\b)?"
)
# "entre las 8 de la noche de anteayer y las 6 de la mañana de ayer", "from 8 pm on the 4th to 6 am on the 5th".
_DATED_RANGE = re.compile(
    rf"\b(?:entre|between|from|de|desde|da|das)\s+(?:(?:las|la|as|a)\s+)?{_RANGE_END}"
    rf"(?:\s*-\s*|,?\s+(?:y|and|e|a|as|ao|al|(?:up )?to|(?:up )?till|(?:up )?until|hasta|ate)\s+)"
    rf"(?:(?:las|la|as|a)\s+)?{_RANGE_END}{_CLOCK_END}"
)
# A night said just before a range opens it ("last night, from 8 pm up to 6 this morning"): read as the start's.
_NIGHT_BEFORE_RANGE = re.compile(
    rf"\b({_NIGHT_DAY}),?\s+((?:from|desde|das|de|between|entre)\s+(?:(?:las|la|as|a)\s+)?{_CLOCK}{_CLOCK_END})"
)
# With no word before it, only a range ("8pm yesterday through to 6 this morning"), never two times said with
# "and"; `_dated_range` takes it only when both ends say their day.
_BARE_DATED_RANGE = re.compile(
    rf"(?<![\w.:/-]){_RANGE_END}(?:\s*-\s*|,?\s+(?:a|as|ao|al|(?:up )?to|(?:up )?till|(?:up )?until|hasta|ate)\s+)"
    rf"(?:(?:las|la|as|a)\s+)?{_RANGE_END}{_CLOCK_END}"
)
# A window said to run until now ("de ontem às 18h até agora", "from 6 pm yesterday until now", "desde ayer hasta
# ahora", "entre ayer a las 18 y ahora", "de ontem até hoje"): from the start of what its clause names from its first
# word on to now. The clause opens with "from/since/desde/das/a partir de", or "de" said before a time; "and now"
# needs "between/entre" ("compare yesterday to now", "the latest one up to today", "neste turno até agora" are no
# range). "hoy/hoje/today" is now only after "until/hasta/até" ("la noche de ayer a hoy" is a night) and with no time
# of its own after it ("hasta hoy a las 2" ends then).
_NOW_SAID = (
    # ("de ontem às 18h pra cá", "desde ayer hasta acá": to here, now)
    r"(?:right now|now|the present|this (?:very )?moment|ahora(?: mismo)?|ahorita|agora(?: mesmo)?|ca|aca|aqui|"
    r"(?:el|este|o|esse) momento|(?:el|o) presente"
    r"|(?:(?:el|o) dia de )?(?:hoy|hoje)(?![\w-])(?!,?\s+(?:\d|(?:a|as|at|al|ao|around|by|en|em|in|de|da|do|por|pela|"
    r"na|no|this|after|before|antes|despues|depois|las)\b))|today(?![\w-])(?!,?\s+(?:\d|(?:at|around|by|in|this|"
    r"after|before)\b)))(?![\w-])"
)
_TO_NOW = re.compile(
    r",?\s+(?:(?P<until>(?:up |right )?(?:until|till|through|thru)|up to|hasta|ate)|(?P<and>and|y|e)|to|a|al|ao|para|"
    rf"pra)\s+(?P<now>{_NOW_SAID})"
)
# The word that opens the range: "from", "desde", "between", "das", "a partir de"; or "de" said before a time ("de
# ontem", "de las 18", not "la temperatura de la bomba").
_TIME_AFTER = rf"\s+(?:(?:las|la|as|a|the|el|o)\s+)?(?:\d|(?:{_DAY_WORD}|{_NIGHT_DAY}|yesterday'?s?|today'?s?)\b)"
_FROM_WORD = re.compile(r"\b(?:from|since|desde|das|a partir d[eoa]s?|(between|entre))\b")
_FROM_DE = re.compile(rf"\b(?:de|del|da|do)(?={_TIME_AFTER})")
# Where a clause ends: ".", "?", "!", ";" or ":" before a space (not "18:00").
_CLAUSE_END = re.compile(r"[.?!;:¿¡](?=\s|$)|[¿¡]")
# An instant said as the start or end of a shift, a day or another span ("at the start of yesterday's A shift", "al
# inicio del turno B de ayer", "no começo do turno A de ontem", "at the end of yesterday's A shift", "al final del día
# de ayer", "no fim do turno C de anteontem", "al terminar el turno"): the instant it begins or ends (an end still to
# come asks back). Only before a word for a shift or a span of time: "al final de la línea" is a place.
_EDGE = re.compile(
    r"\b(?:(?P<start>(?:at|by|around) (?:the )?(?:very )?(?:start|beginning|onset) of"
    r"|al (?:mero |mismo )?(?:inicio|comienzo|principio|arranque) (?:del?|de la)"
    r"|(?:no|ao|bem no) (?:inicio|comeco|principio) (?:d[oae])"
    r"|al (?:empezar|comenzar|iniciar|arrancar)|ao (?:comecar|iniciar))"
    r"|(?P<end>(?:at|by|around) (?:the )?(?:very )?(?:end|close|finish) of"
    r"|al (?:mero |mismo )?(?:final|fin|cierre|termino) (?:del?|de la)"
    r"|(?:no|ao|bem no) (?:fim|final|termino|encerramento|fechamento) (?:d[oae])"
    r"|al (?:terminar|acabar|finalizar|cerrar)|ao (?:terminar|acabar|finalizar|fechar|encerrar)))\s+"
)
# What an edge is of: a shift ("yesterday's shift A", "el turno B de ayer", "the night shift") ...
_EDGE_OF_SHIFT = re.compile(r"(?:[\w'-]+\s+){0,3}?(?:turno|shift)\b")
# ... or a span of time ("el día de ayer", "the day yesterday", "yesterday", "last night", "la semana pasada").
_EDGE_OF_SPAN = re.compile(
    r"(?:(?:the|el|la|o|a|este|esta|this|ese|esa|esse|essa|yesterday'?s|today'?s|last|previous|pasado|passado)\s+)"
    r"{0,2}(?:day|dia|night|noche|noite|week|semana|month|mes|year|ano|morning|manana|manha|afternoon|tarde|evening|"
    r"madrugada|weekend|fin de semana|fim de semana|finde|quarter|trimestre)\b"
    rf"|(?:{_NIGHT_DAY}|{_DAY_WORD}|yesterday'?s?|today'?s?|tonight|antenoche|" + "|".join(_WEEKDAYS.values()) + r")\b"
)
# Four-digit times ("0600", "1400") after "at", "a las", "between", "from" and their kin, or on either side of a
# dash between two of them; a year ("en 2019") has none of these before it.
_MILITARY = re.compile(
    r"((?:\b(?:at|a las|a|as|entre|between|das|to|till|until|hasta|ate|and|y|e)\s+)|-\s*|"
    # "since 1800", "desde 0600" (not "since 2019", "desde 2020": a year)
    r"\b(?:since|desde|from)\s+(?!(?:19|20)\d\d\b(?!\s*(?:hrs|hs|h)\b))|"
    # ... or before a range's other end: "0000 to now", "de 0600 a 1400hs" ("hrs", "hs" or "h" after the digits)
    r"(?<![\w.:/-])(?=\d{4}(?:\s*(?:hrs|hs|h)\b)?\s*(?:-|to|till|until|a|hasta|ate|and|y)\s*(?:\d{4}|now|ahora|agora)))"
    r"([01]\d|2[0-3])([0-5]\d)(?:\s*(?:hrs|hs|h)\b)?(?![\w:/])"
    r"(?!\s*(?:m3|kg|t|units|unidades|piezas|pecas|litros|liters|%)(?!\w))"  # a quantity: "a 1200 m3"
)
# A clock time said bare next to a day word, with no "at"/"a las"/"às" ("ayer 0800", "yesterday 8am", "ontem 10h",
# "ontem 14h30", "1130 yday") is that instant: read as "ayer at 08:00". Four digits are a time of day only when they
# are one (00-23, 00-59) and no unit follows (a leading zero is never a quantity: "ayer 0800 m3/h" asks in m3/h); a
# time that starts or ends a range ("ontem 10h-12h", "ayer 8:00 a 10:00") is left to the range rules.
_BARE_DAY = rf"(?:{_DAY_WORD})(?:'s)?"
_QUANTITY_UNITS = (
    r"(?:m3(?:/h)?|l|lt|lts|litros?|liters?|litres?|kg|t|ton|tons|toneladas?|tonnes?|%|bar|psi|kpa|rpm|hz|kw|kwh|mw|"
    r"mm|c|°c|°f|f|gpm|units?|unidades?|uds?|pcs|pieces?|piezas?|pecas?|veces|vezes|times|alarm\w*|stops?|paradas?|"
    r"paros?|min|minutes?|minutos?)"
)
# A range going on after a time: "to 6am", "y las 10", "to today 6am", "até ontem às 6h".
_RANGE_GOES_ON = (
    rf"\s+(?:y|and|e|a|as|ao|al|to|till|until|hasta|ate|up to|up till|up until)\s+(?:las?\s+|as\s+)?(?:\d|{_BARE_DAY})"
)
_CLOCK_TOKEN = (
    rf"(?<![\w.:/-])((?:1\d|2[0-3])[0-5]\d(?!\s*{_QUANTITY_UNITS}(?![\w/]))|0\d[0-5]\d|"  # 1130, 2100, 0800
    r"\d{1,2}:[0-5]\d(?:\s*(?:am|pm|h|hs|hrs)\b)?|\d{1,2}(?:h|hs|hrs)(?:[0-5]\d)?|"  # 8:15, 10h, 14h30
    r"\d{1,2}(?::[0-5]\d)?\s*(?:am|pm)\b)"  # 8am, 8:30 pm
    rf"(?![\w:/]|\.\d|\s*-|{_RANGE_GOES_ON})"
)
_BARE_CLOCK = re.compile(rf"(\b{_BARE_DAY},?\s+){_CLOCK_TOKEN}")
# Before the day word ("1130 yday"): not after a word that takes a quantity or brings a time of its own ("more than
# 1130 yesterday", "between 8pm and 6am yesterday").
_BARE_CLOCK_BEFORE = re.compile(rf"(?:(\S+) )?{_CLOCK_TOKEN}(,?\s+{_BARE_DAY}\b(?!{_RANGE_GOES_ON}))")
_NOT_BARE_AFTER = frozenset(
    "and y e to till until up hasta ate a as ao al la las de del do da das from desde since entre between before b4 "
    "after antes depois despues than over above under below more less mas menos mais of por para pra around about "
    "approx at em en in on by hacia sobre > < = >= <= ~".split()
)
_YEARS = re.compile(r"\b(?:19|20)\d\d\s*(?:-|y|and|e|a|to|hasta|ate)\s*(?:19|20)\d\d\b")
# "N o'clock" is the hour N, read as a clock time even with no word that brings it ("reading 2 o'clock yesterday
# afternoon"); one that cannot be ("37 o'clock") stays for `_IMPOSSIBLE_CLOCK`.
_OCLOCK = re.compile(r"(?:(\S+) )?(\d{1,2}) o'?clock\b")
# Four-digit times that start a range with no word before them ("yesterday 0600 to noon", "1400 to 1800",
# "de 1400 a 1800"): both ends, unless a unit follows the second ("1500 to 1600 units" are quantities).
_MILITARY_RANGE = re.compile(
    r"(?<![\w.:/-])([01]\d|2[0-3])([0-5]\d)(\s*-\s*|\s+(?:to|till|until|hasta|ate|a|as)\s+)"
    rf"(?:([01]\d|2[0-3])([0-5]\d)(?![\w:/])(?!\s*{_QUANTITY_UNITS}(?![\w/]))|(?=\d{{1,2}}:[0-5]\d\b))"
)
# "through to", "thru" between a time and the clock that ends it: "8pm yesterday through to 6", "1400 thru 1800".
_THROUGH = re.compile(
    r"(\d|\bam|\bpm|\bh|\b(?:yesterday|today|ayer|hoy|ontem|hoje|night|morning|afternoon|evening))"
    r"\s+(?:right\s+)?(?:through|thru)(?:\s+(?:to|till|until))?\s+(?=\d)"
)
# A bare hour said with this or yesterday's morning or afternoon after it is am or pm that day: "to 6 this morning",
# "till six yesterday morning", "a las 6 de esta tarde" (after a word that brings a clock: "the top 5 this morning"
# is a count).
_PART_AFTER_CLOCK = re.compile(
    r"(\b(?:at|around|a las|a la|as|to|till|until|from|since|desde|hasta|ate|between|and|y|e|das|de|a)\s+)"
    r"(\d{1,2}(?::[0-5]\d)?)(?:\s*(am|pm))?\s+(?:de\s+)?(?:this|esta|nesta|desta|(yesterday|ayer|ontem))\s+"
    r"(?:(?:en la|por la|de|a|na|pela|in the)\s+)?(?:(morning|manana|manha)|afternoon|evening|tarde)\b"
)
# A night shift "that ended yesterday" is the one that began the day before.
# The first or second half of a shift: "the back half of B shift", "la segunda mitad del turno", "a primeira metade".
_HALF = re.compile(r"\b(?:(first|front|primera|primeira)|second|back|segunda|ultima)\s+(?:half|mitad|metade)\b")
# (after an article or "al/ao/no" it is the noun: "al término del turno C de ayer" is the end of the 5th's C)
_ENDED = re.compile(
    r"(?<!\bal )(?<!\bel )(?<!\bao )(?<!\bno )(?<!\bo )(?<!\bdo )(?<!\bdel )(?<!\bthe )"
    r"\b(?:termino|acabo|finalizo|ended|finished|finish|finishes|ends|terminou|acabou|termina|acaba|finaliza|"
    # "el turno de noche que ha terminado hoy a las 6"
    r"(?:ha|han|has|hemos) (?:terminado|acabado|finalizado)|"
    r"salio|saiu|knocked off|clocked off|clocked out|got off|fechou|finalizou|cerro|closed|went off)\b"
)
# A shift said by its start ("the night shift that started at 10 pm the day before yesterday", "el que entró antes de
# ayer"): the day said after that verb is the day it starts, whatever day its end is said with.
_STARTED = re.compile(
    r"\b(?:started|starts|began|begins|empezo|empieza|comenzo|comienza|entro|entra|arranco|arranca|comecou|comeca|"
    r"iniciou|inicia|entrou)\b"
)
# The day word said after a shift's start or end verb, not past a bracket: "started at 10 pm the day before
# yesterday", "termino ayer a las 6 (el que entro antes de ayer)".
_SAID_DAY = re.compile(rf"^[^()]*?\b({_DAY_WORD})\b")
# ... or the night said there: "el que empezó anoche a las diez", "the one that started last night at ten".
_SAID_NIGHT = re.compile(rf"^[^()]*?(?:{_LAST_NIGHT.pattern})")
# A clock time said as a shift's start or end ("the shift that started at 10 pm", "el turno que terminó ayer a las
# 6") bounds the shift, and is no instant asked about ("when the pump started at 10" still is one).
_BOUND_CLOCK = re.compile(
    rf"\b(?:turno|shift)\b.*\b(?:que|q|that|which|weh|y|e|and)\s+(?:{_ENDED.pattern}|{_STARTED.pattern})\s+"
    rf"(?:(?:on |the )*(?:{_DAY_WORD})\s+|(?:{_LAST_NIGHT.pattern})\s+)?$"
)
# A whole year: "en 1987", "back in 1987", "em 2009", "de 2009".
_YEAR = re.compile(r"\b(?:in|en|em|de|del|do|of|during|durante|year|ano)\s+((?:19|20)\d\d)\b")
# "desde marzo", "since March", "desde março": from the 1st of the latest such month to now.
_SINCE_MONTH = re.compile(rf"\b(?:since|desde|a partir de)\s+(?:(?:el|o|the)\s+)?(?:mes de\s+)?({_MONTHS})\b(?!\s+\d)")
_SINCE_YEAR = re.compile(r"\b(?:since|desde|from|a partir de)\s+((?:19|20)\d\d)\b(?!\s*(?:hrs|hs|h)\b|:)")
# "el primer turno", "second shift", "terceiro turno", "turno 2": the site's shifts in their configured order.
_ORDINAL_SHIFT = re.compile(
    r"\b(?:(primer|primero|first|1st|primeiro)|(segundo|second|2nd)|(tercer|tercero|third|3rd|terceiro)|"
    r"(cuarto|fourth|4th|quarto)|(quinto|fifth|5th))\s+"
    r"(?:turno|shift)\b"
)
# A day's last or middle shift: "el último turno de ayer", "the last shift yesterday" (not "the last shift", the one
# before this), "o turno do meio de ontem", "the middle shift".
_LAST_OF_DAY = re.compile(
    r"\b(?:(ultimo|last|final)\s+(?:turno|shift)\b(?=\s+(?:(?:de|of|do|del|on)\s+)?(?:the\s+)?(?:ayer|yesterday|ontem|"
    r"anteayer|anteontem|hoy|today|hoje|day before))|(?:middle|do meio|del medio|de en medio)\s+(?:turno|shift)\b|"
    r"(?:turno|shift)\s+(?:do meio|del medio|de en medio)\b)"
)
# One-letter words that follow "turno"/"shift" without naming a shift ("turno y", "turno e", "turno a las 10").
_NOT_SHIFT_NAMES = frozenset("yeoaqk")  # words of one letter: y, e, o, a; chat's "q"/"k" for "que"


@dataclass(frozen=True)
class _Site:
    zone: ZoneInfo
    now: datetime  # local, aware

    def at(self, day: date, clock: time) -> datetime:
        """The local wall time, as an aware datetime (a time skipped by a DST change lands after the jump)."""
        return datetime.combine(day, clock, tzinfo=self.zone).astimezone(UTC).astimezone(self.zone)

    @property
    def today(self) -> date:
        return self.now.date()


# A time zone said for the clocks ("a las 14:00 UTC", "às 15h, horário de Brasília", "16:00 London time", "1500Z",
# "hora de Madrid"): the question's times are read in that zone, not the site's (day words too: "yesterday" in
# London is London's yesterday).
_ZONES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:utc|gmt|zulu(?: time)?|hora (?:utc|zulu|universal))\b|\b\d{1,2}:?\d\dz\b"), "UTC"),
    (
        re.compile(
            r"\b(?:hora|horario|horas) (?:de |oficial de )?brasilia\b|\bbrasilia time\b|\d(?:h|:\d\d)? de brasilia\b"
        ),
        "America/Sao_Paulo",
    ),
    (re.compile(r"\bhora (?:de |en )?(?:bogota|colombia(?:na)?)\b|\b(?:bogota|colombia) time\b"), "America/Bogota"),
    (re.compile(r"\bhora (?:de |en |del )?(?:lima|peru(?:ana)?)\b|\b(?:lima|peru) time\b"), "America/Lima"),
    (
        re.compile(r"\bhora (?:de |en )?(?:madrid|espana|espanola|peninsular)\b|\b(?:madrid|spain|spanish) time\b"),
        "Europe/Madrid",
    ),
    (re.compile(r"\b(?:london|uk|british) time\b|\bhora de londres\b"), "Europe/London"),
    (re.compile(r"\bhora (?:de |em )?(?:lisboa|portugal)\b|\b(?:lisbon|portugal) time\b"), "Europe/Lisbon"),
)
_ZULU_CLOCK = re.compile(r"\b(\d{1,2}:?\d\d)z\b")


def zone_said(text: str, tz: str) -> str:
    """The time zone `text` reads its clocks in (`_ZONES`), else `tz`, the site's."""
    folded = fold(text)
    return next((zone for pattern, zone in _ZONES if pattern.search(folded)), tz)


def resolve_window(
    text: str, lang: str, *, tz: str, shifts: list[ShiftConfig], now: datetime
) -> Window | Clarification:
    """The window `text` speaks of (module docstring for the rules); the current shift so far when it names none."""
    found = find_window(text, lang, tz=tz, shifts=shifts, now=now)
    if found is not None:
        return found
    site = _Site(ZoneInfo(tz), now.astimezone(ZoneInfo(tz)))
    current = _current_shift(site, shifts)
    start = current[0] if current is not None else site.at(site.today, time(0, 0))
    return _window(start, site.now)


def find_window(
    text: str, lang: str, *, tz: str, shifts: list[ShiftConfig], now: datetime
) -> Window | Clarification | None:
    """As resolve_window, but None when `text` names no time at all (a planner then picks its own default).
    `lang` is accepted for symmetry: the rules read es/en/pt at once, as people mix them."""
    tz = zone_said(text, tz)
    site = _Site(ZoneInfo(tz), now.astimezone(ZoneInfo(tz)))
    folded = _shift_changes(_folded(text), shifts)
    if _impossible_clock(folded):  # "a las 25", "às trinta e sete horas": asked back, never read as another time
        return Clarification(reason="unknown_time", candidates=[])
    return _read(folded, site, shifts, lang)


# "the whole of yesterday", "all of yesterday": the whole day, over any other time said ("this week", "good morning").
# ... and "yesterday, the whole day", "all day yesterday", "todo el día de ayer", "ontem, o dia todo" ("Yer man on
# nights wants to know the lowest level yesterday, the whole day": the day, not the asker's nights); "ayer, contando el
# día entero desde la medianoche" is the day, not from its midnight till now.
_WHOLE_DAY = re.compile(
    r"\b(?:the whole of|all of)\s+(yesterday|the day before yesterday)\b"
    r"|\b(yesterday|ayer|ontem),?\s+(?:(?:counting|contando)\s+)?(?:the\s+|o\s+|el\s+)?(?:(?:whole|entire|all)\s+day|"
    r"todo el dia|dia (?:todo|inteiro|entero))\b"
    r"|\b(?:(?:the\s+)?(?:whole|entire|all)\s+day|todo el dia(?: de)?|o dia (?:todo|inteiro)(?: de)?)\s+"
    r"(yesterday|ayer|ontem)\b"
)


# A part of a window named: "the last hour of B shift yesterday", "na última hora do turno C", "the first half of A
# shift", "la primera hora del turno": that part of the window the rest names (not the hour before now).
# (Spanish "a primera hora de ayer" is early yesterday, not its first hour.)
_PART_OF = re.compile(
    r"\b(?:(?:the|la|a)\s+)?(?:(?P<last>last|final|ultima)|(?P<first>first|(?<!\ba )primera|primeira))\s+"
    r"(?:hour|hora)\s+(?:of|de|del|do|da)\b(?:\s+(?:the|el|la|o|a|my|mi|meu|minha)\b)?"
    r"|\b(?:(?:the|la|a)\s+)?(?:(?P<half1>first|primera|primeira)|(?P<half2>second|segunda))\s+(?:half|mitad|metade)\s+"
    r"(?:of|de|del|do|da)\b(?:\s+(?:the|el|la|o|a|my|mi|meu|minha)\b)?"
)


# ... or its first or last hours: "las dos primeras horas del turno B", "the last 3 hours of A shift", "as primeiras
# duas horas do turno".
_HOURS_OF = re.compile(
    rf"\b(?:(?:the|las|los|as|os)\s+)?(?:(?P<ahead>first|last|primeras|ultimas|primeiras)\s+{_N}|"
    rf"{_N}\s+(?P<behind>first|last|primeras|ultimas|primeiras))\s+(?:hours|horas|hrs)\s+(?:of|de|del|do|da)\b"
    r"(?:\s+(?:the|el|la|o|a|my|mi|meu|minha)\b)?"
)
# Hours before or after a moment: "la última hora antes del cambio de turno de las 14", "the hour before 2 pm", "las
# tres horas anteriores al cambio de turno de las 14", "the six hours leading up to noon today", "nas duas horas
# depois da meia-noite", "las cuatro horas siguientes al arranque del turno B de ayer", "for four hours starting at 9".
_HOURS_AROUND = re.compile(
    r"\b(?P<art>(?:la|las|the|a|as|en las|in the|nas|for|durante|during|over|por)\s+)?"
    rf"(?P<last>(?:ultimas?|last|final)\s+)?(?:(?P<n>{_N})\s+)?(?P<unit>horas?|hours?|hrs?)\s+"
    r"(?:(?P<before>antes|before|prior to|previas?(?: al?)?|anterior(?:es)?(?: al?)?|leading (?:up )?to|preceding|"
    r"que (?:antecedieron|antecedio|precedieron|precedio|antecederam|antecedeu|precederam|precedeu)(?: al?| ao?| as)?|"
    r"that (?:led up to|preceded|came before))|"
    r"(?P<after>despues|after|siguientes(?: al?)?|following|seguintes(?: ao?)?|depois|a partir|starting|from|apos|"
    r"que (?:siguieron|siguio|se siguieron|vinieron despues de|se seguiram|seguiram|vieram depois|vieram apos)"
    r"(?: al?| ao?| as| d[eoa]s?)?|a seguir (?:a|ao|as)|a contar d[eoa]s?|that followed|which followed))\b\s*"
)
# ... or said after the moment: "desde las 8 de hoy, durante tres horas", "a partir das 8 por duas horas".
_FOR_HOURS = re.compile(
    rf"[,;]?\s*\b(?:durante|for|por|during)\s+(?:(?:las|los|the|as|os)\s+)?(?P<n>{_N})\s+(?:horas?|hours?|hrs?)\b"
)
_FROM_MOMENT = re.compile(r"\b(?:desde|from|a partir|starting|since|empezando|comenzando|comecando)\b")
# A shift's start or end as the moment, by its verb (`_STARTED`, `_ENDED`) or its noun: "el arranque del turno C de
# ayer", "when A shift ended", "o fim do turno B".
_SHIFT_STARTS = re.compile(
    rf"{_STARTED.pattern}|\b(?:arranque|arrancar|arrancara|inicio|iniciar|comienzo|empiece|entrada|start|beginning|"
    r"comeco|comecar)\b"
)
_SHIFT_ENDS = re.compile(rf"{_ENDED.pattern}|\b(?:fin|final|cierre|terminar|salida|end|close|fim|saida)\b")


# "previa a las 6", "que siguieron a las 8": the clock's article (its "a" went with the word before), as "at".
_ARTICLE_BEFORE_CLOCK = re.compile(r"^(?:a\s+)?(?:las|as|la)\s+(?=\d)")
_OF_CLOCK = re.compile(r"\b(?:de|del|da|das|do|dos)\s+(?:(?:las|la|as|a)\s+)?(?=\d)")


def _hours_around(folded: str, site: _Site, shifts: list[ShiftConfig], lang: str) -> Window | Clarification | None:
    """The hours before or after a moment said (`_HOURS_AROUND`, `_FOR_HOURS`), or the hours said besides ("the two
    hours before C shift, 20 to 22"); None when no moment is said."""
    if (said := _HOURS_AROUND.search(folded)) is not None and (said.group("n") or said.group("unit")[-1] != "s"):
        # the moment as a clock time said: "before 2 pm", "antes de las 10", "antes del cambio de turno de las 14"
        after = _ARTICLE_BEFORE_CLOCK.sub("at ", _OF_CLOCK.sub("at ", folded[said.end() :], count=1), count=1)
        rest = folded[: said.start()] + (" at " if after[:1].isdigit() else " ") + after
        day = _day(rest, site, lang)
        on = day if isinstance(day, date) else None
        unranged = _HOUR_RANGE.sub(" ", rest)  # "the last hour before 14:00, 1 to 2": the moment is 14:00
        moment = _clock_time(unranged, site, on) or _shift_edge_moment(rest, site, on, shifts, said.group("before"))
        if (hours_said := _hour_range(rest, site, on, shifts)) is not None:
            # "the two hours before C shift, 20 to 22": those; "the last hour before 14:00, 1 to 2": 13:00 to 14:00
            # ("ayer en la primera hora después del cambio de la tarde, de 2 a 3": 14:00 to 15:00)
            half_day = timedelta(hours=12)
            if isinstance(hours_said, Window) and moment in (hours_said.start + half_day, hours_said.end + half_day):
                return _window(hours_said.start + half_day, hours_said.end + half_day, site.now)
            return hours_said
        if moment is None:
            return None
        hours = timedelta(hours=_count(said.group("n")))
        return (
            _window(moment - hours, moment, site.now)
            if said.group("before")
            else _window(moment, moment + hours, site.now)
        )
    if (lasting := _FOR_HOURS.search(folded)) is not None and _FROM_MOMENT.search(folded[: lasting.start()]):
        # "desde las 8 de hoy, durante tres horas": the window from that moment, that long
        start = _read(folded[: lasting.start()] + " " + folded[lasting.end() :], site, shifts, lang)
        if isinstance(start, Window):
            return _window(start.start, start.start + timedelta(hours=_count(lasting.group("n"))), site.now)
    return None


def _two_shifts(folded: str, site: _Site, shifts: list[ShiftConfig], lang: str) -> Window | None:
    """From the first to the second of two shifts said together (`_TWO_SHIFTS`) on the day said (the latest begun
    when none), the second's end capped at now; None unless both are shifts of the site, the second following."""
    match = _TWO_SHIFTS.search(folded)
    if match is None:
        return None
    first, second = next((a, b) for a, b in zip(match.groups()[::2], match.groups()[1::2], strict=True) if a and b)
    rest = folded[: match.start()] + " " + folded[match.end() :]
    day = _day(rest, site, lang)
    on = day if isinstance(day, date) else None
    said = [_shift_named(word, shifts) for word in (first, second)]
    if None in said:
        return None
    found = [_shift_window(site, shift, on, rest) for shift in said if shift is not None]
    windows = [w for w in found if isinstance(w, Window)]
    if len(windows) != 2 or not windows[0].start < windows[1].end <= windows[0].start + timedelta(days=1):
        return None
    together = _window(windows[0].start, windows[1].end, site.now)
    return together if isinstance(together, Window) else None


def _shift_named(word: str, shifts: list[ShiftConfig]) -> ShiftConfig | None:
    """The site's shift a letter or a part of the day names ("a", "manana": the one shift starting in the morning)."""
    if (part := _PART_WORDS.get(word, word)) in _SHIFT_BY_PART:
        _, first, last = _SHIFT_BY_PART[part]
        starting = [s for s in shifts if _starts_within(time.fromisoformat(s.start), first, last)]
        return starting[0] if len(starting) == 1 else None
    return next((s for s in shifts if fold(s.name) == word), None)


def _shift_edge_moment(
    folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig], before: str | None
) -> datetime | None:
    """The start or end of the shift `folded` names: the edge it says ("el arranque del turno C", "when A shift
    ended"), else the start for hours before it and the end for hours after it."""
    window = _shift(folded, site, day, shifts)
    if not isinstance(window, Window):
        return None
    starts = _SHIFT_STARTS.search(folded) is not None or (before is not None and not _SHIFT_ENDS.search(folded))
    return window.start if starts else window.end


def _part_of(match: re.Match[str], window: Window) -> Window | Clarification:
    """The part `match` names of `window`: its last or first hour or hours, or a half."""
    hour, middle = timedelta(hours=1), window.start + (window.end - window.start) / 2
    if match.re is _HOURS_OF:
        which = match.group("ahead") or match.group("behind")
        hours = hour * _count(match.group(2) or match.group(3))
        if which in ("last", "ultimas"):
            return _window(max(window.start, window.end - hours), window.end)
        return _window(window.start, min(window.end, window.start + hours))
    if match.group("last"):
        return _window(max(window.start, window.end - hour), window.end)
    if match.group("first"):
        return _window(window.start, min(window.end, window.start + hour))
    return _window(window.start, middle) if match.group("half1") else _window(middle, window.end)


# Everything stored: "desde que hay registros", "since records began", "en todo el histórico", "over all the data you
# have", "de todo lo que tenés guardado", "desde o início dos registros". Read as the longest span; the pipeline starts
# it at the oldest stored record (`whole_history`).
_WHOLE_HISTORY = re.compile(
    r"\b(?:since|desde que|desde cuando|desde quando|from when)\s+(?:[\w']+\s+){0,4}?(?:records?|registros?|history|"
    r"historico|historial|logging|logs|data|datos|dados|informacion|informacao|registos?|recording|registrar|gravar|"
    # "desde que arrancó el sistema", "since the system started"
    r"sistema|system)\b"
    r"|\b(?:todo|toda|tudo|all|whole|entire|full|everything)\s+(?:(?:el|o|the|of the|lo|que|you|you've|ve|got|hay|"
    r"esta|that|tenes|tienes|tiene|tem|se|voces|vcs|ustedes|we|we've|nos|tu|tus|your|seu|voce|time|tiempo|tempo|"
    r"periodo|been|have|has)\s+){0,5}(?:historico|history|historial|record|records|data|datos|dados|registros|"
    r"registos|registrado|registado|guardado|gravado|stored|logged|logging|recording|registrando|gravando)\b"
    r"|\b(?:desde|from)\s+(?:el|o|the)\s+(?:inicio|comienzo|principio|comeco|start|beginning)\s+(?:de|dos|de los|of)\s+"
    r"(?:the\s+)?(?:registros|registos|records|historico|history|datos|dados|data)\b"
    # "desde el primer dato", "from the first data point", "desde o primeiro registo"
    r"|\b(?:desde|from)\s+(?:el|o|the)\s+(?:very\s+)?(?:primer|primeiro|first)\s+(?:dato|data point|datum|registro|"
    r"registo|record|entry|sample|valor|value)\b"
)


def whole_history(text: str, *, tz: str, shifts: list[ShiftConfig], now: datetime) -> bool:
    """`text` asks over everything stored (`_WHOLE_HISTORY`) and names no other time: its window is the longest."""
    if _WHOLE_HISTORY.search(_folded(text)) is None:
        return False
    said = find_window(text, "es", tz=tz, shifts=shifts, now=now)
    return isinstance(said, Window) and said.start <= now - timedelta(hours=_MAX_SPAN_H - 24)


def _read(folded: str, site: _Site, shifts: list[ShiftConfig], lang: str) -> Window | Clarification | None:
    """The window the folded text names (`find_window`)."""
    if (everything := _WHOLE_HISTORY.search(folded)) is not None:
        # unless another time is said: "you keep all the data, so what was the highest vibration last night?"
        said = _read(folded[: everything.start()] + " " + folded[everything.end() :], site, shifts, lang)
        return said if said is not None else _window(site.now - timedelta(hours=_MAX_SPAN_H), site.now)
    if (around := _hours_around(folded, site, shifts, lang)) is not None:
        return around
    if (together := _two_shifts(folded, site, shifts, lang)) is not None:
        return together
    if (since := _SINCE_START.search(folded)) is not None and not _TILL.search(folded, since.end()):
        rest = folded[: since.start()] + " " + folded[since.end() :]
        day = _day(rest, site, lang)
        started = _shift(rest, site, day if isinstance(day, date) else None, shifts)
        if isinstance(started, Window):
            return _window(started.start, site.now)
    if (part := _HOURS_OF.search(folded) or _PART_OF.search(folded)) is not None:
        rest = folded[: part.start()] + " " + folded[part.end() :]
        named, day = _read(rest, site, shifts, lang), _day(rest, site, lang)
        # hours said with it are that part already: "the last hour of B shift yesterday, 9 to 10 pm"
        said = _hour_range(rest, site, day if isinstance(day, date) else None, shifts)
        return _part_of(part, named) if isinstance(named, Window) and said is None else named
    if (whole := _WHOLE_DAY.search(folded)) is not None:  # "over the whole of yesterday": that day, whatever else
        whole_day = _day(next(g for g in whole.groups() if g), site, lang)
        if isinstance(whole_day, date):
            return _window(site.at(whole_day, time(0, 0)), site.at(whole_day + timedelta(days=1), time(0, 0)), site.now)
    if (until_now := _to_now(folded, site, shifts, lang)) is not None:
        return until_now
    span = _span(folded, site)
    if span is not None:
        return span
    day = _day(folded, site, lang)
    if isinstance(day, Clarification):
        return day
    for rule in (_dated_range, _since_said, _shift, _night, _hour_range, _since, _bounded, _at_clock, _part_of_day):
        found = rule(folded, site, day, shifts)
        if found is not None:
            # hours said inside a shift named are what is asked ("in B shift yesterday, 9 to 10 pm"), and past hours
            # said with a shift still to come name the one that ended ("turno C, das 5h às 6h de hoje")
            inner = _hour_range(folded, site, day, shifts) if rule is _shift else None
            if isinstance(inner, Window) and (
                isinstance(found, Window)
                and found.start <= inner.start < inner.end <= found.end
                or isinstance(found, Clarification)
                and found.reason == "future_window"
            ):
                return inner
            return found
    if day is not None:
        return _window(site.at(day, time(0, 0)), site.at(day + timedelta(days=1), time(0, 0)), site.now)
    return None


def find_instant(
    text: str, lang: str, *, tz: str, now: datetime, shifts: list[ShiftConfig] | None = None
) -> datetime | Clarification | None:
    """The instant `text` names with one clock time ("a las 10", "yesterday at 3pm"), or as the start or end of a
    shift, a day or another window it names ("at the start of yesterday's A shift", "al final del día de ayer": a
    shift's only with `shifts`), in UTC; None when it names none; a Clarification when it is still to come or cannot
    be."""
    tz = zone_said(text, tz)
    site = _Site(ZoneInfo(tz), now.astimezone(ZoneInfo(tz)))
    folded = _shift_changes(_folded(text), shifts or [])
    if _impossible_clock(folded):
        return Clarification(reason="unknown_time", candidates=[])
    day = _day(folded, site, lang)
    if isinstance(day, Clarification):
        return day
    if (around := _HOURS_AROUND.search(folded)) is not None:
        # "las tres horas anteriores al cambio de las 14" is a window; "2 hours before noon", "dos horas después del
        # relevo de las 6" an instant
        if around.group("art") or around.group("last") or not around.group("n"):
            return None
        hours = _hours_around(folded, site, shifts or [], lang)
        if not isinstance(hours, Window):
            return hours if isinstance(hours, Clarification) else None
        moment = hours.start if around.group("before") else hours.end
        return Clarification(reason="future_window", candidates=[]) if moment > site.now else moment.astimezone(UTC)
    instant = _clock_time(folded, site, day)
    if (ago := _hours_ago(folded)) is not None:
        back = (site.now - ago).replace(second=0, microsecond=0)
        if instant is None:
            instant = back
        elif (
            abs(instant + timedelta(hours=12) - back) < abs(instant - back)
            and instant + timedelta(hours=12) <= site.now
        ):
            instant += timedelta(hours=12)  # "hace una hora y media, a la 1:30" at 15:00 is 13:30
    if instant is None and _to_now_said(folded) is None:
        edge = _edge(folded, site, day, shifts or [], lang)
        if isinstance(edge, Clarification):
            return edge
        instant = edge
    if instant is not None and instant > site.now:
        return Clarification(reason="future_window", candidates=[])
    return None if instant is None else instant.astimezone(UTC)


# Times that reach back past yesterday (weeks, months, years, days ago, dates), each read alone by `earliest_said`.
_BACK_SAID = (
    _THIS_YEAR,
    _LAST_WEEK,
    _LAST_MONTH,
    _LAST_YEAR,
    _BEFORE_LAST,
    _WEEKS,
    _DAYS,
    _MONTHS_SPAN,
    _AGO,
    _LAST_QUARTER,
    _LAST_WEEKEND,
    _WEEKENDS_AGO,
    _WEEKEND_BEFORE_LAST,
    _DATE,
    _MONTH,
    _YEAR,
    _SINCE_YEAR,
    _SINCE_MONTH,
)


def earliest_said(text: str, *, tz: str, shifts: list[ShiftConfig], now: datetime) -> datetime | None:
    """The earliest start, UTC, of the times `text` says that reach back (a week, a month, a date, days ago), each
    read alone: "Compara a vibração de ontem com a de há três semanas" names three weeks ago as well as yesterday,
    which `find_window` reads. None when it says none."""
    folded = _folded(text)
    starts = [
        found.start
        for pattern in _BACK_SAID
        for match in pattern.finditer(folded)
        if isinstance(found := find_window(match.group(0), "es", tz=tz, shifts=shifts, now=now), Window)
    ]
    return min(starts, default=None)


def _impossible_clock(folded: str) -> bool:
    """`folded` says a clock time that cannot be (`_IMPOSSIBLE_CLOCK`): an hour past 24, or minutes past 59."""
    for match in _IMPOSSIBLE_CLOCK.finditer(folded):
        hour = int(next(h for h in match.group(1, 3, 4, 5, 6, 8) if h is not None))
        minutes = int(match.group(2) or match.group(7) or match.group(9) or 0)
        if hour > 24 or minutes > 59 or (hour == 24 and minutes > 0):
            return True
    return False


# "6a-2p", "2p-10p": a clock's "am" or "pm" said by its letter; and noon's "m" in a range ("de 12 m a 6 pm", not
# "12 m" of a length).
_AM_PM_LETTER = re.compile(r"(?<![\w.:])(\d{1,2})([ap])(?!\w)")
_NOON_M = re.compile(r"\b(de|desde|from) 12\s?m\.?(?=\s+(?:a|to|hasta|-)\s+\d)")


# The clock an edge is said at, its "at" word kept: ", a las 22", "at 6", "às 22h".
_EDGE_CLOCK = r"\s*,?\s+(a las|a la|at|as|a)\s+(\d{1,2}(?::\d\d)?(?:\s*h)?)\b"
# A shift's edge said with its clock as a window's edge: "de las 18 hasta que cerró el turno B de ayer a las 22",
# "from 8 last night until C shift ended at 6 this morning", "até o fim do turno B de ontem, às 22h", "desde que
# arrancó el turno B a las 14", "do começo do turno A às 6h": the clock is the edge, not the shift. And a clock told
# with the shift that began or ended then ("hasta las 2 de la tarde que entró el turno B"): the clock.
_EDGE_VERB = (
    r"(?:cerro|termino|acabo|salio|entro|empezo|arranco|comenzo|inicio|ended|finished|wrapped up|closed|knocked off|"
    r"started|began|came on|kicked off|terminou|acabou|fechou|saiu|entrou|comecou|iniciou)"
)
_SHIFT_SAID = r"(?:(?:el|la|o|the)\s+)?(?:(?:turno|shift)\s+[abc]\b|[abc]\s+shift\b)"
_SHIFT_EDGE = re.compile(
    r"\b(hasta|until|till|up to|to|ate|from|since|desde|de|do|da|a partir d[eo])\s+(?:que\s+|when\s+)?"
    r"(?:(?:el|la|o|the)\s+)?(?:(?:fin|final|end|cierre|fim|close|comienzo|inicio|principio|comeco|start|beginning)\s+"
    rf"(?:del?|do|da|of)\s+)?(?:{_EDGE_VERB}\s+)?{_SHIFT_SAID}"
    r"(\s+(?:de ayer|de hoy|de ontem|de hoje|yesterday|today|de anteayer|de anteontem))?"
    rf"(?:\s+{_EDGE_VERB})?{_EDGE_CLOCK}"
)
_CLOCK_OF_SHIFT = re.compile(
    rf"\b(\d{{1,2}}(?::\d\d)?(?:\s*h)?(?:\s*[ap]m)?(?: de la (?:manana|tarde|noche))?)\s+(?:que|when|cuando|quando)\s+"
    rf"{_EDGE_VERB}\s+{_SHIFT_SAID}"
)
# A year said whole: "en todo 2024", "in all of 2023", "durante todo o 2022": that year.
_WHOLE_YEAR = re.compile(
    r"\b(en|in|em|durante|during)\s+(?:todo(?: el| o)?|all of|o ano de|todo o ano de)\s+((?:19|20)\d\d)\b"
)
# Since the asker came in, with the clock said: "desde que entré, a las 7 de la mañana", "Desde que entrei, às 6h",
# "since I came in at 6": since that clock.
_CAME_IN_AT = re.compile(
    r"\b(desde|since|from|a partir d[eo])\s+(?:que\s+)?(?:entre|entrei|llegue|cheguei|empece|comecei|i came in|"
    rf"i got (?:here|in)|i started|i clocked (?:in|on)){_EDGE_CLOCK}"
)
# "up to 3 am": to 3 am.
_UP_TO = re.compile(r"\bup (?=(?:to|till|until)\s+(?:\d|noon|midnight))")


def _shift_edge_at(match: re.Match[str]) -> str:
    return _edge_at(match.group(1), "", match.group(2), match.group(3))


def _shift_edge(match: re.Match[str]) -> str:
    return _edge_at(match.group(1), match.group(2) or "", match.group(3), match.group(4))


def _edge_at(edge: str, day: str, at: str, clock: str) -> str:
    """A window's edge put as its clock: "hasta las 22 de ayer", "until 6", "das 6h"."""
    if at == "at":
        return f"{edge} {clock}{day}"
    article = "las" if at in ("a las", "a la") else "as"
    edge = {"do": "das", "da": "das"}.get(edge, edge)
    return f"{edge} {clock}{day}" if edge == "das" else f"{edge} {article} {clock}{day}"


# A percentage is never a clock: "el T-301 estaba al 60 % ayer a las 11 de la noche" says one instant, 23:00.
_PERCENT = re.compile(r"\b(?:al|a|at|ao|em|en|on)?\s*\d+(?:[.,]\d+)?\s*(?:%|por ?(?:ciento|cento|100)\b|per ?cent\b)")


def _folded(text: str) -> str:
    """`text` folded for the rules, "in A shift" first written "in shift A" (folding would make it the article), a
    mine's "guardia" (its shift) read as "turno": "la guardia anterior", "guardia C", chat's day words and slips
    written out (`_day_words`), and a night said by its dates written by its first day alone (`_night_date_said`)."""
    folded = _ZULU_CLOCK.sub(r"\1", _PERCENT.sub(" ", fold(_CAPITAL_A_SHIFT.sub("shift A", text))))
    folded = _UP_TO.sub("", _CLOCK_OF_SHIFT.sub(r"\1", _SHIFT_EDGE.sub(_shift_edge, folded)))
    folded = _CAME_IN_AT.sub(_shift_edge_at, _WHOLE_YEAR.sub(r"\1 \2", folded))
    folded = _NOON_M.sub(r"\1 12 pm", _AM_PM_LETTER.sub(lambda m: f"{m.group(1)} {m.group(2)}m", folded))
    folded = _ORDINAL_DAY.sub(r"\1 ", _SECONDS.sub(r"\1", without_references(folded)))
    folded = _POSSESSIVE_UNMARKED.sub(r"\1's", _WEEKDAY_BEFORE_DAY.sub("", folded))
    folded = _NIGHT_DATE.sub(_night_date_said, _clock_words(_day_words(_GUARDIA.sub("turno", folded))))
    folded = _DAY_BEFORE_RANGE.sub(r"between \2 \1", _SCOTS_TODAY.sub("today", _AT_COMMA.sub("at ", folded)))
    folded = _DAY_INSIDE_RANGE.sub(r"\1 \3 \2", folded)
    if not _COMPARED.search(folded):  # "compara ayer y hoy": two days set side by side
        folded = _YESTERDAY_AND_TODAY.sub("since yesterday at 00:00", folded)
    for pattern, edge in _SHIFT_VERB_EDGE:
        folded = pattern.sub(edge, folded)
    return _ONWARDS.sub(r"desde \1", _AS_OF.sub("at ", _READING_FROM.sub(r"\1 at ", folded)))


# A shift's start or end said with a verb: "cuando arrancó el turno C anoche" (at its start), "right when A shift
# started", "quando terminou o turno B", "since C shift kicked off last night" (from its start to now), "desde que
# entró el turno de noche": put as the start or end `_EDGE` and `_SINCE_START` read.
_NAMED_SHIFT_EN = r"(?:(?:[a-z]|night|morning|day|afternoon|evening|graveyard|swing)\s+shift|shift\s+[a-z])\b"
_NAMED_SHIFT_ES = r"(?:turno|guardia)\s+(?:[a-z]\b|de (?:la )?(?:noche|manana|tarde)|da (?:noite|manha|tarde))"
_SHIFT_VERB_EDGE: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            rf"\b(?:right |just )?when\s+(?:the\s+)?(?P<shift>{_NAMED_SHIFT_EN}|shift)\s+"
            r"(?:started|began|kicked off|came on|opened|started up)\b"
        ),
        r"at the start of \g<shift>",
    ),
    (
        re.compile(
            rf"\b(?:right |just )?when\s+(?:the\s+)?(?P<shift>{_NAMED_SHIFT_EN}|shift)\s+(?:ended|finished|wrapped up|"
            r"closed|knocked off)\b"
        ),
        r"at the end of \g<shift>",
    ),
    (
        re.compile(rf"\bsince\s+(?:the\s+)?(?P<shift>{_NAMED_SHIFT_EN})\s+(?:started|began|kicked off|came on)\b"),
        r"since the start of \g<shift>",
    ),
    (
        re.compile(
            r"\b(?:cuando|quando)\s+(?:arranco|empezo|entro|comenzo|inicio|arrancou|comecou|entrou|iniciou)\s+"
            rf"(?:el|la|o|a)\s+(?P<shift>{_NAMED_SHIFT_ES}|turno|guardia)"
        ),
        r"al inicio del \g<shift>",
    ),
    (
        re.compile(
            r"\b(?:cuando|quando)\s+(?:termino|acabo|cerro|salio|terminou|acabou|fechou|saiu)\s+"
            rf"(?:el|la|o|a)\s+(?P<shift>{_NAMED_SHIFT_ES}|turno|guardia)"
        ),
        r"al final del \g<shift>",
    ),
    (
        re.compile(
            r"\b(?:desde que|desde quando)\s+(?:arranco|empezo|entro|comenzo|inicio|arrancou|comecou|entrou|iniciou)\s+"
            rf"(?:el|la|o|a)\s+(?P<shift>{_NAMED_SHIFT_ES})"
        ),
        r"desde el inicio del \g<shift>",
    ),
)
# From a shift's start to now: "since the start of shift C last night", "desde el inicio del turno C de anoche".
# Two shifts as one window: "los turnos A y B de ayer", "both day shifts yesterday, A and B combined", "el A y el B
# juntos", "nos turnos da manhã e da tarde", "entre el arranque del A y el final del B", "no turno A e no pedaço do B
# que já passou": from the first one's start to the second one's end (so far).
_TWO_SHIFTS = re.compile(
    r"\b(?:turnos?|shifts?|guardias?)\s+(?:(?:de|da|del)\s+)?(?:(?:la|a)\s+)?(?P<a>[a-z]|manana|manha|morning|tarde|afternoon)"
    r"\s+(?:y|e|and|&)\s+(?:(?:en|no|na|el|o|la|a|the|de|da|del)\s+){0,2}(?:(?:turno|shift|guardia)\s+)?"
    r"(?:(?:de|da|del)\s+)?(?:(?:la|a)\s+)?(?P<b>[a-z]|manana|manha|morning|tarde|afternoon)\b"
    r"|\b(?P<a2>[a-z])\s+(?:y|e|and|&)\s+(?P<b2>[a-z])\s+(?:shifts?|turnos?)\b"
    r"|\b(?:el|o|the)\s+(?P<a3>[a-z])\s+(?:y|e|and)\s+(?:el|o|the)\s+(?P<b3>[a-z])\b(?=[^.?!]*\b(?:turnos?|shifts?)\b|"
    r"[^.?!]*\b(?:juntos|together|combined)\b)"
    r"|\b(?P<a4>[a-z])\s+(?:and|y|e|&)\s+(?P<b4>[a-z])\s+(?:combined|together|juntos)\b"
    r"|\b(?:entre|between)\s+(?:(?:el|o|the)\s+)?(?:inicio|arranque|comienzo|comeco|start|beginning)\s+(?:del?|do|of)\s+"
    r"(?:(?:turno|shift)\s+)?(?P<a5>[a-z])\s+(?:y|e|and)\s+(?:(?:el|o|the)\s+)?(?:fin|final|cierre|fim|end|close)\s+"
    r"(?:del?|do|of)\s+(?:(?:turno|shift)\s+)?(?P<b5>[a-z])\b"
)
_TILL = re.compile(r"\b(?:till|until|to|hasta|ate)\b")
_SINCE_START = re.compile(
    r"\b(?:since|desde|a partir d[eoa]l?|from)\s+(?:(?:the|el|o)\s+)?(?:very\s+)?(?:start|beginning|inicio|comienzo|"
    r"principio|arranque|comeco)\s+(?:of|del?|do|da)\s+(?=(?:[\w'-]+\s+){0,3}?(?:turno|shift|guardia)\b)"
)
# A day said before a clock range it owns: "between yesterday's 6 am and 2 pm" is "between 6 am and 2 pm yesterday".
_DAY_BEFORE_RANGE = re.compile(
    r"\bbetween (yesterday|today)(?:'s)? (\d{1,2}(?::\d{2})?\s*(?:am|pm)?\s+and\s+\d{1,2}(?::\d{2})?\s*(?:am|pm)?)"
)
# Yesterday and today together: "ayer y lo que va de hoy", "entre ayer y hoy", "ontem e hoje até ao momento",
# "yesterday and today so far": from yesterday's midnight to now.
_YESTERDAY_AND_TODAY = re.compile(
    r"\b(?:entre\s+)?(?:ayer|ontem|yesterday)\s+(?:y|e|and)\s+(?:en\s+)?(?:lo (?:que|q) va de\s+|o que vai de\s+)?"
    r"(?:hoy|hoje|today)\b(?:\s+(?:so far|hasta ahora|hasta el momento|ate agora|ate ao momento|ate o momento))?"
)
# A day said inside a clock range: "from 6 this morning till 12 noon" ("6am today till 12:00") is the range that day.
_DAY_INSIDE_RANGE = re.compile(
    r"\b(\d{1,2}(?::\d{2})?\s*(?:am|pm|h)?)\s+(today|yesterday|hoy|ayer|hoje|ontem)\s+((?:till|until|to|hasta|ate)\s+"
    r"(?:(?:las|as)\s+)?\d{1,2}(?::\d{2})?\s*(?:am|pm|h)?)(?!\s*(?:today|yesterday|hoy|ayer|hoje|ontem|tomorrow)\b)"
)
_COMPARED = re.compile(r"\b(?:compar\w*|vs|versus|contra|against|difference|diferencia|diferenca)\b")
# "at" with the clock after a comma: "What was P-101 vibrating at, a quarter after 10 last night?"
_AT_COMMA = re.compile(r"\bat,\s+(?=(?:a |half |quarter |\d))")
# Scots "the day" for today: "the highest the C-201's hit the day, so far".
_SCOTS_TODAY = re.compile(r"\bthe day(?=,?\s+(?:so far|till now|up to now|until now)\b)")
# A shift change as a moment: "en el cambio de turno de las 2 de hoy" (14:00, the shift edge at 2), "desde el relevo
# de las 6", "na rendição do turno das 14h", "the 2 pm shift change", "yesterday's 6 AM and 2 PM shift changes", "this
# morning's shift change" (the edge in the morning), "entre el relevo de las 14 y el de las 22": the clock of that edge.
_CHANGE = (
    r"(?:(?:cambio|relevo|relevada|rendicion|rendicao|passagem|troca|virada|entrega|changeover|handover|hand-over|"
    r"turnover|shift change|crew change(?:over)?)(?:\s+(?:de|do|del|of)\s+(?:turno|guardia|shift))?"
    # "al entregar el turno de las 14", "ao passar o turno das 22h"
    r"|(?:entregar|recibir|receber|passar|pasar)\s+(?:el|o|la|a)\s+(?:turno|guardia))"
)
# Two shift changes said at once: "between the 6 and 2 o'clock shift changes yesterday".
_TWO_CHANGES = re.compile(
    r"\b(?:the\s+)?(\d{1,2})\s+(?:and|y|e|&)\s+(\d{1,2})(?:\s*o'?clock)?\s+(?:shift\s+)?(?:changes|changeovers|handovers)\b"
)
# A bound's preposition with the article the clock put after it: "del las 22:00" is "de las 22:00".
_BOUND_ARTICLE = (
    (re.compile(r"\bdel\s+(las\s+\d)"), r"de \1"),
    (re.compile(r"\bal\s+las\s+(\d)"), r"a las \1"),
    (re.compile(r"\bdo\s+as\s+(\d)"), r"das \1"),
    (re.compile(r"\bao\s+as\s+(\d)"), r"as \1"),
)
_AT_CHANGE = (
    r"\b(?:en|na|no|at|in|on|ao|al|justo en|right at|just at|durante|during|a la hora del?|na hora d[ao]|"
    r"at the time of)\s+"
)
# ... a moment unless it bounds a window: "desde el relevo de las 6", "até a troca de turno das 6h", "between …"
_BOUND_BEFORE = re.compile(
    r"\b(?:desde|hasta|entre|from|till|until|to|between|since|ate|das|y|e|and|del|al|do|ao)\s+(?:(?:el|la|o|a|the)\s+)?$"
)
_CHANGE_CLOCK = re.compile(
    rf"(?:{_AT_CHANGE})?(?:\b(?:el|la|o|a|the|this|today'?s|yesterday'?s)\s+)?\b{_CHANGE}\s+"
    r"(?:de|das|da|do|of|at|de las)\s+(?:(?:las|as|la|a)\s+)?(?P<h>\d{1,2})(?::00)?\s*(?:h|hs|hrs)?\s*(?P<mer>am|pm)?\b"
    rf"|(?:{_AT_CHANGE})?(?:\b(?:el|la|o|a|the|this|today'?s|yesterday'?s|last night'?s)\s+)?\b(?P<h2>\d{{1,2}})"
    r"(?::00)?\s*(?P<mer2>am|pm|o'?clock)?\s+(?:shift\s+|crew\s+)?(?:changes?|changeovers?|handovers?)\b"
)
# ... said after one named: "y el de las 22", "and the 6 o'clock one"
_NEXT_CHANGE = re.compile(
    r"\b(?P<and>y|e|and|hasta|till|until|to|ate|a|al|ao)\s+(?:(?:el|la|o|a|the)\s+)?(?:(?:de|das|do|da|of)\s+(?:(?:las|as)\s+)?"
    r"(?P<h>\d{1,2})(?::00)?\s*(?:h|hs)?|(?P<h2>\d{1,2})\s*(?:o'?clock)?\s+one)\b"
)
_CHANGE_OF_PART = re.compile(
    rf"(?:{_AT_CHANGE})?(?:\b(?:el|la|o|a|the)\s+)?"
    r"(?:\b(?P<part1>this morning|this afternoon|last night|tonight|morning|afternoon|evening|night)'?s?\s+)?"
    rf"\b{_CHANGE}(?:\s+(?:de|da|do|of)\s+(?:(?:la|a|the|esta|this)\s+)?(?P<part2>manana|manha|morning|tarde|afternoon|"
    r"noche|noite|night))?\b"
)
_SPANISH_ARTICLE = re.compile(r"\b(?:el|la|las|del|al)\b")
_PORTUGUESE_ARTICLE = re.compile(r"\b(?:o|a|as|do|da|das|na|no|ao)\b")
_PARTS_OF_CHANGE = {"morning": (4, 12), "afternoon": (12, 20), "evening": (16, 24), "night": (20, 28)}
# The part of the day a Spanish or Portuguese word names (English says the part itself).
_PART_WORDS = {"manana": "morning", "manha": "morning", "tarde": "afternoon", "noche": "night", "noite": "night"}


def _shift_changes(folded: str, shifts: list[ShiftConfig]) -> str:
    """`folded` with each shift change said (`_CHANGE_CLOCK`, `_NEXT_CHANGE`, `_CHANGE_OF_PART`) put as the clock of
    the shift edge it names: "at HH:MM" where it is a moment, "HH:MM" where it bounds a window."""
    edges = sorted({time.fromisoformat(clock) for shift in shifts for clock in (shift.start, shift.end)})
    if not edges:
        return folded

    def edge(hour: int, meridiem: str | None) -> str:
        if meridiem == "pm" and hour < 12:
            hour += 12
        said = [e for e in edges if e.hour == hour] or (
            [e for e in edges if e.hour % 12 == hour % 12] if meridiem in (None, "oclock", "o'clock") else []
        )
        clock = said[0] if len(said) == 1 else time(hour % 24, 0)
        return f"{clock:%H:%M}"

    def put(match: re.Match[str], clock: str) -> str:
        before = match.string[max(0, match.start() - 12) : match.start()]
        if not _BOUND_BEFORE.search(before) and not (match.group("and") if "and" in match.re.groupindex else None):
            return f" at {clock} "
        # a window's bound keeps its language's article: "hasta las 06:00", "até as 06:00", "till 06:00"
        said = match.group(0)
        article = "las " if _SPANISH_ARTICLE.search(said) else "as " if _PORTUGUESE_ARTICLE.search(said) else ""
        return f" {article}{clock} "

    def by_clock(match: re.Match[str]) -> str:
        hour, meridiem = (match.group("h"), match.group("mer")) if match.group("h") else match.group("h2", "mer2")
        return put(match, edge(int(hour), meridiem))

    folded = _TWO_CHANGES.sub(lambda m: f"{edge(int(m.group(1)), None)} and {edge(int(m.group(2)), None)}", folded)
    changed = _CHANGE_CLOCK.sub(by_clock, folded)
    if changed != folded:
        changed = _NEXT_CHANGE.sub(
            lambda m: f" {m.group('and')}{put(m, edge(int(m.group('h') or m.group('h2')), None))}", changed
        )
        for pattern, bound in _BOUND_ARTICLE:
            changed = pattern.sub(bound, changed)
        return _UP_TO.sub("", changed)

    def by_part(match: re.Match[str]) -> str:
        said = match.group("part1") or match.group("part2")
        part = next((p for p in _PARTS_OF_CHANGE if said and p in said), _PART_WORDS.get(said or ""))
        if part is None:
            return match.group(0)
        first, last = _PARTS_OF_CHANGE[part]
        within = [e for e in edges if first <= e.hour < last or first <= e.hour + 24 < last]
        if len(within) != 1:
            return match.group(0)
        told = said if said in ("this morning", "this afternoon", "last night", "tonight") else ""
        return put(match, f"{within[0]:%H:%M}") + told

    return _CHANGE_OF_PART.sub(by_part, folded)


# "de las 10 de ayer en adelante", "das 8h em diante", "from 10 onwards": since that clock.
_ONWARDS = re.compile(
    r"\b(?:de|das|desde|from|a partir d[eao]s?) ((?:las |as )?\d[^.?!,]*?)\s+(?:en adelante|em diante|onwards?)\b"
)
# "as of 11:15 am today": at that clock.
_AS_OF = re.compile(r"\bas of\s+(?=\d)")
# A reading taken at a clock: "the P-101 vibration reading from half seven this morning" (at 07:30, not since then;
# "the readings from 7 to 9" stay a range).
_READING_FROM = re.compile(
    r"\b(readings?|values?|lecturas?|valor|leituras?)\s+from\s+(?=\d)(?![^.?!]{0,25}\b(?:to|till|until|thru|through|"
    r"and|-)\b)"
)
# A possessive typed without its apostrophe: "last nights C shift", "yesterdays A shift".
_POSSESSIVE_UNMARKED = re.compile(r"\b(last night|yesterday|today|tonight)s\b")
# A weekday said before its day of the month ("la noche del viernes 4 al sábado 5", "el sábado 5"): the day says it.
_WEEKDAY_BEFORE_DAY = re.compile(
    r"\b(?:" + "|".join(_WEEKDAYS.values()) + r")\s+(?=\d{1,2}(?:st|nd|rd|th)?\b(?!\s*(?::|h\b|hs\b|hrs?\b|am\b|pm\b|"
    r"a\.m|p\.m|de la|da |in the|o'?clock)))"
)
# A day of a month said as an ordinal ("no dia 1º de dezembro", "el 1ero de diciembre"): the day.
_ORDINAL_DAY = re.compile(rf"\b(\d{{1,2}})(?:o|er|ero)\s+(?=de\s+{_MONTHS}\b)")
# A clock's seconds ("at 09:30:00", "13:30:00"): the minute's clock.
_SECONDS = re.compile(r"\b(\d{1,2}:[0-5]\d):[0-5]\d\b")


_GUARDIA = re.compile(r"\bguardia\b(?! de )")
# Caribbean "de" for "the" before an English time word ("in de shift before dis one"); Spanish and Portuguese "de"
# is never followed by one.
_CARIBBEAN_THE = re.compile(
    r"\bde (?=(?:shift|night|morning|afternoon|evening|day|week|weekend|month|year|last|previous|other|one|current|"
    r"past|first|second|third|whole)\b)"
)
# "hace quince días", "há quinze dias": two weeks, as the idiom means (said in digits, "hace 15 días" is 15).
_FIFTEEN_DAYS = re.compile(r"\b(hace|ha|faz)\s+(?:unos\s+|uns\s+)?(?:quince|quinze)\s+dias\b")
# Day words a slip of one letter still names ("ayr", "otem", "yesturday"); real words that are one letter off one
# are not slips ("aye" is Scots "yes", "layer" a word).
_SLIPPED_DAYS = ("ayer", "ontem", "yesterday", "anteayer", "anteontem")
# Time words a slip of which is read as the word too, but only a letter dropped, added or swapped ("todya",
# "previus", "anteiror", "btween", "morninng", "tadre"): a letter changed is too often another word ("todas").
_SLIPPED_TIMES = (
    "today",
    "anterior",
    "previous",
    "since",
    "between",
    "morning",
    "tarde",
    "desde",
    "mediodia",
    "hoje",
    "pasado",
    "passado",
    "year",
)
# Words a letter off those that are words of their own: "toda", "previos", "sine", "tare", "tardes", "mornings".
_NOT_SLIPS = frozenset(
    {
        "aye",
        "toda",
        "toady",
        "previos",
        "previas",
        "sine",
        "tare",
        "tardes",
        "trade",
        "mornings",
        "dese",
        "pasados",
        "passados",
        "years",
        "yea",
        "yer",
        "pesado",
    }
    | set(_SLIPPED_DAYS)
    | set(_SLIPPED_TIMES)
)
_LETTERS = re.compile(r"(?<![\w'-])[a-z]{2,10}(?![\w-])")


# Chat's "ytd" is yesterday beside a clock time ("ytd 8pm", "8pm ytd"); alone it is "year to date", not read.
_YTD = re.compile(r"\bytd\b(?=,?\s+(?:at\s+|@\s*)?\d)|(?<=\d\s)ytd\b|(?<=\d[ap]m\s)ytd\b")


# Chat's "y-day", "y'day" for yesterday ("C201 flow 2pm y-day?", "y-day's A shift").
_Y_DAY = re.compile(r"\by[-'/]day\b")


# The night before last as people spell it: "anteanoche", "ante anoche", "ante-anoche", "antes de anoche" are
# "antenoche", and every rule reads that one.
_ANTENOCHE = re.compile(r"\b(?:ante-?anoche|ante anoche|antes de anoche)\b")


# Chat's clock words run together or cut short: "alas 10 d la mañana" is "a las 10 de la mañana".
_CHAT_CLOCK = re.compile(r"\balas(?=\s+\d)|\bd(?=\s+(?:la|las)\s)")
# Chat's "btw" before two clock times is between ("btw 1pm and 2pm"); elsewhere it is "by the way".
_BTW = re.compile(r"\bbtw(?=\s+\d{1,2}(?::\d\d)?\s*(?:am|pm)?\s*(?:and|&|-|to)\s*\d)")
# A crew's hours said by when it came on and went off: "la guardia que entró anteayer a las 22 y salió ayer a las 6",
# "the night crew that came on at 10 pm the day before yesterday and went off at 6 yesterday": from and to.
_CAME_ON = {"entro": "desde", "entrou": "desde", "came on": "from", "clocked on": "from"}
_WENT_OFF = {"salio": "hasta", "saiu": "ate", "went off": "to", "clocked off": "to"}
_CREW_HOURS = re.compile(
    rf"\b(?:que|that|which|who)\s+({'|'.join(_CAME_ON)})(?:\s+at)?\b([^.?!]{{1,60}}?)\b(?:y|and|e)\s+"
    rf"({'|'.join(_WENT_OFF)})(?:\s+at)?\b"
)


# ... when the hour it came on at says which half of the day it is (a bare "entró ayer a las 10" of the night shift is
# read with the shift's own hours)
_HALF_SAID = re.compile(
    r"\b(?:1[3-9]|2[0-3])(?::\d\d|h)?\b|\d\s*(?:am|pm)\b|\b(?:de la|da|in the) (?:noche|noite|tarde|night)"
)


def _crew_hours(match: re.Match[str]) -> str:
    if not _HALF_SAID.search(match.group(2)):
        return match.group(0)
    return f"{_CAME_ON[match.group(1)]}{match.group(2)} {_WENT_OFF[match.group(3)]}"


# A second language's English puts a shift after its part of the day: "in the shift of the night" is the night shift.
_SHIFT_OF_THE = re.compile(r"\bshift of the (night|morning|afternoon|evening|day)\b")
# The shift worked last night is the night shift begun yesterday: "last night's shift", "the shift last night".
_LAST_NIGHTS_SHIFT = re.compile(r"\blast night'?s shift\b|\bthe shift last night\b")
# ... and the article before an hour: "at the 3 of the afternoon", "from the 7 to the 8 of the morning" (Spanish "a las
# 3 de la tarde").
_THE_HOUR = re.compile(
    r"\b(at|from|to|since|until|till|between|and) the (\d{1,2})\b(?=\s+(?:of the|in the|to the|and the|"
    r"o'?clock|exactly|sharp|am|pm|a\.m\.|p\.m\.)\b|\s*[?.,!]|\s*$)"
)


# By ear: "i" for "y"/"e" between clock times ("entre las 9 i las 10", "às 12 i meia"), "las" for "last" before a
# span in English ("las nite", "las yeer").
_I_AND = re.compile(r"(?<=\d) i (?=(?:las |as |meia\b|media\b|\d))")
_LAS_LAST = re.compile(r"\blas (?=(?:night|year|week|month|shift)\b)")
# The night just gone, said as this night: "esta noite que passou", "la noche que pasó", "this past night".
_NIGHT_GONE = re.compile(
    r"\b(?:esta|essa|la|a|the|this)\s+(?:noche|noite|night)\s+(?:que\s+)?(?:passou|paso|acabou de passar|"
    r"just gone)\b|\bthis past night\b"
)


def _day_words(folded: str) -> str:
    """`folded` (its short forms and time words by ear already written out by `fold`: `BY_EAR`) with the night before
    last's spellings as "antenoche", a crew's hours as a range and a day word's one-letter slip read as the word."""
    folded = _NIGHT_GONE.sub("last night", _LAS_LAST.sub("last ", _I_AND.sub(" y ", folded)))
    folded = _LAST_NIGHTS_SHIFT.sub("yesterday's night shift", _SHIFT_OF_THE.sub(r"\1 shift", folded))
    folded = _CREW_HOURS.sub(_crew_hours, folded)
    folded = _THE_HOUR.sub(r"\1 \2", _CHAT_CLOCK.sub(lambda m: "a las" if m.group(0) == "alas" else "de", folded))
    folded = _YTD.sub("yesterday", _FIFTEEN_DAYS.sub(r"\1 2 semanas", _CARIBBEAN_THE.sub("the ", folded)))
    folded = _BTW.sub("between", _ANTENOCHE.sub("antenoche", _Y_DAY.sub("yesterday", folded)))
    return _LETTERS.sub(lambda m: _slip_of(m.group(0)) or m.group(0), folded)


def _slip_of(word: str) -> str | None:
    """The day word `word` is a slip of: one letter dropped, added, swapped with the next, or (in a day word of five
    letters or more, where no real word is that close) changed; the first letter kept; two such slips in a day word
    of eight letters or more, its first three kept; a possessive with no apostrophe as the day's. Or the time word
    (`_SLIPPED_TIMES`) it is a slip of. None for any other word."""
    if word in _NOT_SLIPS:
        return None
    for day in _SLIPPED_DAYS:
        if word[0] == day[0] and one_edit(word, day, changes=len(day) >= 5):
            return day
        if len(day) >= 8 and word[:3] == day[:3] and DamerauLevenshtein.distance(word, day, score_cutoff=2) <= 2:
            return day  # written by ear: "yestaday", "anteonten"
    possessed = _slip_of(word[:-1]) if len(word) > 5 and word.endswith("s") else None
    if possessed in ("yesterday", "today"):
        return f"{possessed}'s"  # the possessive without its apostrophe: "ysterdays B shift"
    return next((time for time in _SLIPPED_TIMES if word[0] == time[0] and one_edit(word, time, changes=False)), None)


# An hour word that is an article or "of the" elsewhere ("dos", "una") is the hour before a part of the day or am/pm:
# "de dos de la tarde a diez de la noche", "una de la madrugada".
_PART_HOUR_WORD = re.compile(
    r"\b(dos|una|uno|uma|um|one)(?=\s+(?:(?:de la|da|of the|in the) (?:manana|tarde|noche|madrugada|manha|noite|"
    r"morning|afternoon|evening|night)\b|[ap]\.?\s?m\b))"
)
# A word for exactly between "at" and its clock: "at exactly 4 am", "a las exactamente 10", "às exatamente 15h".
_EXACTLY_BEFORE = re.compile(
    r"\b(at|a las|a la|as|ao)\s+(?:exactly|precisely|exactamente|precisamente|exatamente|justo|just|right)\s+(?=\d)"
)
# Dictation's "six a m", "three p m": am and pm.
_SPACED_MERIDIEM = re.compile(r"\b(\d{1,2}(?::[0-5]\d)?)\s*([ap])\.?\s+m\b\.?")
# "hasta las 6 de esta mañana", "às 6 desta manhã": that clock of this morning, as "de la mañana de hoy" says it.
_THIS_MORNING_CLOCK = re.compile(r"\b(\d{1,2}(?::[0-5]\d)?)\s+(?:de esta (manana|madrugada)|desta (manha|madrugada))\b")


def _this_morning_clock(match: re.Match[str]) -> str:
    clock, es, pt = match.group(1, 2, 3)
    return f"{clock} de la {es} de hoy" if es else f"{clock} da {pt} de hoje"


# An hour and its minutes in words joined by a hyphen: "at eleven-thirty", "six-fifteen".
_HYPHENED_CLOCK = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)-(?=(?:fifteen|thirty|forty|forty-five|oh|"
    r"o|ten|twenty|five)\b)"
)


def _clock_words(folded: str) -> str:
    """Numbers in words as digits ("a las diez"), noon, midnight, minutes said in words and the control room's four
    digits written as clock times: "ao meio-dia" → "ao 12:00", "midnight" → "0:00", "a las once y media" →
    "a las 11:30", "@ 1400" → "at 14:00", "0600-1200" → "06:00-12:00"."""
    folded = _HYPHENED_CLOCK.sub(r"\1 ", _PART_HOUR_WORD.sub(lambda m: "2" if m.group(1) == "dos" else "1", folded))
    folded = _EXACTLY_BEFORE.sub(r"\1 ", _SPACED_MERIDIEM.sub(r"\1\2m", spelled_numbers(folded)))
    folded = _THIS_MORNING_CLOCK.sub(_this_morning_clock, folded)
    folded = _MIDNIGHT_START.sub(r"\1 0:00am", _MIDNIGHT_TO_MIDNIGHT.sub("the whole day", folded))
    folded = _MIDNIGHT.sub("0:00", _NOON.sub("12:00", folded))
    folded = _MIDNIGHT_BETWEEN.sub(_midnight_between, _VIRADA.sub("virada a 0:00 ", _ARTICLE_CLOCK.sub(r"\1 ", folded)))
    folded = _ARTICLE_HOURS.sub(lambda m: _ARTICLE_HOUR_VALUES[m.group(0)], folded)
    folded = _HOUR_WORD_ENDING.sub(r"\g<1>1", folded)
    folded = _HOURS_SAID.sub(_hours_said, folded)
    for pattern, sign in _SAID_MINUTES:
        folded = pattern.sub(partial(_minutes_said, sign), folded)
    folded = _OCLOCK.sub(_oclock, folded)
    folded = _THROUGH.sub(r"\1 to ", folded)
    folded = _PART_AFTER_CLOCK.sub(
        lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ('am' if m.group(5) else 'pm')} {m.group(4) or 'today'}",
        folded,
    )
    folded = re.sub(r"@\s*", "at ", folded)
    folded = _BARE_CLOCK.sub(lambda m: f"{m.group(1)}at {_clock_token(m.group(2))}", folded)
    folded = _BARE_CLOCK_BEFORE.sub(_bare_clock_before, folded)
    # "entre 2019 y 2020" are years, not 20:19; "yesterday 1900 to 2000" a day's clock times
    if _YEARS.search(folded) and not re.search(rf"\b(?:{_DAY_WORD})\b", folded):
        return folded
    folded = _MILITARY_RANGE.sub(_military_range, folded)
    return _MILITARY.sub(lambda m: f"{m.group(1)}{m.group(2)}:{m.group(3)}", folded)


def _midnight_between(match: re.Match[str]) -> str:
    """ "0:00 de ayer a hoy" → "0:00 hoy": the midnight between two days in a row is the second's; unchanged else."""
    first, second = match.group(1, 2)
    return f"0:00 {second}" if _DAYS_BACK[first] == _DAYS_BACK[second] + 1 else match.group(0)


def _hours_said(match: re.Match[str]) -> str:
    """ "las 22:00 horas" → "las 22:00", "das 20 horas" → "das 20", "2200 hours" → "22:00"; an hour past 24 as said."""
    lead, hour, clock, mil = match.group("lead", "hour", "clock", "mil")
    if mil is not None:
        return f"{lead}{mil[:2]}:{mil[2:]}"
    if clock is not None:
        return clock
    return f"{lead}{hour}" if int(hour) <= 24 else match.group(0)


def _oclock(match: re.Match[str]) -> str:
    """ "from 6 o'clock" → "from 6", "reading 2 o'clock" → "reading at 2" (no "at" after a word that brings a time
    or a quantity, or "the")."""
    word, hour = match.group(1, 2)
    if int(hour) > 24:
        return match.group(0)
    lead = "" if word in _NOT_BARE_AFTER or word == "the" else "at "
    return f"{word + ' ' if word else ''}{lead}{hour}"


def _military_range(match: re.Match[str]) -> str:
    """ "0600 to 1200" → "06:00 to 12:00"; "0600-12:00" → "06:00-12:00"."""
    h1, m1, between, h2, m2 = match.group(1, 2, 3, 4, 5)
    return f"{h1}:{m1}{between}" + (f"{h2}:{m2}" if h2 else "")


def _bare_clock_before(match: re.Match[str]) -> str:
    """ "1130 yday" → "at 11:30 yesterday"; unchanged after a word that brings a time or a quantity of its own."""
    word, token, day = match.group(1, 2, 3)
    if word in _NOT_BARE_AFTER:
        return match.group(0)
    return f"{word + ' ' if word else ''}at {_clock_token(token)}{day}"


def _clock_token(token: str) -> str:
    """A bare clock token as the rules read it: "0800" → "08:00"; "10h", "14h30", "8:15", "8am" as they are."""
    return f"{token[:2]}:{token[2:]}" if token.isdigit() else token


def _minutes_said(sign: int, match: re.Match[str]) -> str:
    """The clock time "H:MM" that an hour and minutes said before (`sign` -1) or after it name; unchanged if none."""
    said = match.group("minutes")
    minutes = _MINUTE_WORDS[said] if said in _MINUTE_WORDS else int(said)
    hour = 1 if match.group("hour") == "one" else int(match.group("hour"))  # "one" stays a word (`spelled_numbers`)
    if hour > 24 or not 0 < minutes < 60:
        return match.group(0)
    if sign < 0:
        hour, minutes = (hour - 1) % 24, 60 - minutes
    lead = match.groupdict().get("lead")
    return f"{lead} {hour % 24}:{minutes:02d}" if lead else f"{hour % 24}:{minutes:02d}"


def _window(start: datetime, end: datetime, now: datetime | None = None) -> Window | Clarification:
    """[start, end) clipped to `now`; a window that has not begun yet asks back instead."""
    if now is not None:
        end = min(end, now)
    if end <= start:
        return Clarification(reason="future_window", candidates=[])
    return Window(start=start.astimezone(UTC), end=end.astimezone(UTC))


def _count(word: str | None) -> int:
    if word is None:
        return 1
    return int(word) if word.isdigit() else _NUMBERS[word]


def _span(folded: str, site: _Site) -> Window | Clarification | None:
    now = site.now
    if match := _MINUTES_SPAN.search(folded):
        minutes = 30 if match.group("half") else min(_count(match.group(2) or match.group(3)), _MAX_SPAN_H * 60)
        return _window(now - timedelta(minutes=max(minutes, 1)), now)
    if match := _HOURS.search(folded):
        hours = min(_count(match.group(1) or match.group(2)), _MAX_SPAN_H)
        return _window(now - timedelta(hours=max(hours, 1)), now)
    if match := _DAYS.search(folded):
        days = min(_count(match.group(1) or match.group(2)), _MAX_SPAN_H // 24)
        return _window(now - timedelta(days=max(days, 1)), now)
    if match := _MONTHS_SPAN.search(folded):  # "the last 3 months": from that day three months back
        months = min(_count(match.group(1) or match.group(2)), _MAX_SPAN_H // 24 // 31)
        return _window(site.at(_months_before(site.today, max(months, 1)), site.now.time()), now)
    if (weekend := _weekend(folded, site)) is not None:
        return weekend
    monday = site.today - timedelta(days=site.today.weekday())
    before_last = _BEFORE_LAST.search(folded)
    if before_last is not None and (unit := before_last.group(1) or before_last.group(2)) not in ("year", "ano"):
        return _before_last(unit, site, monday)
    if _LAST_WEEK.search(folded):
        return _window(site.at(monday - timedelta(days=7), time(0, 0)), site.at(monday, time(0, 0)))
    if _THIS_WEEK.search(folded):
        return _window(site.at(monday, time(0, 0)), now)
    if match := _WEEKS.search(folded):
        days = min(7 * _count(match.group(1) or match.group(2)), _MAX_SPAN_H // 24)
        return _window(now - timedelta(days=max(days, 1)), now)
    if (quarter := _quarter(folded, site)) is not None:
        return quarter
    if any(pattern.search(folded) for pattern, _ in _HOLIDAYS):
        return None  # a day of the calendar, read with its year by `_day`
    first = site.today.replace(day=1)
    if (month := _month(folded, site)) is not None:
        return month
    dated = _DATE.search(folded) is not None  # "el 3 de marzo del año pasado": that day, read by `_day`
    if (since_month := _SINCE_MONTH.search(folded)) is not None and not dated:
        number = _month_number(since_month.group(1))
        begun = site.today.year if number <= site.today.month else site.today.year - 1
        return _window(site.at(date(begun, number, 1), time(0, 0)), now)
    if (since := _SINCE_YEAR.search(folded)) is not None and not dated:  # "desde 2020": from its 1 January to now
        on = int(since.group(1))
        if on > site.today.year:
            return Clarification(reason="future_window", candidates=[])
        return _window(site.at(date(on, 1, 1), time(0, 0)), now)
    if (year := _YEAR.search(folded)) is not None and not dated:
        on = int(year.group(1))
        if on > site.today.year:
            return Clarification(reason="future_window", candidates=[])
        return _window(site.at(date(on, 1, 1), time(0, 0)), site.at(date(on + 1, 1, 1), time(0, 0)), now)
    if (said := _said_year(folded, site)) is not None and not dated:  # last year, this year so far
        return _window(site.at(date(said, 1, 1), time(0, 0)), site.at(date(said + 1, 1, 1), time(0, 0)), now)
    if _MONTH_DAY.search(folded):
        return None  # "el primero de este mes": a day, read by `_day`
    if _LAST_MONTH.search(folded):
        previous = (first - timedelta(days=1)).replace(day=1)
        return _window(site.at(previous, time(0, 0)), site.at(first, time(0, 0)))
    if _THIS_MONTH.search(folded):
        return _window(site.at(first, time(0, 0)), now)
    return None


def _weekend(folded: str, site: _Site) -> Window | Clarification | None:
    """The weekend named (`_WEEKENDS_AGO` and its kin): the Nth of those ended, or the latest begun, so far."""
    latest = site.today - timedelta(days=(site.today.weekday() - 5) % 7)  # the latest Saturday up to today
    ended = latest - timedelta(days=7) if (site.today - latest).days < 2 else latest
    if _WEEKEND_BEFORE_LAST.search(folded):
        back = 2
    elif match := _WEEKENDS_AGO.search(folded):
        back = max(1, min(_count(match.group(1) or match.group(2) or match.group(3)), _MAX_SPAN_H // 24 // 7))
    elif _LAST_WEEKEND.search(folded):
        back = 1
    elif _THIS_WEEKEND.search(folded):
        return _window(site.at(latest, time(0, 0)), site.at(latest + timedelta(days=2), time(0, 0)), site.now)
    else:
        return None
    start = ended - timedelta(days=7 * (back - 1))
    return _window(site.at(start, time(0, 0)), site.at(start + timedelta(days=2), time(0, 0)))


def _before_last(unit: str, site: _Site, monday: date) -> Window | Clarification:
    """The calendar week (from Monday), month or quarter two back from the present one."""
    if unit in ("quarter", "trimestre"):
        return _quarter_window(site, _quarter_index(site.today) - 2)
    if unit in ("week", "semana"):
        start = monday - timedelta(days=14)
        return _window(site.at(start, time(0, 0)), site.at(start + timedelta(days=7), time(0, 0)))
    last = (site.today.replace(day=1) - timedelta(days=1)).replace(day=1)
    start = (last - timedelta(days=1)).replace(day=1)
    return _window(site.at(start, time(0, 0)), site.at(last, time(0, 0)))


def _said_year(folded: str, site: _Site) -> int | None:
    """The year said by its place: "last year/el año pasado" the one before this, "the year before last" the one
    before that, "this year/este año" this one; None when none is."""
    before_last = _BEFORE_LAST.search(folded)
    if before_last is not None and (before_last.group(1) or before_last.group(2)) in ("year", "ano"):
        return site.today.year - 2
    if _LAST_YEAR.search(folded):
        return site.today.year - 1
    return site.today.year if _THIS_YEAR.search(folded) else None


def _quarter_index(day: date) -> int:
    """Calendar quarters counted from year 0: 4 × year + 0..3."""
    return day.year * 4 + (day.month - 1) // 3


def _quarter_window(site: _Site, index: int) -> Window | Clarification:
    """The calendar quarter `index` (`_quarter_index`), to `now` while under way."""
    year, quarter = divmod(index, 4)
    after_year, after = divmod(index + 1, 4)
    start, end = date(year, quarter * 3 + 1, 1), date(after_year, after * 3 + 1, 1)
    return _window(site.at(start, time(0, 0)), site.at(end, time(0, 0)), site.now)


def _quarter(folded: str, site: _Site) -> Window | Clarification | None:
    """ "last quarter", "este trimestre", "the third quarter (of 2025 / last year)": a calendar quarter; by its number
    alone, the latest begun."""
    this = _quarter_index(site.today)
    if _LAST_QUARTER.search(folded):
        return _quarter_window(site, this - 1)
    if _THIS_QUARTER.search(folded):
        return _quarter_window(site, this)
    if (match := _NTH_QUARTER.search(folded)) is None:
        return None
    number = next((n for n in range(1, 5) if match.group(n)), None) or int(match.group(6))
    said = match.group(5) or match.group(7)
    year = int(said) if said else _said_year(folded, site)
    if year is None:
        year = site.today.year if number - 1 <= this % 4 else site.today.year - 1
    if year < _FIRST_YEAR:
        return None
    return _quarter_window(site, year * 4 + number - 1)


def _month(folded: str, site: _Site) -> Window | Clarification | None:
    """A whole calendar month the text names with its year (said as a number or by its place: "last year in December",
    "diciembre del año pasado"), or with a preposition and no year (the latest begun)."""
    said = _said_year(folded, site)
    for match in _MONTH.finditer(folded):
        name, year = match.group(1), match.group(2)
        following = folded[match.end() :]
        # "el pasado mes de octubre", "the month of October", "no mês de outubro passado"
        month_of = re.search(r"\b(?:(pasado|passado|ultimo|last|past)\s+)?(?:mes|month)\s+$", folded[: match.start()])
        # "diciembre pasado", "el pasado mes de diciembre"
        passed = re.match(r"\s+(?:pasado|passado)\b", following) is not None or bool(month_of and month_of.group(1))
        placed = said is not None and _YEAR_AFTER.match(following) is not None
        prepositioned = month_of is not None or re.match(rf"(?:{_MONTH_LEAD})\s", match.group(0)) is not None
        if year is None and not prepositioned and not passed and not placed:
            continue  # "may" alone is a verb, "marco" a frame: a month needs its year or "en/in/em"
        number = next(i for i, names in enumerate(_MONTH_NUMBERS, start=1) if name in names)
        # "last March", "el pasado marzo", "marzo pasado": the latest ended
        ended = passed or re.match(r"(?:last|this past|past|pasado|passado|ultimo)\s", match.group(0)) is not None
        latest = site.today.year - (number > site.today.month - ended)
        on = int(year) if year is not None else said if said is not None else latest
        if on < _FIRST_YEAR:
            return None
        if on > site.today.year:  # "janeiro de 2031": nothing is stored for it yet
            return Clarification(reason="future_window", candidates=[])
        start = date(on, number, 1)
        after = date(on + number // 12, number % 12 + 1, 1)
        return _window(site.at(start, time(0, 0)), site.at(after, time(0, 0)), site.now)
    return None


def _day(folded: str, site: _Site, lang: str) -> date | Clarification | None:
    if (holiday := _holiday(folded, site)) is not None:
        return holiday
    if (match := _MONTH_DAY.search(folded)) is not None:
        return _month_day(match, site)
    if _DAY_BEFORE.search(folded):
        return site.today - timedelta(days=2)
    if _YESTERDAY.search(folded):
        return site.today - timedelta(days=1)
    if _TODAY.search(folded):
        return site.today
    if match := _WEEKDAY.search(folded):
        weekday = next(d for d, names in _WEEKDAYS.items() if re.fullmatch(names, match.group(2)))
        back = (site.today.weekday() - weekday) % 7
        return site.today - timedelta(days=back or (7 if match.group(1) or match.group(3) else 0))
    if match := _AGO.search(folded):
        return _ago(match, site.today)
    if (match := _DAY_NUMBER.search(folded)) is not None and 1 <= (
        number := int(match.group(1) or match.group(2))
    ) <= 31:
        return _day_of_month(site, number)
    if match := _DATE.search(folded):
        parsed = _parse_date(match.group(0), site, lang)
        said = _said_year(folded, site)
        if isinstance(parsed, date) and said is not None and not re.search(r"\d{4}|/\d{2,4}\b", match.group(0)):
            return _in_year(parsed, said, site)  # "el 3 de marzo del año pasado"
        return parsed
    return None


def _month_day(match: re.Match[str], site: _Site) -> date | Clarification | None:
    """The day of this month or the last that `_MONTH_DAY` matched; one still to come asks back, one the month
    lacks ("the 31st of last month" in December) is None."""
    month = site.today.replace(day=1)
    if match.group("last"):
        month = (month - timedelta(days=1)).replace(day=1)
    number = int(match.group(1)) if match.group(1) else 1 if match.group(2) else monthrange(month.year, month.month)[1]
    if not 1 <= number <= monthrange(month.year, month.month)[1]:
        return None
    day = month.replace(day=number)
    return Clarification(reason="future_window", candidates=[]) if day > site.today else day


def _in_year(day: date, year: int, site: _Site) -> date | Clarification | None:
    """`day` in `year` (None for a 29 February that year lacks); a day still to come asks back."""
    try:
        moved = day.replace(year=year)
    except ValueError:
        return None
    return Clarification(reason="future_window", candidates=[]) if moved > site.today else moved


def _holiday(folded: str, site: _Site) -> date | Clarification | None:
    """A day of the calendar named (`_HOLIDAYS`): in the year said with it, else the latest gone by ("last
    Christmas", "la Nochebuena pasada"), this year's ("this Christmas"), or the latest begun."""
    for pattern, on in _HOLIDAYS:
        if (match := pattern.search(folded)) is None:
            continue
        if (year_said := _HOLIDAY_YEAR.match(folded, match.end())) is not None:
            year: int | None = int(year_said.group(1))
        elif (in_year := _YEAR.search(folded)) is not None:
            year = int(in_year.group(1))
        else:
            year = _said_year(folded, site)
        if year is None:
            gone = site.today - timedelta(days=1 if match.group("last") or match.group("after") else 0)
            this = match.group("this") is not None or on(site.today.year) <= gone
            year = site.today.year if this else site.today.year - 1
        if year < _FIRST_YEAR:
            return None
        return Clarification(reason="future_window", candidates=[]) if on(year) > site.today else on(year)
    return None


def _ago(match: re.Match[str], today: date) -> date:
    """The day "hace 3 días", "há uma semana", "a month ago", "a year ago" names, counted back from `today`."""
    count, unit = _count(match.group(1) or match.group(3)), match.group(2) or match.group(4)
    if unit.startswith(("y", "a")):  # years, "años" folded, "anos"
        return _months_before(today, 12 * count)
    if unit.startswith("m"):
        return _months_before(today, count)
    return today - timedelta(days=count * (7 if unit.startswith(("s", "w")) else 1))


def _months_before(today: date, count: int) -> date:
    """The same day of the month `count` months back, or the last day of a shorter month."""
    index = today.year * 12 + today.month - 1 - count
    year, month = divmod(index, 12)
    return date(year, month + 1, min(today.day, monthrange(year, month + 1)[1]))


def _day_of_month(site: _Site, number: int) -> date | None:
    """The latest day numbered `number` up to today: this month's, or last month's while this one's is to come."""
    month = site.today.replace(day=1)
    if number > site.today.day:
        month = (month - timedelta(days=1)).replace(day=1)
    try:
        return month.replace(day=number)
    except ValueError:  # "el 31" of a 30-day month, "the 0th"
        return None


def _parse_date(fragment: str, site: _Site, lang: str) -> date | Clarification | None:
    """dateparser reads the date fragment (its month names, orders and "hace N días" cover es/en/pt)."""
    language = lang if lang in ("es", "en", "pt") else "es"
    settings = {
        "RELATIVE_BASE": site.now.replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",
        "RETURN_AS_TIMEZONE_AWARE": False,
        "DATE_ORDER": "MDY" if language == "en" else "DMY",
    }
    try:
        parsed = dateparser.parse(fragment, languages=[language], settings=settings)
    except (ValueError, OverflowError, TypeError):  # "31/31", years past 9999: no date
        return None
    if parsed is None or parsed.year < _FIRST_YEAR:
        return None
    if parsed.date() > site.today:
        return Clarification(reason="future_window", candidates=[])
    return parsed.date()


def _night_of(folded: str, site: _Site, day: date | None) -> date | None:
    """The evening the night named begins on: "anoche" the one before the day named (today: the night just past, or
    the one under way), "antenoche" the day before yesterday's; "tonight" today's, yesterday's while still under way;
    "la noche de anteayer a ayer", "a noite de ontem para hoje", "la noche del 5 al 6 de diciembre": the first day's
    (`_night_date`; None when that day cannot be)."""
    if (spanned := _NIGHT_FROM.search(folded)) is not None:
        return site.today - timedelta(days=_DAYS_BACK[spanned.group(1)])
    if (dated := _NIGHT_DATE.search(folded)) is not None:
        return _night_date(dated, site)
    if _LAST_NIGHT.search(folded):
        return day if day is not None and day < site.today else site.today - timedelta(days=1)
    if _TONIGHT.search(folded):
        after_midnight = site.now < site.at(site.today, NIGHT_END)
        return site.today - timedelta(days=1) if after_midnight else site.today
    return None


def _night_said(match: re.Match[str]) -> tuple[int, int | None]:
    """The first day of a night said by its dates (`_NIGHT_DATE`) and its month, when said (with the second day, the
    one before it when that day's number is the lower: "del 31 al 1 de enero" is December's)."""
    number = int(next(n for n in match.group("del", "dia", "ordinal", "after_month", "before_month") if n))
    name = match.group("month_first") or match.group("month")
    month = None if name is None else _month_number(name)
    if month is None and (to_name := match.group("to_month")) is not None:
        month = _month_number(to_name)
        if int(match.group("to")) < number:
            month = month - 1 or 12
    return number, month


def _night_date_said(match: re.Match[str]) -> str:
    """ "la noche del 5 al 6 de diciembre", "the night of the 5th to the 6th" → "noche del dia 5 de diciembre",
    "noche del dia 5": its second day is no clock time ("al 6") nor the day named; unchanged when the day cannot be."""
    number, month = _night_said(match)
    if not 1 <= number <= 31:
        return match.group(0)
    return f"noche del dia {number}" + ("" if month is None else f" de {_MONTH_NUMBERS[month - 1][0]}")


def _night_date(match: re.Match[str], site: _Site) -> date | None:
    """The evening a night said by its dates (`_NIGHT_DATE`) begins on: in the month said, the latest up to today;
    with no month, this month's or, while that day is to come, the last's. None for a day the month lacks."""
    number, month = _night_said(match)
    if month is None:
        return _day_of_month(site, number)
    for year in (site.today.year, site.today.year - 1):
        try:
            evening = date(year, month, number)
        except ValueError:  # "el 29 de febrero" of a year without one: the year before, if it has one
            continue
        if evening <= site.today:
            return evening
    return None


def _month_number(name: str) -> int:
    """The number of the month `name` names (`_MONTHS`: es/en/pt, whole or cut to three letters, "sept")."""
    return next(i for i, names in enumerate(_MONTH_NUMBERS, start=1) if any(n.startswith(name[:3]) for n in names))


def _night(folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    """A night named: the hours said within it ("anoche de 11 a 2", "last night at 11"), else 20:00 to 06:00."""
    evening = _night_of(folded, site, day)
    if evening is None:
        return None
    for rule in (_hour_range, _since, _at_clock):
        if (within := rule(folded, site, day, shifts)) is not None:
            return within
    return _window(site.at(evening, NIGHT_START), site.at(evening + timedelta(days=1), NIGHT_END), site.now)


def _on_night(site: _Site, evening: date, clock: time, meridiem: str | None) -> datetime:
    """A clock time in the night beginning on `evening`: from noon on, that evening; before noon, the next morning.
    An hour said bare is the night's own: 7 to 11 in the evening, 12 midnight, 1 to 6 in the morning."""
    if meridiem in (None, "h", "hs", "hrs") and NIGHT_END.hour < clock.hour <= 12:
        clock = clock.replace(hour=(clock.hour + 12) % 24)
    return site.at(evening if clock >= time(12, 0) else evening + timedelta(days=1), clock)


def _occurrence(site: _Site, shift: ShiftConfig, day: date) -> tuple[datetime, datetime]:
    """The shift as it runs when it starts on `day`; an end at or before its start is on the next day."""
    start_clock, end_clock = time.fromisoformat(shift.start), time.fromisoformat(shift.end)
    end_day = day + timedelta(days=1) if end_clock <= start_clock else day
    return site.at(day, start_clock), site.at(end_day, end_clock)


def _latest_started(site: _Site, shift: ShiftConfig) -> tuple[datetime, datetime]:
    today = _occurrence(site, shift, site.today)
    return today if today[0] <= site.now else _occurrence(site, shift, site.today - timedelta(days=1))


def _current_shift(site: _Site, shifts: list[ShiftConfig]) -> tuple[datetime, datetime] | None:
    for shift in shifts:
        start, end = _latest_started(site, shift)
        if start <= site.now < end:
            return start, end
    return None


def _shifts_back(folded: str, site: _Site, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    """The shift counted back from the one under way (`_SHIFTS_BACK`), or the one under way as it ran the day before
    (`_SAME_SHIFT_YESTERDAY`); None when neither is said."""
    if _SAME_SHIFT_YESTERDAY.search(folded) is not None:
        current = next((s for s in shifts if _latest_started(site, s)[1] > site.now), None)
        if current is None:
            return None
        start, end = _occurrence(site, current, _latest_started(site, current)[0].date() - timedelta(days=1))
        return _window(start, end, site.now)
    if (counted := _SHIFTS_BACK.search(folded)) is None:
        return None
    back = 2 if counted.group("two") else 3 if counted.group("three") else _count(counted.group(1) or counted.group(2))
    begun = sorted(
        occurrence
        for n in range(back // len(shifts) + 3)
        for shift in shifts
        if (occurrence := _occurrence(site, shift, site.today - timedelta(days=n)))[0] <= site.now
    )
    start, end = begun[-1 - back]
    return _window(start, end, site.now)


def _shift(folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    if not shifts:
        return None
    if (of_day := _LAST_OF_DAY.search(folded)) is not None and (of_day.group(1) or len(shifts) == 3):
        return _shift_window(site, shifts[-1] if of_day.group(1) else shifts[1], day, folded)
    if (back := _shifts_back(folded, site, shifts)) is not None:
        return back
    if _PREVIOUS_SHIFT.search(folded):
        ended = [_latest_started(site, shift) for shift in shifts]
        ended = [
            o if o[1] <= site.now else _occurrence(site, s, o[0].date() - timedelta(days=1))
            for s, o in zip(shifts, ended, strict=True)
        ]
        start, end = max(ended)
        return _window(start, end, site.now)
    names = {fold(shift.name): shift for shift in shifts}
    if (ordinal := _ORDINAL_SHIFT.search(folded)) is not None:
        nth = ordinal.lastindex or 1  # the group that matched: 1st, 2nd or 3rd
        if nth > len(shifts):
            return Clarification(reason="unknown_shift", candidates=[shift.name for shift in shifts])
        return _shift_window(site, shifts[nth - 1], day, folded)
    for match in _NAMED_SHIFT.finditer(folded):
        name = next(group for group in match.groups() if group)
        if name.isdigit() and _HOURS_GO_ON.match(folded, match.end()):
            continue  # "on a shift six to two": its hours, not a shift 6
        if name not in names and name.isdigit() and 1 <= int(name) <= len(shifts):  # "turno 2": the second
            name = fold(shifts[int(name) - 1].name)
        if name in names:
            return _shift_window(site, names[name], day, folded)
        if len(name) == 1 and name not in _NOT_SHIFT_NAMES:  # "turno D": a shift name, not one the site has
            return Clarification(reason="unknown_shift", candidates=[shift.name for shift in shifts])
    if (apposed := _SHIFT_APPOSITIVE.search(folded)) is not None and apposed.group(1) in names:
        return _shift_window(site, names[apposed.group(1)], day, folded)
    for pattern, first, last in _SHIFT_BY_PART.values():
        if pattern.search(folded):
            starting = [s for s in shifts if _starts_within(time.fromisoformat(s.start), first, last)]
            if len(starting) != 1:  # no shift, or several, start then: which one?
                return Clarification(reason="unknown_shift", candidates=[shift.name for shift in shifts])
            return _shift_window(site, starting[0], day, folded)
    this = _THIS_SHIFT if day is None else _TODAYS_SHIFT if day == site.today else None
    if this is not None and _night_of(folded, site, day) is None and this.search(folded):
        current = _current_shift(site, shifts)
        if current is not None:
            return _window(current[0], site.now)
    return None


# A number after "shift" that begins a range of hours: "shift 6 to 2", "turno 6 a 14".
_HOURS_GO_ON = re.compile(r"\s*(?:-|to|till|until|a|al|as|ate|hasta)\s*\d")
_SHIFT_END_SAID = re.compile(r"\b(?:fecho|fechamento|encerramento|cierre|close|closing|fin|fim|final|end)\b")


def _shift_window(site: _Site, shift: ShiftConfig, day: date | None, folded: str) -> Window | Clarification:
    """The shift's occurrence that starts on `day` (the latest begun when None) — or, for a shift past midnight
    "that ended" on `day`, the one that began the day before. A day or night said with its start ("que entró antes
    de ayer", "the one that started last night") or its end ("that ended at 6 am yesterday") outranks the day the
    question names first; a night named ("el turno C de anoche") is the occurrence that starts in it."""
    start_clock, end_clock = time.fromisoformat(shift.start), time.fromisoformat(shift.end)
    started_on = _said_bound(_STARTED, folded, site, start_clock)
    ended_on = _said_bound(_ENDED, folded, site, end_clock)
    evening = _night_of(folded, site, day)
    on = day if ended_on is None else ended_on
    if started_on is not None:
        start, end = _occurrence(site, shift, started_on)
    elif ended_on is None and evening is not None:
        start, end = _occurrence(site, shift, _in_night(evening, start_clock))
    elif on is None:
        start, end = _latest_started(site, shift)
    else:
        start, end = _occurrence(site, shift, on)
        # one "that ended" today, or the end of today's night shift before it begins ("hoje às 6h00, no fecho do turno
        # da noite"): the one that ran into today
        closing = (
            _SHIFT_END_SAID.search(folded) and on == site.today and start > site.now and start.date() != end.date()
        )
        ended = _ENDED.search(folded) or closing
        if ended and end.date() != on:
            start, end = _occurrence(site, shift, on - timedelta(days=1))
    if (half := _HALF.search(folded)) is not None:  # "the back half of yesterday's B shift": 18:00 to 22:00
        middle = start + (end - start) / 2
        start, end = (start, middle) if half.group(1) else (middle, end)
    return _window(start, end, site.now)


def _said_bound(verb: re.Pattern[str], folded: str, site: _Site, clock: time) -> date | None:
    """The day said after `verb` ("started", "terminó"), before the next start or end verb; for a night said there
    ("empezó anoche"), the day in it that has `clock` (the shift's start or end). None when none is said."""
    for match in verb.finditer(folded):
        said = folded[match.end() :]
        following = [m.start() for m in (_STARTED.search(said), _ENDED.search(said)) if m is not None]
        said = said[: min(following, default=len(said))]
        if _SAID_NIGHT.search(said) is not None:
            on = _day(said, site, "es")
            evening = _night_of(said, site, on if isinstance(on, date) else None)
            if evening is not None:
                return _in_night(evening, clock)
        if (day := _SAID_DAY.search(said)) is not None:
            return site.today - timedelta(days=_DAYS_BACK[day.group(1)])
    return None


def _in_night(evening: date, clock: time) -> date:
    """The day `clock` falls on in the night that begins on `evening`: that evening from noon on, else the morning."""
    return evening if clock >= time(12, 0) else evening + timedelta(days=1)


def _starts_within(clock: time, first: time, last: time) -> bool:
    """`clock` in [first, last), the span wrapping past midnight when it ends before it starts."""
    return first <= clock < last if first < last else clock >= first or clock < last


def _clock(hour: str, minute: str | None, meridiem: str | None) -> time | None:
    h, m = int(hour), int(minute or 0)
    if meridiem in _NIGHT_WORDS:
        h = 0 if h == 12 else h + 12 if NIGHT_END.hour <= h < 12 else h
    elif meridiem is not None and meridiem in _PM_WORDS and h < 12:
        h += 12
    elif meridiem is not None and (meridiem.startswith("a") or "madrugada" in meridiem) and h == 12:
        h = 0
    return time(h, m) if h < 24 and m < 60 else None


def _said_clock(hour: str, minute: str | None, meridiem: str | None, rest: str) -> time | None:
    """The clock time read with `_clock`; a bare hour before noon is after it when `rest` (the question without the
    time) names the afternoon or the evening, and a bare 12 is midnight when it names the small hours ("de madrugada,
    de 12 a 6": from 00:00; "12:00", as noon and "mediodía" are written, stays noon)."""
    if hour == "12" and minute is None and meridiem in (None, "h", "hs", "hrs") and _PART["small_hours"].search(rest):
        return time(0, 0)
    clock = _clock(hour, minute, meridiem)
    # 00:45 is "quarter to one": in the afternoon, 12:45 (midnight itself, 0:00, stays)
    if clock is not None and meridiem is None and clock.hour < 12 and clock != time(0, 0) and _AFTERNOON.search(rest):
        return clock.replace(hour=clock.hour + 12)
    return clock


def _without(folded: str, match: re.Match[str]) -> str:
    return folded[: match.start()] + " " + folded[match.end() :]


def _dated_range(
    folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]
) -> Window | Clarification | None:
    """An hour range whose two ends each say their day: from the first to the second, across the days between (a
    night said just before the range is its start's: "last night, from 8 pm up to 6 this morning")."""
    for text in (folded, _NIGHT_BEFORE_RANGE.sub(r"\2 \1", folded)):
        for match in (*_DATED_RANGE.finditer(text), *_BARE_DATED_RANGE.finditer(text)):
            if (found := _dated_ends(match, site, text, shifts)) is not None:
                return found
    return None


def _dated_ends(
    match: re.Match[str], site: _Site, folded: str, shifts: list[ShiftConfig]
) -> Window | Clarification | None:
    """The window between the two ends `match` (`_DATED_RANGE`) says, each on its day or in its night (an end with
    none in the other's night); None when an end says neither."""
    said: list[tuple[time, date | None, str | None, str | None, date | None]] = []
    for before, hour, minute, meridiem, night, after, number, vague in (match.groups()[:8], match.groups()[8:]):
        evening = None
        if night:  # "8 last night": 6 to 11 are the evening's
            evening = site.today - timedelta(days=2 if _DAY_BEFORE.search(night) else 1)
            clock = _clock(hour, minute, "de la noche" if meridiem in (None, "h", "hs", "hrs") else meridiem)
            on = None if clock is None else _in_night(evening, clock)
        else:
            clock = _clock(hour, minute, meridiem)
            if before or after:
                on = site.today - timedelta(days=_DAYS_BACK[before or after])
            else:
                on = _day_of_month(site, int(number)) if number else None
        if clock is None:
            return None
        said.append((clock, on, meridiem, vague, evening))
    if said[0][2] is None and said[1][2] is None:  # "el turno de noche, de las 10 de ayer a las 6 de hoy": 22:00
        if (shift := _shift_by_hours(folded, match, said[0][0], said[1][0], shifts)) is not None:
            said = [
                (clock, on, meridiem, vague, evening)
                for clock, (_, on, meridiem, vague, evening) in zip(shift, said, strict=True)
            ]
    points: list[datetime | None] = []
    for (clock, on, meridiem, vague, _), other_night in zip(said, (said[1][4], said[0][4]), strict=True):
        if on is not None:
            points.append(site.at(on, clock))
        elif other_night is not None:
            points.append(_on_night(site, other_night, clock, meridiem))
        elif vague:
            points.append(None)
        else:
            return None  # an end without its own day: an hour range on the day named, read below
    start, end = points
    if start is None and end is not None:  # "from 8pm the other night up to 6am yesterday": the last 20:00 before
        start = site.at(end.date() - timedelta(days=1 if said[0][0] >= said[1][0] else 0), said[0][0])
    if start is None or end is None:
        return None
    return _window(start, end, site.now) if start < end else None


def _hour_range(folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    match = _HOUR_RANGE.search(folded)
    if match is None:
        return None
    groups = match.groups()
    h1, m1, mer1, h2, m2, mer2 = groups[:6] if groups[0] is not None else groups[6:]
    rest = _without(folded, match)
    first, last = _said_clock(h1, m1, mer1, rest), _said_clock(h2, m2, mer2, rest)
    if first is None or last is None:
        return None
    if mer1 is None and mer2 is not None:  # "between 10 and 11pm": both pm, unless past the end
        # ("de 2 a 10 de la noche": an evening's end makes an earlier bare hour the afternoon's, not the small hours)
        evening_end = mer2 in _NIGHT_WORDS and 6 <= last.hour % 12 and int(h1) < last.hour % 12
        shared = _clock(h1, m1, "pm" if evening_end else mer2)
        first = shared if shared is not None and shared < last else first
    # "between noon and one", "from 2pm to 5": a bare hour ending a range begun after noon is after noon too
    after_noon = last.replace(hour=last.hour + 12) if 0 < last.hour < 12 else last
    begun_pm = mer1 in _PM_WORDS or (mer1 in _NIGHT_WORDS and first.hour > 12)
    if (first.hour == 12 or begun_pm) and mer2 in (None, "h", "hs", "hrs") and first < after_noon:
        last = after_noon
    if (evening := _night_of(folded, site, day)) is not None:  # "anoche de 11 a 2": across midnight
        return _window(_on_night(site, evening, first, mer1), _on_night(site, evening, last, mer2), site.now)
    if mer1 is None and mer2 is None and (shift := _shift_by_hours(folded, match, first, last, shifts)) is not None:
        first, last = shift  # "el turno de 10 a 6": the site's 22:00-06:00, not 10:00-18:00
    elif mer1 is None and mer2 is None and last < first < time(12, 0) and "0" not in (h1[0], h2[0]):
        last = last.replace(hour=last.hour + 12)  # "6 till 2", "de 7 a 3": a day range ending after noon
    on = site.today if day is None else day
    if day == site.today and last <= first and _day(folded[: match.start()], site, "es") is None:
        # across midnight, with today said after the range: the end's day ("from 8 pm till 6 am this morning", "de
        # las 8 de la noche a las 6 de la mañana de hoy"; read as the start's, it would be still to come)
        on = day - timedelta(days=1) if _day(folded[match.end() :], site, "es") == day else on
    elif day is not None and last <= first and _ENDED.search(folded) and not _STARTED.search(folded):
        on = day - timedelta(days=1)  # "the 10 to 6 shift that ended yesterday morning": begun the day before
    start = site.at(on, first)
    if day is None and start > site.now:  # "between 10 and 11" at 09:00: yesterday's
        on -= timedelta(days=1)
        start = site.at(on, first)
    end = site.at(on + timedelta(days=1) if last <= first else on, last)
    return _window(start, end, site.now)


# A shift named right before the hours of a range ("el turno de 10 a 6", "the 10 to 6 shift", "a turma das 10 às 6").
_SHIFT_HOURS = re.compile(
    r"\b(?:turno|shift|turma|guardia)(?:\s+(?:de\s+(?:la\s+)?noche|da noite|de noite|night|nocturno|c))?[\s,]+"
    r"(?:de|from|das|da|del)?\s*(?:las\s+|as\s+)?\d[^;.?!]*$"
)
_SHIFT_BEFORE = re.compile(r"\b(?:the|el|la|o|a)\s+\d{1,2}\s+(?:to|a|till|until)\s+\d{1,2}\s+(?:shift|turno)\b")


def _shift_by_hours(
    folded: str, match: re.Match[str], first: time, last: time, shifts: list[ShiftConfig]
) -> tuple[time, time] | None:
    """The start and end of the site's shift whose hours the range `match` of bare hours (no am, pm or part of the
    day), said as a shift, names on a 12-hour clock ("el turno de 10 a 6" at a site whose shift C runs 22:00-06:00),
    or None."""
    if first.minute or last.minute:
        return None
    if not (_SHIFT_HOURS.search(folded[: match.end()]) or _SHIFT_BEFORE.search(folded)):
        return None
    for shift in shifts:
        start, end = time.fromisoformat(shift.start), time.fromisoformat(shift.end)
        if (start.hour % 12, end.hour % 12) == (first.hour % 12, last.hour % 12) and not start.minute | end.minute:
            return start, end
    return None


def _since(folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    """ "desde ayer a las 18": from that clock time (on the day named, in the night named, else the latest that has
    come) to now."""
    match = _SINCE.search(folded)
    return None if match is None else _since_clock(folded, site, day, match)


def _since_said(folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    """ "since the night crew came on at 10 last night" (`_SINCE_CLAUSE`): from that clock time to now."""
    match = _SINCE_CLAUSE.search(folded)
    return None if match is None else _since_clock(folded, site, day, match)


def _since_clock(folded: str, site: _Site, day: date | None, match: re.Match[str]) -> Window | Clarification | None:
    """From the clock time `match` holds (its groups 1-3) to now: the night's own hour in a night named, else on the
    day named, else the latest that has come."""
    hour, minute, meridiem = match.group(1, 2, 3)
    if (evening := _night_of(folded, site, day)) is not None:  # "since 6 last night": 18:00, the night's own hours
        clock = _clock(hour, minute, "de la noche" if meridiem in (None, "h", "hs", "hrs") else meridiem)
        return None if clock is None else _window(site.at(_in_night(evening, clock), clock), site.now)
    clock = _said_clock(hour, minute, meridiem, _without(folded, match))  # "since 6 yesterday evening": 18:00
    if clock is None:
        return None
    on = site.today if day is None else day
    if day is None and site.at(on, clock) > site.now:
        on -= timedelta(days=1)
    return _window(site.at(on, clock), site.now)


def _to_now_said(folded: str) -> tuple[re.Match[str], str] | None:
    """Where `folded` says its window runs until now (`_TO_NOW`), and its clause up to there with the word that opens
    the range read as "desde" (the last "from/desde/entre/das" said, else the first "de" before a time: "de las 18 de
    ayer"); None when it says none."""
    for match in _TO_NOW.finditer(folded):
        if not match.group("until") and re.match(r"(?:(?:el|o) dia de )?(?:hoy|hoje|today)\b", match.group("now")):
            continue  # "la noche de ayer a hoy" is a night
        start = max((m.end() for m in _CLAUSE_END.finditer(folded, 0, match.start())), default=0)
        clause = folded[start : match.start()]
        said = [m for m in _FROM_WORD.finditer(clause) if m.group(1) or not match.group("and")]
        opening = said[-1] if said else None if match.group("and") else _FROM_DE.search(clause)
        if opening is not None:
            return match, f"{clause[: opening.start()]}desde{clause[opening.end() :]}"
        if match.group("until") and (clock := _CLOCK_BEFORE_UNTIL.search(clause)) is not None:
            return match, f"{clause[: clock.start()]} desde {clock.group(0)}"  # "today, midnight up to now"
    return None


# A clock said right before "up to now" with no word opening the range, with its minutes or am/pm: "today, midnight
# up to now" (0:00), not "la línea 1 hasta ahora".
_CLOCK_BEFORE_UNTIL = re.compile(r"(?<![\w:.-])(?:[01]?\d|2[0-3])(?::[0-5]\d\s*(?:am|pm)?|\s*(?:am|pm))\s*$")


def _to_now(folded: str, site: _Site, shifts: list[ShiftConfig], lang: str) -> Window | Clarification | None:
    """ "de ontem às 18h até agora", "desde ayer hasta ahora": from the start of what the clause names (`_read`) to
    now, with what its sentence says after; None when it says no "until now", or the clause names no time."""
    if (said := _to_now_said(folded)) is None:
        return None
    match, clause = said
    after = folded[match.end() :]
    end = _CLAUSE_END.search(after)
    found = _read(f"{clause} {after if end is None else after[: end.end()]}", site, shifts, lang)
    return _window(found.start, site.now) if isinstance(found, Window) else found


def _edge(
    folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig], lang: str
) -> datetime | Clarification | None:
    """The start or end (`_EDGE`) of the shift or span of time said after it: "at the start of yesterday's A shift"
    06:00 on the 5th, "al final del día de ayer" 00:00 on the 6th; an end not yet come asks back. None when no edge
    is said, or said of no shift (or none in `shifts`) nor span that the question names."""
    for match in _EDGE.finditer(folded):
        rest = _without(folded, match)  # "al término del turno": the noun, not "terminó"
        of = folded[match.end() :]
        if _EDGE_OF_SHIFT.match(of):
            found = _shift(rest, site, day, shifts)
        elif _EDGE_OF_SPAN.match(of):
            found = _read(rest, site, shifts, lang)
        else:
            continue
        if not isinstance(found, Window):
            return found
        if match.group("start"):
            return found.start
        if found.end >= site.now:  # clipped to now: it has not ended yet
            return Clarification(reason="future_window", candidates=[])
        return found.end
    return None


def _bounded(folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    """ "before noon", "antes das 10h", "after 3pm": from the start of the day (or of the part of it named: "de manhã
    antes do meio-dia" from 06:00) to that time, or from it to the end; with no day named, the latest begun."""
    before = _BEFORE.search(folded)
    match = before or _AFTER.search(folded)
    if match is None:
        return None
    rest = _without(folded, match)
    hour, minute, meridiem = match.group(1, 2, 3)
    clock = _said_clock(hour, minute, meridiem, rest)
    if clock is None:
        return None
    first, last = next((_PARTS[p] for p, pattern in _PART.items() if pattern.search(rest)), (time(0, 0), time(0, 0)))
    on = site.today if day is None else day
    if before is not None:
        start, end = site.at(on, first if first < clock else time(0, 0)), site.at(on, clock)
    else:
        start = site.at(on, clock)
        end = site.at(on, last) if clock < last else site.at(on + timedelta(days=1), time(0, 0))
    if day is None and start > site.now:  # "after 3pm" at 09:00: yesterday's
        return _bounded(folded, site, on - timedelta(days=1), shifts)
    return _window(start, end, site.now)


# An instant said as hours back from now: "hace 2 horas", "hace una hora y media", "há três horas", "half an hour ago",
# "two hours and 45 minutes ago"; with a clock beside it ("hace una hora y media, a la 1:30"), the clock nearest it.
_HOURS_AGO = re.compile(
    r"\b(?:hace|ha|faz)\s+(?:unas?\s+|umas?\s+|como\s+)?(?P<n>\d+|una|uma|um|un)\s+horas?(?P<half>\s+(?:y|e)\s+"
    r"(?:media|meia))?\b"
    r"|\b(?:hace|ha|faz)\s+(?P<half_only>media|meia)\s+hora\b"
    r"|\b(?P<en>\d+|an?|one)\s+hours?(?P<en_half>\s+and\s+a\s+half)?(?:\s+and\s+(?P<min>\d+)\s+minutes?)?\s+ago\b"
    r"|\b(?P<half_en>half an hour)\s+ago\b"
)


def _hours_ago(folded: str) -> timedelta | None:
    """How far back from now `folded` says its instant is (`_HOURS_AGO`), or None."""
    m = _HOURS_AGO.search(folded)
    if m is None:
        return None
    if m.group("half_only") or m.group("half_en"):
        return timedelta(minutes=30)
    count = m.group("n") or m.group("en")
    hours = int(count) if count.isdigit() else 1
    minutes = 30 if m.group("half") or m.group("en_half") else int(m.group("min") or 0)
    return timedelta(hours=hours, minutes=minutes)


def _clock_time(folded: str, site: _Site, day: date | None) -> datetime | None:
    """The instant "a las 10", "at 10am", "às 10h" names: on the day named (in the night named: `_on_night`), else the
    latest 10:00 that has come. A clock time ending a range, "since", "before" or "after" is no instant."""
    if any(
        pattern.search(folded)
        for pattern in (_HOUR_RANGE, _DATED_RANGE, _SINCE, _SINCE_CLAUSE, _SINCE_START, _BEFORE, _AFTER)
    ):
        return None
    if _to_now_said(folded) is not None:  # "de ontem às 18h até agora": a window, no instant
        return None
    if _dated_range(folded, site, day, []) is not None:
        return None
    said = [m for m in _AT_CLOCK.finditer(folded) if not _BOUND_CLOCK.search(folded[: m.start()])]
    # a clock said roughly ("a eso de las 2") yields to one said exactly ("a las 3 en punto") in the same question
    match = next((m for m in said if not _ROUGH_LEAD.match(m.group(0))), said[0] if said else None)
    if match is None:
        return None
    hour, minute, meridiem = match.group(1, 2, 3)
    clock = _said_clock(hour, minute, meridiem, _without(folded, match))
    if clock is None:
        return None
    if (evening := _night_of(folded, site, day)) is not None:
        return _on_night(site, evening, clock, meridiem)
    on = site.today if day is None else day
    if day is None and site.at(on, clock) > site.now:
        on -= timedelta(days=1)
    return site.at(on, clock)


def _at_clock(folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]) -> Window | Clarification | None:
    """ "a las 10": the hour from 10:00."""
    instant = _clock_time(folded, site, day)
    return None if instant is None else _window(instant, instant + timedelta(hours=1), site.now)


def _part_of_day(
    folded: str, site: _Site, day: date | None, shifts: list[ShiftConfig]
) -> Window | Clarification | None:
    for part, pattern in _PART.items():
        if pattern.search(folded):
            on = site.today if day is None else day
            first, last = _PARTS[part]
            return _window(site.at(on, first), site.at(on, last), site.now)
    return None
