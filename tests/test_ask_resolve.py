"""The ask's resolution of a question's words: its time window in the site's timezone and shifts, and the asset,
line and tag it names, in es/en/pt. Every expected window is worked out here in local wall time."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edge_agent.ask.answers import Clarification
from edge_agent.ask.resolve import (
    Subject,
    find_instant,
    find_window,
    fold,
    resolve_subject,
    resolve_window,
    without_left_out,
)
from edge_agent.ask.tools import AssetInfo, LineInfo, Namespace, TagInfo, Window
from edge_agent.base.quantities import quantity_of
from edge_agent.config import ShiftConfig
from edge_agent.sim.plant import ASSETS, TANK, tag_names

# The words that leave an asset out, as `without_left_out` reads them.
_LEAVING = re.compile(r"\b(?:menos|but|bar|sin contar|tirando|fora|excepto|except|sem)\b")

MEXICO = "America/Mexico_City"  # the demo site's zone: UTC-6 all year (no DST since 2022)
SANTIAGO = "America/Santiago"  # DST: -03 until 2026-04-05 00:00, then -04; -03 again from 2026-09-06 00:00 (01:00)
# configs/demo.toml's shifts: C crosses midnight.
SHIFTS = [
    ShiftConfig(name="A", start="06:00", end="14:00"),
    ShiftConfig(name="B", start="14:00", end="22:00"),
    ShiftConfig(name="C", start="22:00", end="06:00"),
]
ALIASES = {"bomba 101": "P-101", "la grande": "C-201", "línea principal": "L1"}


def local(tz: str, year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(tz))


def window(start: datetime, end: datetime) -> Window:
    return Window(start=start, end=end)


def plant_namespace(extra_tags: tuple[str, ...] = ()) -> Namespace:
    """The simulated plant's namespace as build_namespace gives it (edge_agent/sim/plant.py: L1, P-101, P-102, C-201,
    T-301), its assets named by their aliases."""
    tags = []
    for tag in [*tag_names(), *extra_tags]:
        q = quantity_of(tag)
        tags.append(TagInfo(tag=tag, asset=q.asset, quantity=q.quantity, unit=q.unit, names=q.names))
    names: dict[str, list[str]] = {}
    for alias, target in ALIASES.items():
        names.setdefault(target, []).append(alias)
    assets = sorted([spec.name for spec in ASSETS] + [TANK])
    return Namespace(
        record_ids=[],
        record_count=0,
        site="demo-plant",
        timezone=MEXICO,
        lines=[LineInfo(line="L1")],
        assets=[AssetInfo(asset=a, line="L1", names=names.get(a, [])) for a in assets],
        tags=tags,
    )


NAMESPACE = plant_namespace()


class TestWindowMexicoCity:
    """America/Mexico_City, asked on Wednesday 2026-03-11 at 10:30 local (16:30 UTC), during shift A."""

    NOW = local(MEXICO, 2026, 3, 11, 10, 30)

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            ("¿cuántas paradas en el turno A?", "es", (2026, 3, 11, 6, 0), (2026, 3, 11, 10, 30)),  # so far
            ("yesterday's shift B", "en", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),
            ("o turno B de ontem", "pt", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),
            # B today has not begun: "turno B" alone is the latest that has, yesterday's
            ("turno B", "es", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),
            # C crosses midnight: the one that began yesterday at 22:00 and ended at 06:00 today
            ("the C shift", "en", (2026, 3, 10, 22, 0), (2026, 3, 11, 6, 0)),
            ("turno C de ayer", "es", (2026, 3, 10, 22, 0), (2026, 3, 11, 6, 0)),
            ("turno C de anteayer", "es", (2026, 3, 9, 22, 0), (2026, 3, 10, 6, 0)),
            ("el turno anterior", "es", (2026, 3, 10, 22, 0), (2026, 3, 11, 6, 0)),
            ("this shift", "en", (2026, 3, 11, 6, 0), (2026, 3, 11, 10, 30)),
            ("ayer", "es", (2026, 3, 10, 0, 0), (2026, 3, 11, 0, 0)),
            ("yesterday", "en", (2026, 3, 10, 0, 0), (2026, 3, 11, 0, 0)),
            ("ontem", "pt", (2026, 3, 10, 0, 0), (2026, 3, 11, 0, 0)),
            ("hoy", "es", (2026, 3, 11, 0, 0), (2026, 3, 11, 10, 30)),
            ("hoje", "pt", (2026, 3, 11, 0, 0), (2026, 3, 11, 10, 30)),
            ("entre las 10 y las 11", "es", (2026, 3, 11, 10, 0), (2026, 3, 11, 10, 30)),  # under way: to now
            ("between 8 and 9:15", "en", (2026, 3, 11, 8, 0), (2026, 3, 11, 9, 15)),
            # 11:00 has not come today: yesterday's
            ("entre as 11 e as 12", "pt", (2026, 3, 10, 11, 0), (2026, 3, 10, 12, 0)),
            ("ayer de las 10 a las 11:30", "es", (2026, 3, 10, 10, 0), (2026, 3, 10, 11, 30)),
            ("between 10pm and 2am yesterday", "en", (2026, 3, 10, 22, 0), (2026, 3, 11, 2, 0)),
            ("between 2 and 3pm", "en", (2026, 3, 10, 14, 0), (2026, 3, 10, 15, 0)),
            ("last night", "en", (2026, 3, 10, 20, 0), (2026, 3, 11, 6, 0)),
            ("¿qué pasó anoche?", "es", (2026, 3, 10, 20, 0), (2026, 3, 11, 6, 0)),
            ("ontem à noite", "pt", (2026, 3, 10, 20, 0), (2026, 3, 11, 6, 0)),
            ("this morning", "en", (2026, 3, 11, 6, 0), (2026, 3, 11, 10, 30)),
            ("esta mañana", "es", (2026, 3, 11, 6, 0), (2026, 3, 11, 10, 30)),
            ("ontem de manhã", "pt", (2026, 3, 10, 6, 0), (2026, 3, 10, 12, 0)),
            ("ayer por la tarde", "es", (2026, 3, 10, 12, 0), (2026, 3, 10, 18, 0)),
            # one clock time: the hour from it, today's if it has come
            ("a las 9", "es", (2026, 3, 11, 9, 0), (2026, 3, 11, 10, 0)),
            ("at 11pm", "en", (2026, 3, 10, 23, 0), (2026, 3, 11, 0, 0)),
            ("ontem às 10h", "pt", (2026, 3, 10, 10, 0), (2026, 3, 10, 11, 0)),
            # calendar weeks from Monday: this one began Monday 2026-03-09
            ("a semana passada", "pt", (2026, 3, 2, 0, 0), (2026, 3, 9, 0, 0)),
            ("la semana pasada", "es", (2026, 3, 2, 0, 0), (2026, 3, 9, 0, 0)),
            ("last week", "en", (2026, 3, 2, 0, 0), (2026, 3, 9, 0, 0)),
            ("esta semana", "es", (2026, 3, 9, 0, 0), (2026, 3, 11, 10, 30)),
            ("last month", "en", (2026, 2, 1, 0, 0), (2026, 3, 1, 0, 0)),
            ("las últimas 3 horas", "es", (2026, 3, 11, 7, 30), (2026, 3, 11, 10, 30)),
            ("the last hour", "en", (2026, 3, 11, 9, 30), (2026, 3, 11, 10, 30)),
            ("últimos 2 dias", "pt", (2026, 3, 9, 10, 30), (2026, 3, 11, 10, 30)),
            ("el lunes", "es", (2026, 3, 9, 0, 0), (2026, 3, 10, 0, 0)),
            ("on friday", "en", (2026, 3, 6, 0, 0), (2026, 3, 7, 0, 0)),
            ("el 3 de marzo", "es", (2026, 3, 3, 0, 0), (2026, 3, 4, 0, 0)),
            ("on March 3", "en", (2026, 3, 3, 0, 0), (2026, 3, 4, 0, 0)),
            ("em 5 de março", "pt", (2026, 3, 5, 0, 0), (2026, 3, 6, 0, 0)),
            # a day and month without a year: the latest that has come, last year's March 20
            ("el 20 de marzo", "es", (2025, 3, 20, 0, 0), (2025, 3, 21, 0, 0)),
            ("2026-02-28", "en", (2026, 2, 28, 0, 0), (2026, 3, 1, 0, 0)),
            ("hace 2 días", "es", (2026, 3, 9, 0, 0), (2026, 3, 10, 0, 0)),
            # hour ranges as people shorten them
            ("ayer de 6 a 12", "es", (2026, 3, 10, 6, 0), (2026, 3, 10, 12, 0)),
            ("min vibration C-201 yesterday 6 to 12", "en", (2026, 3, 10, 6, 0), (2026, 3, 10, 12, 0)),
            ("ontem das 6 às 12", "pt", (2026, 3, 10, 6, 0), (2026, 3, 10, 12, 0)),
            ("entre las 2 y las 4 de la tarde de ayer", "es", (2026, 3, 10, 14, 0), (2026, 3, 10, 16, 0)),
            # the part of the day after a clock time is its am/pm; noon is 12:00
            ("ayer a las 3 de la tarde", "es", (2026, 3, 10, 15, 0), (2026, 3, 10, 16, 0)),
            ("ontem às 8 da noite", "pt", (2026, 3, 10, 20, 0), (2026, 3, 10, 21, 0)),
            ("ontem ao meio-dia", "pt", (2026, 3, 10, 12, 0), (2026, 3, 10, 13, 0)),
            ("yesterday at noon", "en", (2026, 3, 10, 12, 0), (2026, 3, 10, 13, 0)),
            # shifts by their order in [[reports.shifts]], and "B shift"
            ("yesterday's second shift", "en", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),
            ("el primer turno de ayer", "es", (2026, 3, 10, 6, 0), (2026, 3, 10, 14, 0)),
            ("turno 2 de ontem", "pt", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),
            ("yesterday's B shift", "en", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),
            # a whole month: with its year, or the latest begun
            ("¿cuántas paradas hubo en marzo de 2019?", "es", (2019, 3, 1, 0, 0), (2019, 4, 1, 0, 0)),
            ("in January 2018", "en", (2018, 1, 1, 0, 0), (2018, 2, 1, 0, 0)),
            ("em janeiro de 2018", "pt", (2018, 1, 1, 0, 0), (2018, 2, 1, 0, 0)),
            ("en febrero", "es", (2026, 2, 1, 0, 0), (2026, 3, 1, 0, 0)),
            ("during December", "en", (2025, 12, 1, 0, 0), (2026, 1, 1, 0, 0)),
            # a whole year; noon and midnight as clock times; "since" a time, to now
            ("back in 1987", "en", (1987, 1, 1, 0, 0), (1988, 1, 1, 0, 0)),
            ("between 10 and noon yesterday", "en", (2026, 3, 10, 10, 0), (2026, 3, 10, 12, 0)),
            ("ayer a la medianoche", "es", (2026, 3, 10, 0, 0), (2026, 3, 10, 1, 0)),
            ("desde ayer a las 18 hasta ahorita", "es", (2026, 3, 10, 18, 0), (2026, 3, 11, 10, 30)),
            ("since 2 pm yesterday", "en", (2026, 3, 10, 14, 0), (2026, 3, 11, 10, 30)),
            ("desde ontem às 18h", "pt", (2026, 3, 10, 18, 0), (2026, 3, 11, 10, 30)),
            ("desde las 8", "es", (2026, 3, 11, 8, 0), (2026, 3, 11, 10, 30)),
            ("from 6 PM yesterday till now", "en", (2026, 3, 10, 18, 0), (2026, 3, 11, 10, 30)),
            ("ontem de manhã, das 6h ao meio-dia", "pt", (2026, 3, 10, 6, 0), (2026, 3, 10, 12, 0)),
            # a night shift "that ended yesterday" began the day before
            ("el turno de noche que terminó ayer", "es", (2026, 3, 9, 22, 0), (2026, 3, 10, 6, 0)),
            ("the graveyard shift that ended at 6 am yesterday", "en", (2026, 3, 9, 22, 0), (2026, 3, 10, 6, 0)),
        ],
    )
    def test_named_windows(self, text: str, lang: str, start: tuple[int, ...], end: tuple[int, ...]) -> None:
        """Each phrase resolves to its local window, held in UTC."""
        got = resolve_window(text, lang, tz=MEXICO, shifts=SHIFTS, now=self.NOW)
        assert got == window(local(MEXICO, *start), local(MEXICO, *end))

    def test_instant(self) -> None:
        """One clock time is an instant in UTC: 10:00 local today is 16:00 UTC; none named, None; to come, asks."""
        assert find_instant("¿a las 10?", "es", tz=MEXICO, now=self.NOW) == datetime(2026, 3, 11, 16, 0, tzinfo=UTC)
        assert find_instant("entre las 10 y las 11", "es", tz=MEXICO, now=self.NOW) is None
        assert find_instant("hoy a las 11", "es", tz=MEXICO, now=self.NOW) == Clarification(
            reason="future_window", candidates=[]
        )

    def test_utc_ends(self) -> None:
        """Shift A so far is 12:00 to 16:30 UTC: Mexico City is six hours behind."""
        got = resolve_window("turno A", "es", tz=MEXICO, shifts=SHIFTS, now=self.NOW.astimezone(UTC))
        assert got == window(datetime(2026, 3, 11, 12, 0, tzinfo=UTC), datetime(2026, 3, 11, 16, 30, tzinfo=UTC))

    def test_no_time_is_the_current_shift_so_far(self) -> None:
        """A question naming no time gets the shift under way, from its start to now."""
        assert find_window("¿cuántas paradas hubo?", "es", tz=MEXICO, shifts=SHIFTS, now=self.NOW) is None
        got = resolve_window("¿cuántas paradas hubo?", "es", tz=MEXICO, shifts=SHIFTS, now=self.NOW)
        assert got == window(local(MEXICO, 2026, 3, 11, 6, 0), self.NOW)

    def test_no_time_after_midnight_is_the_night_shift_so_far(self) -> None:
        """At 02:00 the shift under way is C, begun yesterday at 22:00."""
        now = local(MEXICO, 2026, 3, 11, 2, 0)
        got = resolve_window("alarms?", "en", tz=MEXICO, shifts=SHIFTS, now=now)
        assert got == window(local(MEXICO, 2026, 3, 10, 22, 0), now)
        assert resolve_window("turno C", "es", tz=MEXICO, shifts=SHIFTS, now=now) == got

    def test_no_shifts_configured_is_today_so_far(self) -> None:
        """Without `[[reports.shifts]]` a question naming no time gets today from local midnight."""
        got = resolve_window("alarms?", "en", tz=MEXICO, shifts=[], now=self.NOW)
        assert got == window(local(MEXICO, 2026, 3, 11, 0, 0), self.NOW)

    def test_unknown_shift_asks_back(self) -> None:
        """A shift the site does not have gives its shifts as the candidates."""
        got = resolve_window("turno D", "es", tz=MEXICO, shifts=SHIFTS, now=self.NOW)
        assert got == Clarification(reason="unknown_shift", candidates=["A", "B", "C"])

    @pytest.mark.parametrize(
        ("text", "lang", "start", "end"),
        [
            # the one shift starting 18:00-04:00 is C; the latest begun is last night's
            ("paradas del turno de noche", "es", (2026, 3, 10, 22, 0), (2026, 3, 11, 6, 0)),
            ("yesterday's night shift", "en", (2026, 3, 10, 22, 0), (2026, 3, 11, 6, 0)),
            ("o turno da noite de anteontem", "pt", (2026, 3, 9, 22, 0), (2026, 3, 10, 6, 0)),
            ("el turno de la mañana", "es", (2026, 3, 11, 6, 0), (2026, 3, 11, 10, 30)),  # A, so far
            ("the afternoon shift", "en", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),  # today's B has not begun
            ("turno da tarde de ontem", "pt", (2026, 3, 10, 14, 0), (2026, 3, 10, 22, 0)),
        ],
    )
    def test_a_shift_called_by_its_part_of_the_day(
        self, text: str, lang: str, start: tuple[int, ...], end: tuple[int, ...]
    ) -> None:
        """ "el turno de noche", "the morning shift": the site's one shift starting in that part of the day."""
        got = resolve_window(text, lang, tz=MEXICO, shifts=SHIFTS, now=self.NOW)
        assert got == window(local(MEXICO, *start), local(MEXICO, *end))

    @pytest.mark.parametrize("text", ["may I know the flow of P-101?", "P-101 a 102", "el marco de la bomba"])
    def test_words_that_only_look_like_times_are_not(self, text: str) -> None:
        """ "may" is a verb, "marco" a frame, "101 a 102" two ids: the current shift so far, as with no time."""
        got = resolve_window(text, "en", tz=MEXICO, shifts=SHIFTS, now=self.NOW)
        assert got == window(local(MEXICO, 2026, 3, 11, 6, 0), self.NOW)

    def test_an_ordinal_past_the_sites_shifts_asks_back(self) -> None:
        """Two shifts and "the third shift": which one?"""
        two = SHIFTS[:2]
        got = resolve_window("third shift", "en", tz=MEXICO, shifts=two, now=self.NOW)
        assert got == Clarification(reason="unknown_shift", candidates=["A", "B"])

    def test_a_part_of_the_day_two_shifts_start_in_asks_back(self) -> None:
        """With two shifts starting in the night (18:00 and 00:00) "el turno de noche" is not guessed."""
        shifts = [
            ShiftConfig(name="1", start="06:00", end="18:00"),
            ShiftConfig(name="2", start="18:00", end="00:00"),
            ShiftConfig(name="3", start="00:00", end="06:00"),
        ]
        got = resolve_window("el turno de noche", "es", tz=MEXICO, shifts=shifts, now=self.NOW)
        assert got == Clarification(reason="unknown_shift", candidates=["1", "2", "3"])

    @pytest.mark.parametrize(
        ("text", "lang"), [("this afternoon", "en"), ("esta noche", "es"), ("el 20 de marzo de 2026", "es")]
    )
    def test_future_window_asks_back(self, text: str, lang: str) -> None:
        """A window that has not begun at `now` resolves to no window: nothing is stored for it."""
        got = resolve_window(text, lang, tz=MEXICO, shifts=SHIFTS, now=self.NOW)
        assert got == Clarification(reason="future_window", candidates=[])


