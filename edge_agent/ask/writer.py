"""The answer writer: one to three sentences from the facts, in the question's language, written in code.

Wordings are data (the narrative wing's wording/ask/v1/answers.toml, read through its face); this module picks them
and fills them in. Every figure it writes is a value of a fact as the fact holds it (rounded to at most 2 decimals),
a ratio as a percentage, seconds as whole minutes (seconds under a minute) or a time as HH:MM in the site's
timezone. Subjects are named as people name them: "la vibración de la bomba P-102", "a linha L1", "pump P-101's
vibration", with articles and contractions right (es "del", pt "da"/"do"/"na"/"no"), and counted nouns agree with
their number ("1 parada", "3 paradas"). Plant text (a stop's reason, a note) is cut and quoted; a note that reads
like an instruction is withheld.
"""

from __future__ import annotations

import functools
import tomllib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

from edge_agent.ask.tools import Namespace
from edge_agent.config import ShiftConfig
from edge_agent.reports.narrative import read_wording

# v1: the answer wordings as the writer first shipped them (es, en and pt in one file).
WORDING_VERSION = "v1"
# Sentences in an answer: the spec's "one to three" — each fact's main sentence first, then their details.
MAX_SENTENCES = 3
# Characters of plant text (a note, a reason) quoted in an answer: a sentence's worth.
TEXT_MAX = 140
# Assets listed by name in the namespace answer; the rest are counted.
LIST_MAX = 8


@functools.cache
def wording() -> dict[str, Any]:
    return tomllib.loads(read_wording("ask", WORDING_VERSION).raw.decode("utf-8"))


@dataclass(frozen=True)
class Finding:
    """One tool's fact with what it was computed over: its window fact's values (None without one) and arguments."""

    kind: str
    subject: str
    values: dict[str, Any]
    window: dict[str, Any] | None
    args: dict[str, Any]


@dataclass(frozen=True)
class Label:
    """A name with its article: ("la", "bomba P-101"); en has none for assets and lines."""

    article: str
    noun: str


