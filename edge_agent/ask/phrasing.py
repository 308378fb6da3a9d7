"""How an answer says things in the question's language: names, numbers, times and plant text, filled into the
wordings (wording.py).

Every figure is a value as the fact holds it (rounded to at most 2 decimals), a ratio as a percentage, seconds as
whole minutes (seconds under a minute) or a time as HH:MM in the site's timezone. Subjects are named as people name
them: "la vibración de la bomba P-102", "a linha L1", "pump P-101's vibration", with articles and contractions right
(es "del", pt "da"/"do"/"na"/"no"), and counted nouns agree with their number ("1 parada", "3 paradas"). Plant text
(a stop's reason, a note) is cut at TEXT_MAX characters and quoted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

from edge_agent.ask.tools import Namespace
from edge_agent.ask.wording import wording
from edge_agent.config import ShiftConfig
from edge_agent.reports.narrative import Label, split_label, tag_grammar

# Characters of plant text (a note, a reason) quoted in an answer: a sentence's worth.
TEXT_MAX = 140


@dataclass(frozen=True)
class Finding:
    """One tool's fact with what it was computed over: its window fact's values (None without one) and arguments."""

    kind: str
    subject: str
    values: dict[str, Any]
    window: dict[str, Any] | None
    args: dict[str, Any]


class Phrasing:
    """The answer's language for one namespace: the base of `Writer` (writer.py), which writes the sentences."""

    def __init__(self, lang: str, namespace: Namespace, shifts: Sequence[ShiftConfig]) -> None:
        self.lang = lang
        self.w = wording()[lang]
        self.namespace = namespace
        self.tz = ZoneInfo(namespace.timezone)
        self.shifts = list(shifts)
        self._assets = {a.asset: a for a in namespace.assets}
        self._tags = {t.tag: t for t in namespace.tags}
        self._lines = {line.line for line in namespace.lines}
        # Articles, contractions, asset kinds and stop reasons: the reports' grammar and its words.
        self.grammar = tag_grammar(lang)

    # --- names -------------------------------------------------------------------------------------------------

    def label(self, name: str | None) -> Label:
        """An asset, line or the site, with its article: es ("la", "bomba P-101"), pt ("a", "linha L1")."""
        if name is None or name == self.namespace.site:
            return split_label(self.w["site"])
        if name in self._lines and name not in self._assets:
            return split_label(self.w["line"].format(id=name))
        label = self.grammar.asset(name)
        return label if label.noun != name else Label("", self.w["asset"].format(id=name))

    def tag(self, tag: str) -> Label:
        """'la vibración de la bomba P-102' / "pump P-102's vibration" / 'a vibração da bomba P-102'."""
        info = self._tags.get(tag)
        asset = info.asset if info is not None else tag.partition(".")[0]
        names = info.names.get(self.lang) if info is not None else None  # type: ignore[call-overload]
        name = names[0] if names else tag
        owner = self.label(asset)
        if self.lang == "en":
            return Label("", f"{owner.noun}'s {name}")
        return Label(self.grammar.article(name), f"{name} {self.of(owner)}")

    def subject(self, f: Finding) -> dict[str, str]:
        """{Subject}: the finding's asset, line or the site, at a sentence's start."""
        label = self.label(f.args.get("asset") or f.args.get("line"))
        return {"Subject": self.cap(self.the(label))}

    def the(self, label: Label) -> str:
        return label.the

    def of(self, label: Label) -> str:
        """es de + el → del; pt de + a/o → da/do."""
        return self.grammar.of(label)

    def in_(self, asset: str) -> str:
        """es en la bomba P-101; pt na bomba P-101 (em + a); en on pump P-101."""
        label = self.label(asset)
        if self.lang == "pt" and label.article in ("a", "o"):
            return f"n{label.article} {label.noun}"
        return f"{'on' if self.lang == 'en' else 'en' if self.lang == 'es' else 'em'} {self.the(label)}"

    # --- numbers, times, text ----------------------------------------------------------------------------------

    def count(self, n: int, noun: str) -> str:
        singular, plural = self.w["nouns"][noun]
        return f"{self.number(n)} {singular if n == 1 else plural}"

    def number(self, value: float | int | None) -> str:
        if value is None:
            return str(self.w["na"])
        return _number(value)

    def percent(self, ratio: float | None) -> str:
        if ratio is None:
            return str(self.w["na"])
        return f"{_number(Decimal(repr(float(ratio))) * 100)} %"

    def duration(self, seconds: float) -> str:
        """Whole minutes (half up) from a minute on, else seconds, as the reports write them."""
        if seconds < 60:
            return f"{_number(seconds, 0)} {self.w['nouns']['second'][0]}"
        return f"{_number(Decimal(repr(float(seconds))) / 60, 0)} {self.w['nouns']['minute'][0]}"

    def unit(self, unit: str | None) -> str:
        return f" {unit}" if unit else ""

    def text(self, value: str) -> str:
        """Plant text in an answer: one line without its closing period, cut at TEXT_MAX characters."""
        line = " ".join(value.split()).rstrip(".")
        return line if len(line) <= TEXT_MAX else line[: TEXT_MAX - 1] + "…"

    def reason(self, code: str) -> str:
        """A stop's reason code as the reports say it (`names.Grammar.reason`), else with spaces for underscores."""
        return self.text(self.grammar.reason(code).the)

    def at(self, iso: str | datetime, f: Finding | None, form: str = "at") -> str:
        """'a las 06:20' (es), 'at 06:20', 'às 06:20' (`form` "since": 'las 06:20', after "desde"); with the date
        when the window spans days or is unknown, or the time falls on another day than the window's."""
        local = _parse(iso).astimezone(self.tz)
        with_date = f is None or f.window is None or self._spans_days(f.window)
        if f is not None and f.window is not None:
            with_date = with_date or local.date() != _parse(f.window["start"]).astimezone(self.tz).date()
        one = local.hour == 1
        hm = local.strftime("%H:%M")
        if with_date:
            return self.w["when"][f"{form}_date_one" if one else f"{form}_date"].format(hm=hm, date=self._date(local))
        return self.w["when"][f"{form}_one" if one else form].format(hm=hm)

    def during(self, f: Finding) -> str:
        """The finding's window as people say it: a shift, a day, or between two times."""
        if f.window is None:
            return ""
        when = self.w["when"]
        start = _parse(f.window["start"]).astimezone(self.tz)
        end = _parse(f.window["end"]).astimezone(self.tz)
        shift = f.window.get("shift")
        if shift:
            return when["shift"].format(shift=shift, date=self._date(start))
        if start.time() == end.time() == datetime.min.time() and end - start == timedelta(days=1):
            return when["day"].format(date=self._date(start))
        if not self._spans_days(f.window):
            arts = {"es": ("la", "las"), "pt": ("a", "as"), "en": ("", "")}[self.lang]
            return when["between"].format(
                art_a=arts[start.hour != 1],
                a=start.strftime("%H:%M"),
                art_b=arts[end.hour != 1],
                b=end.strftime("%H:%M"),
                date=self._date(start),
            )
        return when["between_days"].format(
            a=start.strftime("%H:%M"), date_a=self._date(start), b=end.strftime("%H:%M"), date_b=self._date(end)
        )

    def _spans_days(self, window: dict[str, Any]) -> bool:
        start = _parse(window["start"]).astimezone(self.tz)
        last = _parse(window["end"]).astimezone(self.tz) - timedelta(microseconds=1)
        return start.date() != last.date()

    def _date(self, local: datetime) -> str:
        return str(self.w["date"]).format(day=local.day, month=self.w["months"][local.month - 1])

    def join(self, names: Sequence[str], conjunction: str) -> str:
        if len(names) <= 1:
            return "".join(names)
        return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"

    def cap(self, text: str) -> str:
        return text[:1].upper() + text[1:]

    def phrase(self, key: str, **values: Any) -> str:
        text = str(self.w["phrases"][key]).format(**values)
        # An empty placeholder ({during} of a window-less finding) leaves a double or a dangling space.
        return " ".join(text.split()).replace(" .", ".").replace(" ,", ",").replace(" ;", ";").replace(" :", ":")


def _number(value: float | int | Decimal, places: int = 2) -> str:
    """At most `places` decimals (half up), no trailing zeros, "." as the decimal point: 4.50 → "4.5"."""
    exact = value if isinstance(value, Decimal) else Decimal(repr(value))
    rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = format(rounded.normalize(), "f")
    return "0" if text in ("-0", "") else text


def _parse(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)
