"""MQTT ingest throughput: the agent's stored-per-second against `mosquitto_sub` receiving the same stream.

One run: a private Mosquitto; the agent (`python -m connectors.ingest`, a real process with its own SQLite store) and
`mosquitto_sub -q 1` both subscribed; then a separate `mosquitto_pub -q 1 -l` process publishes N JSON MES events.
Both rates are measured from the publisher's start to the last message stored (agent: committed, then acked) or
received (mosquitto_sub), so the ratio compares the two consumers on the same stream. Lost and duplicate counts come
from the store (published ids vs stored ids); memory is the agent's peak RSS (VmHWM).

    .venv/bin/python -m bench.mqtt_ingest              # 100 000 messages, writes BENCHMARKS.md "## MQTT ingest"
    .venv/bin/python -m bench.mqtt_ingest -n 5000 --no-write
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import write_section
from tests.fixtures.broker import Broker

REPO = Path(__file__).resolve().parents[1]
TOPIC = "plant/bench/mes/production"
# mosquitto_pub's in-flight window: large enough that the publisher is not the bottleneck of either consumer.
PUBLISH_INFLIGHT = 1000
# mosquitto_pub -l (2.0.11) stops once the PUBACK for the last message id it sent arrives; ids wrap at 65 535, so a
# longer stream ends early when the first message that reused that id is acknowledged. One process per 50 000 lines.
PUBLISH_CHUNK = 50_000


def payload(i: int) -> str:
    return json.dumps(
        {"id": f"mes-{i:07d}", "ts": "2026-11-29T06:15:00Z", "type": "production_count", "asset": "P-101",
         "line": "L1", "work_order": "WO-4711", "count": i, "unit": "pcs"},
        separators=(",", ":"),
    )


def count_rows(db: Path) -> tuple[int, int]:
    """(rows, distinct idempotency keys) in the agent's store; (0, 0) before it has migrated."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            return conn.execute("SELECT COUNT(*), COUNT(DISTINCT idempotency_key) FROM records").fetchone()
    except sqlite3.OperationalError:
        return (0, 0)


def stored_ids(db: Path) -> set[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return {json.loads(v)["id"] for (v,) in conn.execute("SELECT value FROM records")}


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until(predicate, timeout: float, what: str, interval: float = 0.02) -> float:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout}s")
        time.sleep(interval)
    return time.time()


def run(n: int, work: Path, protocol: str = "5") -> dict[str, float | int]:
    broker = Broker(work / "broker")
    broker.workdir.mkdir()
    broker.start()
    state = work / "agent"
    state.mkdir()
    db = state / "store.sqlite3"
    config = state / "agent.toml"
    config.write_text(
        f'[site]\nid = "bench"\n[paths]\nstate_dir = "{state}"\n[logging]\nlevel = "warning"\nformat = "json"\n'
        f'[mqtt]\nhost = "{broker.host}"\nport = {broker.port}\nclient_id = "bench-agent"\nprotocol = "{protocol}"\n'
        '[[mqtt.routes]]\ntopic = "plant/+/mes/#"\nparser = "json"\nkind = "mes_event"\n'
    )
    agent_log = open(state / "agent.log", "ab")
    agent = subprocess.Popen(
        [sys.executable, "-m", "connectors.ingest", "--config", str(config)], cwd=REPO, stdout=agent_log,
        stderr=agent_log,
    )
    sub_out = work / "sub.txt"
    sub = None
    try:
        # The agent is ready once a probe message reaches its store.
        def probe_stored() -> bool:
            pub(broker, "plant/bench/mes/probe", payload(-1))
            return count_rows(db)[0] >= 1

        wait_until(probe_stored, 30, "agent ready", interval=0.2)
        # mosquitto_sub's persistent session is created (-E: exit once subscribed) before the stream starts, so the
        # counting instance started next misses nothing however late it connects.
        sub_args = ["mosquitto_sub", "-h", broker.host, "-p", str(broker.port), "-q", "1", "-t", TOPIC, "-c", "-i",
                    "bench-sub"]
        subprocess.run([*sub_args, "-E"], check=True)
        with open(sub_out, "wb") as out:
            sub = subprocess.Popen([*sub_args, "-F", "%U", "-C", str(n)], stdout=out)
        chunks = []
        for first in range(0, n, PUBLISH_CHUNK):
            chunk = work / f"stream-{first}.jsonl"
            chunk.write_text("".join(payload(i) + "\n" for i in range(first, min(n, first + PUBLISH_CHUNK))))
            chunks.append(chunk)

        cpu_before = cpu_seconds(agent.pid)
        started = time.time()
        for chunk in chunks:
            with open(chunk, "rb") as lines:
                subprocess.run(
                    ["mosquitto_pub", "-h", broker.host, "-p", str(broker.port), "-q", "1", "-l", "-t", TOPIC,
                     "-M", str(PUBLISH_INFLIGHT), "-i", "bench-pub"],
                    stdin=lines, check=True,
                )
        published_at = time.time()
        agent_done = wait_until(lambda: count_rows(db)[0] >= n + 1, max(120, n / 200), "agent stored all")
        sub.wait(timeout=max(60, n / 1000))
        time.sleep(0.5)  # redeliveries still in flight would land now
        rows, distinct = count_rows(db)
        ids = stored_ids(db)
        peak = peak_rss_mib(agent.pid)
        cpu = cpu_seconds(agent.pid) - cpu_before
        sub_times = [float(line) for line in sub_out.read_text().splitlines() if line]
        expected = {json.loads(payload(i))["id"] for i in range(n)}
        return {
            "n": n,
            "publish_s": published_at - started,
            "agent_s": agent_done - started,
            "sub_s": max(sub_times) - started,
            "sub_received": len(sub_times),
            "lost": len(expected - ids),
            "duplicates": rows - distinct,
            "rows": rows - 1,  # minus the probe
            "peak_rss_mib": peak,
            "agent_cpu_s": cpu,
        }
    finally:
        if sub is not None and sub.poll() is None:
            sub.terminate()
        agent.terminate()
        agent.wait(30)
        broker.stop()


