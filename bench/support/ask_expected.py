"""What bench.ask holds an answer to: the simulated plant's history, the figure each question asks for computed
from the stored records alone (never through the ask's tools or the facts wing), and the verdict on a reply."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

from edge_agent.base.types import StoredRecord
from edge_agent.sim.records import plant_records
from edge_agent.store import Store

# Not a seed of the narrator's corpus (training 1000-1599, test 0-39) nor of any test (3, 7, 8, 42).
SEED = 4242
TZ = "America/Mexico_City"
SHIFTS = [
    {"name": "A", "start": "06:00", "end": "14:00"},
    {"name": "B", "start": "14:00", "end": "22:00"},
    {"name": "C", "start": "22:00", "end": "06:00"},
]
# 30 s: a day holds 2 880 samples a tag, ~70 000 records in all; the demo's OPC UA sampling is 10 s.
TICK_S = 30.0
NUMBER = re.compile(r"\d+(?:\.\d+)?")


# --- the plant's history -------------------------------------------------------------------------------------------


def history_start(now: datetime) -> datetime:
    """20:00 the day before yesterday, site time: yesterday whole and last night are stored."""
    tz = ZoneInfo(TZ)
    day = now.astimezone(tz).date() - timedelta(days=2)
    return datetime(day.year, day.month, day.day, 20, 0, tzinfo=tz)


def history(now: datetime) -> list[StoredRecord]:
    start = history_start(now)
    hours = (now - timedelta(minutes=1) - start).total_seconds() / 3600
    return plant_records(SEED, start, hours, tick_s=TICK_S, kpi_scenarios=True)


# --- the expected figures, from the records alone ------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """A figure as the answer must write it, and the ids of the records that determine it (any one cited)."""

    text: str
    value: Decimal
    ids: frozenset[int]
    minutes: bool = False  # a duration: the facts hold it in seconds


def local(day_offset: int, hm: str, today: date) -> datetime:
    day = today + timedelta(days=day_offset)
    hour, minute = (int(x) for x in hm.split(":"))
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=ZoneInfo(TZ))


def window(spec: str, now: datetime) -> tuple[datetime, datetime]:
    """The window a question's `window` names (bench/data/ask_questions.toml's header), UTC, end capped at now."""
    today = now.astimezone(ZoneInfo(TZ)).date()
    kind, *parts = spec.split(":")
    if kind == "day":
        n = int(parts[0])
        start, end = local(n, "00:00", today), local(n + 1, "00:00", today)
    elif kind == "shift":
        bounds = next(s for s in SHIFTS if s["name"] == parts[0])
        n = int(parts[1])
        start, end = local(n, bounds["start"], today), local(n, bounds["end"], today)
        end = end if end > start else end + timedelta(days=1)
    elif kind in ("hours", "part"):
        n = int(parts[0])
        start, end = local(n, f"{parts[1]}:00", today), local(n, f"{parts[2]}:00", today)
    elif kind == "prevshift":  # the shift before the one under way
        occurrences = sorted(
            (local(n, b["start"], today), local(n, b["end"], today) + timedelta(days=b["end"] <= b["start"]))
            for n in (-2, -1, 0)
            for b in SHIFTS
        )
        current = next(i for i, (s, e) in enumerate(occurrences) if s <= now < e)
        start, end = occurrences[current - 1]
    elif kind == "curshift":  # the shift under way, from its start to now ("so far this shift")
        occurrences = sorted(
            (local(n, b["start"], today), local(n, b["end"], today) + timedelta(days=b["end"] <= b["start"]))
            for n in (-2, -1, 0)
            for b in SHIFTS
        )
        start, end = next((s, e) for s, e in occurrences if s <= now < e)
    elif kind == "night":
        n = int(parts[0])
        start, end = local(n - 1, "20:00", today), local(n, "06:00", today)
    elif kind == "since":  # "since:-1:18": from yesterday 18:00 up to now ("desde ayer a las 18", "since 6 pm")
        start, end = local(int(parts[0]), f"{parts[1]}:00", today), now
    else:
        raise ValueError(f"unknown window {spec!r}")
    return start.astimezone(UTC), min(end, now).astimezone(UTC)


def instant(spec: str, now: datetime) -> datetime:
    offset, hm = spec.split(":", 1)
    return local(int(offset), hm, now.astimezone(ZoneInfo(TZ)).date()).astimezone(UTC)


def shown(value: Decimal | float | int, places: int = 2) -> str:
    """A number as the answers write it: at most `places` decimals, half up, no trailing zeros."""
    rounded = Decimal(repr(value) if isinstance(value, float) else value).quantize(
        Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP
    )
    return format(rounded.normalize(), "f")


def exact(value: float | int) -> Decimal:
    return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)


def _mes(rows: Iterable[StoredRecord], kind: str, who: str | None) -> list[StoredRecord]:
    """MES events of `kind`, of the asset or line `who` (None: all)."""
    return [
        r
        for r in rows
        if r.kind == "mes_event"
        and isinstance(r.value, dict)
        and r.value.get("type") == kind
        and (who is None or who in (r.value.get("asset"), r.value.get("line")))
    ]


def _stops(rows: list[StoredRecord], who: str | None, end: datetime) -> list[tuple[StoredRecord, float]]:
    """Stops begun in the window with their durations (an open one counts up to the window's end)."""
    starts = _mes(rows, "downtime_start", who)
    ends = {r.value["downtime_id"]: r.source_time for r in _mes(rows, "downtime_end", None)}
    out = []
    for s in starts:
        finish = ends.get(s.value["downtime_id"])
        finish = min(finish, end) if finish is not None and finish >= s.source_time else end
        out.append((s, (finish - s.source_time).total_seconds()))
    return out


def askable(q: dict[str, Any], now: datetime) -> bool:
    """Whether `q` has a figure at `now`: its moment has passed, or its window holds a stored tick (the history ends a
    minute before `now`). "Today between 6 and 7" asked at 00:18 site time is about hours not yet come."""
    if q["figure"] in ("value_at", "active"):
        return instant(q["at"], now) < now - timedelta(minutes=1)
    start, end = window(q["window"], now)
    return start + timedelta(seconds=TICK_S) < min(end, now - timedelta(minutes=1))


def expectations(q: dict[str, Any], store: Store, now: datetime) -> list[Expected]:
    """The figures a question asks for: one, or one per asset of `assets` ("las bombas"; `tag_of`: its tag's)."""
    if "assets" not in q:
        return [expected(q, store, now)]
    return [
        expected({**q, "asset": a, **({"tag": f"{a}.{q['tag_of']}"} if "tag_of" in q else {})}, store, now)
        for a in q["assets"]
    ]


def expected(q: dict[str, Any], store: Store, now: datetime) -> Expected:
    """The figure question `q` asks for, from the stored records (module docstring)."""
    figure = q["figure"]
    if figure == "value_at":
        at = instant(q["at"], now)
        (sample,) = store.records(None, at + timedelta(microseconds=1), keys=[q["tag"]], limit=1, newest_first=True)
        return Expected(shown(sample.value), exact(sample.value), frozenset({sample.id}))
    if figure == "active":
        at = instant(q["at"], now)
        alarms = store.records(None, at + timedelta(microseconds=1), kinds=["alarm"])  # however long ago raised
        last: dict[tuple[str, str], StoredRecord] = {}
        for r in alarms:
            if q.get("asset") in (None, r.key):
                last[(r.key, r.value["condition"])] = r
        standing = [r for r in last.values() if r.value["active"]]
        return Expected(str(len(standing)), Decimal(len(standing)), frozenset(r.id for r in standing))
    start, end = window(q["window"], now)
    if figure in ("max", "min", "mean"):
        samples = [
            r
            for r in store.records(start, end, keys=[q["tag"]], kinds=["tag_value"])
            if r.quality == "good" and isinstance(r.value, (int, float)) and not isinstance(r.value, bool)
        ]
        values = [exact(r.value) for r in samples]
        if figure == "mean":
            mean = sum(values, Decimal(0)) / len(values)
            return Expected(shown(mean), mean, frozenset(r.id for r in samples))
        best = max(values) if figure == "max" else min(values)
        return Expected(shown(best), best, frozenset(r.id for r, v in zip(samples, values, strict=True) if v == best))
    rows = store.records(start, end, kinds=["mes_event", "alarm"])
    who = q.get("asset") or q.get("line")
    if figure in ("stops", "stop_minutes", "longest_minutes"):
        stops = _stops(rows, who, end)
        if figure == "stops":
            return Expected(str(len(stops)), Decimal(len(stops)), frozenset(s.id for s, _ in stops))
        if figure == "stop_minutes":
            total = sum((exact(d) for _, d in stops), Decimal(0))
            return Expected(shown(total / 60, 0), total, frozenset(s.id for s, _ in stops), minutes=True)
        # no stop in the window at the hour the bench runs ("this shift so far" just after it began): the longest of
        # none is 0, which an answer saying there was none states
        longest = max((d for _, d in stops), default=0)
        ids = frozenset(s.id for s, d in stops if d == longest)
        return Expected(shown(exact(longest) / 60, 0), exact(longest), ids, minutes=True)
    if figure in ("produced", "scrap"):
        counts = _mes(rows, "production_count", who)
        field = "count" if figure == "produced" else "scrap"
        total = sum((Decimal(r.value[field]) for r in counts), Decimal(0))
        return Expected(shown(total), total, frozenset(r.id for r in counts))
    if figure in ("checks", "failed"):
        checks = _mes(rows, "quality_check", who)
        if figure == "failed":
            checks = [r for r in checks if r.value["result"] == "fail"]
        return Expected(str(len(checks)), Decimal(len(checks)), frozenset(r.id for r in checks))
    if figure == "alarms":
        raised = [r for r in rows if r.kind == "alarm" and r.value["active"] and q.get("asset") in (None, r.key)]
        return Expected(str(len(raised)), Decimal(len(raised)), frozenset(r.id for r in raised))
    raise ValueError(f"unknown figure {figure!r}")


# --- checking an answer --------------------------------------------------------------------------------------------


def _values(value: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _values(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _values(v, key)
    else:
        yield key, value


def grounded_numbers(reply: dict[str, Any]) -> set[str]:
    """What an answer's facts let it write: each number as held and rounded to 0-2 decimals, a ratio as a
    percentage, seconds as minutes, a time's local date and HH:MM, digit runs of strings and subjects."""
    tz = ZoneInfo(TZ)
    allowed: set[str] = set()
    for fact in reply["facts"]:
        allowed.update(re.findall(r"\d+", fact["subject"]))
        for key, value in _values(fact["values"]):
            if isinstance(value, bool) or value is None:
                continue
            if isinstance(value, (int, float)):
                number = exact(value)
                for scaled in (number, number * 100, *([number / 60] if key.endswith("_s") else [])):
                    allowed.update(shown(scaled, places) for places in (0, 1, 2))
            elif isinstance(value, str):
                allowed.update(re.findall(r"\d+", value))
                try:
                    moment = datetime.fromisoformat(value)
                except ValueError:
                    continue
                if moment.tzinfo is not None:
                    at = moment.astimezone(tz)
                    allowed.update({at.strftime("%H"), at.strftime("%M"), str(at.day), str(at.year)})
    return allowed


def made_up(reply: dict[str, Any]) -> set[str]:
    """Numbers the answer writes that its facts do not hold."""
    return set(NUMBER.findall(reply["answer"])) - grounded_numbers(reply)


# A count of zero said in words: "no tuvo alarmas", "had no stops", "não teve alarmes", "nenhuma parada".
_NONE = re.compile(r"\b(?:no|none|not|ningun[oa]?|nao|não|nenhum[a]?)\b", re.IGNORECASE)


def _in_text(figure: str, text: str) -> bool:
    if figure == "0" and _NONE.search(text):
        return True
    return re.search(rf"(?<![\d.]){re.escape(figure)}(?!\d|\.\d)", text) is not None


def _in_facts(want: Expected, reply: dict[str, Any]) -> bool:
    for fact in reply["facts"]:
        for key, value in _values(fact["values"]):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            number = exact(value)
            if want.minutes:
                if key.endswith("_s") and shown(number / 60, 0) == want.text:
                    return True
            elif abs(number - want.value) <= Decimal("0.005"):
                return True
        if not want.minutes and want.value == 0 and fact["kind"] == "alarms" and fact["values"].get("active_at") == []:
            return True
        if fact["kind"] == "alarms" and isinstance(fact["values"].get("active_at"), list):
            if len(fact["values"]["active_at"]) == want.value:
                return True
    return False


def verdict(wants: list[Expected], reply: dict[str, Any]) -> str:
    """ "right", or what is wrong with the answer."""
    if reply.get("status") != "answered":
        return f"{reply.get('status')} ({reply.get('reason')})"
    cited = {i for fact in reply["facts"] for i in fact["ids"]}
    for want in wants:
        if not _in_text(want.text, reply["answer"]):
            return f"figure {want.text} not in the text"
        if not _in_facts(want, reply):
            return f"figure {want.text} not in the facts"
        if want.ids and not cited & want.ids:
            return f"no cited record determines {want.text}"
    return "right"
