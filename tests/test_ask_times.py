"""Time phrasings people use that the ask's window rules read (edge_agent/ask/resolve/times.py), in es/en/pt: the
night before last and hours said in a night, hour ranges whose ends say their own days, minutes said in words, "before
noon"/"after noon", a shift letter folding would take for an article, the shift before this one, days back, clock
times said bare next to a day word ("ayer 0800", "ontem 14h30"), one-letter slips of day words, ranges begun at noon,
Scots "tae", the week before last, a vague start anchored by its end, a shift by the day of its start, "so far"; a
shift by the night it started in, hours said "at night", "à 1 e meia da tarde", Australian "arvo", days of the calendar
("last Christmas Eve"), quarters, a month in last year, and a clock time that cannot be ("at 37 o'clock"); ranges
"through to 6 this mornin", a day range "6 till 2", "since 6 last night", "0600 to noon", "10 horas e 15 minutos",
chat's "ont"/"hj"/"ytd", a count that is no hour ("as duas bombas"), "el pasado mes de octubre", a fortnight, a day of
this month, weekends back, more days of the calendar (Thanksgiving, São João, Finados, May Day, Easter), Caribbean
"de shift before dis one"; clocks said with "horas" ("las 22:00 horas de anteayer", "das 6 horas ao meio-dia"), "las 12
del mediodía", a night by its dates ("la noche del 5 al 6 de diciembre", "the night of December 5th") and a colon
after a range's end; an instant said "at the 16:30", "a las 15:00 exactas" or roughly ("a eso de las 10"), hours "of
the night", the midnight between two days, the shift that just ended, a shift's letter said after it ("el turno de
anoche, el C"), "since" clauses ("since the night crew came on at 10") and days back said "atrás"; a window said to run
until now ("de ontem às 18h até agora"), 12 in the small hours ("ayer en la madrugada, de 12 a 6"), the night before
last spelled "anteanoche", and the start or end of a shift or day as an instant ("at the start of yesterday's A
shift").

Asked, like the bench's probe, on Sunday 2026-12-06 at 03:04 in Mexico City (09:04 UTC): shift C under way since
22:00 on the 5th; "yesterday" is the 5th, the day before it the 4th (the later classes at 07:00, `MORNING`, as the
held-out questions were). Every expected time is local wall time."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.ask.answers import Clarification
from edge_agent.ask.resolve import earliest_said, find_instant, find_window, resolve_window
from edge_agent.ask.tools import Window
from edge_agent.config import ShiftConfig

MEXICO = "America/Mexico_City"  # UTC-6 all year
SHIFTS = [
    ShiftConfig(name="A", start="06:00", end="14:00"),
    ShiftConfig(name="B", start="14:00", end="22:00"),
    ShiftConfig(name="C", start="22:00", end="06:00"),
]
NOW = datetime(2026, 12, 6, 3, 4, tzinfo=ZoneInfo(MEXICO))

Clock = tuple[int, int, int]  # day of December 2026, hour, minute


def at(day: int, hour: int = 0, minute: int = 0, month: int = 12) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=ZoneInfo(MEXICO))


def window_of(text: str, lang: str, now: datetime = NOW) -> Window | Clarification:
    return resolve_window(text, lang, tz=MEXICO, shifts=SHIFTS, now=now)


def assert_window(text: str, lang: str, start: Clock, end: Clock, now: datetime = NOW) -> None:
    assert window_of(text, lang, now) == Window(start=at(*start), end=at(*end))


class TestNights:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            # the night before last: 20:00 on the 4th to 06:00 on the 5th; an hour range in it runs across midnight
            (
                "¿Cuántas alarmas hubo en toda la planta antenoche, de 8 de la noche a 6 de la mañana de ayer?",
                "es",
                (4, 20, 0),
                (5, 6, 0),
            ),
            ("paros de la P-101 anteanoche", "es", (4, 20, 0), (5, 6, 0)),
            ("alarms the night before last", "en", (4, 20, 0), (5, 6, 0)),
            ("alarmes anteontem à noite", "pt", (4, 20, 0), (5, 6, 0)),
            ("anteayer por la noche", "es", (4, 20, 0), (5, 6, 0)),
            # bare hours in a night are the night's: 11 is 23:00, 2 is 02:00 the next morning
            ("anoche de 11 a 2", "es", (5, 23, 0), (6, 2, 0)),
            ("last night between 10pm and 2am", "en", (5, 22, 0), (6, 2, 0)),
            ("ontem à noite das 22h às 2h", "pt", (5, 22, 0), (6, 2, 0)),
            ("anoche entre las 10 y las 11 de la noche", "es", (5, 22, 0), (5, 23, 0)),
            ("the night before last from 9 to 5", "en", (4, 21, 0), (5, 5, 0)),
            ("last night at 11", "en", (5, 23, 0), (6, 0, 0)),
            ("anoche a las 12", "es", (6, 0, 0), (6, 1, 0)),  # midnight
            # a night from one day to the next: the first day's evening
            ("Quantos alarmes disparou o T-301 na noite de anteontem para ontem?", "pt", (4, 20, 0), (5, 6, 0)),
            ("produção da L1 na noite de ontem para hoje", "pt", (5, 20, 0), (6, 3, 4)),
            ("la noche de anteayer a ayer", "es", (4, 20, 0), (5, 6, 0)),
            ("the night from yesterday to today", "en", (5, 20, 0), (6, 3, 4)),
            # the small hours: midnight to 06:00 of the day named
            ("a C-201 teve qtas paradas ontem de madrugada?", "pt", (5, 0, 0), (5, 6, 0)),
            ("paradas de la P-101 ayer en la madrugada", "es", (5, 0, 0), (5, 6, 0)),
            ("stops yesterday in the small hours", "en", (5, 0, 0), (5, 6, 0)),
            ("ontem de manhãzinha", "pt", (5, 5, 0), (5, 8, 0)),  # early morning
            ("yesterday early in the morning", "en", (5, 5, 0), (5, 8, 0)),
            # a weekday's night: the hours said in it are the night's
            ("longest stop on line L1 on Friday night between 9 and 11", "en", (4, 21, 0), (4, 23, 0)),
            ("el viernes por la noche", "es", (4, 20, 0), (5, 6, 0)),
        ],
    )
    def test_nights(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """A night named, alone or with the hours said in it."""
        assert_window(text, lang, start, end)

    def test_an_instant_in_the_night(self) -> None:
        """ "anoche a las 11 y media" is 23:30 on the evening the night began."""
        got = find_instant("anoche a las 11 y media", "es", tz=MEXICO, now=NOW)
        assert got == at(5, 23, 30).astimezone(UTC)

    def test_tonight_under_way_after_midnight(self) -> None:
        """At 03:04 "esta noche" is the night that began yesterday at 20:00, so far."""
        assert window_of("esta noche", "es") == Window(start=at(5, 20, 0), end=NOW)


class TestRangesWithTheirOwnDays:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("entre las 8 de la noche de anteayer y las 6 de la mañana de ayer", "es"),
            ("de las 8 de la noche del 4 a las 6 de la mañana del 5", "es"),
            ("from 8 pm on the 4th to 6 am on the 5th", "en"),
            ("between 8pm the day before yesterday and 6am yesterday", "en"),
            ("das 20h do dia 4 às 6h do dia 5", "pt"),
            ("de anteontem às 20h até ontem às 6h", "pt"),
        ],
    )
    def test_each_end_on_its_day(self, text: str, lang: str) -> None:
        """20:00 on the 4th to 06:00 on the 5th, whichever way the days are said."""
        assert_window(text, lang, (4, 20, 0), (5, 6, 0))

    def test_a_range_over_more_than_a_day(self) -> None:
        """ "desde ayer a las 6 hasta hoy a las 2": 20 hours, to 02:00 today."""
        assert_window("desde ayer a las 6 hasta hoy a las 2", "es", (5, 6, 0), (6, 2, 0))

    def test_no_instant_in_a_dated_range(self) -> None:
        """ "a las 6 de la mañana del 5" ends a range: no instant of its own."""
        text = "de las 8 de la noche del 4 a las 6 de la mañana del 5"
        assert find_instant(text, "es", tz=MEXICO, now=NOW) is None


class TestMinutesInWords:
    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("cuantas alarmas activas habia ayer a las once y media de la mañana", "es", (5, 11, 30)),
            ("ayer a las 11 y media", "es", (5, 11, 30)),
            ("ayer a las diez y cuarto", "es", (5, 10, 15)),
            ("ayer a las once menos cuarto", "es", (5, 10, 45)),
            ("ayer a las nueve y veinte", "es", (5, 9, 20)),
            ("ayer a las 3 menos 10 de la tarde", "es", (5, 14, 50)),
            ("ayer a la una y media", "es", (5, 1, 30)),
            ("ayer a las dos y media de la tarde", "es", (5, 14, 30)),
            ("ayer al mediodía y media", "es", (5, 12, 30)),
            ("ontem às onze e meia", "pt", (5, 11, 30)),
            ("ontem às 10 e quinze", "pt", (5, 10, 15)),
            ("ontem ao meio-dia e meia", "pt", (5, 12, 30)),
            ("ontem quinze para as onze", "pt", (5, 10, 45)),
            ("ontem à uma e meia da tarde", "pt", (5, 13, 30)),
            ("cheers, flow on p102 at half ten yesterday morning?", "en", (5, 10, 30)),
            ("yesterday at half past ten", "en", (5, 10, 30)),
            ("yesterday at quarter past ten", "en", (5, 10, 15)),
            ("yesterday at a quarter to eleven", "en", (5, 10, 45)),
            ("yesterday at twenty to eleven", "en", (5, 10, 40)),
            ("yesterday at ten thirty", "en", (5, 10, 30)),
            ("yesterday at one pm", "en", (5, 13, 0)),
        ],
    )
    def test_instants(self, text: str, lang: str, expected: Clock) -> None:
        """The instant named, and the hour from it as the window."""
        instant = at(*expected)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == instant.astimezone(UTC)
        assert window_of(text, lang) == Window(start=instant, end=instant + timedelta(hours=1))

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("ayer de 10 y media a 11 y cuarto", "es", (5, 10, 30), (5, 11, 15)),
            ("ayer entre las 10 y media y las 11", "es", (5, 10, 30), (5, 11, 0)),
            ("between half past ten and eleven yesterday", "en", (5, 10, 30), (5, 11, 0)),
            ("ontem das dez e meia às onze e um quarto", "pt", (5, 10, 30), (5, 11, 15)),
            # the first end of "entre las 10 y 11" is an hour, not 10:11
            ("ayer entre las 10 y 11", "es", (5, 10, 0), (5, 11, 0)),
            ("ayer entre la una y las dos", "es", (5, 1, 0), (5, 2, 0)),
        ],
    )
    def test_ranges(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """Minutes in words at either end of a range."""
        assert_window(text, lang, start, end)

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("las dos bombas ayer", "es"),  # both pumps
            ("compare a uma e a outra ontem", "pt"),  # the one and the other
            ("in a shift yesterday", "en"),
        ],
    )
    def test_article_words_stay_words(self, text: str, lang: str) -> None:
        """ "dos", "uma" and "a" read as hours only where a clock goes on: these name the day and no instant."""
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None
        assert_window(text, lang, (5, 0, 0), (6, 0, 0))

    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("ayer por la tarde a las 3", "es", (5, 15, 0)),
            ("yesterday evening at 7", "en", (5, 19, 0)),
            ("good afternoon, flow at 10 yesterday?", "en", (5, 10, 0)),  # a greeting names no part of the day
            ("boa tarde, vazão ontem às 10", "pt", (5, 10, 0)),
        ],
    )
    def test_a_bare_hour_in_the_afternoon(self, text: str, lang: str, expected: Clock) -> None:
        """The afternoon or evening named elsewhere makes a bare hour pm."""
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == at(*expected).astimezone(UTC)


class TestBeforeAndAfter:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("whats the avg vib of the compressor yesterday b4 noon", "en", (5, 0, 0), (5, 12, 0)),
            ("yesterday before 10am", "en", (5, 0, 0), (5, 10, 0)),
            ("vibración de ayer antes del mediodía", "es", (5, 0, 0), (5, 12, 0)),
            ("ayer hasta las 10", "es", (5, 0, 0), (5, 10, 0)),
            ("ontem antes do meio-dia", "pt", (5, 0, 0), (5, 12, 0)),
            # a part of the day named bounds the window instead of the day
            ("quantos alarmes a p102 deu ontem de manha antes do meio dia", "pt", (5, 6, 0), (5, 12, 0)),
            ("yesterday in the morning before noon", "en", (5, 6, 0), (5, 12, 0)),
            ("ayer por la tarde después del mediodía", "es", (5, 12, 0), (5, 18, 0)),
            ("yesterday after noon", "en", (5, 12, 0), (6, 0, 0)),
            ("ayer después de las 3 de la tarde", "es", (5, 15, 0), (6, 0, 0)),
            ("ontem depois das 14h", "pt", (5, 14, 0), (6, 0, 0)),
            # no day named: the latest begun ("after 3pm" at 03:04 is yesterday's; "before noon", today's so far)
            ("after 3pm", "en", (5, 15, 0), (6, 0, 0)),
        ],
    )
    def test_bounded(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """From the day's (or the part's) start to the time, or from it to the end."""
        assert_window(text, lang, start, end)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None

    def test_before_noon_today_so_far(self) -> None:
        assert window_of("antes del mediodía", "es") == Window(start=at(6, 0, 0), end=NOW)


class TestShifts:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            # a capital A mid-sentence is the shift; folding alone would make it the article
            ("sir how many quality checks failed in line L1 in A shift yesterday", "en", (5, 6, 0), (5, 14, 0)),
            ("P-102 max bearing temperature yesterday A shift please revert", "en", (5, 6, 0), (5, 14, 0)),
            ("lol anyway how many minutes was c two oh one down during b shift yest", "en", (5, 14, 0), (5, 22, 0)),
            ("stops in C shift the day before yesterday", "en", (4, 22, 0), (5, 6, 0)),
            # the shift before the one under way (C since 22:00): yesterday's B
            ("how many quality checks on L1 in the shift before this one", "en", (5, 14, 0), (5, 22, 0)),
            ("the one before this shift", "en", (5, 14, 0), (5, 22, 0)),
            ("paros en el turno antes de este", "es", (5, 14, 0), (5, 22, 0)),
            ("paradas no turno antes deste", "pt", (5, 14, 0), (5, 22, 0)),
            ("el turno anterior al actual", "es", (5, 14, 0), (5, 22, 0)),
        ],
    )
    def test_shifts(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        assert_window(text, lang, start, end)

    def test_a_sentence_opening_with_a_shift_is_the_article(self) -> None:
        """ "A shift ..." opening the question may be the article: the day, no shift."""
        assert_window("A shift supervisor asked: how many stops yesterday?", "en", (5, 0, 0), (6, 0, 0))

    def test_an_unknown_letter_asks_back(self) -> None:
        got = window_of("stops in d shift yesterday", "en")
        assert got == Clarification(reason="unknown_shift", candidates=["A", "B", "C"])


class TestDayNumbers:
    @pytest.mark.parametrize(
        ("text", "lang", "day"),
        [
            ("dime cuántas paradas tuvo el compresor C-201 el 5.", "es", 5),
            ("paradas del C-201 el día 4", "es", 4),
            ("Kindly tell me how many stops P-101 had on the 5th.", "en", 5),
            ("quantas paragens teve a bomba P-102 no dia 5?", "pt", 5),
        ],
    )
    def test_a_day_by_its_number(self, text: str, lang: str, day: int) -> None:
        """The latest day of that number up to today, whole."""
        assert window_of(text, lang) == Window(start=at(day), end=at(day) + timedelta(days=1))

    @pytest.mark.parametrize("text", ["the 5 stops of P-101", "el 5 % de desecho", "el 5:30"])
    def test_a_number_that_is_no_day(self, text: str) -> None:
        assert window_of(text, "es") == window_of("", "es")

    def test_quarter_to_one_in_the_afternoon(self) -> None:
        """ "quarter to one" is 00:45 as a bare hour is before noon; with the afternoon named, 12:45."""
        afternoon = find_instant("level at quarter to one yesterday afternoon", "en", tz=MEXICO, now=NOW)
        assert afternoon == at(5, 12, 45).astimezone(UTC)
        night = find_instant("level at quarter to one yesterday", "en", tz=MEXICO, now=NOW)
        assert night == at(5, 0, 45).astimezone(UTC)


class TestBlindSets13To15:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("quality checks on L1 since 6 yesterday evening", "en", (5, 18, 0), (6, 3, 4)),
            ("L1's total production on yesterday's back shift", "en", (5, 14, 0), (5, 22, 0)),
            ("alarms in the back half of yesterday's B shift", "en", (5, 18, 0), (5, 22, 0)),
            ("paradas en la primera mitad del turno A de ayer", "es", (5, 6, 0), (5, 10, 0)),
            ("¿Cuántos m3 produjo la línea L1 en la guardia anterior?", "es", (5, 14, 0), (5, 22, 0)),
            ("alarms on T-301 kahapon", "en", (5, 0, 0), (6, 0, 0)),
            ("quantas paragens houve na linha desde a meia-noite", "pt", (6, 0, 0), (6, 3, 4)),
        ],
    )
    def test_windows(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        assert_window(text, lang, start, end)

    def test_last_month_by_name_is_the_latest_ended(self) -> None:
        """ "last March" in December: March of this year; "last December" in December: last year's."""
        assert window_of("P-101's flow last March", "en") == Window(start=at(1, month=3), end=at(1, month=4))
        got = window_of("stops in last December", "en")
        assert got == Window(start=at(1) - timedelta(days=365), end=at(1, month=1))

    def test_last_year_is_the_calendar_year_before(self) -> None:
        got = window_of("scrap de la L1 el año pasado", "es")
        assert got == Window(start=at(1, month=1) - timedelta(days=365), end=at(1, month=1))


