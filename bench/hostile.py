"""Hostile input and faults: a running agent fed garbage by a broker user, and a store that fills up.

    .venv/bin/python -m bench.hostile [--rounds 40] [--seed 1]

1. Hostile stream: a private Mosquitto and `edge-agent run` (MQTT routes, report service, the default engine); the
   stream of `edge_agent.sim.hostile` (every class of bad input on every route and on the request and sign-off
   topics, mixed with numbered good messages), then one valid report request. Counted per class: inputs tried,
   good messages lost, requests left unanswered, and the agent's component restarts (from /readyz).
2. Disk full: MQTT ingest on a store whose page limit is reached mid-stream (`Store.set_max_pages`): nothing may be
   acknowledged or lost; the figure is the time from space returning to every message stored.
3. Memory flood: a fresh `edge-agent run` with `mqtt.max_payload_bytes` of 4 MiB fed hundreds of messages of 1 MiB
   up to that limit (and a few just over it) on the MES, log and request topics; the figure is the peak memory of the
   agent and its engine worker (/proc VmHWM per process, and the peak of their summed VmRSS sampled every 0.1 s):
   what systemd/edge-agent.service's MemoryMax= is set from.

Writes the "Hostile input and faults" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import textwrap
import time
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from bench.report import met, write_section
from bench.support.hostile_flood import _MIB, FLOOD_MAX_PAYLOAD, _all_taken, _metric_sum, _RssSampler, flood_payloads
from edge_agent.base.broker import Broker, free_port
from edge_agent.connectors.mqtt.client import PACKET_HEADROOM_BYTES
from edge_agent.demo import process, readiness, wait_until
from edge_agent.sim.hostile import HostileClient, HostileMessage, HostileOutcome, Topics, hostile_stream, settle
from edge_agent.store import Store

REPO = Path(__file__).resolve().parents[1]
COMMAND = ".venv/bin/python -m bench.hostile"
SITE = "hostile-site"
# The engine loads torch and vLLM: minutes on a busy 2-core box.
READY_TIMEOUT_S = 600.0
REPORT_TIMEOUT_S = 900.0


def agent_toml(
    state_dir: Path, broker: Broker, health_port: int, *, max_payload_bytes: int | None = None, throttle: bool = False
) -> str:
    """The agent a plant would run, minus OPC UA: MES and log routes, reports, the default engine, default limits
    but for the invalid-message throttle."""
    return textwrap.dedent(
        f"""
        [site]
        id = "{SITE}"
        timezone = "UTC"
        [paths]
        state_dir = "{state_dir}"
        [logging]
        format = "json"
        [health]
        port = {health_port}
        [mqtt]
        host = "{broker.host}"
        port = {broker.port}
        client_id = "hostile-agent"
        {f"max_payload_bytes = {max_payload_bytes}" if max_payload_bytes else ""}
        [[mqtt.routes]]
        topic = "plant/{SITE}/mes/#"
        parser = "json"
        kind = "mes_event"
        [[mqtt.routes]]
        topic = "plant/{SITE}/log/#"
        parser = "text"
        kind = "log_line"
        [llm]
        model_dir = "{REPO / "models" / "default"}"
        [llm.speculative]
        draft = "{REPO / "models" / "eagle31-default"}"
        [reports]
        default_language = "en"
        {"" if throttle else THROTTLE_LIFTED}
        narrative_max_tokens = 64
        [[reports.shifts]]
        name = "A"
        start = "06:00"
        end = "14:00"
        """
    )


# The hostile stream checks each input's own answer; the throttle that drops a user's after 10 invalid ones is
# tested in tests/test_reports_throttle.py, and the memory flood runs with it.
THROTTLE_LIFTED = "throttle_invalid_max = 1000000"


def restarts(health_port: int) -> dict[str, int]:
    return {c["name"]: int(c["restarts"]) for c in readiness(health_port).get("components", [])}


def final_report(broker: Broker, run: str) -> dict[str, Any]:
    """One valid request from a fresh requester after the stream: the service must still answer it."""
    topics = Topics(SITE, f"{run}-final", user="final")
    end = datetime.now(UTC).replace(microsecond=0)
    request = {
        "request_id": f"final-{run}",
        "type": "alarm_summary",
        "progress": False,
        "language": "en",
        "window": {"start": (end - timedelta(hours=1)).isoformat(), "end": end.isoformat()},
    }
    message = HostileMessage(
        "valid", "request", topics.request, json.dumps(request).encode(), "answered", topics.reply(1), b"final"
    )
    with HostileClient(broker.host, broker.port, topics) as client:
        client.publish([message])
        deadline = time.monotonic() + REPORT_TIMEOUT_S
        while time.monotonic() < deadline:
            replies = client.inbox.get(topics.reply(1))
            if replies:
                return json.loads(replies[0])
            time.sleep(0.5)
    return {"status": "no reply", "timeout_s": REPORT_TIMEOUT_S}


@dataclass(frozen=True)
class HostileRun:
    workdir: Path  # holds agent.log
    outcome: HostileOutcome
    reply: dict[str, Any]  # to the valid request sent after the stream
    restarts: dict[str, int]  # per component, from /readyz
    exit_code: int  # of the agent after SIGTERM


def hostile_run(workdir: Path, *, rounds: int, seed: int) -> HostileRun:
    """One stream against a fresh agent, then one valid request, then SIGTERM."""
    broker = Broker(workdir / "broker")
    broker.workdir.mkdir(parents=True, exist_ok=True)
    broker.start()
    health_port = free_port()
    config = workdir / "agent.toml"
    config.write_text(agent_toml(workdir / "state", broker, health_port))
    run = f"s{seed}"
    try:
        with ExitStack() as stack:
            agent = stack.enter_context(
                process("agent", [sys.executable, "-m", "edge_agent", "run", "--config", str(config)], workdir)
            )
            wait_until("the agent to be ready", lambda: readiness(health_port).get("ready"), READY_TIMEOUT_S, agent)
            topics = Topics(SITE, run)
            stream = hostile_stream(topics, seed=seed, rounds=rounds, max_payload_bytes=256 * 1024)
            with HostileClient(broker.host, broker.port, topics) as client:
                client.publish(stream)
                outcome = settle(client, workdir / "state" / "store.sqlite3", stream)
            reply = final_report(broker, run)
            counts = restarts(health_port)
            agent.send_signal(signal.SIGTERM)
            code = agent.wait(60)
    finally:
        broker.stop()
    return HostileRun(workdir, outcome, reply, counts, code)


async def disk_full_recovery(workdir: Path, messages: int) -> dict[str, Any]:
    """MQTT ingest into a store at its page limit: acked while full, lost, and seconds from space back to all stored."""
    from edge_agent.base.types import utcnow
    from edge_agent.config import MqttConfig
    from edge_agent.connectors.mqtt.ingest import MqttIngest
    from edge_agent.store import RecordWriter, Store

    broker = Broker(workdir / "broker-full")
    broker.workdir.mkdir(parents=True, exist_ok=True)
    broker.start()
    try:
        config = MqttConfig.model_validate(
            {
                "host": broker.host,
                "port": broker.port,
                "client_id": "disk-full-agent",
                "routes": [{"topic": "plant/full/mes/#", "parser": "json", "kind": "mes_event"}],
            }
        )
        with Store(workdir / "full.sqlite3") as store:
            writer = RecordWriter(store, max_rows=500, max_delay_s=0.05)
            ingest = MqttIngest(config, store, writer)
            tasks = [asyncio.create_task(writer.run()), asyncio.create_task(ingest.run(ready := asyncio.Event()))]
            await asyncio.wait_for(ready.wait(), 30)
            store.set_max_pages(1)  # below the current size: the file is held where it is, the next page fails
            payloads = [
                json.dumps(
                    {"id": f"full-{n}", "asset": "P-1", "n": n, "pad": "x" * 512, "ts": utcnow().isoformat()}
                ).encode()
                for n in range(messages)
            ]
            import paho.mqtt.client as paho
            from paho.mqtt.enums import CallbackAPIVersion

            pub = paho.Client(CallbackAPIVersion.VERSION2, client_id="disk-full-publisher", protocol=paho.MQTTv5)
            pub.connect(broker.host, broker.port)
            pub.loop_start()
            infos = [pub.publish("plant/full/mes/x", p, qos=1) for p in payloads]
            for info in infos:
                info.wait_for_publish(30)
            await asyncio.sleep(5.0)  # the agent tries, fails on the full store, and must not ack
            stored_while_full = store.record_count()
            store.set_max_pages(None)
            freed = time.monotonic()
            while store.record_count() < messages and time.monotonic() - freed < 120:
                await asyncio.sleep(0.05)
            recovery_s = time.monotonic() - freed
            stored = store.record_count()
            pub.disconnect()
            pub.loop_stop()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return {
            "messages": messages,
            "stored_while_full": stored_while_full,
            "stored": stored,
            "lost": messages - stored,
            "recovery_s": round(recovery_s, 2),
        }
    finally:
        broker.stop()


def memory_flood(workdir: Path, *, messages: int, seed: int) -> dict[str, Any]:
    """A fresh agent (default engine, max_payload_bytes 4 MiB) flooded with `messages` of 1-4 MiB; its memory."""
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    broker = Broker(workdir / "broker-flood")
    broker.workdir.mkdir(parents=True, exist_ok=True)
    broker.start()
    health_port = free_port()
    config = workdir / "flood.toml"
    config.write_text(
        agent_toml(workdir / "flood-state", broker, health_port, max_payload_bytes=FLOOD_MAX_PAYLOAD, throttle=True)
    )
    topics = Topics(SITE, f"flood{seed}", user="flooder")
    payloads = flood_payloads(seed, messages, topics)
    try:
        with process(
            "flood-agent", [sys.executable, "-m", "edge_agent", "run", "--config", str(config)], workdir
        ) as agent:
            wait_until("the agent to be ready", lambda: readiness(health_port).get("ready"), READY_TIMEOUT_S, agent)
            before = _metric_sum(health_port, "edge_agent_mqtt_messages_received_total")
            assert before is not None, "the ready agent's /metrics does not answer"
            with _RssSampler(agent.pid) as sampler:
                ready_kib = sampler.sample()
                hwm_ready = dict(sampler.hwm_kib)
                pub = paho.Client(CallbackAPIVersion.VERSION2, client_id="flood-publisher", protocol=paho.MQTTv5)
                pub.connect(broker.host, broker.port)
                pub.loop_start()
                started = time.monotonic()
                for topic, payload in payloads:
                    pub.publish(topic, payload, qos=1).wait_for_publish(120)
                expected = sum(1 for _, p in payloads if len(p) <= FLOOD_MAX_PAYLOAD + PACKET_HEADROOM_BYTES)
                taken = partial(_all_taken, health_port, before, expected)
                wait_until("the agent to take every flood message", taken, 600, agent)
                seconds = time.monotonic() - started
                time.sleep(2.0)  # the last batch's commit and quarantine
                pub.disconnect()
                pub.loop_stop()
                counts = restarts(health_port)
            agent.send_signal(signal.SIGTERM)
            code = agent.wait(60)
    finally:
        broker.stop()
    with Store(workdir / "flood-state" / "store.sqlite3") as store:
        quarantined, quarantine_bytes = store._query("SELECT COUNT(*), IFNULL(SUM(LENGTH(raw)), 0) FROM quarantine")[0]
    main_hwm = sampler.hwm_kib.get(agent.pid, 0)
    others = [k for p, k in sampler.hwm_kib.items() if p != agent.pid]
    return {
        "messages": messages,
        "mib": round(sum(len(p) for _, p in payloads) / _MIB),
        "taken": expected,
        "seconds": round(seconds, 1),
        "ready_mib": round(ready_kib / 1024),
        "ready_agent_hwm_mib": round(hwm_ready.get(agent.pid, 0) / 1024),
        "agent_hwm_mib": round(main_hwm / 1024),
        "worker_hwm_mib": round(max(others, default=0) / 1024),
        "peak_mib": round(sampler.peak_kib / 1024),
        "sum_hwm_mib": round(sum(sampler.hwm_kib.values()) / 1024),
        "restarts": sum(counts.values()),
        "exit_code": code,
        "quarantined": quarantined,
        "quarantine_mib": round(quarantine_bytes / _MIB),
    }


def narrative_status(reply: dict[str, Any]) -> str:
    report = reply.get("report")
    body = report.get("body") if isinstance(report, dict) else None
    return str(body.get("narrative_status", "-")) if isinstance(body, dict) else "-"


def table(result: HostileRun, full: dict[str, Any], flood: dict[str, Any]) -> str:
    outcome, reply, counts, code = result.outcome, result.reply, result.restarts, result.exit_code
    rows = ["| channel | class | tried | handled | good lost | unanswered |", "|---|---|---:|---:|---:|---:|"]
    rows += [
        f"| {c.channel} | {c.cls} | {c.tried} | {c.handled} | {c.lost} | {c.unanswered} |" for c in outcome.classes
    ]
    tried = sum(c.tried for c in outcome.classes)
    return "\n".join(
        [
            f"Hostile stream: {tried} inputs in {len(outcome.classes)} classes against `edge-agent run`"
            " (default limits,"
            f" default engine), settled in {outcome.seconds} s.",
            "",
            *rows,
            "",
            "| goal (all zero) | result |",
            "|---|---:|",
            f"| component restarts | {sum(counts.values())} |",
            f"| good messages lost | {outcome.lost} |",
            f"| requests / sign-offs unanswered | {outcome.unanswered} |",
            f"| inputs not handled as specified | {outcome.unhandled} |",
            f"| publishes outside the reply namespace | {outcome.stray_publishes} |",
            "",
            f"A valid report request after the stream: `{reply.get('status')}`"
            f" (narrative: {narrative_status(reply)}). Agent exit code after SIGTERM: {code}.",
            "",
            f"Disk full (MQTT ingest, store page limit reached): {full['messages']} messages published while full,"
            f" {full['stored_while_full']} stored before the page limit stopped the store, {full['lost']} lost;"
            " every message stored"
            f" {full['recovery_s']} s after space returned.",
            "",
            f"Memory flood (`mqtt.max_payload_bytes` = {FLOOD_MAX_PAYLOAD // _MIB} MiB, default engine):"
            f" {flood['messages']} messages of 1-{FLOOD_MAX_PAYLOAD // _MIB} MiB, {flood['mib']} MiB in all, on the"
            f" MES, log and request topics; {flood['taken']} reached the agent (the rest were over its Maximum Packet"
            f" Size) and were taken in {flood['seconds']} s; {flood['restarts']} restarts, exit code"
            f" {flood['exit_code']}. The quarantine held {flood['quarantined']} of them, {flood['quarantine_mib']} MiB,"
            " at the end (`store.quarantine_max_mb` 256, enforced at insert); the requests (no reply topic) were"
            " dropped, the flooding user throttled after `reports.throttle_invalid_max` of them.",
            "",
            "| memory (MiB) | ready, before the flood | peak |",
            "|---|---:|---:|",
            f"| agent process (VmHWM) | {flood['ready_agent_hwm_mib']} | {flood['agent_hwm_mib']} |",
            f"| engine worker (VmHWM) | — | {flood['worker_hwm_mib']} |",
            f"| agent + worker (summed VmRSS, sampled every 0.1 s) | {flood['ready_mib']} | {flood['peak_mib']} |",
            f"| agent + worker (sum of VmHWM: the bound MemoryMax= is set from) | — | {flood['sum_hwm_mib']} |",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hostile", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="rounds of the stream: one input of every class each")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--full-messages", type=int, default=2000)
    parser.add_argument("--flood-messages", type=int, default=300, help="messages of 1-4 MiB in the memory flood")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        result = hostile_run(Path(tmp), rounds=args.rounds, seed=args.seed)
        full = asyncio.run(disk_full_recovery(Path(tmp), args.full_messages))
        flood = memory_flood(Path(tmp), messages=args.flood_messages, seed=args.seed)
    body = table(result, full, flood)
    print(body)
    command = (
        f"{COMMAND} --rounds {args.rounds} --seed {args.seed} --full-messages {args.full_messages}"
        f" --flood-messages {args.flood_messages}"
    )
    outcome = result.outcome
    clean = (
        sum(result.restarts.values()) == 0
        and outcome.lost == 0
        and outcome.unanswered == 0
        and outcome.unhandled == 0
        and full["lost"] == 0
        and result.reply.get("status") == "done"
        and flood["restarts"] == 0
        and flood["exit_code"] == 0
    )
    tried = sum(c.tried for c in outcome.classes)
    write_section(
        "hostile",
        "Hostile input and faults",
        body,
        command,
        headline=f"{tried} hostile inputs in {len(outcome.classes)} classes: {outcome.lost} good lost, "
        f"{outcome.unanswered} unanswered, {sum(result.restarts.values())} restarts; disk full: {full['lost']} lost;"
        f" {flood['mib']} MiB flood: peak {flood['sum_hwm_mib']} MiB",
        goal="all zero, and a valid request answered `done` after the stream: "
        + met(clean and outcome.stray_publishes == 0),
    )
    return 0 if clean else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    raise SystemExit(main())
