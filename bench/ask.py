"""Ask benchmark: held-out questions answered right, refusals refused, and the latency of a question over MQTT.

    .venv/bin/python -m bench.ask [--concurrent 8] [--rounds 2] [--workers N] [--compute threads] [--questions FILE...]
                                  [--no-write]

Starts a private Mosquitto, the agent's AskService (at the default `[ask]` settings) and the outbox publisher, stores
a simulated plant history of seed SEED (from 20:00 the day before yesterday, site time, up to a minute ago), then:
  accuracy  every question of bench/data/ask_questions*.toml (ours, and sets written blind by writers who never saw
            the ask's code), one at a time over MQTT, counted per file. An answerable question counts
            as right when the figure it asks for, computed here in plain Python from the stored records (never
            through the ask's tools or the facts wing), is in the answer's text and in its facts, and the facts cite
            at least one record that determines it (the maximum's sample for a maximum, a counted stop's record for
            a count). Every number an answer writes must be a value of its facts. A question to refuse counts when
            it is refused or asked back.
  latency   request published → reply received, one question at a time (all of the above), and `--concurrent`
            askers at once, each asking all the questions `--rounds` times one after the other: questions per
            minute = questions / (first publish → last reply), against one at a time's (questions / the sum of
            their latencies). The per-user throttle is lifted (bench_config); everything else is at the defaults
            (`--workers` and `--compute` set `ask.workers` and `ask.compute`, to choose their defaults).
  reports   a report's own work beside the engine (the 8 hours before now read from the store, its facts and section
            prompts, in a thread as the report service does it), REPORT_RUNS times alone, then REPORT_RUNS times while
            the askers keep asking: what the askers cost a report in progress on the same store and CPUs, and what
            the reports cost the askers (their p95 meanwhile).
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
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.report import met, write_section
from bench.support.ask_expected import (
    SEED,
    SHIFTS,
    TZ,
    Expected,
    askable,
    expectations,
    history,
    made_up,
    verdict,
)
from edge_agent.ask.topics import reply_namespace, request_topic
from edge_agent.base.broker import Broker
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig
from edge_agent.reports.narrative import report_facts, section_prompts
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.store import Store

COMMAND = ".venv/bin/python -m bench.ask"
# Reports timed alone, then beside the askers: 10 (~0.3 s each alone) see a run's spread in a few seconds.
REPORT_RUNS = 10
REPO = Path(__file__).resolve().parent.parent
# In the order they were written: ours, blind, blind2, ..., blind10 (not blind10 before blind2).
QUESTIONS = sorted((REPO / "bench" / "data").glob("ask_questions*.toml"), key=lambda p: (len(p.stem), p.stem))
# A blind file's header records how the ask did when it was first asked, before any change made for it: "First
# asked (…): right 73/82 (…), refused 27/27", "First run (…): 65/71 right … and 30/34 refused", over comment lines.
_FIRST_SEEN = re.compile(r"First asked|First run|Asked first")
_RIGHT = re.compile(r"right (\d+)/(\d+)|(\d+)/(\d+) right")
_REFUSED = re.compile(r"refused (\d+)/(\d+)|(\d+)/(\d+) refused")


def first_seen(text: str) -> dict[str, int] | None:
    """The first-asked counts a question file's header records, or None (our own file has none)."""
    header = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    marker = _FIRST_SEEN.search(header)
    said = header[marker.end() : marker.end() + 400] if marker else ""
    right, refused = _RIGHT.search(said), _REFUSED.search(said)
    if right is None or refused is None:
        return None
    r = [int(g) for g in right.groups() if g is not None]
    f = [int(g) for g in refused.groups() if g is not None]
    return {"right": r[0], "answerable": r[1], "refused": f[0], "to_refuse": f[1]}


# Our own hand-written held-out file: the one bench.ask_planner reads (a model reading takes ~1 s a question).
OUR_QUESTIONS = REPO / "bench" / "data" / "ask_questions.toml"
# The goals (bench.ask at the defaults, 2 cores).
RIGHT_GOAL = 0.95
REFUSED_GOAL = 0.98
P50_GOAL_S, P95_GOAL_S = 2.0, 4.0
CONCURRENT_RATE_GOAL, CONCURRENT_P95_GOAL_S = 3.0, 10.0


# --- asking over MQTT ----------------------------------------------------------------------------------------------