class TestBlindSets74To81:
    """Dictated hours: an hour word that is an article elsewhere ("dos", "una"), "a m"/"p m" apart, noon as "las 12
    del día", and a clock "de esta mañana"."""

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("alarmas en toda la planta ayer de las 12 del día a las 6 de la tarde", "es", (5, 12, 0), (5, 18, 0)),
            ("en el turno de ayer de seis de la mañana a dos de la tarde", "es", (5, 6, 0), (5, 14, 0)),
            ("ayer en el turno de dos de la tarde a diez de la noche", "es", (5, 14, 0), (5, 22, 0)),
            ("ayer de una de la tarde a tres de la tarde", "es", (5, 13, 0), (5, 15, 0)),
            ("line one yesterday on the six a m to two p m shift", "en", (5, 6, 0), (5, 14, 0)),
            ("alarms on the compressor since six p m yesterday", "en", (5, 18, 0), (6, 7, 0)),
            ("desde las ocho de la noche de ayer hasta las seis de esta mañana", "es", (5, 20, 0), (6, 6, 0)),
            ("desde as oito da noite de ontem até às 6 desta manhã", "pt", (5, 20, 0), (6, 6, 0)),
        ],
    )
    def test_windows(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        assert_window(text, lang, start, end, now=MORNING)

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("o nível do tanque ontem às cinco pras seis da tarde", "pt", (5, 17, 55), (5, 18, 55)),
            ("das 4 pras 6 ontem", "pt", (5, 4, 0), (5, 6, 0)),
            ("the level of the tank yesterday at the 3 of the afternoon", "en", (5, 15, 0), (5, 16, 0)),
            ("vibration yesterday from the 7 to the 8 of the morning", "en", (5, 7, 0), (5, 8, 0)),
            ("nivel del tanke 301 ayer alas 10 d la mañana", "es", (5, 10, 0), (5, 11, 0)),
            ("cuantas alarmas lleva oy", "es", (6, 0, 0), (6, 7, 0)),
            ("yesterday in the shift of the morning", "en", (5, 6, 0), (5, 14, 0)),
            ("What was the scrap on L1 over last night's shift?", "en", (5, 22, 0), (6, 6, 0)),
            ("quantas checagem de qualidade reprovou L1 turno B onti", "pt", (5, 14, 0), (5, 22, 0)),
        ],
    )
    def test_windows_of_round_17(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """ "pras" (para as), an hour with an article ("at the 3 of the afternoon"), chat's "alas", "d la", "oy", and a
        shift after its part of the day."""
        assert_window(text, lang, start, end, now=MORNING)

    def test_an_instant_said_p_m_apart(self) -> None:
        assert instant_of("the flow on pump pee one oh two at three p m yesterday", "en") == at(5, 15, 0)

    def test_the_12_of_a_date_is_no_noon(self) -> None:
        """ "a las 12 del día 5": noon on the 5th, the day said after it."""
        assert_window("a las 12 del día 5", "es", (5, 12, 0), (5, 13, 0), now=MORNING)


class TestBlindSets90To97:
    def test_an_hour_with_its_h_before_the_part_of_the_day(self) -> None:
        """ "às 6h da manhã de hoje": the "h" does not cut the hour off the part of the day and the day after it."""
        assert_window("entre as 20h de ontem e as 6h da manhã de hoje", "pt", (5, 20, 0), (6, 6, 0), now=MORNING)
        assert_window("das 20h de ontem às 6h da manhã de hoje", "pt", (5, 20, 0), (6, 6, 0), now=MORNING)
        assert_window("ontem das 8h da manhã às 10h", "pt", (5, 8, 0), (5, 10, 0), now=MORNING)

    @pytest.mark.parametrize(
        "text",
        [
            "en el turno de 10 a 6, el que entró ayer a las 10 de la noche",
            "en el turno de 10 a 6 de ayer",
            "the 10 to 6 shift yesterday",
        ],
    )
    def test_a_shift_said_by_its_hours_on_a_12_hour_clock(self, text: str) -> None:
        """ "el turno de 10 a 6" is the site's 22:00-06:00 shift, not 10:00-18:00 (a bare range stays a day's)."""
        assert_window(text, "es", (5, 22, 0), (6, 6, 0), now=MORNING)
        assert_window("ayer de 10 a 6", "es", (5, 10, 0), (5, 18, 0), now=MORNING)


class TestBlindSets98To105:
    def test_the_night_shift_said_by_its_hours_and_days(self) -> None:
        """ "el turno de noche, de las 10 de ayer a las 6 de hoy": 22:00, the site's night shift."""
        text = "el caudal de la P-102 en el turno de noche, de las 10 de ayer a las 6 de hoy"
        assert_window(text, "es", (5, 22, 0), (6, 6, 0), now=MORNING)

    def test_a_weekday_before_its_day_of_the_month(self) -> None:
        """ "la noche del viernes 4 al sábado 5": the night of the 4th; "desde el sábado 5 a las 6 de la tarde": since
        then."""
        assert_window(
            "en la noche del viernes 4 al sábado 5, de 22:00 a 06:00", "es", (4, 22, 0), (5, 6, 0), now=MORNING
        )
        assert window_of("desde el sábado 5 a las 6 de la tarde", "es", MORNING) == Window(start=at(5, 18), end=MORNING)

    def test_a_month_after_a_number_and_a_day_as_an_ordinal(self) -> None:
        """ "la línea 1 en noviembre": the number is the line's, not a day of November; "dia 1º de dezembro"."""
        november = Window(start=at(1, month=11), end=at(1))
        assert window_of("la producción de la línea 1 en noviembre", "es", MORNING) == november
        assert window_of("a produção de todo noviembre", "es", MORNING) == november
        assert_window("quantas paradas teve no dia 1º de dezembro", "pt", (1, 0, 0), (2, 0, 0), now=MORNING)

    def test_the_end_of_todays_night_shift_before_it_begins_is_this_mornings(self) -> None:
        assert instant_of("o nível do tanque hoje às 6h00, no fecho do turno da noite", "pt") == at(6, 6, 0)


class TestBlindSets106To113:
    def test_an_hour_and_its_minutes_joined_by_a_hyphen(self) -> None:
        assert instant_of("At eleven-thirty yesterday morning, how many alarms were standing?", "en") == at(5, 11, 30)


class TestBlindSets114To121:
    def test_the_lates_and_a_possessive_without_its_apostrophe(self) -> None:
        """ "yesterday's lates, 2 till 10": 14:00-22:00; "last nights C shift" is last night's."""
        assert_window("failed checks on yesterday's lates, 2 till 10", "en", (5, 14, 0), (5, 22, 0), now=MORNING)
        late = datetime(2026, 12, 6, 22, 20, tzinfo=ZoneInfo(MEXICO))
        assert window_of("max vibration during last nights C shift", "en", late) == Window(
            start=at(5, 22), end=at(6, 6)
        )


class TestLongSpans:
    @pytest.mark.parametrize(
        ("text", "lang", "start"),
        [
            ("how many stops last 3 months", "en", at(6, 3, 4, month=9)),
            ("paradas de los últimos 2 meses", "es", at(6, 3, 4, month=10)),
            ("P-101 stops in the last 40 days", "en", at(27, 3, 4, month=10)),
        ],
    )
    def test_a_long_span_is_read_whole(self, text: str, lang: str, start: datetime) -> None:
        """Read as long as it is said: the tools refuse what is over the plant's `ask.max_window_days`, rather
        than the words being read as 31 days."""
        assert window_of(text, lang) == Window(start=start, end=NOW)

    def test_q_in_chat_is_no_shift(self) -> None:
        """ "no turno q ta rolando agora": "q" is "que", the shift under way."""
        assert window_of("temp max do compressor no turno q ta rolando agora", "pt") == Window(start=at(5, 22), end=NOW)


class TestDaysBack:
    @pytest.mark.parametrize(
        ("text", "lang", "day", "month"),
        [
            ("cuantos paros tuvo la p101 hace una semana", "es", 29, 11),
            ("hace 3 días", "es", 3, 12),
            ("hace tres dias", "es", 3, 12),
            ("hace dos semanas", "es", 22, 11),
            ("hace un mes", "es", 6, 11),
            ("há três dias", "pt", 3, 12),
            ("ha tres dias", "pt", 3, 12),
            ("faz uma semana", "pt", 29, 11),
            ("Qual era o nível do T-301 há um mês?", "pt", 6, 11),
            ("a week ago", "en", 29, 11),
            ("three days ago", "en", 3, 12),
            ("2 days back", "en", 4, 12),
            ("a month ago", "en", 6, 11),
        ],
    )
    def test_the_day_that_far_back(self, text: str, lang: str, day: int, month: int) -> None:
        """The whole day, 00:00 to 00:00, that many days, weeks or months before today."""
        start = at(day, month=month)
        assert window_of(text, lang) == Window(start=start, end=at(day, month=month) + timedelta(days=1))

    def test_a_month_back_from_a_longer_month(self) -> None:
        """On 31 March, a month ago is the last day of February."""
        now = datetime(2026, 3, 31, 12, 0, tzinfo=ZoneInfo(MEXICO))
        got = window_of("hace un mes", "es", now)
        assert got == Window(start=at(28, month=2), end=at(1, month=3))

    def test_days_back_with_a_shift(self) -> None:
        """ "turno A hace 3 días": that day's shift A."""
        assert_window("turno A hace 3 días", "es", (3, 6, 0), (3, 14, 0))


# Hours and minutes as said in each language, for the property below.
_HOUR_WORDS = {
    "es": "una dos tres cuatro cinco seis siete ocho nueve diez once doce".split(),
    "pt": "uma duas três quatro cinco seis sete oito nove dez onze doze".split(),
    "en": "one two three four five six seven eight nine ten eleven twelve".split(),
}
# (how the minutes are said around the hour word {h}, minutes past the hour; negative: before it)
_SAID: dict[str, list[tuple[str, int]]] = {
    "es": [
        ("ayer {a} {h}", 0),
        ("ayer {a} {h} y media", 30),
        ("ayer {a} {h} y cuarto", 15),
        ("ayer {a} {h} menos cuarto", -15),
        ("ayer {a} {h} y veinte", 20),
        ("ayer {a} {h} y diez", 10),
        ("ayer {a} {h} y veinticinco", 25),
        ("ayer {a} {h} menos diez", -10),
        ("{a} {h} y media de ayer", 30),
    ],
    "pt": [
        ("ontem {a} {h}", 0),
        ("ontem {a} {h} e meia", 30),
        ("ontem {a} {h} e quinze", 15),
        ("ontem {a} {h} e um quarto", 15),
        ("ontem {a} {h} e vinte", 20),
        ("ontem {a} {h} e dez", 10),
        ("ontem quinze para {a} {h}", -15),
        ("ontem vinte para {a} {h}", -20),
    ],
    "en": [
        ("yesterday at {h} o'clock", 0),
        ("yesterday at half past {h}", 30),
        ("yesterday at quarter past {h}", 15),
        ("yesterday at a quarter to {h}", -15),
        ("yesterday at twenty past {h}", 20),
        ("yesterday at ten to {h}", -10),
        ("yesterday at half {h}", 30),
        ("yesterday at {h} thirty", 30),
        ("yesterday at {h} fifteen", 15),
    ],
}
_LEADS = {"es": ("a la", "a las"), "pt": ("à", "às"), "en": ("at", "at")}


class TestSaidClockProperty:
    @settings(max_examples=300)
    @given(lang=st.sampled_from(["es", "pt", "en"]), hour=st.integers(1, 12), form=st.integers(0, 8))
    def test_any_hour_and_minutes_said_is_that_clock_time(self, lang: str, hour: int, form: int) -> None:
        """Every hour word with every way of saying minutes resolves to that clock time yesterday, as an instant and
        as the hour from it."""
        said, minutes = _SAID[lang][form % len(_SAID[lang])]
        lead = _LEADS[lang][0 if hour == 1 else 1]
        if said.startswith("ontem") and "para" in said:
            lead = "a" if hour == 1 else "as"  # "quinze para a uma", "vinte para as onze"
        text = said.format(a=lead, h=_HOUR_WORDS[lang][hour - 1])
        expected = at(5, hour) + timedelta(minutes=minutes)  # "a quarter to one" is 00:45
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == expected.astimezone(UTC), text
        assert window_of(text, lang) == Window(start=expected, end=expected + timedelta(hours=1)), text

    @settings(max_examples=300)
    @given(
        words=st.lists(
            st.sampled_from(
                [
                    "antenoche",
                    "anoche",
                    "the night before last",
                    "anteontem à noite",
                    "de",
                    "a",
                    "las",
                    "às",
                    "at",
                    "entre",
                    "y",
                    "e",
                    "once",
                    "doce",
                    "una",
                    "dos",
                    "uma",
                    "one",
                    "11",
                    "12",
                    "0",
                    "99",
                    "media",
                    "meia",
                    "cuarto",
                    "quarto",
                    "menos",
                    "half",
                    "quarter",
                    "past",
                    "to",
                    "para",
                    "b4",
                    "before",
                    "after",
                    "antes del",
                    "depois do",
                    "noon",
                    "meio-dia",
                    "in A shift",
                    "a shift",
                    "b shift",
                    "before this one",
                    "hace",
                    "há",
                    "semana",
                    "mês",
                    "days",
                    "ago",
                    "back",
                    "del 4",
                    "on the 31st",
                    "de ayer",
                    "de la noche",
                    "de la tarde",
                    "pm",
                    "?",
                    "0800",
                    "2100",
                    "1500 m3",
                    "10h",
                    "14h30",
                    "8am",
                    "ayr",
                    "otem",
                    "yday",
                    "tae",
                    "the week before last",
                    "the other night",
                    "up to",
                    "night shift that started",
                    "turno que terminó",
                    "en lo q va del turno",
                    "en 2019",
                ]
            ),
            max_size=14,
        ).map(" ".join),
        minutes=st.integers(0, 366 * 24 * 60),
    )
    def test_any_mix_of_the_new_words_resolves(self, words: str, minutes: int) -> None:
        """Any mix of these words gives, the same way twice, a window ending by `now` or a clarification, and an
        instant no later than `now`; never an exception."""
        now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)
        got = resolve_window(words, "es", tz=MEXICO, shifts=SHIFTS, now=now)
        assert got == resolve_window(words, "es", tz=MEXICO, shifts=SHIFTS, now=now)
        if isinstance(got, Window):
            assert got.start < got.end <= now
        else:
            assert isinstance(got, Clarification)
        assert find_window(words, "es", tz=MEXICO, shifts=SHIFTS, now=now) in (None, got)
        instant = find_instant(words, "es", tz=MEXICO, now=now)
        assert instant is None or isinstance(instant, Clarification) or instant <= now