class Writer:
    def __init__(self, lang: str, namespace: Namespace, shifts: Sequence[ShiftConfig]) -> None:
        self.lang = lang
        self.w = wording()[lang]
        self.namespace = namespace
        self.tz = ZoneInfo(namespace.timezone)
        self.shifts = list(shifts)
        self._assets = {a.asset: a for a in namespace.assets}
        self._tags = {t.tag: t for t in namespace.tags}
        self._lines = {line.line for line in namespace.lines}

    # --- the answer --------------------------------------------------------------------------------------------

    def answer(self, findings: Sequence[Finding]) -> str:
        """Each finding's first sentence, then their further ones, to at most MAX_SENTENCES. Findings of one kind
        (the same question of several assets: "las bombas") give their first sentences only: a further one ("the
        main cause was...") would not say whose it is."""
        per_fact = [self.sentences(f) for f in findings]
        if len({f.kind for f in findings}) < len(findings):
            per_fact = [s[:1] for s in per_fact]
        chosen: list[str] = []
        depth = 0
        while len(chosen) < MAX_SENTENCES and any(len(s) > depth for s in per_fact):
            chosen += [s[depth] for s in per_fact if len(s) > depth][: MAX_SENTENCES - len(chosen)]
            depth += 1
        return " ".join(chosen)

    def clarification(self, reason: str, candidates: Sequence[str]) -> str:
        if candidates:
            names = [self.the(self.label(c)) if c in self._assets or c in self._lines else c for c in candidates]
            return self.phrase("clarify.candidates", list=self.join(names, self.w["or"]))
        key = {"unknown_name": "unknown", "unknown_tag": "unknown", "unknown_asset": "unknown"}.get(reason)
        key = key or ("future" if reason == "future_window" else "other")
        return self.phrase(f"clarify.{key}")

    def refusal(self, reason: str) -> str:
        key = f"refused.{reason}"
        return self.phrase(key if key in self.w["phrases"] else "refused.other")

    # --- sentences per tool ------------------------------------------------------------------------------------

    def sentences(self, f: Finding) -> list[str]:
        method = getattr(self, f"_{f.kind}", None)
        return method(f) if method is not None else []

    def _stops(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        during, stops = self.during(f), self.count(v["count"], "stop")
        if v["count"] == 0:
            return [self.phrase("stops.none", **subject, during=during)]
        top = max(v["reasons"], key=lambda r: (r["total_s"], r["count"])) if v["reasons"] else None
        reason = self.reason(top["reason"]) if top is not None else None
        if v["count"] == 1 and v["longest_at"] is not None:
            at, dur = self.at(v["longest_at"], f), self.duration(v["longest_s"])
            out = [self.phrase("stops.one", **subject, during=during, stops=stops, at=at, dur=dur)]
            if reason is not None:
                out.append(self.phrase("stops.cause_one", reason=reason))
        else:
            out = [self.phrase("stops.total", **subject, during=during, stops=stops, dur=self.duration(v["total_s"]))]
            if top is not None:
                cause = {"stops": self.count(top["count"], "stop"), "dur": self.duration(top["total_s"])}
                out.append(self.phrase("stops.cause", reason=reason, **cause))
            if v["longest_s"] is not None and v["longest_at"] is not None:
                at, dur = self.at(v["longest_at"], f), self.duration(v["longest_s"])
                out.append(self.phrase("stops.longest", at=at, dur=dur))
        if v["open_count"]:
            key = "stops.open_one" if v["open_count"] == 1 else "stops.open_many"
            out.append(self.phrase(key, n=self.number(v["open_count"])))
        return out

    def _tag_stats(self, f: Finding) -> list[str]:
        v = f.values
        tag = self.tag(v["tag"])
        unit = self.unit(v["unit"])
        if not v["count"] or v["max"] is None:
            return [self.phrase("tag.none", of_tag=self.of(tag), during=self.during(f))]
        names = {"Tag": self.cap(self.the(tag)), "unit": unit, "during": self.during(f)}
        if v["count"] == 1:
            return [self.phrase("tag.single", **names, max=self.number(v["max"]), at=self.at(v["max_at"], f))]
        out = [
            self.phrase(
                "tag.range",
                **names,
                min=self.number(v["min"]),
                max=self.number(v["max"]),
                mean=self.number(v["mean"]),
            ),
            self.phrase("tag.max_at", at=self.at(v["max_at"], f), at_min=self.at(v["min_at"], f)),
        ]
        if v["last"] is not None and v["last_at"] is not None:
            out.append(self.phrase("tag.last", last=self.number(v["last"]), unit=unit, at=self.at(v["last_at"], f)))
        return out

    def _tag_value_at(self, f: Finding) -> list[str]:
        v = f.values
        tag = self.tag(v["tag"])
        value = v["value"]
        if isinstance(value, bool):  # a run state: said of the asset ("la bomba P-101 estaba parada")
            info = self._tags.get(v["tag"])
            owner = self.label(info.asset if info is not None else v["tag"].partition(".")[0])
            state = self.w["yes" if value else "no"][owner.article in ("la", "a")]
            at = self.at(v["sampled_at"], f)
            return [self.phrase("value.state", Subject=self.cap(self.the(owner)), state=state, at=at)]
        if isinstance(value, int | float):
            shown, unit = self.number(value), self.unit(v["unit"])
        elif value is None:
            shown, unit = self.w["none"], ""
        else:
            shown, unit = f"«{self.text(str(value))}»" if self.lang == "es" else f"“{self.text(str(value))}”", ""
        return [self.phrase("value.at", of_tag=self.of(tag), value=shown, unit=unit, at=self.at(v["sampled_at"], f))]

    def _production(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        if not v["produced"] or v["unit"] is None:
            return [self.phrase("production.none", **subject, during=self.during(f))]
        unit = self.unit(v["unit"])
        out = [
            self.phrase(
                "production.total", **subject, produced=self.number(v["produced"]), unit=unit, during=self.during(f)
            )
        ]
        if v["scrap"] is not None and v["good"] is not None:
            out.append(
                self.phrase("production.scrap", scrap=self.number(v["scrap"]), good=self.number(v["good"]), unit=unit)
            )
        else:
            out.append(self.phrase("production.no_scrap"))
        return out

    def _quality_checks(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        if v["count"] == 0:
            return [self.phrase("quality.none", **subject, during=self.during(f))]
        out = [
            self.phrase(
                "quality.total",
                **subject,
                during=self.during(f),
                checks=self.count(v["count"], "check"),
                passed=self.count(v["passed"], "passed"),
                failed=self.count(v["failed"], "failed"),
            )
        ]
        failed = [c for c in v["checks"] if c["result"] == "fail"]
        if failed:
            last = failed[0]  # newest first
            out.append(self.phrase("quality.last_failed", at=self.at(last["at"], f), in_asset=self.in_(last["asset"])))
        return out

    def _alarms(self, f: Finding) -> list[str]:
        v, subject = f.values, self.subject(f)
        out = []
        if v["count"] == 0:
            out.append(self.phrase("alarms.none", **subject, during=self.during(f)))
        else:
            p = v["by_priority"]
            out.append(
                self.phrase(
                    "alarms.total",
                    **subject,
                    during=self.during(f),
                    alarms=self.count(v["count"], "alarm"),
                    high=self.number(p["high"]),
                    medium=self.number(p["medium"]),
                    low=self.number(p["low"]),
                )
            )
        active = v.get("active_at")
        if active is not None:
            if not active:
                out.insert(0, self.phrase("alarms.active_none"))
            else:
                oldest = min(active, key=lambda a: a["since"])
                key = "alarms.active_one" if len(active) == 1 else "alarms.active_many"
                out.insert(
                    0,
                    self.phrase(
                        key,
                        n=self.number(v["active_count"]),
                        condition=self.text(oldest["condition"]),
                        in_asset=self.in_(oldest["asset"]),
                        at=self.at(oldest["since"], f, "since"),
                    ),
                )
        if v["count"] and v["most_frequent"]:
            top = v["most_frequent"][0]
            out.append(
                self.phrase(
                    "alarms.frequent",
                    condition=self.text(top["condition"]),
                    in_asset=self.in_(top["asset"]),
                    times=self.count(top["count"], "time"),
                )
            )
        return out

    def _notes(self, f: Finding) -> list[str]:
        v = f.values
        if not v["notes"]:
            return [self.phrase("notes.none", during=self.during(f))]
        latest = v["notes"][0]  # newest first
        text = self.w["withheld"] if latest["flagged"] else self.text(latest["text"])
        return [
            self.phrase(
                "notes.latest",
                notes=self.count(v["count"], "note"),
                during=self.during(f),
                author=self.text(latest["author"]),
                at=self.at(latest["at"], f),
                text=text,
            )
        ]

    def _kpis(self, f: Finding) -> list[str]:
        out = []
        for fact in f.values["facts"]:
            sentence = self._kpi(fact, f)
            if sentence is not None:
                out.append(sentence)
        return out or [self.phrase("kpis.none", during=self.during(f))]

    def _kpi(self, fact: dict[str, Any], f: Finding) -> str | None:
        v, kind = fact["values"], fact["kind"]
        subject = self.label(fact["subject"]) if fact["subject"] else self.label(None)
        if kind == "oee":
            if v.get("oee") is None:
                return self.phrase(
                    "oee.missing",
                    of_subject=self.of(subject),
                    during=self.during(f),
                    missing=self.text(v.get("missing") or self.w["na"]),
                )
            return self.phrase(
                "oee.value",
                of_subject=self.of(subject),
                during=self.during(f),
                oee=self.percent(v["oee"]),
                availability=self.percent(v.get("availability")),
                performance=self.percent(v.get("performance")),
                quality=self.percent(v.get("quality")),
            )
        if kind == "mtbf":
            mttr: dict[str, Any] = next(
                (x["values"] for x in f.values["facts"] if x["kind"] == "mttr" and x["subject"] == fact["subject"]), {}
            )
            if not v.get("failure_count") or v.get("mtbf_s") is None:
                return self.phrase("reliability.none", Subject=self.cap(self.the(subject)), during=self.during(f))
            return self.phrase(
                "reliability.value",
                of_subject=self.of(subject),
                during=self.during(f),
                mtbf=self.duration(v["mtbf_s"]),
                mttr=self.duration(mttr["mttr_s"]) if mttr.get("mttr_s") is not None else self.w["na"],
                failures=self.count(v["failure_count"], "failure"),
            )
        if kind == "alarm_rate":
            return self.phrase(
                "alarm_rate.value",
                console=self.text(fact["subject"] or ""),
                alarms=self.count(v["count"], "alarm"),
                during=self.during(f),
                per_hour=self.number(v["per_hour_mean"]),
                rating=self.w["labels"].get(str(v.get("rating")), self.w["na"]),
            )
        return None

    def _reports_list(self, f: Finding) -> list[str]:
        reports = f.values["reports"]
        during = self.during(f) if f.window is not None else ""
        if not reports:
            return [self.phrase("reports.none", during=during)]
        newest = max(reports, key=lambda r: r["requested_at"])
        return [
            self.phrase(
                "reports.list",
                reports=self.count(len(reports), "report"),
                during=during,
                report_id=newest["report_id"],
                type=self.w["labels"].get(newest["type"], newest["type"]),
                status=self.w["labels"].get(newest["status"], newest["status"]),
                at=self.at(newest["requested_at"], None),
            )
        ]

    def _report_get(self, f: Finding) -> list[str]:
        v = f.values
        return [
            self.phrase(
                "report.get",
                report_id=v["report_id"],
                type=self.w["labels"].get(v["type"], v["type"]),
                status=self.w["labels"].get(v["status"], v["status"]),
                at=self.at(v["requested_at"], None),
                facts=self.count(len(v["facts"]), "fact"),
            )
        ]

    def _namespace(self, f: Finding) -> list[str]:
        v = f.values
        out = [
            self.phrase(
                "namespace.summary",
                site=v["site"],
                lines=self.count(len(v["lines"]), "line"),
                assets=self.count(len(v["assets"]), "asset"),
                tags=self.count(len(v["tags"]), "tag"),
            )
        ]
        if v["assets"]:
            names = [self.label(a["asset"]).noun for a in v["assets"][:LIST_MAX]]
            out.append(self.phrase("namespace.assets", list=self.join(names, self.w["and"])))
        return out

    # --- names -------------------------------------------------------------------------------------------------

    def label(self, name: str | None) -> Label:
        """An asset, line or the site, with its article: es ("la", "bomba P-101"), pt ("a", "linha L1")."""
        if name is None or name == self.namespace.site:
            return _split(self.w["site"])
        if name in self._lines and name not in self._assets:
            return _split(self.w["line"].format(id=name))
        kind = self.w["kinds"].get(name.split("-", 1)[0]) if "-" in name else None
        return _split(kind.format(id=name)) if kind else Label("", self.w["asset"].format(id=name))

    def tag(self, tag: str) -> Label:
        """'la vibración de la bomba P-102' / "pump P-102's vibration" / 'a vibração da bomba P-102'."""
        info = self._tags.get(tag)
        asset = info.asset if info is not None else tag.partition(".")[0]
        names = info.names.get(self.lang) if info is not None else None  # type: ignore[call-overload]
        name = names[0] if names else tag
        owner = self.label(asset)
        if self.lang == "en":
            return Label("", f"{owner.noun}'s {name}")
        return Label(self._article(name), f"{name} {self.of(owner)}")

    def subject(self, f: Finding) -> dict[str, str]:
        """{Subject}: the finding's asset, line or the site, at a sentence's start."""
        label = self.label(f.args.get("asset") or f.args.get("line"))
        return {"Subject": self.cap(self.the(label))}

    def the(self, label: Label) -> str:
        return f"{label.article} {label.noun}" if label.article else label.noun

    def of(self, label: Label) -> str:
        """es de + el → del; pt de + a/o → da/do."""
        contracted = {"es": {"el": "del"}, "pt": {"a": "da", "o": "do", "as": "das", "os": "dos"}}.get(self.lang, {})
        if label.article in contracted:
            return f"{contracted[label.article]} {label.noun}"
        return f"of {label.noun}" if self.lang == "en" else f"de {self.the(label)}"

    def in_(self, asset: str) -> str:
        """es en la bomba P-101; pt na bomba P-101 (em + a); en on pump P-101."""
        label = self.label(asset)
        if self.lang == "pt" and label.article in ("a", "o"):
            return f"n{label.article} {label.noun}"
        return f"{'on' if self.lang == 'en' else 'en' if self.lang == 'es' else 'em'} {self.the(label)}"

    def _article(self, noun: str) -> str:
        """es la/el, pt a/o by the first word's gender (its ending, then the wording's exceptions)."""
        word = noun.split()[0].casefold()
        if word in self.w["feminine"]:
            feminine = True
        elif word in self.w["masculine"]:
            feminine = False
        else:
            endings = (
                ("a", "ción", "sión", "dad", "tad", "tud", "umbre")
                if self.lang == "es"
                else ("a", "ção", "são", "dade", "gem", "ência")
            )
            feminine = _bare(word).endswith(tuple(_bare(e) for e in endings))
        if self.lang == "es":
            return "la" if feminine else "el"
        return "a" if feminine else "o"

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
        """A stop's reason code in the answer's language (wording's `reasons`), else with spaces for underscores."""
        return self.text(str(self.w["reasons"].get(code) or code.replace("_", " ")))

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


def shift_of(start: datetime, end: datetime, tz: ZoneInfo, shifts: Sequence[ShiftConfig]) -> str | None:
    """The shift whose occurrence starts at `start` and ends at or after `end` (a shift so far), or None."""
    local = start.astimezone(tz)
    for shift in shifts:
        h, m = map(int, shift.start.split(":"))
        eh, em = map(int, shift.end.split(":"))
        if (local.hour, local.minute, local.second, local.microsecond) != (h, m, 0, 0):
            continue
        shift_end = local.replace(hour=eh, minute=em)
        if (eh, em) <= (h, m):
            shift_end += timedelta(days=1)
        if end <= shift_end.astimezone(end.tzinfo):
            return shift.name
    return None


def _split(text: str) -> Label:
    article, _, noun = text.partition(" ")
    return (
        Label(article, noun)
        if noun and article in ("el", "la", "los", "las", "o", "a", "os", "as")
        else Label("", text)
    )


def _bare(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _number(value: float | int | Decimal, places: int = 2) -> str:
    """At most `places` decimals (half up), no trailing zeros, "." as the decimal point: 4.50 → "4.5"."""
    exact = value if isinstance(value, Decimal) else Decimal(repr(value))
    rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = format(rounded.normalize(), "f")
    return "0" if text in ("-0", "") else text


def _parse(value: str | datetime) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)