def bench_config(state: Path, broker: Broker, workers: int | None = None, compute: str | None = None) -> AgentConfig:
    """The agent's defaults but for where things are (the site, its shifts, the broker, the state directory) and the
    per-user throttle: each asker here asks far more than a person's 30 a minute, and a throttled reply is no
    answer (as bench.reports lifts `reports.rate_limit_per_min`)."""
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(state)},
            "mqtt": {"host": broker.host, "port": broker.port, "client_id": "bench-agent"},
            "reports": {"shifts": SHIFTS},
            "ask": {"throttle": 100_000}
            | ({} if workers is None else {"workers": workers})
            | ({} if compute is None else {"compute": compute}),
        }
    )


def report_work(store: Store, config: AgentConfig, end: datetime) -> float:
    """Seconds of a shift report's own work beside the engine: the 8 hours before `end` read from the store, their
    facts (KPI sections too) and the section prompts."""
    window = ResolvedWindow(start=end - timedelta(hours=8), end=end, shift="bench", timezone=config.site.timezone)
    request = ResolvedRequest(type="shift_summary", language="es", window=window, scope=Scope())
    start = time.perf_counter()
    facts = report_facts(store.records(window.start, window.end), request, config.reports)
    section_prompts(facts, request, config.reports)
    return time.perf_counter() - start


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


async def reports_beside(store: Store, config: AgentConfig, now: datetime) -> list[float]:
    return [await asyncio.to_thread(report_work, store, config, now) for _ in range(REPORT_RUNS)]


async def keep_asking(
    asker: Asker, questions: list[dict[str, Any]], offset: int, until: asyncio.Task[Any]
) -> list[float]:
    """The latencies of `asker`'s questions, one after the other from its place in the list, until `until` is done."""
    times: list[float] = []
    k = offset
    while not until.done():
        q = questions[k % len(questions)]
        times.append((await asker.ask(q["q"], q["lang"]))[1])
        k += 1
    return times