class TestBareClockTimes:
    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("caudal p102 ayer 0800 m3/h", "es", (5, 8, 0)),  # a leading zero is never a quantity: m3/h is the unit
            ("cuantas alarmas activas habia ayer 1130", "es", (5, 11, 30)),
            ("nivel t301 anteayer 2100 cuanto marcaba", "es", (4, 21, 0)),
            ("caudal de la p102 ayer 08:00", "es", (5, 8, 0)),
            ("alarms active on p102 yday 1130", "en", (5, 11, 30)),
            ("alarms active on p102 1130 yesterday", "en", (5, 11, 30)),
            ("flow p102 yesterday 8am", "en", (5, 8, 0)),
            ("How many alarms were active on C-201 at exactly 2:30 PM yesterday?", "en", (5, 14, 30)),
            ("kuze temp mancal p102 ontem 1600", "pt", (5, 16, 0)),
            ("vazao c201 ontem 10h m3/h", "pt", (5, 10, 0)),
            ("quantos alarmes ativos ontem 14h30", "pt", (5, 14, 30)),
            ("temp c201 anteontem 10h da manha", "pt", (4, 10, 0)),
        ],
    )
    def test_a_bare_clock_next_to_a_day_is_that_instant(self, text: str, lang: str, expected: Clock) -> None:
        """A clock time said with no "at"/"a las"/"às" next to a day word: the instant, and the hour from it."""
        instant = at(*expected)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == instant.astimezone(UTC)
        assert window_of(text, lang) == Window(start=instant, end=instant + timedelta(hours=1))

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("produccion de la L1 ayer 1500 m3", "es"),
            ("ayer 1500 unidades en la L1", "es"),
            ("did the flow go over 1500 yesterday", "en"),
            ("quantas paradas de mais de 2h ontem", "pt"),
        ],
    )
    def test_a_quantity_next_to_a_day_is_no_instant(self, text: str, lang: str) -> None:
        """Four digits with a unit after them, or after a word that takes a quantity, are a quantity: the whole day."""
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None
        assert_window(text, lang, (5, 0, 0), (6, 0, 0))

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("vazao ontem das 10h às 12h", "pt", (5, 10, 0), (5, 12, 0)),
            ("vazao ontem 14-16h", "pt", (5, 14, 0), (5, 16, 0)),
            ("vazao ontem 10h-12h", "pt", (5, 10, 0), (5, 12, 0)),
            ("caudal ayer 0800-1200", "es", (5, 8, 0), (5, 12, 0)),
            ("alarms between 8pm and 6am yesterday", "en", (5, 20, 0), (6, 3, 4)),
            ("how many alarms overnight, 8pm yesterday to 6am today", "en", (5, 20, 0), (6, 3, 4)),
        ],
    )
    def test_a_bare_clock_in_a_range_stays_a_range(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        assert_window(text, lang, start, end)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None

    @settings(max_examples=300)
    @given(
        day=st.sampled_from(
            [
                ("ayer", 5),
                ("ontem", 5),
                ("yesterday", 5),
                ("yday", 5),
                ("anteayer", 4),
                ("antier", 4),
                ("anteontem", 4),
                ("day before yesterday", 4),
            ]
        ),
        hour=st.integers(0, 23),
        minute=st.integers(0, 59),
        after=st.booleans(),
    )
    def test_any_hhmm_next_to_a_day_is_that_instant(
        self, day: tuple[str, int], hour: int, minute: int, after: bool
    ) -> None:
        """Every valid HHMM said bare next to a day word, before or after it, is that instant of that day."""
        word, on = day
        said = f"{hour:02d}{minute:02d} {word}" if after else f"{word} {hour:02d}{minute:02d}"
        got = find_instant(f"caudal p102 {said}", "es", tz=MEXICO, now=NOW)
        assert got == at(on, hour, minute).astimezone(UTC), said

    @settings(max_examples=300)
    @given(
        lead=st.sampled_from(["", "ayer ", "yesterday ", "ontem "]),
        prep=st.sampled_from(["en", "in", "em", "in March", "en marzo de", "em janeiro de"]),
        year=st.integers(1970, 2026),
    )
    def test_a_year_is_never_an_instant(self, lead: str, prep: str, year: int) -> None:
        """A four-digit year after "en/in/em" (or a month) is no clock time, whatever day word is near."""
        assert find_instant(f"paradas de la P-101 {lead}{prep} {year}", "es", tz=MEXICO, now=NOW) is None


class TestDayWordSlips:
    @pytest.mark.parametrize(
        ("text", "lang", "day"),
        [
            ("vib max p101 ayr mm/s", "es", 5),
            ("paradas de la P-101 anteayr", "es", 4),
            ("temp media mancal p101 otem", "pt", 5),
            ("vazao c201 onten", "pt", 5),
            ("paradas anteontm", "pt", 4),
            ("flow on P-101 yesturday", "en", 5),
            ("stops on P-101 yesterady", "en", 5),
        ],
    )
    def test_a_one_letter_slip_is_the_day(self, text: str, lang: str, day: int) -> None:
        assert window_of(text, lang) == Window(start=at(day), end=at(day) + timedelta(days=1))

    def test_a_slip_with_a_shift(self) -> None:
        assert_window("temp media mancal p101 otem turno A", "pt", (5, 6, 0), (5, 14, 0))

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("Aye, how many times did p102 stop?", "en"),  # Scots "yes"
            ("layer thickness in tank T-301", "en"),
            ("aver cuanto marca la p101", "es"),  # chat's "a ver"
        ],
    )
    def test_words_one_letter_off_are_no_day(self, text: str, lang: str) -> None:
        assert find_window(text, lang, tz=MEXICO, shifts=SHIFTS, now=NOW) is None

    @pytest.mark.parametrize(
        ("text", "start", "end"),
        [
            ("p102 vib avg day before yday 20-23h", (4, 20, 0), (4, 23, 0)),
            ("stops on P-101 the day before yest", (4, 0, 0), (5, 0, 0)),
        ],
    )
    def test_the_day_before_yday(self, text: str, start: Clock, end: Clock) -> None:
        """Chat's "yday"/"yest" after "the day before" is the day before yesterday."""
        assert_window(text, "en", start, end)


class TestRangesAfterNoon:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            (
                "lowest bearing temp on that C-201 compressor yesterday between noon and one",
                "en",
                (5, 12, 0),
                (5, 13, 0),
            ),
            ("temperatura mínima del C-201 ayer entre el mediodía y la una", "es", (5, 12, 0), (5, 13, 0)),
            ("temperatura mínima do C-201 ontem entre o meio-dia e a uma", "pt", (5, 12, 0), (5, 13, 0)),
            ("yesterday between noon and two", "en", (5, 12, 0), (5, 14, 0)),
            ("yesterday from 2pm to 5", "en", (5, 14, 0), (5, 17, 0)),
            ("Mano, quanto a linha L1 produziu ontem entre o meio-dia e as 18h?", "pt", (5, 12, 0), (5, 18, 0)),
            ("quanto refugo teve a linha um ontem entre as seis e o meio-dia", "pt", (5, 6, 0), (5, 12, 0)),
            ("ayer de 22 a 6", "es", (5, 22, 0), (6, 3, 4)),  # begun before noon's hour: across midnight still
        ],
    )
    def test_a_bare_end_after_noon(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """A bare hour ending a range begun at noon or in the afternoon is in the afternoon too."""
        assert_window(text, lang, start, end)

    def test_one_as_a_count_is_no_hour(self) -> None:
        """ "de 3 a una alarma": a count, not 03:00 to 01:00."""
        assert_window("pasó de 3 a una alarma ayer", "es", (5, 0, 0), (6, 0, 0))


class TestScots:
    def test_quarter_tae_ten(self) -> None:
        """Scots "tae" is "to": "quarter tae ten" is 09:45, not the whole morning."""
        text = "Whit wis the bearing temperature on P-101 at quarter tae ten yesterday morning?"
        assert find_instant(text, "en", tz=MEXICO, now=NOW) == at(5, 9, 45).astimezone(UTC)

    def test_midnight_tae_midnight(self) -> None:
        text = "Aye, how many times was the compressor C-201 doon yesterday? Whole day, midnight tae midnight."
        assert_window(text, "en", (5, 0, 0), (6, 0, 0))


class TestBeforeLast:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("How many stops did C-201 have the week before last?", "en"),
            ("¿Cuántas paradas tuvo el C-201 la semana antepasada?", "es"),
            ("Quantas paradas teve o C-201 na semana retrasada?", "pt"),
            ("Quantas paradas teve o C-201 na semana antepassada?", "pt"),
        ],
    )
    def test_the_week_before_last(self, text: str, lang: str) -> None:
        """The calendar week two back: Monday 16 to Monday 23 November (this week began Monday 30 November)."""
        assert window_of(text, lang) == Window(start=at(16, month=11), end=at(23, month=11))

    @pytest.mark.parametrize(("text", "lang"), [("the month before last", "en"), ("el mes antepasado", "es")])
    def test_the_month_before_last(self, text: str, lang: str) -> None:
        assert window_of(text, lang) == Window(start=at(1, month=10), end=at(1, month=11))


class TestAnEndAnchorsAVagueStart:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("What is the longest stoppage of line L1 from 8PM the other night up to 6AM yesterday?", "en"),
            ("parada más larga de la L1 desde las 8 de la noche la otra noche hasta las 6 de la mañana de ayer", "es"),
            ("maior parada da L1 das 20h da outra noite até as 6h de ontem", "pt"),
        ],
    )
    def test_the_other_night_up_to_yesterday_morning(self, text: str, lang: str) -> None:
        """ "the other night" is the night that ends at the end said: 20:00 on the 4th to 06:00 on the 5th."""
        assert_window(text, lang, (4, 20, 0), (5, 6, 0))


class TestAShiftBySaidStart:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            (
                "How many alarms came in on the night shift that started at 10 pm the day before yesterday and ended "
                "at 6 am yesterday?",
                "en",
            ),
            (
                "Del turno de noche que terminó ayer a las 6 de la mañana (el que entró antes de ayer a las 10 de la "
                "noche), ¿cuántas alarmas hubo?",
                "es",
            ),
            (
                "¿Cuántas alarmas dio la P-102 en el turno C que arrancó antier a las 10 de la noche y terminó ayer?",
                "es",
            ),
            ("alarmes no turno da noite que começou anteontem às 22h e terminou ontem às 6h", "pt"),
            ("Total downtime on P-101 for the graveyard shift that ended at 6 am yesterday?", "en"),
        ],
    )
    def test_the_day_said_with_its_start_or_end(self, text: str, lang: str) -> None:
        """Shift C from 22:00 on the 4th to 06:00 on the 5th; its start and end times are no instant asked about."""
        assert_window(text, lang, (4, 22, 0), (5, 6, 0))
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None

    def test_another_start_is_still_an_instant(self) -> None:
        """ "when the pump started at 10:20" names an instant in the shift."""
        text = "vibration of P-101 in shift A yesterday when the pump started at 10:20"
        assert find_instant(text, "en", tz=MEXICO, now=NOW) == at(5, 10, 20).astimezone(UTC)


class TestSoFar:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("cuantas alarmas en lo q va del turno", "es"),
            ("flujo prom c201 en lo que va del turno", "es"),
            ("klk, cuantas paradas lleva la linea L1 en lo que va de turno?", "es"),
            ("vazão da C-201 no que vai do turno", "pt"),
            ("paradas da L1 no turno até agora", "pt"),
            ("stops on L1 so far in the shift", "en"),
        ],
    )
    def test_the_shift_so_far(self, text: str, lang: str) -> None:
        """Shift C, under way since 22:00, so far."""
        assert find_window(text, lang, tz=MEXICO, shifts=SHIFTS, now=NOW) == Window(start=at(5, 22), end=NOW)

    @pytest.mark.parametrize(
        ("text", "start"),
        [
            ("caudal en lo q va del dia", at(6)),
            ("paradas en lo que va de la semana", at(30, month=11)),
            ("paradas en lo q va del mes", at(1)),
        ],
    )
    def test_the_day_week_month_so_far(self, text: str, start: datetime) -> None:
        assert window_of(text, "es") == Window(start=start, end=NOW)