class TestWindowSantiago:
    """America/Santiago observes DST: a day may be 23 or 25 hours, a night shift 7 or 9."""

    def test_yesterday_of_25_hours(self) -> None:
        """2026-04-04 in Santiago runs 00:00-03 to 00:00-04 the next day: 25 hours, 03:00 to 04:00 UTC."""
        got = resolve_window("ayer", "es", tz=SANTIAGO, shifts=SHIFTS, now=local(SANTIAGO, 2026, 4, 5, 10, 0))
        assert got == window(datetime(2026, 4, 4, 3, 0, tzinfo=UTC), datetime(2026, 4, 5, 4, 0, tzinfo=UTC))
        assert isinstance(got, Window) and got.end - got.start == timedelta(hours=25)

    def test_yesterday_of_23_hours_starts_after_the_jump(self) -> None:
        """2026-09-06 00:00 does not exist in Santiago (clocks jump to 01:00-03): the day starts at 04:00 UTC."""
        got = resolve_window("yesterday", "en", tz=SANTIAGO, shifts=SHIFTS, now=local(SANTIAGO, 2026, 9, 7, 10, 0))
        assert got == window(datetime(2026, 9, 6, 4, 0, tzinfo=UTC), datetime(2026, 9, 7, 3, 0, tzinfo=UTC))
        assert isinstance(got, Window) and got.end - got.start == timedelta(hours=23)

    def test_night_shift_across_the_autumn_change(self) -> None:
        """Shift C from 22:00-03 on 04-04 to 06:00-04 on 04-05 lasts 9 hours (01:00 to 10:00 UTC)."""
        got = resolve_window(
            "turno C de ayer", "es", tz=SANTIAGO, shifts=SHIFTS, now=local(SANTIAGO, 2026, 4, 5, 12, 0)
        )
        assert got == window(datetime(2026, 4, 5, 1, 0, tzinfo=UTC), datetime(2026, 4, 5, 10, 0, tzinfo=UTC))

    def test_night_shift_across_the_spring_change(self) -> None:
        """Shift C from 22:00-04 on 09-05 to 06:00-03 on 09-06 lasts 7 hours (02:00 to 09:00 UTC)."""
        got = resolve_window("last shift", "en", tz=SANTIAGO, shifts=SHIFTS, now=local(SANTIAGO, 2026, 9, 6, 7, 0))
        assert got == window(datetime(2026, 9, 6, 2, 0, tzinfo=UTC), datetime(2026, 9, 6, 9, 0, tzinfo=UTC))