def alone_at(config: AgentConfig, store: Store, user: str, q: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    """The reply `q` gets computed alone, here, at the time the service accepted it (`reply`'s `asked_at`), citing
    the same audit entry: what a reply answered among others must equal byte for byte."""
    from edge_agent.ask.pipeline import answer_at

    now = datetime.fromisoformat(reply["asked_at"])
    alone = answer_at(config, store, q["q"], user=user, lang=q["lang"], now=now)
    return alone.model_dump(mode="json") | {"audit_seq": reply.get("audit_seq")}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p * (len(ordered) - 1))))]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from edge_agent.ask.service import AskService
    from edge_agent.audit import AuditLog
    from edge_agent.connectors.mqtt import MqttClient
    from edge_agent.publish.outbox import OutboxPublisher

    answerable: list[dict[str, Any]] = []
    refuse: list[dict[str, Any]] = []
    seen: dict[str, dict[str, int] | None] = {}
    for path in args.questions:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
        name = str(path.resolve().relative_to(REPO))
        seen[name] = first_seen(text)
        answerable += [{**q, "file": name} for q in data["answerable"]]
        refuse += [{**q, "file": name} for q in data["refuse"]]
    now = utcnow()
    # A question about hours not yet come at the hour the bench runs ("today from 6 to 7" at 00:18) is left out.
    later = [q for q in answerable if not askable(q, now)]
    answerable = [q for q in answerable if askable(q, now)]
    with tempfile.TemporaryDirectory() as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            config = bench_config(Path(tmp) / "state", broker, args.workers, args.compute)
            store = Store(config.paths.store_path)
            store.insert_records(history(now))
            audit = AuditLog.open(config.paths.audit_dir, origin="edge-agent/demo")
            outbox = OutboxPublisher(config.mqtt, store, client_id="bench-outbox", poll_s=0.2)
            service = AskService(config, store, audit, outbox_wake=outbox.wake, mqtt_client=MqttClient)
            ready = [asyncio.Event(), asyncio.Event()]
            tasks = [asyncio.create_task(service.run(ready[0])), asyncio.create_task(outbox.run(ready[1]))]
            try:
                async with asyncio.timeout(60):
                    await asyncio.gather(*(e.wait() for e in ready))
                result = await measure(config, store, now, answerable, refuse, args)
                for name, counts in result["by_file"].items():
                    counts["first_seen"] = seen.get(name)
                result["later"] = [q["q"] for q in later]
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
    store: Store,
    now: datetime,
    answerable: list[dict[str, Any]],
    refuse: list[dict[str, Any]],
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

        # Each asker: the same questions, one after the other, each from its own place in the list.
        at_once: list[tuple[str, dict[str, Any], dict[str, Any]]] = []

        async def person(asker: Asker, offset: int, rounds: int) -> list[float]:
            times = []
            for _ in range(rounds):
                for j in range(len(everything)):
                    k = (j + offset) % len(everything)
                    reply, seconds = await asker.ask(everything[k]["q"], everything[k]["lang"])
                    times.append(seconds)
                    at_once.append((asker.user, everything[k], reply))
            return times

        start = time.perf_counter()
        per_person = await asyncio.gather(*(person(a, 11 * k, args.rounds) for k, a in enumerate(askers)))
        concurrent_elapsed = time.perf_counter() - start

        # REPORT_RUNS reports one after the other, alone, then again while the askers ask (each report in a thread,
        # as the report service runs one): what each costs the other.
        report_alone = [await asyncio.to_thread(report_work, store, config, now) for _ in range(REPORT_RUNS)]
        reporting = asyncio.create_task(reports_beside(store, config, now))
        beside = await asyncio.gather(*(keep_asking(a, everything, 11 * k, reporting) for k, a in enumerate(askers)))
        report_beside = await reporting
    finally:
        for asker in askers:
            await asker.__aexit__(None, None, None)
    concurrent = [t for times in per_person for t in times]
    # A window open to now ("hasta ahora", the shift so far) holds more the later it is asked: each figure as of the
    # moment the service accepted its question (a stop still open had grown a minute past the bench's start); a reply
    # with no such time (throttled, past its deadline) is no answer, judged against the bench's start.
    wanted = [
        expectations(q, store, datetime.fromisoformat(o["reply"]["asked_at"]) if o["reply"].get("asked_at") else now)
        for q, o in zip(answerable, outcomes, strict=False)
    ]
    result = summarize(answerable, refuse, wanted, outcomes, single, single_elapsed, concurrent, concurrent_elapsed)
    changed = [q["q"] for user, q, reply in at_once if reply != alone_at(config, store, user, q, reply)]
    result["concurrent"]["changed"] = len(changed)
    result["concurrent"]["changed_questions"] = sorted(set(changed))
    result["workers"] = config.ask.workers
    result["compute"] = config.ask.compute
    asked_beside = [t for times in beside for t in times]
    result["report"] = {
        "runs": REPORT_RUNS,
        "alone_p50_s": statistics.median(report_alone),
        "alone_max_s": max(report_alone),
        "beside_p50_s": statistics.median(report_beside),
        "beside_max_s": max(report_beside),
        "questions_beside": len(asked_beside),
        "questions_beside_p95_s": percentile(asked_beside, 0.95),
    }
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
    files = list(dict.fromkeys(q["file"] for q in [*answerable, *refuse]))  # in the order asked
    by_file = {
        name: {
            "right": sum(v == "right" for q, v in zip(answerable, verdicts, strict=True) if q["file"] == name),
            "answerable": sum(q["file"] == name for q in answerable),
            "refused": sum(
                r.get("status") in ("refused", "needs_clarification")
                for q, r in zip(refuse, refused, strict=True)
                if q["file"] == name
            ),
            "to_refuse": sum(q["file"] == name for q in refuse),
        }
        for name in files
    }
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
        "by_file": by_file,
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


def first_seen_total(result: dict[str, Any]) -> dict[str, int] | None:
    """The blind sets' first-asked counts summed (`sets`: how many), or None when no file records any."""
    firsts = [f["first_seen"] for f in result["by_file"].values() if f.get("first_seen")]
    if not firsts:
        return None
    total = {k: sum(f[k] for f in firsts) for k in ("right", "answerable", "refused", "to_refuse")}
    return {**total, "sets": len(firsts)}