# The held-out questions' "now": 07:00 on Sunday 6 December, shift A under way since 06:00.
MORNING = datetime(2026, 12, 6, 7, 0, tzinfo=ZoneInfo(MEXICO))


def found(text: str, lang: str, now: datetime = MORNING) -> Window | Clarification | None:
    return find_window(text, lang, tz=MEXICO, shifts=SHIFTS, now=now)


def instant_of(text: str, lang: str, now: datetime = MORNING) -> datetime | Clarification | None:
    return find_instant(text, lang, tz=MEXICO, now=now)


class TestAShiftStartedInANight:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("total downtime minutes for sea two oh one on the c shift the one that started last night at ten", "en"),
            ("total downtime on P-101 for the C shift, the one that began yesterday at 10 pm", "en"),
            ("¿cuántos minutos de paro tuvo la P-101 en el turno C, el que empezó anoche a las diez?", "es"),
            ("quantos minutos de parada teve a P-101 no turno C, o que começou ontem às dez da noite?", "pt"),
            ("paros de la P-101 en el turno C de anoche", "es"),
            ("stops on P-101 in last night's C shift", "en"),
            ("stops on the night shift last night", "en"),
            ("the C shift that ended this morning, the one that started last night", "en"),
        ],
    )
    def test_the_shift_that_began_in_the_night(self, text: str, lang: str) -> None:
        """Shift C from 22:00 on the 5th to 06:00 on the 6th, whole: the night said with its start (or named with it)
        places the shift, and its start time is no instant or hour asked about."""
        assert found(text, lang) == Window(start=at(5, 22), end=at(6, 6))
        assert instant_of(text, lang) is None

    def test_a_shift_that_ended_in_the_night(self) -> None:
        """ "the B shift that ended last night": 14:00 to 22:00 on the 5th."""
        assert found("stops in the B shift that ended last night", "en") == Window(start=at(5, 14), end=at(5, 22))

    def test_the_shift_alone_in_a_night_is_the_night(self) -> None:
        """ "anoche en el turno" names no shift: the night, 20:00 to 06:00."""
        assert found("paros anoche en el turno", "es") == Window(start=at(5, 20), end=at(6, 6))

    @settings(max_examples=200)
    @given(
        minutes=st.integers(0, 17 * 60 - 1),
        said=st.sampled_from(
            [
                ("the C shift, the one that started last night at ten", "en"),
                ("el turno C, el que empezó anoche a las diez", "es"),
                ("o turno C, o que começou ontem à noite às dez", "pt"),
                ("el turno C de anoche", "es"),
            ]
        ),
    )
    def test_last_nights_shift_whenever_asked(self, minutes: int, said: tuple[str, str]) -> None:
        """Asked any time from 06:00 to midnight on the 6th, it is the shift C that began at 22:00 on the 5th, not the
        latest begun (at 23:00 that is the 6th's)."""
        now = at(6, 6) + timedelta(minutes=minutes)
        assert found(*said, now=now) == Window(start=at(5, 22), end=at(6, 6))


class TestHoursSaidAtNight:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("what was the average tank level yesterday between ten and eleven at night", "en"),
            ("nivel medio del tanque ayer entre las diez y las once de la noche", "es"),
            ("nível médio do tanque ontem entre as dez e as onze da noite", "pt"),
            ("between ten and eleven at night", "en"),  # no day: the latest begun, yesterday's at 07:00
            ("ayer de 10 a 11 en la noche", "es"),
            ("ontem das 10 às 11 à noite", "pt"),
        ],
    )
    def test_a_range_at_night(self, text: str, lang: str) -> None:
        assert found(text, lang) == Window(start=at(5, 22), end=at(5, 23))

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("ontem à noite das oito às seis da manhã", "pt"),
            ("anoche de las ocho a las seis de la mañana", "es"),
            ("last night from eight to six in the morning", "en"),
        ],
    )
    def test_a_night_with_its_hours(self, text: str, lang: str) -> None:
        """20:00 on the 5th to 06:00 on the 6th."""
        assert found(text, lang) == Window(start=at(5, 20), end=at(6, 6))

    @settings(max_examples=100)
    @given(
        hour=st.integers(1, 12),
        said=st.sampled_from(
            [
                "yesterday at {h} at night",
                "ayer a las {h} de la noche",
                "ontem às {h} da noite",
                "ayer a las {h} en la noche",
            ]
        ),
    )
    def test_any_hour_at_night(self, hour: int, said: str) -> None:
        """The night's hours: 6 to 11 the evening, 12 midnight, 1 to 5 the small hours, of the day named."""
        clock = 0 if hour == 12 else hour + 12 if hour >= 6 else hour
        assert instant_of(said.format(h=hour), "es") == at(5, clock).astimezone(UTC)


class TestOneThirtyInTheAfternoon:
    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("Quantos alarmes estavam ativos na P-101 ontem à 1 e meia da tarde?", "pt", (5, 13, 30)),
            ("ontem à uma e meia da tarde", "pt", (5, 13, 30)),
            ("ayer a la una y media de la tarde", "es", (5, 13, 30)),
            ("yesterday at half one in the afternoon", "en", (5, 13, 30)),
            ("ontem à 1h30", "pt", (5, 1, 30)),
            ("ontem às 3 à tarde", "pt", (5, 15, 0)),
            ("ayer a las 3 en la tarde", "es", (5, 15, 0)),
            ("Ano po yung level ng T-301 kahapon ng 3:15 PM?", "en", (5, 15, 15)),
        ],
    )
    def test_instants(self, text: str, lang: str, expected: Clock) -> None:
        assert instant_of(text, lang) == at(*expected).astimezone(UTC)

    def test_between_one_and_two_in_the_afternoon(self) -> None:
        text = "please how many times did tea three oh one alarm yesterday between one and two in the afternoon"
        assert found(text, "en") == Window(start=at(5, 13), end=at(5, 14))

    def test_a_to_a_number_is_no_clock(self) -> None:
        """ "bajó a 12": a value, not 12:00."""
        assert instant_of("el nivel bajó a 12 ayer", "es") is None
        assert found("el nivel bajó a 12 ayer", "es") == Window(start=at(5), end=at(6))

    @settings(max_examples=100)
    @given(hour=st.integers(1, 11), lang=st.sampled_from(["es", "pt", "en"]))
    def test_any_half_hour_in_the_afternoon(self, hour: int, lang: str) -> None:
        said = {
            "es": f"ayer a la{'' if hour == 1 else 's'} {hour} y media de la tarde",
            "pt": f"ontem à{'' if hour == 1 else 's'} {hour} e meia da tarde",
            "en": f"yesterday at half past {hour} in the afternoon",
        }[lang]
        assert instant_of(said, lang) == at(5, hour + 12, 30).astimezone(UTC)


class TestArvo:
    def test_yesterday_arvo_between_2_and_6(self) -> None:
        text = "G'day, what was the top bearing temp on C-201 yesterday arvo, between 2 and 6?"
        assert found(text, "en") == Window(start=at(5, 14), end=at(5, 18))

    def test_yesterday_arvo(self) -> None:
        assert found("stops yesterday arvo", "en") == Window(start=at(5, 12), end=at(5, 18))

    def test_this_arvo(self) -> None:
        """This afternoon: still to come at 07:00, so far at 15:00."""
        assert found("alarms this arvo", "en") == Clarification(reason="future_window", candidates=[])
        assert found("alarms this arvo", "en", now=at(6, 15)) == Window(start=at(6, 12), end=at(6, 15))


def test_a_morning_said_de_manana_with_its_hours() -> None:
    """ "ayer de mañana, de 6 a 12" is 06:00 to 12:00 yesterday ("de mañana": in the morning)."""
    text = "¿Cuántos metros cúbicos produjo la L1 ayer de mañana, de 6 a 12?"
    assert found(text, "es") == Window(start=at(5, 6), end=at(5, 12))


def test_the_night_before_last_in_tagalog() -> None:
    text = "Ilang alarms lahat-lahat sa buong plant nung gabi bago kagabi, 8pm hanggang 6am?"
    assert found(text, "en") == Window(start=at(4, 20), end=at(5, 6))


def day_of(year: int, month: int, day: int) -> Window:
    start = datetime(year, month, day, tzinfo=ZoneInfo(MEXICO))
    return Window(start=start, end=start + timedelta(days=1))


def months_of(year: int, month: int, months: int = 1) -> Window:
    after = year * 12 + month - 1 + months
    return Window(
        start=datetime(year, month, 1, tzinfo=ZoneInfo(MEXICO)),
        end=datetime(after // 12, after % 12 + 1, 1, tzinfo=ZoneInfo(MEXICO)),
    )


class TestDatesOutsideTheData:
    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("How much did L1 produce last Christmas Eve?", "en", day_of(2025, 12, 24)),
            ("¿cuánto produjo la L1 la Nochebuena pasada?", "es", day_of(2025, 12, 24)),
            ("quanto a L1 produziu na véspera de Natal passada?", "pt", day_of(2025, 12, 24)),
            ("stops last Christmas", "en", day_of(2025, 12, 25)),
            ("paradas no Natal do ano passado", "pt", day_of(2025, 12, 25)),
            ("paros en Navidad de 2024", "es", day_of(2024, 12, 25)),
            ("stops on Christmas 2024", "en", day_of(2024, 12, 25)),
            ("alarmas en Nochevieja", "es", day_of(2025, 12, 31)),
            ("alarms on New Year's Day", "en", day_of(2026, 1, 1)),
            (
                "turno C de Nochebuena",
                "es",
                Window(
                    start=day_of(2025, 12, 24).start + timedelta(hours=22),
                    end=day_of(2025, 12, 25).start + timedelta(hours=6),
                ),
            ),
            ("How many stops last quarter?", "en", months_of(2026, 7, 3)),
            ("¿cuántos paros el trimestre pasado?", "es", months_of(2026, 7, 3)),
            ("quantas paradas o trimestre passado?", "pt", months_of(2026, 7, 3)),
            ("stops the quarter before last", "en", months_of(2026, 4, 3)),
            ("paros en el cuarto trimestre del año pasado", "es", months_of(2025, 10, 3)),
            ("stops in Q1 2025", "en", months_of(2025, 1, 3)),
            ("paradas no primeiro trimestre", "pt", months_of(2026, 1, 3)),
            ("Quantos alarmes tocaram no ano passado, em dezembro?", "pt", months_of(2025, 12)),
            ("alarms last year in December", "en", months_of(2025, 12)),
            ("alarms in December of last year", "en", months_of(2025, 12)),
            ("alarms December last year", "en", months_of(2025, 12)),
            ("alarmas en diciembre del año pasado", "es", months_of(2025, 12)),
            ("alarmas el pasado diciembre", "es", months_of(2025, 12)),
            ("alarmes em dezembro passado", "pt", months_of(2025, 12)),
            ("alarmas en marzo pasado", "es", months_of(2026, 3)),
            ("paros el 3 de marzo del año pasado", "es", day_of(2025, 3, 3)),
            ("stops on March 3rd of last year", "en", day_of(2025, 3, 3)),
        ],
    )
    def test_a_window_of_its_own(self, text: str, lang: str, expected: Window) -> None:
        """A window of its own, never the current shift: the tools refuse it where nothing is stored."""
        assert found(text, lang) == expected

    @pytest.mark.parametrize(
        ("text", "lang", "start"),
        [
            ("stops this quarter", "en", at(1, month=10)),
            ("paros este año", "es", at(1, month=1)),
            ("stops this year", "en", at(1, month=1)),
        ],
    )
    def test_so_far(self, text: str, lang: str, start: datetime) -> None:
        assert found(text, lang) == Window(start=start, end=MORNING)

    @pytest.mark.parametrize(
        ("text", "lang"),
        [("stops this Christmas", "en"), ("paradas no Natal de 2030", "pt"), ("the fourth quarter of 2030", "en")],
    )
    def test_still_to_come(self, text: str, lang: str) -> None:
        assert found(text, lang) == Clarification(reason="future_window", candidates=[])

    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("Merry Christmas! how many stops yesterday?", "en", Window(start=at(5), end=at(6))),
            ("feliz año nuevo, ¿paradas ayer?", "es", Window(start=at(5), end=at(6))),
            ("qual a vazão da bomba da minha cidade natal", "pt", None),
            ("in the last quarter of an hour", "en", None),
        ],
    )
    def test_no_day_of_the_calendar(self, text: str, lang: str, expected: Window | None) -> None:
        """A greeting, "natal" as "of birth", a quarter of an hour: no day of the calendar."""
        assert found(text, lang) == expected

    @settings(max_examples=200)
    @given(
        days=st.integers(0, 3 * 366),
        said=st.sampled_from(
            [
                ("last Christmas Eve", 12, 24),
                ("la Nochebuena pasada", 12, 24),
                ("na véspera de Natal passada", 12, 24),
                ("last Christmas", 12, 25),
                ("la Navidad pasada", 12, 25),
                ("o Natal passado", 12, 25),
                ("last New Year's Eve", 12, 31),
                ("la Nochevieja pasada", 12, 31),
            ]
        ),
    )
    def test_the_latest_gone_by(self, days: int, said: tuple[str, int, int]) -> None:
        """Asked on any day, "last Christmas" is the latest 25 December before today, whole."""
        text, month, day = said
        now = datetime(2025, 1, 1, 12, tzinfo=ZoneInfo(MEXICO)) + timedelta(days=days)
        got = found(text, "es", now=now)
        assert isinstance(got, Window), text
        start = got.start.astimezone(ZoneInfo(MEXICO))
        assert (start.month, start.day, start.hour) == (month, day, 0)
        assert got.end - got.start == timedelta(days=1)
        assert timedelta(days=0) < now - start <= timedelta(days=366)
        assert start.date() < now.date()

    @settings(max_examples=200)
    @given(days=st.integers(0, 3 * 366))
    def test_last_quarter_is_the_calendar_quarter_before(self, days: int) -> None:
        now = datetime(2025, 1, 1, 12, tzinfo=ZoneInfo(MEXICO)) + timedelta(days=days)
        got = found("el trimestre pasado", "es", now=now)
        assert isinstance(got, Window)
        start, end = got.start.astimezone(ZoneInfo(MEXICO)), got.end.astimezone(ZoneInfo(MEXICO))
        assert (start.day, start.hour, end.day, end.hour) == (1, 0, 1, 0)
        assert start.month in (1, 4, 7, 10) and end.date() <= now.date()
        assert (end.year * 12 + end.month) - (start.year * 12 + start.month) == 3
        assert (now.year * 12 + now.month - 1) // 3 == (end.year * 12 + end.month - 1) // 3