_FRAGMENTS = [
    "turno",
    "shift",
    "A",
    "B",
    "C",
    "D",
    "ayer",
    "yesterday",
    "ontem",
    "hoy",
    "entre",
    "between",
    "las",
    "as",
    "10",
    "11",
    "y",
    "and",
    "e",
    "pm",
    "am",
    ":",
    "30",
    "last",
    "night",
    "anoche",
    "semana",
    "pasada",
    "passada",
    "week",
    "últimas",
    "horas",
    "hours",
    "días",
    "de",
    "marzo",
    "March",
    "3",
    "2026-13-45",
    "99/99",
    "mañana",
    "morning",
    "noche",
    "tonight",
    "el",
    "lunes",
    "hace",
    "ago",
    "-",
    "¿",
    "?",
]
_QUESTIONS = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(_FRAGMENTS), max_size=12).map(" ".join))


class TestWindowProperties:
    @settings(max_examples=300)
    @given(
        text=_QUESTIONS,
        lang=st.sampled_from(["es", "en", "pt", "xx"]),
        tz=st.sampled_from([MEXICO, SANTIAGO]),
        minutes=st.integers(0, 366 * 24 * 60),
    )
    def test_any_text_gives_a_past_window_or_a_clarification(self, text: str, lang: str, tz: str, minutes: int) -> None:
        """Any text resolves, the same way twice, to a window ending by `now` or to a clarification."""
        now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)
        got = resolve_window(text, lang, tz=tz, shifts=SHIFTS, now=now)
        assert got == resolve_window(text, lang, tz=tz, shifts=SHIFTS, now=now)
        assert isinstance(got, Window | Clarification)
        if isinstance(got, Window):
            assert got.start < got.end <= now