def markdown(result: dict[str, Any], concurrent: int) -> tuple[str, str, str]:
    """The section's body, headline and goal line."""
    right = result["right"] / result["answerable"]
    refused = result["refused"] / result["to_refuse"]
    s, c, r = result["single"], result["concurrent"], result["report"]
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
        f"{c['questions']} questions, {c['changed']} unlike the same question answered alone at its time) | "
        f"≥ {CONCURRENT_RATE_GOAL:.0f}× |",
        f"| {concurrent} askers at once: p50 / p95 | {c['p50_s']:.3f} s / {c['p95_s']:.3f} s | p95 ≤ "
        f"{CONCURRENT_P95_GOAL_S:.0f} s |",
        f"| a report's own work (8 h: read, facts, prompts), alone → beside {concurrent} askers: p50 / max | "
        f"{r['alone_p50_s']:.2f} s / {r['alone_max_s']:.2f} s → {r['beside_p50_s']:.2f} s / {r['beside_max_s']:.2f} s "
        f"({r['runs']} reports) | — |",
        f"| {concurrent} askers beside those reports: p95 | {r['questions_beside_p95_s']:.3f} s "
        f"({r['questions_beside']} questions) | ≤ {CONCURRENT_P95_GOAL_S:.0f} s |",
    ]
    rows[2:2] = [
        f"| … of which `{name}` | {f['right']}/{f['answerable']} right, {f['refused']}/{f['to_refuse']} refused"
        + (
            f" (first seen: {seen['right']}/{seen['answerable']}, {seen['refused']}/{seen['to_refuse']})"
            if seen
            else ""
        )
        + " | — |"
        for name, f in result["by_file"].items()
        for seen in [f.get("first_seen")]
    ]
    total = first_seen_total(result)
    if total is not None:
        rows[2 + len(result["by_file"]) : 2 + len(result["by_file"])] = [
            f"| the {total['sets']} blind sets as first asked, before any change made for them (new wording) | "
            f"{total['right']}/{total['answerable']} right ({total['right'] / total['answerable']:.1%}), "
            f"{total['refused']}/{total['to_refuse']} refused ({total['refused'] / total['to_refuse']:.1%}) | "
            f"≥ {RIGHT_GOAL:.0%} / ≥ {REFUSED_GOAL:.0%} |"
        ]
    misses = "".join(f"\n- missed: “{w['q']}” — {w['why']}" for w in result["wrong"])
    misses += "".join(f"\n- answered, not refused: “{w['q']}”" for w in result["answered_anyway"])
    misses += "".join(f"\n- number not in its facts: “{w['q']}” {w['numbers']}" for w in result["invented"])
    later = result.get("later", [])
    misses += f"\n- not asked: {len(later)} about hours not yet come when the bench ran" if later else ""
    body = (
        f"Held-out questions ({', '.join(f'`{n}`' for n in result['by_file'])}: ours, and sets written blind by "
        "writers who saw neither the ask's code, its tests nor its corpus; each blind file's header says how the ask "
        "did when the file was first asked, before any change made for it) about a simulated plant history of seed "
        f"{result['seed']} "
        "(a seed no test and no training corpus uses), asked over MQTT through the AskService at the default "
        f"`[ask]` settings (`workers` {result['workers']}, `compute` {result['compute']}) but the per-user "
        "throttle (lifted: each asker asks far more than 30 a minute); each expected figure computed by the bench "
        "from the stored records alone. The "
        "questions per minute of one at a time are questions / the sum of their latencies; at once, questions / "
        "first publish → last reply. Each reply given at once is compared with the same question answered alone, "
        "by the pipeline in the bench, at the time the service accepted it. A report's own work is what a shift "
        "report does beside the engine (read 8 hours of records, compute the facts, write the section prompts), "
        "in a thread as the report service runs it, timed alone and while the askers keep asking.\n\n"
        "| measure | result | goal |\n| --- | --- | --- |\n"
        + "\n".join(rows)
        + "\n"
        + (misses + "\n" if misses else "")
        + f"\nLoad average at the end of the run: {os.getloadavg()[0]:.1f} (other jobs share these CPUs).\n"
    )
    # New wording is what the goal is about: the blind sets as first asked, where there are any.
    if total is not None:
        right, refused = total["right"] / total["answerable"], total["refused"] / total["to_refuse"]
    seen = f" (as first asked: {right:.1%} right, {refused:.1%} refused)" if total is not None else ""
    headline = (
        f"{result['right']}/{result['answerable']} right, {result['refused']}/{result['to_refuse']} refused{seen}; "
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
        and r["questions_beside_p95_s"] <= CONCURRENT_P95_GOAL_S
    )
    goal = (
        f"≥ {RIGHT_GOAL:.0%} right, ≥ {REFUSED_GOAL:.0%} refused{' as first asked' if total else ''}, "
        f"no made-up number, p50 ≤ {P50_GOAL_S} s, "
        f"p95 ≤ {P95_GOAL_S} s, {concurrent} at once ≥ {CONCURRENT_RATE_GOAL:.0f}× the rate with p95 ≤ "
        f"{CONCURRENT_P95_GOAL_S:.0f} s (beside reports too): {met(ok)}"
    )
    return body, headline, goal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=8, help="askers at once (default 8)")
    parser.add_argument("--rounds", type=int, default=1, help="times each asker asks the answerable questions")
    parser.add_argument("--workers", type=int, help="ask.workers (default: the config's default)")
    parser.add_argument("--compute", choices=["processes", "threads"], help="ask.compute (default: the config's)")
    parser.add_argument(
        "--questions",
        type=Path,
        nargs="+",
        default=QUESTIONS,
        help="question files (default: bench/data/ask_questions*.toml)",
    )
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