class TestAClockThatCannotBe:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("qual era a vazão da P-101 às trinta e sete horas?", "pt"),
            ("what was the flow of P-101 at 37 o'clock?", "en"),
            ("¿cuál era el caudal de la P-101 a las 25:00?", "es"),
            ("what was the flow of P-101 at 14:75?", "en"),
            ("what was the flow of P-101 yesterday at 37 o'clock?", "en"),
            ("caudal de la P-101 ayer a las 25", "es"),
            ("caudal de la P-101 ayer a las 25 y media", "es"),
        ],
    )
    def test_it_is_asked_back(self, text: str, lang: str) -> None:
        """Not read as another time (the day, the hour before, now): asked back, for window and instant alike."""
        assert found(text, lang) == Clarification(reason="unknown_time", candidates=[])
        assert instant_of(text, lang) == Clarification(reason="unknown_time", candidates=[])

    def test_a_value_after_at_is_no_clock(self) -> None:
        """ "at 37 m3/h" is a value: the day named stays."""
        assert found("when was the flow at 37 m3/h yesterday", "en") == Window(start=at(5), end=at(6))

    @settings(max_examples=300)
    @given(hour=st.integers(0, 99), minute=st.integers(0, 99))
    def test_any_hh_mm(self, hour: int, minute: int) -> None:
        """ "ayer a las HH:MM": that instant when it can be, else asked back."""
        got = instant_of(f"caudal de la P-101 ayer a las {hour:02d}:{minute:02d}", "es")
        if hour < 24 and minute < 60:
            assert got == at(5, hour, minute).astimezone(UTC)
        elif (hour, minute) != (24, 0):  # 24:00, the day's end, is a clock time
            assert got == Clarification(reason="unknown_time", candidates=[])


def week_window(day: int, month: int = 12, days: int = 1) -> Window:
    start = at(day, month=month)
    return Window(start=start, end=start + timedelta(days=days))


class TestARangeToThisMorning:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("How much water did L1 push out overnight, 8pm yesterday through to 6 this mornin?", "en"),
            ("8pm yesterday thru 6 this morning", "en"),
            ("from 8pm yesterday through to 6am today", "en"),
            ("yesterday 8pm to 6am today", "en"),
            ("from 8 last night to 6 this morning", "en"),
            ("desde las 8 de anoche hasta las 6", "es"),
            ("de ontem à noite às 8 até às 6 desta manhã", "pt"),
        ],
    )
    def test_a_night_said_by_its_ends(self, text: str, lang: str) -> None:
        """20:00 on the 5th to 06:00 on the 6th: "through to"/"thru" end a range, "this mornin" is the morning, an
        end said with last night is the night's (and the other end, said with no day, in that night too)."""
        assert found(text, lang) == Window(start=at(5, 20), end=at(6, 6))

    def test_from_the_night_before_last_to_yesterday_morning(self) -> None:
        text = "How many quality checks failed on L1 from eight the night before last till six yesterday morning?"
        assert found(text, "en") == Window(start=at(4, 20), end=at(5, 6))

    def test_evenin(self) -> None:
        assert found("yesterday from 6 in the evenin to 10", "en") == Window(start=at(5, 18), end=at(5, 22))

    def test_quarter_to_with_yesterday_morning(self) -> None:
        """The minutes are read before the morning makes the hour am."""
        assert instant_of("Flow on pump 102 at quarter to 11 yesterday mornin?", "en") == at(5, 10, 45).astimezone(UTC)


class TestADayRangeEndingAfterNoon:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("how much did L1 make on yesterday's days shift, 6 till 2?", "en", (5, 6, 0), (5, 14, 0)),
            ("¿cuánto produjo la L1 ayer de 6 a 2?", "es", (5, 6, 0), (5, 14, 0)),
            ("quanto a L1 produziu ontem das 6 às 2?", "pt", (5, 6, 0), (5, 14, 0)),
            ("stops yesterday 7 to 3", "en", (5, 7, 0), (5, 15, 0)),
            ("yesterday from 7:30 to 3:30", "en", (5, 7, 30), (5, 15, 30)),
            # a night said, or the end's part of the day or am/pm, keeps the range across midnight
            ("ayer de 10 a 2 de la madrugada", "es", (5, 10, 0), (6, 2, 0)),
            ("yesterday 10pm to 2", "en", (5, 22, 0), (6, 2, 0)),
            ("anoche de 11 a 2", "es", (5, 23, 0), (6, 2, 0)),
            ("ayer de 22 a 2", "es", (5, 22, 0), (6, 2, 0)),
            ("yesterday 06:00 to 02:00", "en", (5, 6, 0), (6, 2, 0)),  # written as a 24-hour clock
            ("ayer de 6 a medianoche", "es", (5, 6, 0), (6, 0, 0)),
        ],
    )
    def test_ranges(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        assert found(text, lang) == Window(start=at(*start), end=at(*end))

    def test_the_days_shift(self) -> None:
        """British "on days": the day shift, A."""
        assert found("how much did L1 make on yesterday's days shift?", "en") == Window(start=at(5, 6), end=at(5, 14))

    @settings(max_examples=200)
    @given(
        first=st.integers(2, 11),
        data=st.data(),
        said=st.sampled_from(["yesterday {a} till {b}", "ayer de {a} a {b}", "ontem das {a} às {b}", "ayer {a}-{b}"]),
    )
    def test_any_bare_range_that_ends_below_its_start(self, first: int, data: st.DataObject, said: str) -> None:
        """A bare end hour below a bare start hour before noon is that hour after noon: the same day, under 12 h."""
        last = data.draw(st.integers(1, first - 1))
        got = found(said.format(a=first, b=last), "es")
        assert got == Window(start=at(5, first), end=at(5, last + 12))
        assert got.end - got.start < timedelta(hours=12)


class TestSinceANightsHour:
    @pytest.mark.parametrize(
        ("text", "lang", "hour"),
        [
            ("What's P-101's bearing temp averaged since 6 o'clock last night?", "en", 18),
            ("temperatura media desde las 6 de anoche", "es", 18),
            ("temperatura media desde anoche a las 6", "es", 18),
            ("temperatura média desde as 6 de ontem à noite", "pt", 18),
            ("max level since 10 last night", "en", 22),
            ("since 11pm last night", "en", 23),
            ("since 6 yesterday evening", "en", 18),
        ],
    )
    def test_since_the_evening_hour(self, text: str, lang: str, hour: int) -> None:
        """From that hour on the 5th to now, not the night's 20:00 to 06:00."""
        assert found(text, lang) == Window(start=at(5, hour), end=MORNING)

    def test_a_small_hour_of_the_night(self) -> None:
        assert found("since 2 last night", "en") == Window(start=at(6, 2), end=MORNING)

    @settings(max_examples=50)
    @given(hour=st.integers(6, 11), said=st.sampled_from(["since {h} last night", "desde las {h} de anoche"]))
    def test_any_evening_hour(self, hour: int, said: str) -> None:
        assert found(said.format(h=hour), "es") == Window(start=at(5, hour + 12), end=MORNING)


class TestFourDigitRanges:
    @pytest.mark.parametrize(
        ("text", "start", "end"),
        [
            ("Peak bearing temp on P-101, yesterday 0600 to noon.", (5, 6, 0), (5, 12, 0)),
            ("peak temp yesterday 1400 to 1800", (5, 14, 0), (5, 18, 0)),
            ("peak temp yesterday 0600-noon", (5, 6, 0), (5, 12, 0)),
            ("temperatura máxima de 1400 a 1800 ayer", (5, 14, 0), (5, 18, 0)),
        ],
    )
    def test_ends(self, text: str, start: Clock, end: Clock) -> None:
        assert found(text, "en") == Window(start=at(*start), end=at(*end))

    def test_quantities_are_no_clock(self) -> None:
        assert found("produced 1500 to 1600 units yesterday", "en") == Window(start=at(5), end=at(6))

    @settings(max_examples=200)
    @given(first=st.integers(0, 23 * 60 - 1), length=st.integers(1, 60 * 6))
    def test_any_pair(self, first: int, length: int) -> None:
        last = min(first + length, 23 * 60 + 59)
        text = f"yesterday {first // 60:02d}{first % 60:02d} to {last // 60:02d}{last % 60:02d}"
        assert found(text, "en") == Window(start=at(5, first // 60, first % 60), end=at(5, last // 60, last % 60))


class TestHoursAndMinutesSaid:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("qual era o caudal da bomba P-101 ontem às 10 horas e 15 minutos?", "pt"),
            ("¿cuál era el caudal ayer a las 10 horas y 15 minutos?", "es"),
            ("flow yesterday at 10 hours 15", "en"),
            ("caudal ayer a las diez horas y quince minutos", "es"),
        ],
    )
    def test_the_instant(self, text: str, lang: str) -> None:
        assert instant_of(text, lang) == at(5, 10, 15).astimezone(UTC)

    @settings(max_examples=200)
    @given(
        hour=st.integers(0, 23),
        minute=st.integers(1, 59),
        said=st.sampled_from(["ontem às {h} horas e {m} minutos", "ayer a las {h} horas y {m}"]),
    )
    def test_any(self, hour: int, minute: int, said: str) -> None:
        assert instant_of(said.format(h=hour, m=minute), "pt") == at(5, hour, minute).astimezone(UTC)


class TestChatDayWords:
    def test_ont_is_ontem(self) -> None:
        text = "maninho me diz ai qtas paradas a bomba 101 teve ont no turno A"
        assert found(text, "pt") == Window(start=at(5, 6), end=at(5, 14))

    def test_hj_is_hoje(self) -> None:
        assert found("qts paradas hj", "pt") == Window(start=at(6), end=MORNING)

    def test_todays_shift_so_far(self) -> None:
        """ "hj nesse turno até agora": the shift under way, not the day."""
        assert found("qnts paradas a P-101 teve hj nesse turno ate agora?", "pt") == Window(start=at(6, 6), end=MORNING)

    @pytest.mark.parametrize("text", ["ytd 8pm tank level how much ya", "tank level 8pm ytd"])
    def test_ytd_beside_a_clock(self, text: str) -> None:
        assert instant_of(text, "en") == at(5, 20).astimezone(UTC)

    @pytest.mark.parametrize("text", ["production ytd", "ay, no sé cuántas paradas hubo"])
    def test_no_day(self, text: str) -> None:
        """ "ytd" alone is year to date, "ay" an interjection: no day read."""
        assert found(text, "en") is None


class TestCountsAreNoClock:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("boy, qnts paradas as duas bombas tiveram ontem? cada uma", "pt"),
            ("paradas dos dois compressores ontem", "pt"),
            ("paradas de las dos bombas ayer", "es"),
            ("stops of the two pumps yesterday", "en"),
            ("paradas das 2 bombas ontem", "pt"),
        ],
    )
    def test_the_day(self, text: str, lang: str) -> None:
        assert found(text, lang) == Window(start=at(5), end=at(6))
        assert instant_of(text, lang) is None

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("ontem às duas da tarde", (5, 14, 0)),
            ("ontem às 2 horas", (5, 2, 0)),
            ("ayer a las dos y media", (5, 2, 30)),
        ],
    )
    def test_an_hour_is_still_one(self, text: str, expected: Clock) -> None:
        assert instant_of(text, "pt") == at(*expected).astimezone(UTC)

    def test_an_oclock_said_bare(self) -> None:
        text = "Pump 101 bearing temp, wha it was reading 2 o'clock yesterday afternoon?"
        assert instant_of(text, "en") == at(5, 14).astimezone(UTC)
        assert found("from 6 o'clock to 8 o'clock yesterday", "en") == Window(start=at(5, 6), end=at(5, 8))


class TestDaysAndWeekendsBack:
    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("¿Cuál fue la producción de la línea 1 el pasado mes de octubre?", "es", months_of(2026, 10)),
            ("producción en el mes de octubre", "es", months_of(2026, 10)),
            ("production in the month of October", "en", months_of(2026, 10)),
            ("produção no mês de outubro passado", "pt", months_of(2026, 10)),
            ("production last October", "en", months_of(2026, 10)),
            ("producción el pasado octubre", "es", months_of(2026, 10)),
            ("How many alarms did the compressor throw a fortnight ago?", "en", day_of(2026, 11, 22)),
            ("alarms two weeks ago", "en", day_of(2026, 11, 22)),
            ("alarmas hace quince días", "es", day_of(2026, 11, 22)),
            ("alarmes há quinze dias", "pt", day_of(2026, 11, 22)),
            ("alarmas hace 15 días", "es", day_of(2026, 11, 21)),  # said in digits: fifteen
            ("the first of this month", "en", day_of(2026, 12, 1)),
            ("no dia primeiro deste mês", "pt", day_of(2026, 12, 1)),
            ("el 1 de este mes", "es", day_of(2026, 12, 1)),
            ("el primer día de este mes", "es", day_of(2026, 12, 1)),
            ("the 15th of last month", "en", day_of(2026, 11, 15)),
            ("el último día del mes pasado", "es", day_of(2026, 11, 30)),
            ("How much did L1 produce two weekends ago?", "en", week_window(21, 11, 2)),
            ("hace dos fines de semana", "es", week_window(21, 11, 2)),
            ("há dois fins de semana", "pt", week_window(21, 11, 2)),
            ("the weekend before last", "en", week_window(21, 11, 2)),
            ("last weekend", "en", week_window(28, 11, 2)),
            ("el fin de semana pasado", "es", week_window(28, 11, 2)),
            ("o fim de semana passado", "pt", week_window(28, 11, 2)),
            ("el finde pasado", "es", week_window(28, 11, 2)),
        ],
    )
    def test_a_window_of_its_own(self, text: str, lang: str, expected: Window) -> None:
        """Read, never the current shift: the tools refuse what is outside the stored data."""
        assert found(text, lang) == expected

    def test_the_past_fortnight(self) -> None:
        assert found("alarms in the past fortnight", "en") == Window(start=MORNING - timedelta(days=14), end=MORNING)

    def test_a_day_of_this_month_at_a_time(self) -> None:
        assert instant_of("el primero de este mes a las 8 de la mañana", "es") == at(1, 8).astimezone(UTC)
        assert found("el primero de este mes a las 8 de la mañana", "es") == Window(start=at(1, 8), end=at(1, 9))

    def test_a_day_of_this_month_still_to_come(self) -> None:
        assert found("el 20 de este mes", "es") == Clarification(reason="future_window", candidates=[])

    @pytest.mark.parametrize("text", ["this weekend", "el fin de semana", "no fim de semana", "over the weekend"])
    def test_this_weekend_is_under_way(self, text: str) -> None:
        """On a Sunday, the weekend that began on Saturday, so far."""
        assert found(text, "en") == Window(start=at(5), end=MORNING)

    @settings(max_examples=200)
    @given(minutes=st.integers(0, 3 * 366 * 24 * 60), back=st.integers(1, 5))
    def test_weekends_back(self, minutes: int, back: int) -> None:
        """ "N weekends ago" is Saturday 00:00 to Monday 00:00, the Nth of those ended before now ("last weekend" the
        first): ended, and the one after it either ended too (N > 1) or not ended yet."""
        now = datetime(2025, 1, 1, tzinfo=ZoneInfo(MEXICO)) + timedelta(minutes=minutes)
        got = found(f"{back} weekends ago", "en", now=now)
        assert got == found("last weekend" if back == 1 else f"hace {back} fines de semana", "es", now=now)
        assert isinstance(got, Window)
        start = got.start.astimezone(ZoneInfo(MEXICO))
        assert (start.weekday(), start.hour, start.minute) == (5, 0, 0)
        assert got.end - got.start == timedelta(days=2)
        assert got.end <= now < got.end + timedelta(days=7 * back)

    @settings(max_examples=100)
    @given(days=st.integers(0, 366), number=st.integers(1, 28))
    def test_a_day_of_this_month(self, days: int, number: int) -> None:
        now = datetime(2025, 1, 1, 12, tzinfo=ZoneInfo(MEXICO)) + timedelta(days=days)
        got = found(f"el {number} de este mes", "es", now=now)
        if number > now.day:
            assert got == Clarification(reason="future_window", candidates=[])
        else:  # today's so far
            whole = day_of(now.year, now.month, number)
            assert got == Window(start=whole.start, end=min(whole.end, now))


