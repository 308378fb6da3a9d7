"""Ask benchmark: held-out questions answered right, refusals refused, and the latency of a question over MQTT.

    .venv/bin/python -m bench.ask [--concurrent 8] [--rounds 2] [--no-write]

Starts a private Mosquitto, the agent's AskService (at the default `[ask]` settings) and the outbox publisher, stores
a simulated plant history of seed SEED (from 20:00 the day before yesterday, site time, up to a minute ago), then:
  accuracy  every question of bench/data/ask_questions.toml, one at a time over MQTT. An answerable question counts
            as right when the figure it asks for, computed here in plain Python from the stored records (never
            through the ask's tools or the facts wing), is in the answer's text and in its facts, and the facts cite
            at least one record that determines it (the maximum's sample for a maximum, a counted stop's record for
            a count). Every number an answer writes must be a value of its facts. A question to refuse counts when
            it is refused or asked back.
  latency   request published → reply received, one question at a time (all of the above), and `--concurrent`
            askers at once, each asking all the questions `--rounds` times one after the other: questions per
            minute = questions / (first publish → last reply), against one at a time's (questions / the sum of
            their latencies). The per-user throttle is lifted (bench_config); everything else is at the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import tempfile
import time
import tomllib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bench.report import met, write_section
from edge_agent.ask.topics import reply_namespace, request_topic
from edge_agent.base.broker import Broker
from edge_agent.base.types import StoredRecord, utcnow
from edge_agent.config import AgentConfig
from edge_agent.sim.records import plant_records
from edge_agent.store import Store

COMMAND = ".venv/bin/python -m bench.ask"
QUESTIONS = Path(__file__).resolve().parent / "data" / "ask_questions.toml"
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
# The goals (bench.ask at the defaults, 2 cores).
RIGHT_GOAL = 0.95
REFUSED_GOAL = 0.98
P50_GOAL_S, P95_GOAL_S = 2.0, 4.0
CONCURRENT_RATE_GOAL, CONCURRENT_P95_GOAL_S = 3.0, 10.0
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
    elif kind == "night":
        n = int(parts[0])
        start, end = local(n - 1, "20:00", today), local(n, "06:00", today)
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
        alarms = store.records(at - timedelta(days=2), at + timedelta(microseconds=1), kinds=["alarm"])
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
        longest = max(d for _, d in stops)
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


def _in_text(figure: str, text: str) -> bool:
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


# --- asking over MQTT ----------------------------------------------------------------------------------------------


def bench_config(state: Path, broker: Broker) -> AgentConfig:
    """The agent's defaults but for where things are (the site, its shifts, the broker, the state directory) and the
    per-user throttle: each asker here asks far more than a person's 30 a minute, and a throttled reply is no
    answer (as bench.reports lifts `reports.rate_limit_per_min`)."""
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(state)},
            "mqtt": {"host": broker.host, "port": broker.port, "client_id": "bench-agent"},
            "reports": {"shifts": SHIFTS},
            "ask": {"throttle": 100_000},
        }
    )


class Asker:
    """One person asking: a connected MQTT 5 client, its own reply topic, one question at a time."""

    def __init__(self, config: AgentConfig, user: str) -> None:
        from edge_agent.connectors.mqtt import MqttClient

        self.user = user
        self.topic = f"{request_topic(config)}/{user}"
        client_id = f"bench-{user}-{uuid.uuid4().hex[:6]}"
        self.reply = f"{reply_namespace(config, user)}/{client_id}"
        mqtt = config.mqtt.model_copy(update={"session_expiry_s": 0})
        self.client = MqttClient(mqtt, client_id=client_id)

    async def __aenter__(self) -> Asker:
        await self.client.__aenter__()
        await self.client.wait_connected(timeout=30)
        await self.client.subscribe(self.reply, qos=1)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.__aexit__(*exc)

    async def ask(self, question: str, lang: str) -> tuple[dict[str, Any], float]:
        correlation = uuid.uuid4().bytes
        payload = json.dumps({"question": question, "lang": lang}, ensure_ascii=False).encode()
        start = time.perf_counter()
        await self.client.publish(self.topic, payload, qos=1, response_topic=self.reply, correlation_data=correlation)
        while True:
            message = await self.client.receive()
            await message.ack()
            if message.correlation_data == correlation:
                return json.loads(message.payload), time.perf_counter() - start


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p * (len(ordered) - 1))))]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from edge_agent.ask.service import AskService
    from edge_agent.audit import AuditLog
    from edge_agent.connectors.mqtt import MqttClient
    from edge_agent.publish.outbox import OutboxPublisher

    data = tomllib.loads(QUESTIONS.read_text(encoding="utf-8"))
    answerable, refuse = data["answerable"], data["refuse"]
    now = utcnow()
    with tempfile.TemporaryDirectory() as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            config = bench_config(Path(tmp) / "state", broker)
            store = Store(config.paths.store_path)
            store.insert_records(history(now))
            wanted = [expectations(q, store, now) for q in answerable]
            audit = AuditLog.open(config.paths.audit_dir, origin="edge-agent/demo")
            outbox = OutboxPublisher(config.mqtt, store, client_id="bench-outbox", poll_s=0.2)
            service = AskService(config, store, audit, outbox_wake=outbox.wake, mqtt_client=MqttClient)
            ready = [asyncio.Event(), asyncio.Event()]
            tasks = [asyncio.create_task(service.run(ready[0])), asyncio.create_task(outbox.run(ready[1]))]
            try:
                async with asyncio.timeout(60):
                    await asyncio.gather(*(e.wait() for e in ready))
                result = await measure(config, answerable, refuse, wanted, args)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                audit.close()
                store.close()
        finally:
            broker.stop()
    return result


async def measure(
    config: AgentConfig,
    answerable: list[dict[str, Any]],
    refuse: list[dict[str, Any]],
    wanted: list[list[Expected]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    users = [f"asker-{i}" for i in range(max(args.concurrent, 1))]
    askers = [Asker(config, user) for user in users]
    for asker in askers:
        await asker.__aenter__()
    try:
        await askers[0].ask(answerable[0]["q"], answerable[0]["lang"])  # one-off costs (imports, first reads)
        single: list[float] = []
        outcomes: list[dict[str, Any]] = []
        # One at a time, the askers in turn: each stays within the default per-user throttle (30 a minute).
        everything = [*answerable, *refuse]
        for i, q in enumerate(everything):
            reply, seconds = await askers[i % len(askers)].ask(q["q"], q["lang"])
            single.append(seconds)
            outcomes.append({"q": q["q"], "lang": q["lang"], "reply": reply})
        single_elapsed = sum(single)

        # Each asker: the same questions, one after the other, each from its own place in the list. A reply whose
        # status differs from the one-at-a-time reply to that question is counted (none should).
        async def person(asker: Asker, offset: int) -> tuple[list[float], int]:
            times, changed = [], 0
            for _ in range(args.rounds):
                for j in range(len(everything)):
                    k = (j + offset) % len(everything)
                    reply, seconds = await asker.ask(everything[k]["q"], everything[k]["lang"])
                    times.append(seconds)
                    changed += reply.get("status") != outcomes[k]["reply"].get("status")
            return times, changed

        start = time.perf_counter()
        per_person = await asyncio.gather(*(person(a, 11 * k) for k, a in enumerate(askers)))
        concurrent_elapsed = time.perf_counter() - start
    finally:
        for asker in askers:
            await asker.__aexit__(None, None, None)
    concurrent = [t for times, _ in per_person for t in times]
    result = summarize(answerable, refuse, wanted, outcomes, single, single_elapsed, concurrent, concurrent_elapsed)
    result["concurrent"]["status_changed"] = sum(changed for _, changed in per_person)
    return result


def summarize(
    answerable: list[dict[str, Any]],
    refuse: list[dict[str, Any]],
    wanted: list[list[Expected]],
    outcomes: list[dict[str, Any]],
    single: list[float],
    single_elapsed: float,
    concurrent: list[float],
    concurrent_elapsed: float,
) -> dict[str, Any]:
    asked = outcomes[: len(answerable)]
    verdicts = [verdict(w, o["reply"]) for w, o in zip(wanted, asked, strict=True)]
    wrong = [
        {"q": q["q"], "why": v, "answer": o["reply"].get("answer"), "expected": [x.text for x in w]}
        for q, w, o, v in zip(answerable, wanted, asked, verdicts, strict=True)
        if v != "right"
    ]
    refused = [o["reply"] for o in outcomes[len(answerable) :]]
    answered_anyway = [
        {"q": q["q"], "answer": r.get("answer")}
        for q, r in zip(refuse, refused, strict=True)
        if r.get("status") not in ("refused", "needs_clarification")
    ]
    invented = [
        {"q": o["q"], "numbers": sorted(made_up(o["reply"])), "answer": o["reply"]["answer"]}
        for o in outcomes
        if o["reply"].get("status") == "answered" and made_up(o["reply"])
    ]
    by_lang = {
        lang: f"{sum(v == 'right' for q, v in zip(answerable, verdicts, strict=True) if q['lang'] == lang)}/"
        f"{sum(q['lang'] == lang for q in answerable)}"
        for lang in ("es", "en", "pt")
    }
    return {
        "seed": SEED,
        "answerable": len(answerable),
        "right": verdicts.count("right"),
        "right_by_lang": by_lang,
        "wrong": wrong,
        "to_refuse": len(refuse),
        "refused": len(refuse) - len(answered_anyway),
        "answered_anyway": answered_anyway,
        "invented": invented,
        "single": {
            "questions": len(single),
            "p50_s": statistics.median(single),
            "p95_s": percentile(single, 0.95),
            "per_min": 60.0 * len(single) / single_elapsed,
        },
        "concurrent": {
            "questions": len(concurrent),
            "p50_s": statistics.median(concurrent),
            "p95_s": percentile(concurrent, 0.95),
            "per_min": 60.0 * len(concurrent) / concurrent_elapsed,
        },
    }


def markdown(result: dict[str, Any], concurrent: int) -> tuple[str, str, str]:
    """The section's body, headline and goal line."""
    right = result["right"] / result["answerable"]
    refused = result["refused"] / result["to_refuse"]
    s, c = result["single"], result["concurrent"]
    ratio = c["per_min"] / s["per_min"]
    rows = [
        f"| answered with the right figure and a determining record | {result['right']}/{result['answerable']} "
        f"({right:.1%}; es {result['right_by_lang']['es']}, en {result['right_by_lang']['en']}, "
        f"pt {result['right_by_lang']['pt']}) | ≥ {RIGHT_GOAL:.0%} |",
        f"| commands, out of scope, unknown assets, injections refused or asked back | "
        f"{result['refused']}/{result['to_refuse']} ({refused:.1%}) | ≥ {REFUSED_GOAL:.0%} |",
        f"| answers stating a number not in their facts | {len(result['invented'])} | 0 |",
        f"| one at a time: p50 / p95 request → reply | {s['p50_s']:.3f} s / {s['p95_s']:.3f} s "
        f"({s['questions']} questions, {s['per_min']:.0f}/min) | ≤ {P50_GOAL_S} s / ≤ {P95_GOAL_S} s |",
        f"| {concurrent} askers at once: questions per minute | {c['per_min']:.0f} ({ratio:.1f}× one at a time; "
        f"{c['questions']} questions, {c['status_changed']} with another status than alone) | "
        f"≥ {CONCURRENT_RATE_GOAL:.0f}× |",
        f"| {concurrent} askers at once: p50 / p95 | {c['p50_s']:.3f} s / {c['p95_s']:.3f} s | p95 ≤ "
        f"{CONCURRENT_P95_GOAL_S:.0f} s |",
    ]
    misses = "".join(f"\n- missed: “{w['q']}” — {w['why']}" for w in result["wrong"])
    misses += "".join(f"\n- answered, not refused: “{w['q']}”" for w in result["answered_anyway"])
    misses += "".join(f"\n- number not in its facts: “{w['q']}” {w['numbers']}" for w in result["invented"])
    body = (
        f"Held-out questions (bench/data/ask_questions.toml) about a simulated plant history of seed {result['seed']} "
        "(a seed no test and no training corpus uses), asked over MQTT through the AskService at the default "
        "`[ask]` settings but the per-user throttle (lifted: each asker asks far more than 30 a minute); each "
        "expected figure computed by the bench from the stored records alone. The questions per minute of one at a "
        "time are questions / the sum of their latencies; at once, questions / first publish → last reply.\n\n"
        "| measure | result | goal |\n| --- | --- | --- |\n"
        + "\n".join(rows)
        + "\n"
        + (misses + "\n" if misses else "")
        + f"\nLoad average at the end of the run: {os.getloadavg()[0]:.1f} (other jobs share these CPUs).\n"
    )
    headline = (
        f"{result['right']}/{result['answerable']} right, {result['refused']}/{result['to_refuse']} refused; "
        f"p50 {s['p50_s']:.2f} s, p95 {s['p95_s']:.2f} s; {concurrent} at once {ratio:.1f}× the rate, "
        f"p95 {c['p95_s']:.2f} s"
    )
    ok = (
        right >= RIGHT_GOAL
        and refused >= REFUSED_GOAL
        and not result["invented"]
        and s["p50_s"] <= P50_GOAL_S
        and s["p95_s"] <= P95_GOAL_S
        and ratio >= CONCURRENT_RATE_GOAL
        and c["p95_s"] <= CONCURRENT_P95_GOAL_S
    )
    goal = (
        f"≥ {RIGHT_GOAL:.0%} right, ≥ {REFUSED_GOAL:.0%} refused, no made-up number, p50 ≤ {P50_GOAL_S} s, "
        f"p95 ≤ {P95_GOAL_S} s, {concurrent} at once ≥ {CONCURRENT_RATE_GOAL:.0f}× the rate with p95 ≤ "
        f"{CONCURRENT_P95_GOAL_S:.0f} s: {met(ok)}"
    )
    return body, headline, goal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=8, help="askers at once (default 8)")
    parser.add_argument("--rounds", type=int, default=1, help="times each asker asks the answerable questions")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    print(json.dumps(result, indent=2, ensure_ascii=False))
    if args.no_write:
        return
    body, headline, goal = markdown(result, args.concurrent)
    write_section("ask", "Ask", body, COMMAND, headline=headline, goal=goal)


if __name__ == "__main__":
    main()