class TestSubject:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("¿cuántas paradas tuvo la P-101?", Subject(asset="P-101")),
            ("stops of p101", Subject(asset="P-101")),
            ("paradas da p 102", Subject(asset="P-102")),
            # the alias of `[ask] aliases`, exactly and with a typo
            ("¿cuántas paradas tuvo la bomba 101?", Subject(asset="P-101")),
            ("¿cuántas paradas tuvo la bomva 101?", Subject(asset="P-101")),
            ("alarmas de la grande", Subject(asset="C-201")),
            ("OEE de la línea principal", Subject(line="L1")),
            # an equipment word and a number, no alias needed
            ("pump 102 stops", Subject(asset="P-102")),
            ("o compressor 201", Subject(asset="C-201")),
            ("qual foi o OEE da linha L1", Subject(line="L1")),
            ("OEE of line 1", Subject(line="L1")),
            # the only one of its kind
            ("el compresor", Subject(asset="C-201")),
            (
                "tank level",
                Subject(asset="T-301", tag="T-301.level_pct", quantity="level", tag_candidates=["T-301.level_pct"]),
            ),
            # quantities by the names people use
            (
                "¿cuál es la vibración de la P-102 ahora?",
                Subject(
                    asset="P-102",
                    tag="P-102.vibration_mm_s",
                    quantity="vibration",
                    tag_candidates=["P-102.vibration_mm_s"],
                ),
            ),
            (
                "a vazão da P-101",
                Subject(asset="P-101", tag="P-101.flow_m3h", quantity="flow", tag_candidates=["P-101.flow_m3h"]),
            ),
            (
                "bearing temperature C-201",
                Subject(
                    asset="C-201",
                    tag="C-201.bearing_temp_c",
                    quantity="bearing_temperature",
                    tag_candidates=["C-201.bearing_temp_c"],
                ),
            ),
            (
                "vibrasion de P-101",
                Subject(
                    asset="P-101",
                    tag="P-101.vibration_mm_s",
                    quantity="vibration",
                    tag_candidates=["P-101.vibration_mm_s"],
                ),
            ),
            (
                "P-101.running",
                Subject(asset="P-101", tag="P-101.running", quantity="running", tag_candidates=["P-101.running"]),
            ),
            # a quantity and no asset: which of them is left to the planner
            (
                "la vibración",
                Subject(
                    quantity="vibration",
                    tag_candidates=["C-201.vibration_mm_s", "P-101.vibration_mm_s", "P-102.vibration_mm_s"],
                ),
            ),
            # T-301 has no temperature: its own tags are the candidates
            (
                "highest temperature of T-301",
                Subject(asset="T-301", quantity="bearing_temperature", tag_candidates=["T-301.level_pct"]),
            ),
            ("list the draft reports", Subject()),
            # abbreviations and ids read aloud
            (
                "max vib p101 ayer",
                Subject(
                    asset="P-101",
                    tag="P-101.vibration_mm_s",
                    quantity="vibration",
                    tag_candidates=["P-101.vibration_mm_s"],
                ),
            ),
            (
                "bearing temp on P102",
                Subject(
                    asset="P-102",
                    tag="P-102.bearing_temp_c",
                    quantity="bearing_temperature",
                    tag_candidates=["P-102.bearing_temp_c"],
                ),
            ),
            ("paradas de la bomba uno cero dos", Subject(asset="P-102")),
            ("stops of pump one oh one", Subject(asset="P-101")),
            ("las dos paradas de la P-101", Subject(asset="P-101")),  # one number word is not an id
            ("che cuantas veces paro la 101 anoche", Subject(asset="P-101")),  # an article and the asset's number
            ("paradas de las 10", Subject()),  # two digits: an hour, not an asset
            (
                "a vibração mais alta da 101",
                Subject(
                    asset="P-101",
                    tag="P-101.vibration_mm_s",
                    quantity="vibration",
                    tag_candidates=["P-101.vibration_mm_s"],
                ),
            ),
            ("quanto tempo durou a avaria da P-101", Subject(asset="P-101")),  # "tempo" is time, not "temps"
            # chat shortenings of equipment words, an id with its dash said
            ("how many stops did the compr have yest", Subject(asset="C-201")),
            ("paros de la bba 102", Subject(asset="P-102")),
            (
                "temperatura maxima de la p guion ciento uno",
                Subject(
                    asset="P-101",
                    tag="P-101.bearing_temp_c",
                    quantity="bearing_temperature",
                    tag_candidates=["P-101.bearing_temp_c"],
                ),
            ),
            ("c dash 201 stops", Subject(asset="C-201")),
            ("how many leave days do I have left", Subject()),  # "leave" is two letters off "level", not one
            ("cuantos paros hubo en el turno anterior compa", Subject()),  # "compa" is a buddy, not "compr"
            (
                "vibración promedio de la p-10l ayer",
                Subject(
                    asset="P-101",
                    tag="P-101.vibration_mm_s",
                    quantity="vibration",
                    tag_candidates=["P-101.vibration_mm_s"],
                ),
            ),  # "l" typed for "1"
            (
                "Esse trem da P-101 vibrou quanto no máximo",
                Subject(
                    asset="P-101",
                    tag="P-101.vibration_mm_s",
                    quantity="vibration",
                    tag_candidates=["P-101.vibration_mm_s"],
                ),
            ),
        ],
    )
    def test_names(self, text: str, expected: Subject) -> None:
        """Ids, aliases, equipment words, and quantities resolve to the namespace's ids."""
        assert resolve_subject(text, NAMESPACE, ALIASES) == expected

    def test_typo_without_alias_by_equipment_word(self) -> None:
        """ "bomva 101" with no alias at all still finds the one pump numbered 101."""
        assert resolve_subject("paradas de la bomva 101", NAMESPACE, {}) == Subject(asset="P-101")

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("la bomba", Clarification(reason="ambiguous_name", candidates=["P-101", "P-102"])),
            ("vibration of the pump", Clarification(reason="ambiguous_name", candidates=["P-101", "P-102"])),
            ("¿cuántas paradas tuvo la P-999?", Clarification(reason="unknown_name", candidates=["P-101", "P-102"])),
            (
                "alarms of X-12",
                Clarification(reason="unknown_name", candidates=["C-201", "P-101", "P-102", "T-301", "L1"]),
            ),
            ("bomba 103", Clarification(reason="unknown_name", candidates=["P-101", "P-102"])),
            ("linha 2", Clarification(reason="unknown_name", candidates=["L1"])),
            ("P-101 y P-102", Clarification(reason="several_subjects", candidates=["P-101", "P-102"])),
            # a line by a short id the site lacks ("L3" where it has "L1"): never the one line it has
            (
                "How much did line L3 produce on shift B yesterday?",
                Clarification(reason="unknown_name", candidates=["L1"]),
            ),
            ("¿Cuánto produjo la línea L2 ayer?", Clarification(reason="unknown_name", candidates=["L1"])),
            ("qual foi a produção da L4 ontem", Clarification(reason="unknown_name", candidates=["L1"])),
            # equipment the plant has none of: never the whole plant
            (
                "How many stops did the chiller have yesterday?",
                Clarification(reason="unknown_name", candidates=["C-201", "P-101", "P-102", "T-301"]),
            ),
            (
                "Quantas paragens teve a caldeira ontem?",
                Clarification(reason="unknown_name", candidates=["C-201", "P-101", "P-102", "T-301"]),
            ),
            # other trades' equipment: a mine's thickener, a water plant's scrubber, a mill's kiln
            *(
                (question, Clarification(reason="unknown_name", candidates=["C-201", "P-101", "P-102", "T-301"]))
                for question in (
                    "How many stops did the scrubber have yesterday?",
                    "¿Cuántas paradas tuvo el espesador ayer?",
                    "max temp of the kiln yesterday",
                    "quantas paradas teve a paletizadora ontem",
                    "What was the fluid level on the pumpjack out at well 7 yesterday evening?",
                )
            ),
        ],
    )
    def test_ambiguous_or_unknown_asks_back(self, text: str, expected: Clarification) -> None:
        """A name matching several things or none asks back with the candidates, never a guess."""
        assert resolve_subject(text, NAMESPACE, ALIASES) == expected

    def test_alias_to_a_missing_id_is_not_used(self) -> None:
        """An alias pointing at nothing the namespace holds resolves nothing."""
        assert resolve_subject("la vieja", NAMESPACE, {"la vieja": "P-100"}) == Subject()

    @pytest.mark.parametrize(
        "text",
        [
            "max discharge temperature of C-201 yesterday",
            "temperatura máxima del devanado de la P-101",
            "temperatura do óleo do C-201",
            "gearbox vibration on P-102",
        ],
    )
    def test_a_measuring_point_the_tag_is_not_at_is_no_tag(self, text: str) -> None:
        """A temperature or vibration said of a point other than the tag's (the bearing's) is not that tag."""
        got = resolve_subject(text, NAMESPACE, ALIASES)
        assert isinstance(got, Subject) and got.tag is None and got.quantity not in {"bearing_temperature", "vibration"}

    @pytest.mark.parametrize(
        ("text", "tag"),
        [
            ("caudal de descarga de la P-101", "P-101.flow_m3h"),  # a pump's flow is its discharge's
            ("max bearing temperature of C-201", "C-201.bearing_temp_c"),
            ("temperatura do mancal da P-101", "P-101.bearing_temp_c"),
        ],
    )
    def test_the_tags_own_point_or_a_flows_discharge_is_the_tag(self, text: str, tag: str) -> None:
        got = resolve_subject(text, NAMESPACE, ALIASES)
        assert isinstance(got, Subject) and got.tag == tag

    def test_unknown_tag_id_asks_back(self) -> None:
        """A tag of an asset the namespace lacks is an unknown name, not the whole plant."""
        got = resolve_subject("stops of P-999.vibration_mm_s", NAMESPACE, ALIASES)
        assert got == Clarification(reason="unknown_name", candidates=["P-101", "P-102"])

    def test_alias_without_letters_or_digits_is_not_used(self) -> None:
        """An alias that folds to punctuation alone matches nothing (it would match everywhere)."""
        assert resolve_subject("paradas de hoy", NAMESPACE, {"¿?": "P-101"}) == Subject()

    def test_nearly_two_aliases_asks_back(self) -> None:
        """A typo as close to two aliases of different assets names neither."""
        aliases = {"bomba roja": "P-101", "bomba rosa": "P-102"}
        got = resolve_subject("la bomba rota", NAMESPACE, aliases)
        assert got == Clarification(reason="ambiguous_name", candidates=["P-101", "P-102"])

    def test_number_must_match_exactly(self) -> None:
        """ "bomba 102" is P-102, never the alias "bomba 101" however close it spells."""
        assert resolve_subject("bomba 102", NAMESPACE, ALIASES) == Subject(asset="P-102")

    @settings(max_examples=300)
    @given(
        words=st.lists(
            st.sampled_from(
                [
                    "las",
                    "bombas",
                    "menos",
                    "la",
                    "101",
                    "102",
                    "P-101",
                    "sin contar",
                    "el",
                    "tanque",
                    "every",
                    "asset",
                    "but",
                    "bar",
                    "the",
                    "tank",
                    "tirando",
                    "o",
                    "fora",
                    "a",
                    "outra",
                    "bomba",
                    "cada",
                    "equipo",
                    "y",
                    ",",
                    "excepto",
                    "C-201",
                    "all",
                    "pumps",
                    "except",
                    "sem",
                    "?",
                    "0000101",
                ]
            ),
            max_size=12,
        ).map(" ".join)
    )
    def test_assets_left_out_leave_namespace_ids_or_none(self, words: str) -> None:
        """Whatever is left out of whatever, the rest is asked of by the namespace's ids, or none is left to ask
        about: the text back (folded), or None, never an error."""
        got = without_left_out(words, NAMESPACE)
        assert got is None or isinstance(resolve_subject(got, NAMESPACE, ALIASES), Subject | Clarification)
        if got is not None and not _LEAVING.search(words):
            assert got == fold(words)

    @settings(max_examples=300)
    @given(
        text=st.one_of(
            st.text(max_size=200),
            st.lists(
                st.sampled_from(
                    [
                        "P-101",
                        "p102",
                        "bomba",
                        "bomva",
                        "101",
                        "la",
                        "grande",
                        "vibración",
                        "temperatura",
                        "L1",
                        "línea",
                        "P-999",
                        "tanque",
                        "compresor",
                        "nivel",
                        ".",
                        "-",
                        "0000101",
                        "1" * 5000,
                    ]
                ),
                max_size=8,
            ).map(" ".join),
        )
    )
    def test_any_text_resolves_to_namespace_ids(self, text: str) -> None:
        """Any text gives, the same way twice, ids of the namespace or a clarification drawn from it."""
        got = resolve_subject(text, NAMESPACE, ALIASES)
        assert got == resolve_subject(text, NAMESPACE, ALIASES)
        ids = {a.asset for a in NAMESPACE.assets} | {t.tag for t in NAMESPACE.tags} | {"L1"}
        if isinstance(got, Subject):
            assert {got.asset, got.line, got.tag} - {None} <= ids
            assert set(got.tag_candidates) <= ids
        else:
            assert set(got.candidates) <= ids | {"A", "B", "C"}