class TestMoreDaysOfTheCalendar:
    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("How many stops did P-101 have on Thanksgiving?", "en", day_of(2026, 11, 26)),
            ("paros el día de acción de gracias", "es", day_of(2026, 11, 26)),
            ("Quantas paradas a P-101 teve no São João?", "pt", day_of(2026, 6, 24)),
            ("paradas na festa de São João", "pt", day_of(2026, 6, 24)),
            ("paros el Día de Muertos", "es", day_of(2026, 11, 2)),
            ("paradas no dia de Finados", "pt", day_of(2026, 11, 2)),
            ("paros el Día del Trabajo", "es", day_of(2026, 5, 1)),
            ("paradas no Dia do Trabalho", "pt", day_of(2026, 5, 1)),
            ("stops on May Day", "en", day_of(2026, 5, 1)),
            ("stops on Labour Day", "en", day_of(2026, 5, 1)),
            ("stops on New Year", "en", day_of(2026, 1, 1)),
            ("stops on Christmas", "en", day_of(2025, 12, 25)),
            ("stops on Good Friday", "en", day_of(2026, 4, 3)),
            ("paros el domingo de Pascua", "es", day_of(2026, 4, 5)),
            ("paros en Navidad", "es", day_of(2025, 12, 25)),
            ("last Thanksgiving", "en", day_of(2026, 11, 26)),
            ("Thanksgiving 2024", "en", day_of(2024, 11, 28)),
        ],
    )
    def test_the_latest(self, text: str, lang: str, expected: Window) -> None:
        assert found(text, lang) == expected

    @pytest.mark.parametrize(
        "text",
        ["a usina São João parou ontem?", "Happy New Year! stops yesterday?", "Feliz Páscoa, quantas paradas ontem?"],
    )
    def test_not_the_day(self, text: str) -> None:
        """A place called São João, a greeting: the day the question names."""
        assert found(text, "pt") == Window(start=at(5), end=at(6))

    @settings(max_examples=200)
    @given(
        days=st.integers(0, 3 * 366),
        said=st.sampled_from(["on Thanksgiving", "el día de acción de gracias", "on Good Friday", "on Easter Sunday"]),
    )
    def test_a_movable_day_gone_by(self, days: int, said: str) -> None:
        """The latest one up to today (next year's is still to come): Thanksgiving a Thursday of 22-28 November,
        Easter a Sunday in March or April, Good Friday two days before it."""
        now = datetime(2025, 1, 1, 12, tzinfo=ZoneInfo(MEXICO)) + timedelta(days=days)
        got = found(said, "en", now=now)
        assert isinstance(got, Window)
        start = got.start.astimezone(ZoneInfo(MEXICO))
        assert got.end - got.start == timedelta(days=1) or got.end == now
        assert start.date() <= now.date()
        assert found(f"{said} {start.year + 1}", "en", now=now) == Clarification(reason="future_window", candidates=[])
        if "hanks" in said or "gracias" in said:
            assert (start.month, start.weekday()) == (11, 3) and 22 <= start.day <= 28
        else:
            assert start.month in (3, 4) and start.weekday() == (4 if "Friday" in said else 6)

    @settings(max_examples=100)
    @given(
        days=st.integers(0, 3 * 366),
        said=st.sampled_from(
            [("no São João", 6, 24), ("el Día de Muertos", 11, 2), ("Finados", 11, 2), ("May Day", 5, 1)]
        ),
    )
    def test_a_fixed_day_gone_by(self, days: int, said: tuple[str, int, int]) -> None:
        text, month, day = said
        now = datetime(2025, 1, 1, 12, tzinfo=ZoneInfo(MEXICO)) + timedelta(days=days)
        got = found(text, "es", now=now)
        assert isinstance(got, Window)
        start = got.start.astimezone(ZoneInfo(MEXICO))
        assert (start.month, start.day, start.hour) == (month, day, 0)
        assert start.date() <= now.date() and now - start <= timedelta(days=366)


class TestCaribbeanEnglish:
    def test_de_shift_before_dis_one(self) -> None:
        """The shift before this one: at 07:00, C from 22:00 to 06:00."""
        text = "How much water de line make in de shift before dis one, total?"
        assert found(text, "en") == Window(start=at(5, 22), end=at(6, 6))

    def test_dis_morning(self) -> None:
        assert found("stops dis morning", "en") == Window(start=at(6, 6), end=MORNING)

    def test_spanish_de_stays(self) -> None:
        assert found("paros del turno de noche de ayer", "es") == Window(start=at(5, 22), end=at(6, 6))


class TestClocksSaidWithHoras:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("entre las 22:00 horas de anteayer y las 06:00 horas de ayer", "es", (4, 22, 0), (5, 6, 0)),
            (
                "en el periodo comprendido entre las 20:00 horas de anteayer y las 06:00 horas de ayer",
                "es",
                (4, 20, 0),
                (5, 6, 0),
            ),
            ("desde las 20 horas de anteayer hasta las 6 horas de ayer", "es", (4, 20, 0), (5, 6, 0)),
            ("das 22 horas de anteontem às 6 horas de ontem", "pt", (4, 22, 0), (5, 6, 0)),
            ("entre as 22:00 horas de anteontem e as 06:00 horas de ontem", "pt", (4, 22, 0), (5, 6, 0)),
            ("between 22:00 hours the day before yesterday and 06:00 hours yesterday", "en", (4, 22, 0), (5, 6, 0)),
            ("from 2000 hours the day before yesterday until 0600 hours yesterday", "en", (4, 20, 0), (5, 6, 0)),
            ("el 4 de diciembre entre las 22:00 horas y las 23:30 horas", "es", (4, 22, 0), (4, 23, 30)),
        ],
    )
    def test_each_end_on_its_day(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """ "las 22:00 horas de anteayer": "horas"/"hours" after a clock time is the clock, and the day goes on."""
        assert_window(text, lang, start, end)

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("ontem de manhã, das 6 horas ao meio-dia", "pt", (5, 6, 0), (5, 12, 0)),
            ("ayer en la mañana, de las 6 horas al mediodía", "es", (5, 6, 0), (5, 12, 0)),
            ("yesterday morning, from 6 to 12 noon", "en", (5, 6, 0), (5, 12, 0)),
        ],
    )
    def test_a_range_in_a_part_of_the_day(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """ "das 6 horas ao meio-dia" is a range from 06:00, not the hour from noon."""
        assert_window(text, lang, start, end)

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("na noite de anteontem para ontem, das 20 horas às 6 da manhã", "pt"),
            ("la noche de anteayer, de las 20 horas a las 6 horas", "es"),
            ("the night before last, from 20:00 hours to 06:00 hours", "en"),
        ],
    )
    def test_a_range_in_a_night(self, text: str, lang: str) -> None:
        """The hours said in a night named, with "horas": 20:00 on the 4th to 06:00 on the 5th."""
        assert_window(text, lang, (4, 20, 0), (5, 6, 0))

    def test_horas_that_are_no_clock_stay(self) -> None:
        """A span ("as 3 horas passadas"), a quantity ("1500 horas de operación") and minutes that go on ("às 10 horas
        e 15 minutos") read as before; an hour that cannot be is still asked back."""
        assert window_of("as 3 horas passadas", "pt") == Window(start=NOW - timedelta(hours=3), end=NOW)
        assert_window("más de 1500 horas de operación ayer", "es", (5, 0, 0), (6, 0, 0))
        assert find_instant("ontem às 10 horas e 15 minutos", "pt", tz=MEXICO, now=NOW) == at(5, 10, 15).astimezone(UTC)
        assert find_instant("ayer a las 6 horas y media", "es", tz=MEXICO, now=NOW) == at(5, 6, 30).astimezone(UTC)
        assert window_of("às 37 horas de ontem", "pt") == Clarification(reason="unknown_time", candidates=[])


class TestTwelveSaidWithNoon:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("ayer a la tarde, de las 12 del mediodía a las 6 de la tarde", "es", (5, 12, 0), (5, 18, 0)),
            ("from 12 noon to 6 pm yesterday", "en", (5, 12, 0), (5, 18, 0)),
            ("yesterday from 12 midday to 6pm", "en", (5, 12, 0), (5, 18, 0)),
            ("ontem à tarde, das 12 horas do meio-dia às 18 horas", "pt", (5, 12, 0), (5, 18, 0)),
            ("ayer de las 6 al mediodía", "es", (5, 6, 0), (5, 12, 0)),
        ],
    )
    def test_twelve_of_noon_is_noon(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """ "las 12 del mediodía", "12 noon", "12 horas do meio-dia" are one clock time, 12:00."""
        assert_window(text, lang, start, end)


class TestNightsByTheirDates:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("la noche del 4 al 5 de diciembre", "es", (4, 20, 0), (5, 6, 0)),
            ("la noche del cuatro al cinco", "es", (4, 20, 0), (5, 6, 0)),
            ("la noche del 4", "es", (4, 20, 0), (5, 6, 0)),
            ("na noite de 4 para 5 de dezembro, das 20 horas às 6 horas", "pt", (4, 20, 0), (5, 6, 0)),
            ("na noite do dia 4, das 22h às 2h", "pt", (4, 22, 0), (5, 2, 0)),
            ("the night of the 4th to the 5th", "en", (4, 20, 0), (5, 6, 0)),
            ("night of 4-5 December", "en", (4, 20, 0), (5, 6, 0)),
            ("the night of 4 December at 11", "en", (4, 23, 0), (5, 0, 0)),
            ("el turno C de la noche del 4 al 5", "es", (4, 22, 0), (5, 6, 0)),
        ],
    )
    def test_the_first_days_evening(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """A night said by its dates begins on the first day's evening; the hours said in it are the night's, and the
        second day ("al 5") is no clock time."""
        assert_window(text, lang, start, end)

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("la noche del 5 al 6 de diciembre, entre las 8 de la noche y las 6 de la mañana", "es"),
            ("during the night of December 5th, from 8 pm until 6 am on the 6th", "en"),
            ("na noite de 5 para 6 de dezembro, das 20h às 6h", "pt"),
        ],
    )
    def test_a_night_under_way_so_far(self, text: str, lang: str) -> None:
        """At 03:04 on the 6th the night from the 5th is under way: read to now, as "esta noche" and any window under
        way are."""
        assert window_of(text, lang) == Window(start=at(5, 20, 0), end=NOW) == window_of("esta noche", "es")

    def test_a_night_still_to_come_is_asked_back(self) -> None:
        assert window_of("la noche del 6 al 7 de diciembre", "es") == Clarification(
            reason="future_window", candidates=[]
        )

    def test_a_night_across_the_new_year(self) -> None:
        """ "del 31 de diciembre al 1 de enero": the latest New Year's Eve gone by, into January."""
        got = window_of("la noche del 31 de diciembre al 1 de enero", "es")
        assert got == Window(start=at(31, 20, 0).replace(year=2025), end=at(1, 6, 0, month=1))

    def test_the_second_day_is_no_instant(self) -> None:
        assert find_instant("la noche del 4 al 5 de diciembre", "es", tz=MEXICO, now=NOW) is None


class TestRangeEndsBeforeAColon:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            (
                "Una consulta de la noche de anteayer, la que va desde las 20:00 de anteayer hasta las 6:00 de ayer: "
                "el supervisor de esa noche anotó que la P-101 paró a las 2 y tanto. ¿Cuántas detenciones tuvo?",
                "es",
                (4, 20, 0),
                (5, 6, 0),
            ),
            ("between 8 pm the day before yesterday and 6 am yesterday: how many alarms", "en", (4, 20, 0), (5, 6, 0)),
            ("ayer de 8 a 10: cuántas alarmas", "es", (5, 8, 0), (5, 10, 0)),
            ("ontem às 10: quantos alarmes ativos?", "pt", (5, 10, 0), (5, 11, 0)),
        ],
    )
    def test_a_colon_is_punctuation(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """A colon after a clock time or its day ends it ("hasta las 6:00 de ayer: ..."); before minutes it does not."""
        assert_window(text, lang, start, end)


class TestAnInstantSaidExactly:
    @pytest.mark.parametrize(
        ("text", "lang", "expected"),
        [
            ("Which was the vibration of the P-101 yesterday at the 16:30?", "en", (5, 16, 30)),  # "a las", calqued
            ("yesterday at the 4:30 pm", "en", (5, 16, 30)),
            ("¿cuántas alarmas activas había ayer a las 15:00 exactas?", "es", (5, 15, 0)),
            ("ayer a las 3 exactas de la tarde", "es", (5, 15, 0)),
            ("alarms active yesterday at 15:00 sharp", "en", (5, 15, 0)),
            ("vazão da P-102 ontem às 15h00 em ponto", "pt", (5, 15, 0)),
            ("ontem às 15 horas exatas", "pt", (5, 15, 0)),
            ("qual era a vazão da P-102 ontem às 7h00 da manhã?", "pt", (5, 7, 0)),
        ],
    )
    def test_the_instant(self, text: str, lang: str, expected: Clock) -> None:
        """An article before the clock ("at the 16:30") or a word for exactly after it ("exactas", "sharp", "em
        ponto") leaves the instant, and the hour from it as the window."""
        instant = at(*expected)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == instant.astimezone(UTC)
        assert window_of(text, lang) == Window(start=instant, end=instant + timedelta(hours=1))

    @pytest.mark.parametrize(
        ("text", "lang"), [("yesterday at the 5 pumps", "en"), ("ayer las 3 bombas exactas", "es")]
    )
    def test_a_count_stays_a_count(self, text: str, lang: str) -> None:
        """The article goes only before a clock said as one; a number before a plural noun still counts it."""
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None
        assert_window(text, lang, (5, 0, 0), (6, 0, 0))


class TestHoursOfTheNightCalqued:
    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            (
                "Which was the mean of the bearing temperature of the C-201 yesterday between 7 and 9 of the night?",
                "en",
                (5, 19, 0),
                (5, 21, 0),
            ),
            ("between 7 and 9 of the night", "en", (5, 19, 0), (5, 21, 0)),  # no day: the latest begun
            ("from 7 to 9 in the night", "en", (5, 19, 0), (5, 21, 0)),
            ("yesterday from 2 to 4 of the afternoon", "en", (5, 14, 0), (5, 16, 0)),
            ("yesterday between 7 and 9 of the morning", "en", (5, 7, 0), (5, 9, 0)),
        ],
    )
    def test_a_range(self, text: str, lang: str, start: Clock, end: Clock) -> None:
        """ "of the night" (Spanish "de la noche" said in English) is "at night": 6 to 11 the evening."""
        assert_window(text, lang, start, end)

    def test_an_instant(self) -> None:
        assert find_instant("yesterday at 3 of the afternoon", "en", tz=MEXICO, now=NOW) == at(5, 15).astimezone(UTC)


