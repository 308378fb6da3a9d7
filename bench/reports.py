"""Report service benchmark: end-to-end latency against pure generation time, and reports per minute.

    .venv/bin/python -m bench.reports [--latency-runs 3] [--throughput 4] [--config configs/demo.toml]

Starts a private Mosquitto, the configured engine, the report service and the outbox publisher, seeds the store
with one shift of plant records, then:
  latency   request published → `done` received by the requester, one request at a time, against two generation
            times for the same prompts: (a) the engine's own timing of those very generate calls inside the report
            (`generation_run[].timings.total_s`), and (b) the same prompts sent again straight to `engine.generate`
            right after, in the same run. Overhead = (end to end − generation) / generation. (a) is exact; (b) also
            carries run-to-run variance of the engine, which on a shared, loaded CPU can be tens of percent.
  throughput `--throughput` requests published back to back at the default settings (queue 8, one at a time):
            reports per minute = requests / (first publish → last done).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.report import met, write_section
from edge_agent.base.broker import Broker
from edge_agent.config import AgentConfig, load_config
from edge_agent.reports.narrative import generation_params, report_facts, section_prompts
from edge_agent.reports.request import ResolvedRequest
from edge_agent.store import Store
from harness.reports_service import running_service
from harness.shift import shift_records

COMMAND = ".venv/bin/python -m bench.reports"
# The agent's own share of a report's time (MQTT, store, facts, grounding, audit) over the engine's generation.
OVERHEAD_GOAL = 0.10
# A shift report, request published → `done`, at the default settings on 2 cores (issue: speed on every workload).
LATENCY_GOAL_S = 5.0


def bench_config(base: AgentConfig, state: Path, broker: Broker) -> AgentConfig:
    data = base.model_dump(mode="python")
    data["site"]["id"] = "demo"
    data["site"]["timezone"] = "America/Mexico_City"
    data["paths"]["state_dir"] = state
    data["mqtt"].update(
        host=broker.host, port=broker.port, client_id="bench-agent", username=None, password=None, tls=None, routes=[]
    )
    data["reports"]["shifts"] = [{"name": "A", "start": "06:00", "end": "14:00"}]
    data["reports"]["rate_limit_per_min"] = 1000  # the benchmark is one client sending many requests
    data["reports"]["request_topic"] = None
    data["reports"]["signoff_topic"] = None
    data["opcua"]["sources"] = []
    return AgentConfig.model_validate(data)


def payload(request_id: str) -> bytes:
    return json.dumps(
        {
            "request_id": request_id,
            "type": "shift_summary",
            "language": "es",
            "window": {"shift": "A", "date": "2026-11-29"},
            "progress": False,
        }
    ).encode()


async def requester(config: AgentConfig) -> Any:
    from edge_agent.connectors.mqtt import MqttClient

    mqtt = config.mqtt.model_copy(update={"session_expiry_s": 0})
    return MqttClient(mqtt, client_id=f"bench-requester-{uuid.uuid4().hex[:6]}")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from edge_agent.llm.engine import open_engine

    base = load_config(args.config)
    with tempfile.TemporaryDirectory() as tmp:
        broker = Broker(Path(tmp))
        broker.start()
        try:
            config = bench_config(base, Path(tmp) / "state", broker)
            with Store(config.paths.store_path) as store:
                store.insert_records(shift_records())
            async with open_engine(config) as engine, running_service(config, engine):
                client = await requester(config)
                async with client:
                    await client.wait_connected(timeout=30)
                    reply_topic = "edge/demo/reports/reply/anonymous/bench"  # the anonymous reply namespace
                    await client.subscribe(reply_topic, qos=1)

                    async def one(request_id: str) -> dict[str, Any]:
                        await client.publish(
                            "edge/demo/reports/request",
                            payload(request_id),
                            qos=1,
                            response_topic=reply_topic,
                            correlation_data=request_id.encode(),
                        )
                        while True:
                            message = await client.receive()
                            await message.ack()
                            data = json.loads(message.payload)
                            if data.get("request_id") == request_id and data["status"] in ("done", "failed"):
                                return data

                    await one("warm-up")  # first request pays one-off costs (prefix cache, imports)
                    e2e, inside, pure, statuses = [], [], [], []
                    for i in range(args.latency_runs):
                        start = time.perf_counter()
                        reply = await one(f"lat-{i}")
                        e2e.append(time.perf_counter() - start)
                        body = reply["report"]["body"]
                        statuses.append(body["narrative_status"])
                        inside.append(sum(a["timings"]["total_s"] for a in reply["report"]["generation_run"]))
                        pure.append(await pure_generation(config, engine, body))
                    start = time.perf_counter()
                    ids = [f"thr-{i}" for i in range(args.throughput)]
                    for request_id in ids:
                        await client.publish(
                            "edge/demo/reports/request",
                            payload(request_id),
                            qos=1,
                            response_topic=reply_topic,
                            correlation_data=request_id.encode(),
                        )
                    pending = set(ids)
                    while pending:
                        message = await client.receive()
                        await message.ack()
                        data = json.loads(message.payload)
                        if data.get("status") in ("done", "failed", "refused"):
                            pending.discard(data.get("request_id"))
                    elapsed = time.perf_counter() - start
        finally:
            broker.stop()
    return {
        "runs": args.latency_runs,
        "e2e_s": e2e,
        "engine_in_report_s": inside,
        "pure_s": pure,
        "overhead_median": statistics.median((e - g) / g for e, g in zip(e2e, inside, strict=True)),
        "overhead_vs_regeneration_median": statistics.median((e - p) / p for e, p in zip(e2e, pure, strict=True)),
        "statuses": statuses,
        "throughput_requests": args.throughput,
        "throughput_elapsed_s": elapsed,
        "reports_per_min": 60.0 * args.throughput / elapsed,
    }


async def pure_generation(config: AgentConfig, engine: Any, body: dict[str, Any]) -> float:
    """Wall-clock of engine.generate for the prompts the report used (one per section attempt), nothing else."""
    request = ResolvedRequest.model_validate(body["request"])
    with Store(config.paths.store_path) as store:
        records = store.records(request.window.start, request.window.end)
    facts = report_facts(records, request, config.reports)  # the report service's own facts, KPI sections too
    prompts = section_prompts(facts, request, config.reports)
    params = generation_params(config.reports, config.llm.seed)
    total = 0.0
    for (_, prompt), section in zip(prompts.items, body["sections"], strict=True):
        for attempt in section["attempts"]:
            start = time.perf_counter()
            await engine.generate(prompt.messages(attempt["strict"]), params)
            total += time.perf_counter() - start
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("configs/demo.toml"))
    parser.add_argument("--latency-runs", type=int, default=3)
    parser.add_argument("--throughput", type=int, default=4)
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    print(json.dumps(result, indent=2))
    if args.no_write:
        return
    rows = "\n".join(
        f"| {i + 1} | {e:.2f} | {g:.2f} | {100 * (e - g) / g:+.1f} % | {p:.2f} | {100 * (e - p) / p:+.1f} % | {s} |"
        for i, (e, g, p, s) in enumerate(
            zip(result["e2e_s"], result["engine_in_report_s"], result["pure_s"], result["statuses"], strict=True)
        )
    )
    body = (
        "End to end = request published → `done` received (MQTT, queue, store reads, facts, prompt, grounding, "
        "retry if any, audit, store + outbox, MQTT). Generation (a) = the engine's timing of the generate calls "
        "inside that report; (b) = the same prompts sent again straight to `engine.generate` in the same run "
        "(includes the engine's run-to-run variance).\n\n"
        "| run | end to end (s) | generation (a) (s) | overhead vs (a) | generation (b) (s) | overhead vs (b) "
        "| narrative |\n| --- | --- | --- | --- | --- | --- | --- |\n"
        f"{rows}\n\n"
        f"Median overhead vs (a): **{100 * result['overhead_median']:+.1f} %** (target ≤ {100 * OVERHEAD_GOAL:.0f} %); "
        f"vs (b): {100 * result['overhead_vs_regeneration_median']:+.1f} %.\n\n"
        f"Throughput at defaults (one generation at a time): {result['throughput_requests']} requests in "
        f"{result['throughput_elapsed_s']:.1f} s = **{result['reports_per_min']:.2f} reports/min**.\n\n"
        f"Load average at the end of the run: {os.getloadavg()[0]:.1f} (other jobs share these CPUs; absolute "
        "times scale with it, the overhead ratio against (a) does not).\n"
    )
    command = COMMAND + (f" --config {args.config}" if args.config != Path("configs/demo.toml") else "")
    e2e_median = statistics.median(result["e2e_s"])
    write_section(
        "reports",
        "Reports",
        body,
        command,
        headline=f"median end to end {e2e_median:.2f} s, {100 * result['overhead_median']:+.1f} % over the "
        f"engine's generation; {result['reports_per_min']:.2f} reports/min",
        goal=f"overhead ≤ {OVERHEAD_GOAL:.0%} of generation, median end to end ≤ {LATENCY_GOAL_S:.0f} s: "
        f"{met(result['overhead_median'] <= OVERHEAD_GOAL and e2e_median <= LATENCY_GOAL_S)}",
    )


if __name__ == "__main__":
    main()