def _named(text: str, namespace: Namespace = NAMESPACE) -> tuple[str | None, str | None] | Clarification:
    got = resolve_subject(text, namespace, ALIASES)
    return (got.asset, got.line) if isinstance(got, Subject) else got


def _spoken_namespace(assets: list[str], lines: list[str]) -> Namespace:
    return Namespace(
        record_ids=[],
        record_count=0,
        site="spoken",
        timezone=MEXICO,
        lines=[LineInfo(line=line) for line in lines],
        assets=[AssetInfo(asset=a, line=None, names=[]) for a in assets],
        tags=[],
    )


# Letters by their names as people and dictation say them (es, en and its homophones, pt).
_SPOKEN_LETTERS = {
    "p": ["pe", "pê", "pee", "pea"],
    "c": ["ce", "cê", "cee", "see", "sea"],
    "t": ["te", "tê", "tee", "tea"],
    "k": ["ka", "kay"],
    "f": ["efe", "eff"],
    "m": ["eme"],
    "r": ["erre"],
    "v": ["uve", "vee"],
    "tk": ["te ka", "tee kay", "tê ka"],
    "ft": ["efe te", "eff tee"],
}
_LINE_LETTERS = ["ele", "éle", "ell"]
_LETTER_WORDS = sorted({w for names in [*_SPOKEN_LETTERS.values(), _LINE_LETTERS] for n in names for w in n.split()})
_NUMBER_WORDS = ["dos", "diez", "ten", "two", "10", "12:30", "tres"]
_DIGIT_WORDS = {
    "es": "cero uno dos tres cuatro cinco seis siete ocho nueve".split(),
    "en": "oh one two three four five six seven eight nine".split(),
    "pt": "zero um dois três quatro cinco seis sete oito nove".split(),
}
_TEEN_WORDS = {
    "es": "diez once doce trece catorce quince dieciséis diecisiete dieciocho diecinueve".split(),
    "pt": "dez onze doze treze catorze quinze dezesseis dezessete dezoito dezenove".split(),
}
_TENS_WORDS = {
    "es": "_ _ veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa".split(),
    "pt": "_ _ vinte trinta quarenta cinquenta sessenta setenta oitenta noventa".split(),
}
_VEINTI = "veinte veintiuno veintidós veintitrés veinticuatro veinticinco veintiséis veintisiete veintiocho veintinueve"
_HUNDRED_WORDS = {
    "es": "_ ciento doscientos trescientos cuatrocientos quinientos seiscientos setecientos ochocientos novecientos",
    "pt": "_ cento duzentos trezentos quatrocentos quinhentos seiscentos setecentos oitocentos novecentos",
}