class TestAClockSaidRoughly:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("¿Cuántas alarmas estaban activas en la planta a eso de las 10 de la mañana de ayer?", "es"),
            ("nivel del T-301 ayer alrededor de las 10", "es"),
            ("caudal ayer cerca de las 10", "es"),
            ("caudal ayer como a las 10", "es"),
            ("qual era a vazão da P-102 por volta das 10h de ontem?", "pt"),
            ("vazão ontem lá pelas 10h", "pt"),
            ("vazão ontem perto das 10", "pt"),
            ("what was the P-102 flow around 10 am yesterday?", "en"),
            ("flow yesterday at about 10", "en"),
        ],
    )
    def test_the_instant(self, text: str, lang: str) -> None:
        """ "a eso de las 10", "pelas 10h", "at about 10": 10:00, as "a las 10" is."""
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == at(5, 10).astimezone(UTC)
        assert window_of(text, lang) == Window(start=at(5, 10), end=at(5, 11))

    def test_no_day_is_the_latest_begun(self) -> None:
        assert find_instant("alrededor de las 10", "es", tz=MEXICO, now=NOW) == at(5, 10).astimezone(UTC)

    def test_an_exact_clock_outranks_a_rough_one(self) -> None:
        """A rough clock told as context yields to the one asked about exactly."""
        text = (
            "Le cuento que a eso de las 2 de la tarde de ayer el operador vio la P-102 un poco rara. ¿Cuánto "
            "marcaba el caudal de la P-102 ayer a las 3 de la tarde en punto?"
        )
        assert find_instant(text, "es", tz=MEXICO, now=NOW) == at(5, 15).astimezone(UTC)

    @pytest.mark.parametrize(("text", "lang"), [("about 10 m3 yesterday", "en"), ("cerca de las 10 bombas ayer", "es")])
    def test_a_rough_quantity_is_no_clock(self, text: str, lang: str) -> None:
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None


class TestTheMidnightBetweenTwoDays:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("Me diz a vazão da P-102 na virada da meia-noite de ontem pra hoje, às 00h00.", "pt"),
            ("vazão da P-102 na virada de ontem pra hoje", "pt"),
            ("nivel del T-301 a la medianoche de ayer a hoy", "es"),
            ("T-301 level at midnight between yesterday and today", "en"),
            ("T-301 level at midnight last night", "en"),
        ],
    )
    def test_the_start_of_today(self, text: str, lang: str) -> None:
        """00:00 on the 6th, the midnight that ends yesterday, not the one that began it."""
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == at(6).astimezone(UTC)

    def test_the_midnight_before_yesterday(self) -> None:
        assert find_instant("a la medianoche de anteayer a ayer", "es", tz=MEXICO, now=NOW) == at(5).astimezone(UTC)

    @settings(max_examples=100)
    @given(
        pair=st.sampled_from([("anteayer", "ayer"), ("ayer", "hoy"), ("anteontem", "ontem"), ("ontem", "hoje")]),
        minutes=st.integers(1, 24 * 60 - 1),
    )
    def test_always_the_second_days_start(self, pair: tuple[str, str], minutes: int) -> None:
        """Whenever asked today, the midnight "de X a Y" is Y's 00:00."""
        now = at(6) + timedelta(minutes=minutes)
        first, second = pair
        back = {"anteayer": 2, "anteontem": 2, "ayer": 1, "ontem": 1, "hoy": 0, "hoje": 0}[second]
        got = find_instant(f"a la medianoche de {first} a {second}", "es", tz=MEXICO, now=now)
        assert got == (at(6) - timedelta(days=back)).astimezone(UTC)


class TestTheShiftThatJustEnded:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("¿De cuántos minutos fue la parada más larga de la L1 en el turno que acaba de terminar?", "es"),
            ("paradas en el turno recién terminado", "es"),
            ("How many stops did L1 have in the shift that just finished?", "en"),
            ("stops in the shift that just ended", "en"),
            ("stops in the shift that's just ended", "en"),
            ("stops in the just-finished shift", "en"),
            ("paradas da L1 no turno que acabou de terminar", "pt"),
            ("paradas da L1 no turno que acabou?", "pt"),
            ("paros en el turno que terminó", "es"),
        ],
    )
    def test_the_shift_before_this_one(self, text: str, lang: str) -> None:
        """At 03:04 (C under way) yesterday's B; at 07:00 (A under way) the C that ended at 06:00."""
        assert_window(text, lang, (5, 14, 0), (5, 22, 0))
        assert found(text, lang) == Window(start=at(5, 22), end=at(6, 6))

    @settings(max_examples=100)
    @given(minutes=st.integers(0, 3 * 24 * 60))
    def test_as_el_turno_anterior_whenever_asked(self, minutes: int) -> None:
        now = at(3) + timedelta(minutes=minutes)
        assert found("el turno que acaba de terminar", "es", now=now) == found("el turno anterior", "es", now=now)

    def test_a_shift_that_ended_at_a_time_said_is_not_the_last(self) -> None:
        """ "the B shift that ended last night" is still that B (14:00 to 22:00 on the 5th)."""
        assert found("stops in the B shift that ended last night", "en") == Window(start=at(5, 14), end=at(5, 22))


class TestAShiftLetterSaidAfter:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("¿Cuántas paradas tuvo la línea L1 en el turno de anoche, el C?", "es"),
            ("stops on L1 in last night's shift, the C", "en"),
            ("stops on L1 in last night's shift (the C one)", "en"),
        ],
    )
    def test_the_shift_begun_last_night(self, text: str, lang: str) -> None:
        """Shift C from 22:00 on the 5th, not the night from 20:00."""
        assert found(text, lang) == Window(start=at(5, 22), end=at(6, 6))

    def test_a_day_with_the_letter_after(self) -> None:
        assert_window("paradas en el turno de ayer, el A", "es", (5, 6, 0), (5, 14, 0))

    def test_an_id_is_no_letter(self) -> None:
        """ "the C-201" after a shift names the compressor, not shift C."""
        assert found("stops in the shift yesterday, the C-201", "en") == Window(start=at(5), end=at(6))


class TestSinceAClause:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("How many stops has C-201 had since the night crew came on at 10 last night?", "en"),
            ("¿Cuál ha sido el flujo máximo de la P-102 desde que entró el turno de la noche ayer a las 22?", "es"),
            ("qual a vazão máxima da P-102 desde que o pessoal da noite entrou às 22h de ontem?", "pt"),
        ],
    )
    def test_from_that_time_to_now(self, text: str, lang: str) -> None:
        """22:00 on the 5th to now, at 03:04 and at 10:30 (past the shift's end): no instant of its own."""
        assert window_of(text, lang) == Window(start=at(5, 22), end=NOW)
        later = at(6, 10, 30)
        assert found(text, lang, now=later) == Window(start=at(5, 22), end=later)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None

    def test_since_a_start_said_with_minutes(self) -> None:
        assert_window("stops since the pump started at 10:20 yesterday", "en", (5, 10, 20), (6, 3, 4))


class TestDaysBackSaidAfter:
    @pytest.mark.parametrize(
        ("text", "lang", "day", "month"),
        [
            ("Qual foi a vazão média da P-102 de uma semana atrás?", "pt", 29, 11),
            ("quantas paradas a P-101 teve quatro dias atrás?", "pt", 2, 12),
            ("¿cuántas paradas tuvo la P-101 hace cuatro días?", "es", 2, 12),
            ("paros de hace cuatro días atrás", "es", 2, 12),
            ("paros tres días atrás", "es", 3, 12),
            ("how many stops did P-101 have four days back?", "en", 2, 12),
            ("paradas um mês atrás", "pt", 6, 11),
        ],
    )
    def test_the_day_that_far_back(self, text: str, lang: str, day: int, month: int) -> None:
        """ "quatro dias atrás" reads as "há quatro dias" does: the whole day."""
        assert window_of(text, lang) == Window(start=at(day, month=month), end=at(day, month=month) + timedelta(days=1))

    def test_a_shift_of_that_day(self) -> None:
        got = window_of("Quanto a L1 produziu no turno A de uma semana atrás?", "pt")
        assert got == Window(start=at(29, 6, month=11), end=at(29, 14, month=11))

    def test_weekends_back(self) -> None:
        assert window_of("dois fins de semana atrás", "pt") == window_of("hace dos fines de semana", "es")

    @settings(max_examples=100)
    @given(count=st.integers(1, 30), unit=st.sampled_from(["dias", "semanas"]))
    def test_atras_as_ha(self, count: int, unit: str) -> None:
        assert window_of(f"{count} {unit} atrás", "pt") == window_of(f"há {count} {unit}", "pt")


def test_the_small_hours_of_yesterday_with_their_hours() -> None:
    """ "ontem de madrugada, entre a meia-noite e as seis": 00:00 to 06:00 on the 5th."""
    assert_window("quantas paradas ontem de madrugada, entre a meia-noite e as seis", "pt", (5, 0, 0), (5, 6, 0))


LATER = at(6, 10, 30)  # shift A under way since 06:00


class TestUntilNow:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("De ontem às 18h até agora, qual foi a temperatura máxima do C-201?", "pt"),
            ("das 18h de ontem até agora", "pt"),
            ("de ontem às 18h até hoje", "pt"),
            ("¿Cuál fue el nivel del T-301 desde ayer a las 18 hasta ahora?", "es"),
            ("de las 18 de ayer hasta el momento", "es"),
            ("de ayer a las 6 de la tarde a ahora", "es"),
            ("entre ayer a las 18 y ahora", "es"),
            ("max flow from 6 pm yesterday until now", "en"),
            ("from yesterday 18:00 up to now", "en"),
            ("between 6pm yesterday and now", "en"),
            ("from 18:00 yesterday to the present", "en"),
        ],
    )
    def test_from_the_time_said_to_now(self, text: str, lang: str) -> None:
        """18:00 on the 5th to now, at 03:04 and at 10:30 (not the hour from 18:00): a window, no instant."""
        assert found(text, lang, now=NOW) == Window(start=at(5, 18), end=NOW)
        assert found(text, lang, now=LATER) == Window(start=at(5, 18), end=LATER)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) is None

    @pytest.mark.parametrize(
        ("text", "lang", "start"),
        [
            ("desde ayer hasta ahora", "es", at(5)),
            ("from yesterday until now", "en", at(5)),
            ("desde anteayer hasta hoy", "es", at(4)),
            ("desde la semana pasada hasta ahora", "es", at(23, month=11)),
            ("from the start of yesterday's A shift until now", "en", at(5, 6)),
            ("desde antenoche a las 9 hasta ahora", "es", at(4, 21)),
        ],
    )
    def test_from_the_start_of_what_is_named(self, text: str, lang: str, start: datetime) -> None:
        assert found(text, lang, now=LATER) == Window(start=start, end=LATER)

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            # an end with a time of its own is that time
            ("de ontem às 18h até hoje às 2h", "pt", at(5, 18), at(6, 2)),
            ("desde ayer a las 18 hasta hoy a las 2", "es", at(5, 18), at(6, 2)),
            # "a hoy" after a night is the night's second day, no "until now"
            ("la noche de ayer a hoy", "es", at(5, 20), at(6, 6)),
            # "to now" with no "from": a comparison, not a range
            ("compare yesterday to now", "en", at(5), at(6)),
        ],
    )
    def test_not_until_now(self, text: str, lang: str, start: datetime, end: datetime) -> None:
        assert found(text, lang, now=LATER) == Window(start=start, end=end)

    def test_a_clock_and_now_keeps_its_instant(self) -> None:
        """ "ayer a las 10 y ahora" asks at two instants; the first is still read."""
        assert instant_of("nivel del T-301 ayer a las 10 y ahora", "es", now=NOW) == at(5, 10).astimezone(UTC)

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("Ayer a las 18 se paró la P-101. ¿Cuántas alarmas van en este turno hasta ahora?", "es"),
            ("o turno passado deixou a P-102 parada. Quantos alarmes neste turno até agora?", "pt"),
            ("Thanksgiving, the latest one up to today", "en"),
        ],
    )
    def test_no_opening_word_in_its_clause(self, text: str, lang: str) -> None:
        """ "Until now" whose clause opens no range ("from/desde/de ontem") reads as the question without it."""
        for now in (NOW, LATER):
            assert found(text, lang, now=now) == found(
                re.sub(r" (?:hasta ahora|até agora|up to today)", "", text), lang, now=now
            )

    def test_so_far_alone_is_as_before(self) -> None:
        """ "hasta ahora" with nothing else named reads no time; said with today or the shift, the same so far."""
        assert found("¿Cuántas alarmas van hasta ahora?", "es", now=NOW) is None
        assert found("paros hoy hasta ahora", "es", now=NOW) == found("paros hoy", "es", now=NOW)
        assert found("paros en el turno hasta ahora", "es", now=NOW) == found("paros en el turno", "es", now=NOW)