def pub(broker: Broker, topic: str, message: str) -> None:
    subprocess.run(
        ["mosquitto_pub", "-h", broker.host, "-p", str(broker.port), "-q", "1", "-t", topic, "-m", message], check=True
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mqtt_ingest", description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--messages", type=int, default=100_000, help="messages to publish (default 100000)")
    parser.add_argument("--protocol", choices=["5", "3.1.1"], default="5", help="the agent's MQTT version")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-mqtt-") as tmp:
        r = run(args.messages, Path(tmp), args.protocol)
    agent_rate = r["n"] / r["agent_s"]
    sub_rate = r["sub_received"] / r["sub_s"]
    print(json.dumps({**r, "agent_per_s": round(agent_rate), "sub_per_s": round(sub_rate),
                      "ratio": round(agent_rate / sub_rate, 3)}, indent=1))
    if args.no_write:
        return
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    command = ".venv/bin/python -m bench.mqtt_ingest" + (f" -n {args.messages}" if args.messages != 100_000 else "")
    body = f"""
{r['n']:,} JSON MES events at QoS 1, published by separate `mosquitto_pub -q 1 -l` processes (in-flight window
{PUBLISH_INFLIGHT}, {PUBLISH_CHUNK:,} lines each, one after the other) to a private Mosquitto. Two consumers on the same stream in the same run: the agent
(`python -m connectors.ingest`: parse → SQLite batch commit with fsync → PUBACK, MQTT 5 persistent session, manual
ack) and `mosquitto_sub -q 1` (C, acks on receipt, stores nothing). Rates are messages / seconds from the publisher's
start to the last message stored (agent) or received (mosquitto_sub).

| consumer | last message after | messages/s |
|---|---|---|
| agent, stored (committed) | {r['agent_s']:.2f} s | {agent_rate:,.0f} |
| `mosquitto_sub -q 1`, received | {r['sub_s']:.2f} s | {sub_rate:,.0f} |

- agent / mosquitto_sub: **{agent_rate / sub_rate:.2f}** (goal ≥ 0.5)
- lost: **{r['lost']}**, duplicate rows: **{r['duplicates']}** (stored rows {r['rows']:,} for {r['n']:,} published ids)
- the publisher finished after {r['publish_s']:.2f} s; agent peak RSS (VmHWM): **{r['peak_rss_mib']:.0f} MiB**
- agent CPU (all threads, user + system): {r['agent_cpu_s']:.1f} s, i.e. {1e6 * r['agent_cpu_s'] / r['n']:.0f} µs per stored
  message ({r["n"] / r["agent_cpu_s"]:,.0f} messages per CPU-second); load average (1/5/15 min) at the end: {load}
"""
    write_section("mqtt_ingest", "MQTT ingest", body, command)


if __name__ == "__main__":
    main()