def _number_in_words(n: int, lang: str) -> str:
    """100 to 999 as said in full in es ("ciento treinta y uno") or pt ("cento e trinta e um")."""
    hundreds, rest = divmod(n, 100)
    if rest == 0:
        return {"es": "cien", "pt": "cem"}[lang] if hundreds == 1 else _HUNDRED_WORDS[lang].split()[hundreds]
    tens, unit = divmod(rest, 10)
    if rest < 10:
        said = _DIGIT_WORDS[lang][unit]
    elif rest < 20:
        said = _TEEN_WORDS[lang][unit]
    elif lang == "es" and tens == 2:
        said = _VEINTI.split()[unit]
    else:
        said = _TENS_WORDS[lang][tens] + (f" {'y' if lang == 'es' else 'e'} {_DIGIT_WORDS[lang][unit]}" if unit else "")
    return f"{_HUNDRED_WORDS[lang].split()[hundreds]} {'e ' if lang == 'pt' else ''}{said}"


class TestIdsReadByLetterNames:
    """Ids as speech-to-text writes them: each letter by its name ("pe", "cê", "sea", "tea", "éle") before the number
    in words or digits; read as an id only right before a number, with the letters of the namespace's ids."""

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("eh oiga cuál fue la vibración máxima de la pe ciento uno ayer", ("P-101", None)),
            ("che cuántos minutos en total estuvo parado el ce doscientos uno ayer", ("C-201", None)),
            ("la pe 102 cuál fue el caudal mínimo ayer", ("P-102", None)),
            ("paradas del te trescientos uno", ("T-301", None)),
            ("cuántas paradas tuvo la pe guion ciento dos", ("P-102", None)),
            ("how many times did sea two oh one go down yesterday", ("C-201", None)),
            ("how many times did see two oh one go down yesterday", ("C-201", None)),
            ("stops of cee two zero one", ("C-201", None)),
            ("the the bearing temp on pee one oh one at half two yesterday afternoon", ("P-101", None)),
            ("flow on pea one oh two yesterday", ("P-102", None)),
            ("level of tea three oh one", ("T-301", None)),
            ("level of tee three oh one", ("T-301", None)),
            ("qual foi a vibração máxima da cê dois zero um ontem", ("C-201", None)),
            ("ô quantas paradas a pê cento e um teve ontem visse", ("P-101", None)),
            ("o caudal mínimo da bomba pê cento e dois ontem das três às quatro da tarde", ("P-102", None)),
            ("qual o nível do tanque tê três zero um", ("T-301", None)),
            ("éle um quantas paradas ontem", (None, "L1")),
            ("qué tal estuvo la línea uno ayer", (None, "L1")),
            # the consonant said as itself, and Spanish "ce" as dictation hears it
            ("how many stops did C two oh one have yesterday", ("C-201", None)),
            ("che cuál fue la vibración máxima del se doscientos uno ayer", ("C-201", None)),
            # a name taken back is not asked about
            ("cuántas paradas tuvo la pe ciento dos no perdón la línea uno", (None, "L1")),
            ("max vibration of P-102, I mean C-201, yesterday", ("C-201", None)),
            ("a vazão da P-101, ou melhor, da P-102", ("P-102", None)),
        ],
    )
    def test_an_id_said_by_its_letters_names(self, text: str, expected: tuple[str | None, str | None]) -> None:
        assert _named(text) == expected

    @pytest.mark.parametrize("text", ["tk 302 level at 8 am yesterday", "nivel del tk 302"])
    def test_a_kinds_usual_letters_before_an_unknown_number_are_an_unknown_id(self, text: str) -> None:
        """ "tk 302" where the site has T-301 only: asked back, not answered for the one tank."""
        got = resolve_subject(text, NAMESPACE, ALIASES)
        assert isinstance(got, Clarification) and got.reason == "unknown_name"

    def test_a_consonant_said_alone_before_an_unknown_number_is_an_unknown_id(self) -> None:
        """ "C two oh five" where the site has no C-205: asked back, not answered for the whole plant."""
        got = resolve_subject("how many stops did C two oh five have yesterday", NAMESPACE, ALIASES)
        assert isinstance(got, Clarification) and got.reason == "unknown_name"

    @pytest.mark.parametrize(
        ("text", "candidates"),
        [
            ("cuántas paradas tuvo la pe ciento tres ayer", ["P-101", "P-102"]),
            ("qué tal estuvo la línea dos ayer cuántas paradas", ["L1"]),
            ("la ele dos", ["L1"]),
            ("what was the vibration on compressor sea two oh two yesterday", ["C-201"]),
            ("how many stops on line two yesterday", ["L1"]),
            ("qual o nível do tanque tê três zero dois", ["T-301"]),
            ("quantas paradas a pê cento e três teve ontem", ["P-101", "P-102"]),
        ],
    )
    def test_an_id_the_plant_lacks_asks_back(self, text: str, candidates: list[str]) -> None:
        """Never the whole plant (nor its one line) for an id said that the plant does not have."""
        assert _named(text) == Clarification(reason="unknown_name", candidates=candidates)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("te doy las gracias, cuántas paradas hubo ayer", (None, None)),
            ("te lo digo a las dos", (None, None)),
            ("cuántas paradas hubo ayer a las dos", (None, None)),
            ("I see two stops yesterday, why", (None, None)),
            ("I see 150 alarms on the board", (None, None)),  # "see" the verb
            ("did you see two oh one alarms", (None, None)),
            ("see 10 stops", (None, None)),  # the C-s have three digits
            ("tea break at ten yesterday how many stops", (None, None)),
            ("pea soup at 12:30", (None, None)),
            ("ele parou duas vezes ontem", (None, None)),
            ("cê viu as paradas de ontem", (None, None)),
            ("paró la línea dos veces ayer", (None, "L1")),  # twice, not line 2
            ("te ka trescientos uno", (None, None)),  # the plant has no TK-s
        ],
    )
    def test_letter_words_without_an_id_stay_words(self, text: str, expected: tuple[str | None, str | None]) -> None:
        assert _named(text) == expected

    def test_the_namespaces_letters_decide(self) -> None:
        """Two letters said ("te ka") are a TK- where the plant has them; "kay" a K- where its compressors are K-s."""
        namespace = _spoken_namespace(["TK-301", "T-301", "K-201"], ["L1"])
        assert _named("nivel del te ka trescientos uno", namespace) == ("TK-301", None)
        assert _named("nivel del te trescientos uno", namespace) == ("T-301", None)
        assert _named("stops of kay two oh one", namespace) == ("K-201", None)
        assert _named("stops of sea two oh one", namespace) == (None, None)  # no C- there: "sea" is a word

    @settings(max_examples=300)
    @given(
        data=st.data(),
        ids=st.dictionaries(st.sampled_from(sorted(_SPOKEN_LETTERS)), st.integers(100, 999), min_size=1, max_size=5),
        line=st.integers(1, 9),
        lang=st.sampled_from(["es", "en", "pt"]),
        frame=st.sampled_from(
            [
                "cuántas paradas tuvo la {} ayer",
                "how many times did {} go down yesterday",
                "quantas paradas teve a {} ontem",
                "{}",
            ]
        ),
    )
    def test_any_id_said_by_its_letters_resolves_to_it(
        self, data: st.DataObject, ids: dict[str, int], line: int, lang: str, frame: str
    ) -> None:
        """Any id of the namespace said by its letters' names and its number in words (digit by digit, or in full in
        es and pt) resolves to that id; a number no id has asks back."""
        assets = [f"{letters.upper()}-{number}" for letters, number in ids.items()]
        namespace = _spoken_namespace(assets, [f"L{line}"])
        letters = data.draw(st.sampled_from(sorted(ids)))
        number = ids[letters]
        name = data.draw(st.sampled_from(_SPOKEN_LETTERS[letters]))
        in_full = lang != "en" and data.draw(st.booleans())
        digits = " ".join(_DIGIT_WORDS[lang][int(d)] for d in str(number))
        spoken = _number_in_words(number, lang) if in_full else digits
        assert _named(frame.format(f"{name} {spoken}"), namespace) == (f"{letters.upper()}-{number}", None)
        line_name = data.draw(st.sampled_from(_LINE_LETTERS))
        assert _named(frame.format(f"{line_name} {_DIGIT_WORDS[lang][line]}"), namespace) == (None, f"L{line}")
        other = data.draw(st.integers(100, 999).filter(lambda n: n not in ids.values()))
        said = _number_in_words(other, lang) if in_full else " ".join(_DIGIT_WORDS[lang][int(d)] for d in str(other))
        got = _named(frame.format(f"{name} {said}"), namespace)
        assert isinstance(got, Clarification) and got.reason == "unknown_name"

    @settings(max_examples=300)
    @given(
        words=st.lists(
            st.sampled_from(
                [
                    *_LETTER_WORDS,
                    *"doy las gracias break at ayer yesterday ontem I we see you the la el a o de".split(),
                    *"que viu parou cuántas paradas how many stops quantas ? , .".split(),
                    *_NUMBER_WORDS,
                ]
            ),
            max_size=12,
        )
    )
    def test_letter_words_with_no_number_after_them_name_no_id(self, words: list[str]) -> None:
        """Letter names, however many and wherever, with no number right after them name no asset nor line."""
        # a word put between a letter name and a number right after it
        spaced = [
            w
            for a, b in zip(words, [*words[1:], ""], strict=False)
            for w in ([a, "y"] if a in _LETTER_WORDS and b in _NUMBER_WORDS else [a])
        ]
        assert _named(" ".join(spaced)) == (None, None)