class TestTwelveInTheSmallHours:
    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("¿Cuántas paradas tuvo la L1 ayer en la madrugada, de 12 a 6?", "es"),
            ("paradas da L1 ontem de madrugada, das 12 às 6", "pt"),
            ("L1 stops yesterday in the early hours, from 12 to 6", "en"),
            ("L1 stops yesterday in the wee hours, 12 to 6", "en"),
        ],
    )
    def test_midnight_to_six(self, text: str, lang: str) -> None:
        """12 in the small hours is midnight: 00:00 to 06:00 on the 5th, not 12:00 to 18:00."""
        assert window_of(text, lang) == Window(start=at(5), end=at(5, 6))

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("de madrugada, das 12 às 6", "pt"),
            ("in the early hours, from 12 to 6", "en"),
            ("de madrugada, de 12 a 6", "es"),
        ],
    )
    def test_with_no_day_the_latest(self, text: str, lang: str) -> None:
        assert found(text, lang, now=LATER) == Window(start=at(6), end=at(6, 6))
        assert found(text, lang, now=NOW) == Window(start=at(6), end=NOW)

    def test_at_12_in_the_small_hours(self) -> None:
        assert instant_of("nivel ayer de madrugada a las 12", "es", now=NOW) == at(5).astimezone(UTC)

    def test_noon_stays_noon(self) -> None:
        """With no small hours named 12 is noon; "12:00" (as "mediodía" is written) is noon in them too."""
        assert found("paradas ayer de 12 a 6", "es", now=NOW) == Window(start=at(5, 12), end=at(5, 18))
        assert found("ayer de madrugada, de 12:00 a 6", "es", now=NOW) == Window(start=at(5, 12), end=at(5, 18))


class TestTheNightBeforeLastSpelled:
    @pytest.mark.parametrize("spelling", ["anteanoche", "ante anoche", "ante-anoche", "antes de anoche"])
    @pytest.mark.parametrize(
        "template",
        [
            "¿Cuál fue la temperatura máxima del C-201 {}?",
            "paros de la P-101 {}, de 8 de la noche a 6 de la mañana",
            "nivel del T-301 {} a las 11",
            "nivel del T-301 {} de 10 a 2",
            "paradas en el turno C de {}",
            "desde las 9 de {} hasta las 6",
        ],
    )
    def test_reads_as_antenoche(self, spelling: str, template: str) -> None:
        """Each spelling of the night before last (20:00 on the 4th to 06:00 on the 5th) reads as "antenoche"."""
        for now in (NOW, LATER):
            assert found(template.format(spelling), "es", now=now) == found(template.format("antenoche"), "es", now=now)
            said = find_instant(template.format(spelling), "es", tz=MEXICO, now=now)
            assert said == find_instant(template.format("antenoche"), "es", tz=MEXICO, now=now)
        assert found(f"alarmas {spelling}", "es", now=NOW) == Window(start=at(4, 20), end=at(5, 6))

    @pytest.mark.parametrize("night", ["antenoche", "anteanoche"])
    def test_since_an_hour_of_it(self, night: str) -> None:
        """ "desde antenoche a las 9": from 21:00 on the 4th to now, as "since 9 the night before last"."""
        assert found(f"desde {night} a las 9", "es", now=NOW) == Window(start=at(4, 21), end=NOW)
        assert find_instant(f"desde {night} a las 9", "es", tz=MEXICO, now=NOW) is None


def edge_of(text: str, lang: str, now: datetime = NOW) -> datetime | Clarification | None:
    return find_instant(text, lang, tz=MEXICO, now=now, shifts=SHIFTS)


class TestTheStartOrEndAsAnInstant:
    @pytest.mark.parametrize(
        ("text", "lang", "instant"),
        [
            ("What was the T-301 level at the start of yesterday's A shift?", "en", at(5, 6)),
            ("level at the beginning of shift B yesterday", "en", at(5, 14)),
            ("¿Cuál era el nivel del T-301 al inicio del turno B de ayer?", "es", at(5, 14)),
            ("nivel al comienzo del turno A de ayer", "es", at(5, 6)),
            ("qual era o nível do T-301 no começo do turno A de ontem?", "pt", at(5, 6)),
            ("no início do turno C de anteontem", "pt", at(4, 22)),
            ("level at the end of yesterday's A shift", "en", at(5, 14)),
            ("nivel al final del turno B de ayer", "es", at(5, 22)),
            ("al término del turno A de ayer", "es", at(5, 14)),
            ("al terminar el turno B de ayer", "es", at(5, 22)),
            ("nível no fim do turno C de anteontem", "pt", at(5, 6)),
            ("ao final do turno B de ontem", "pt", at(5, 22)),
            ("at the start of the night shift yesterday", "en", at(5, 22)),
            ("at the end of the previous shift", "en", at(5, 22)),
            ("at the start of the shift", "en", at(5, 22)),  # the one under way
        ],
    )
    def test_of_a_shift(self, text: str, lang: str, instant: datetime) -> None:
        """The instant the shift starts or ends; the window is still the shift (its value questions ask at the
        instant, its statistics over the shift)."""
        assert edge_of(text, lang) == instant.astimezone(UTC)

    @pytest.mark.parametrize(
        ("text", "lang", "instant"),
        [
            ("nivel al final del día de ayer", "es", at(6)),
            ("level at the end of the day yesterday", "en", at(6)),
            ("at the end of yesterday", "en", at(6)),
            ("no início do dia de ontem", "pt", at(5)),
            ("no fim de ontem", "pt", at(6)),
            ("at the beginning of today", "en", at(6)),
            ("al final de la semana pasada", "es", at(30, month=11)),
        ],
    )
    def test_of_a_day(self, text: str, lang: str, instant: datetime) -> None:
        """A day's start is its 00:00, its end the next day's 00:00 ("24:00"); no shifts are needed for it."""
        assert edge_of(text, lang) == instant.astimezone(UTC)
        assert find_instant(text, lang, tz=MEXICO, now=NOW) == instant.astimezone(UTC)

    def test_a_shift_needs_the_sites_shifts(self) -> None:
        """With no shifts given, a shift's edge is no instant (never the day's)."""
        assert find_instant("at the start of yesterday's A shift", "en", tz=MEXICO, now=NOW) is None

    @pytest.mark.parametrize(
        ("text", "lang", "now"),
        [
            ("al final del turno C de ayer", "es", NOW),  # under way at 03:04
            ("al término del turno C de ayer", "es", NOW),
            ("at the end of the shift", "en", NOW),
            ("al comienzo del turno C de hoy", "es", NOW),  # starts at 22:00
            ("at the end of today's A shift", "en", LATER),
            ("no fim do dia de hoje", "pt", LATER),
        ],
    )
    def test_not_yet_come_asks_back(self, text: str, lang: str, now: datetime) -> None:
        assert edge_of(text, lang, now) == Clarification(reason="future_window", candidates=[])

    def test_the_window_is_the_shift_still(self) -> None:
        assert found("level at the end of yesterday's A shift", "en", now=NOW) == Window(start=at(5, 6), end=at(5, 14))
        # "término" after "al" is the noun: the same C as "al final", not the one that ended yesterday
        assert found("al término del turno C de ayer", "es", now=LATER) == Window(start=at(5, 22), end=at(6, 6))
        assert found("el turno C que terminó ayer", "es", now=LATER) == Window(start=at(4, 22), end=at(5, 6))

    @pytest.mark.parametrize(
        "text",
        ["presión al final de la línea ayer", "al final de la descarga ayer", "at the end of the pipe yesterday"],
    )
    def test_the_end_of_a_thing_is_no_instant(self, text: str) -> None:
        assert edge_of(text, "es") is None

    def test_a_clock_said_wins(self) -> None:
        assert edge_of("al inicio del turno B de ayer, a las 14:30", "es") == at(5, 14, 30).astimezone(UTC)


class TestRangesNightsAndWholeDays:
    """Asked at 11:40 on the 6th (shift A under way): a range ending "6 am this morning", a night said before its
    range, the shift "inmediatamente anterior", and "the whole of yesterday" over any other time said."""

    ASKED = at(6, 11, 40)

    def test_till_6_am_this_morning(self) -> None:
        text = "downtime of C-201 from 8 pm yesterday till 6 am this morning"
        assert found(text, "en", now=self.ASKED) == Window(start=at(5, 20), end=at(6, 6))

    def test_night_said_before_its_range(self) -> None:
        text = "lowest level of the tank last night, from 8 pm up to 6 this morning"
        assert found(text, "en", now=self.ASKED) == Window(start=at(5, 20), end=at(6, 6))

    def test_shift_immediately_before_the_current(self) -> None:
        text = "producción de L1 en el turno inmediatamente anterior al que se encuentra actualmente en curso"
        assert found(text, "es", now=self.ASKED) == found("producción de L1 en el turno anterior", "es", now=self.ASKED)
        assert found(text, "es", now=self.ASKED) == Window(start=at(5, 22), end=at(6, 6))

    def test_the_whole_of_yesterday(self) -> None:
        text = "I just started this week: what was the average level of T-301 over the whole of yesterday?"
        assert found(text, "en", now=self.ASKED) == Window(start=at(5), end=at(6))


class TestMidnightAndNoonSince:
    """Asked at 14:10 on the 6th: "12 midnight" is 00:00 (its 12 is not noon), and "desde ontem ao meio dia" runs
    from yesterday's noon to now (not the hour after it)."""

    ASKED = at(6, 14, 10)

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("how much has line 1 produced today from 12 midnight up to now?", "en"),
            ("¿cuánto produjo la L1 desde las 12 de la medianoche?", "es"),
        ],
    )
    def test_12_midnight_is_the_days_start(self, text: str, lang: str) -> None:
        assert found(text, lang, now=self.ASKED) == Window(start=at(6), end=self.ASKED)

    @pytest.mark.parametrize(
        "text", ["quantas vezes a P-102 parou desde ontem ao meio dia", "paradas da P-102 desde ontem ao meio-dia"]
    )
    def test_since_yesterday_at_noon_runs_to_now(self, text: str) -> None:
        assert found(text, "pt", now=self.ASKED) == Window(start=at(5, 12), end=self.ASKED)


class TestYearsAgoAndTheShiftBefore:
    ASKED = at(6, 15, 0)

    @pytest.mark.parametrize(
        ("text", "lang"),
        [
            ("the peak compressor flow on this same day a year ago", "en"),
            ("¿cuál fue el caudal de la P-101 hace un año?", "es"),
            ("qual era a vazão da P-101 há dois anos?", "pt"),
        ],
    )
    def test_years_ago_is_that_day_years_back(self, text: str, lang: str) -> None:
        got = found(text, lang, now=self.ASKED)
        assert isinstance(got, Window) and got.start.year <= 2025 and got.start.month == 12

    def test_the_shift_before_said_in_spanglish(self) -> None:
        text = "¿Qué temperatura promedio tuvo el bearing del compresor en el shift anterior?"
        assert found(text, "es", now=self.ASKED) == Window(start=at(6, 6), end=at(6, 14))


class TestBlindSets122To129:
    """What blind sets 122-129 found in times: "last Monday" said on a Monday, "at exactly 4 am", an hour past 24
    joined to its minutes by "h", "3rd shift" (not the 3rd), chat's "btw" between two clocks, and the times a
    question names beside the one it asks about."""

    MONDAY = at(7, 15, 0)  # 7 December 2026 is a Monday

    @pytest.mark.parametrize(
        ("text", "lang", "day"),
        [
            ("¿Cuántas paradas tuvo la P-101 el lunes pasado?", "es", 30),
            ("How many stops did P-101 have last Monday?", "en", 30),
            ("Quantas paradas teve a P-101 na segunda passada?", "pt", 30),
            ("¿Cuántas paradas tuvo la P-101 el lunes?", "es", 7),  # the last one up to today: today
            ("¿Cuántas paradas tuvo la P-101 el sábado pasado?", "es", 5),
        ],
    )
    def test_a_weekday_said_as_the_last_one_is_before_today(self, text: str, lang: str, day: int) -> None:
        got = found(text, lang, now=self.MONDAY)
        month = 11 if day > 7 else 12
        assert isinstance(got, Window) and got.start == at(day, month=month)

    def test_a_clock_said_exactly_and_an_hour_past_24(self) -> None:
        assert instant_of("what was the C-201 flow at exactly 4 am this morning?", "en", now=self.MONDAY) == at(
            7, 4
        ).astimezone(UTC)
        assert found("Qual era o caudal da P-102 ontem às 27h15?", "pt", now=self.MONDAY) == Clarification(
            reason="unknown_time", candidates=[]
        )
        assert found("P-102's average flow yesterday from 2700 to 2900 hours?", "en", now=self.MONDAY) == Clarification(
            reason="unknown_time", candidates=[]
        )

    def test_a_clock_then_up_to_now_and_the_day_so_far(self) -> None:
        checks = found(
            "How many quality checks have they run on line 1 today, midnight up to now?", "en", now=self.MONDAY
        )
        assert checks == Window(start=at(7), end=self.MONDAY)
        assert found("¿Cuánto produjo hoy la línea 1 hasta ahora?", "es", now=self.MONDAY) == Window(
            start=at(7), end=self.MONDAY
        )
        assert found("el nivel medio del T-301 en lo que va de día", "es", now=self.MONDAY) == Window(
            start=at(7), end=self.MONDAY
        )

    def test_an_ordinal_shift_and_chat_s_between(self) -> None:
        shift = found("total downtime for line 1 on 3rd shift last night (10p-6a)?", "en", now=self.MONDAY)
        assert shift == Window(start=at(6, 22), end=at(7, 6))
        hour = found("how many alarms total went off yesterday btw 1pm and 2pm", "en", now=self.MONDAY)
        assert hour == Window(start=at(6, 13), end=at(6, 14))

    @pytest.mark.parametrize(
        ("text", "day"),
        [
            ("Compara a vibração média do C-201 de ontem com a de há três semanas.", (16, 11)),
            ("Comparado con el mismo turno de hace quince días, ¿subió o bajó la vibración?", (23, 11)),
            ("What was the bearing temp on pump 102 at 9 am last week?", (30, 11)),
        ],
    )
    def test_the_earliest_time_a_question_names(self, text: str, day: tuple[int, int]) -> None:
        got = earliest_said(text, tz=MEXICO, shifts=SHIFTS, now=self.MONDAY)
        assert got == at(day[0], month=day[1]).astimezone(UTC)

    def test_a_question_naming_no_time_back_names_none(self) -> None:
        assert earliest_said("¿Cuántas paradas tuvo la P-101 ayer?", tz=MEXICO, shifts=SHIFTS, now=self.MONDAY) is None

    @given(st.text(max_size=200))
    @settings(max_examples=200, deadline=None)
    def test_any_text_names_a_time_back_or_none(self, text: str) -> None:
        got = earliest_said(text, tz=MEXICO, shifts=SHIFTS, now=self.MONDAY)
        assert got is None or got.tzinfo is not None
