"""MQTT ingest throughput: the agent's stored-per-second against `mosquitto_sub` receiving the same stream.

One run, a private Mosquitto, two consumers of the same QoS 1 stream of N JSON MES events: the agent
(`python -m edge_agent.connectors.mqtt.ingest`, a real process with its own SQLite store) and `mosquitto_sub -q 1`.
- live: both subscribed while separate `mosquitto_pub -q 1 -l` processes publish; each rate runs from the
  publisher's start to that consumer's last message (agent: committed, then acked);
- backlog: a second stream is queued in both persistent sessions while the agent is stopped, then both drain it.
Lost and duplicate counts come from the store (published ids vs stored ids); memory is the agent's peak RSS (VmHWM).

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
from collections.abc import Callable
from pathlib import Path

from bench.report import met, write_section
from edge_agent.base.broker import Broker

REPO = Path(__file__).resolve().parents[1]
TOPIC = "plant/bench/mes/production"
# mosquitto_pub's in-flight window: large enough that the publisher is not the bottleneck of either consumer.
PUBLISH_INFLIGHT = 1000
# mosquitto_pub -l (2.0.11) stops once the PUBACK for the last message id it sent arrives; ids wrap at 65 535, so a
# longer stream ends early when the first message that reused that id is acknowledged. One process per 50 000 lines.
PUBLISH_CHUNK = 50_000
# How often the store is polled for progress: coarse enough to cost the measured agent nothing noticeable, fine
# enough (< 1 % of a 10 s phase) not to blur the rates.
POLL_S = 0.1
# The agent stores at least this share of what a C client that stores nothing receives, live and from a backlog.
RATIO_GOAL = 0.5


def payload(i: int) -> str:
    return json.dumps(
        {
            "id": f"mes-{i:07d}",
            "ts": "2026-11-29T06:15:00Z",
            "type": "production_count",
            "asset": "P-101",
            "line": "L1",
            "work_order": "WO-4711",
            "count": i,
            "unit": "pcs",
        },
        separators=(",", ":"),
    )


def count_rows(db: Path) -> tuple[int, int]:
    """(rows, distinct idempotency keys) in the agent's store; (0, 0) before it has migrated."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            return conn.execute("SELECT COUNT(*), COUNT(DISTINCT idempotency_key) FROM records").fetchone()
    except sqlite3.OperationalError:
        return (0, 0)


def stored_rows(db: Path) -> int:
    """Rows in the agent's store, cheaply: MAX(id) is an O(log n) lookup where COUNT(*) scans an index, and polling
    with COUNT(*) would steal the CPU being measured. Equal to the count: rows are never deleted here, and an insert
    ignored as a duplicate does not use up an id."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
            return conn.execute("SELECT COALESCE(MAX(id), 0) FROM records").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


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


def wait_until(predicate: Callable[[], object], timeout: float, what: str, interval: float = 0.02) -> float:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout}s")
        time.sleep(interval)
    return time.time()


def run(n: int, work: Path, protocol: str = "5") -> dict[str, float | int]:
    """Live phase (consumers running while the stream is published), then backlog phase (a second stream queued in
    both persistent sessions while the agent is stopped and mosquitto_sub is gone, then both drain it)."""
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

    def start_agent() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "edge_agent.connectors.mqtt.ingest", "--config", str(config)],
            cwd=REPO,
            stdout=agent_log,
            stderr=agent_log,
        )

    sub_args = [
        "mosquitto_sub",
        "-h",
        broker.host,
        "-p",
        str(broker.port),
        "-q",
        "1",
        "-t",
        TOPIC,
        "-c",
        "-i",
        "bench-sub",
        "-F",
        "%U",
        "-C",
        str(n),
    ]
    agent = start_agent()
    sub = None
    try:
        # The agent is ready once a probe message reaches its store.
        def probe_stored() -> bool:
            pub(broker, "plant/bench/mes/probe", payload(-1))
            return stored_rows(db) >= 1

        wait_until(probe_stored, 30, "agent ready", interval=0.2)
        # mosquitto_sub's persistent session is created (-E: exit once subscribed) before the stream starts, so the
        # counting instance started next misses nothing however late it connects.
        subprocess.run([*sub_args[:-4], "-E"], check=True)
        with open(work / "sub-live.txt", "wb") as out:
            sub = subprocess.Popen(sub_args, stdout=out)

        # --- live ---
        cpu_before = cpu_seconds(agent.pid)
        started = time.time()
        publish_stream(broker, work, 0, n)
        published_at = time.time()
        agent_done = wait_until(lambda: stored_rows(db) >= n + 1, max(120, n / 200), "agent stored all", POLL_S)
        sub.wait(timeout=max(60, n / 1000))
        time.sleep(0.5)  # redeliveries still in flight would land now
        cpu = cpu_seconds(agent.pid) - cpu_before
        peak = peak_rss_mib(agent.pid)
        sub_live = read_times(work / "sub-live.txt")

        # --- backlog ---
        agent.terminate()
        agent.wait(30)
        publish_stream(broker, work, n, n)
        agent = start_agent()
        with open(work / "sub-backlog.txt", "wb") as out:
            sub = subprocess.Popen(sub_args, stdout=out)
        agent_first = wait_until(lambda: stored_rows(db) > n + 1, 60, "agent draining", POLL_S / 10)
        agent_last = wait_until(
            lambda: stored_rows(db) >= 2 * n + 1, max(120, n / 200), "agent drained backlog", POLL_S
        )
        sub.wait(timeout=max(60, n / 1000))
        time.sleep(0.5)
        sub_backlog = read_times(work / "sub-backlog.txt")

        rows, distinct = count_rows(db)
        ids = stored_ids(db)
        expected = {json.loads(payload(i))["id"] for i in range(2 * n)}
        return {
            "n": n,
            "publish_s": published_at - started,
            "agent_s": agent_done - started,
            "sub_s": max(sub_live) - started,
            "sub_received": len(sub_live) + len(sub_backlog),
            "agent_drain_s": agent_last - agent_first,
            "sub_drain_s": max(sub_backlog) - min(sub_backlog),
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


def publish_stream(broker: Broker, work: Path, first: int, n: int) -> None:
    """Publish ids first..first+n-1 with mosquitto_pub -l, PUBLISH_CHUNK lines per process."""
    for start in range(first, first + n, PUBLISH_CHUNK):
        chunk = work / f"stream-{start}.jsonl"
        chunk.write_text("".join(payload(i) + "\n" for i in range(start, min(first + n, start + PUBLISH_CHUNK))))
        with open(chunk, "rb") as lines:
            subprocess.run(
                [
                    "mosquitto_pub",
                    "-h",
                    broker.host,
                    "-p",
                    str(broker.port),
                    "-q",
                    "1",
                    "-l",
                    "-t",
                    TOPIC,
                    "-M",
                    str(PUBLISH_INFLIGHT),
                    "-i",
                    "bench-pub",
                ],
                stdin=lines,
                check=True,
            )


def read_times(path: Path) -> list[float]:
    return [float(line) for line in path.read_text().splitlines() if line]


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
    n = r["n"]
    live = {"agent": n / r["agent_s"], "sub": n / r["sub_s"]}
    drain = {"agent": (n - 1) / r["agent_drain_s"], "sub": (n - 1) / r["sub_drain_s"]}
    print(
        json.dumps(
            {
                **r,
                "live_per_s": {k: round(v) for k, v in live.items()},
                "live_ratio": round(live["agent"] / live["sub"], 3),
                "drain_per_s": {k: round(v) for k, v in drain.items()},
                "drain_ratio": round(drain["agent"] / drain["sub"], 3),
            },
            indent=1,
        )
    )
    if args.no_write:
        return
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    command = ".venv/bin/python -m bench.mqtt_ingest" + (f" -n {n}" if n != 100_000 else "")
    if args.protocol != "5":
        command += f" --protocol {args.protocol}"
    body = f"""
Two consumers of the same QoS 1 stream of {n:,} JSON MES events in the same run: the agent
(`python -m edge_agent.connectors.mqtt.ingest`: paho → parse → SQLite batch commit with fsync → PUBACK; MQTT
{args.protocol}, persistent
session, manual ack) and `mosquitto_sub -q 1` (C, acks on receipt, stores nothing), on a private Mosquitto. The stream
is published by separate `mosquitto_pub -q 1 -l` processes (in-flight window {PUBLISH_INFLIGHT}, {PUBLISH_CHUNK:,} lines
per process).

- **live**: both consumers connected while the stream is published; rate = messages / seconds from the publisher's
  start to the last message stored (agent) or received (mosquitto_sub). All five processes share the CPUs.
- **backlog**: a second stream of {n:,} is queued in both persistent sessions while the agent is stopped, then both
  drain it at once; rate = messages / seconds between each consumer's first and last message.

| phase | agent (stored) | `mosquitto_sub` (received) | agent / mosquitto_sub |
|---|---|---|---|
| live | {live["agent"]:,.0f} /s (last after {r["agent_s"]:.2f} s) \
| {live["sub"]:,.0f} /s (last after {r["sub_s"]:.2f} s) \
| **{live["agent"] / live["sub"]:.2f}** |
| backlog | {drain["agent"]:,.0f} /s | {drain["sub"]:,.0f} /s | **{drain["agent"] / drain["sub"]:.2f}** |

- goal ≥ {RATIO_GOAL} of mosquitto_sub
- lost: **{r["lost"]}**, duplicate rows: **{r["duplicates"]}** \
({r["rows"]:,} rows stored for {2 * n:,} published ids, both
  phases; the agent was stopped and restarted between them)
- agent peak RSS (VmHWM, live phase): **{r["peak_rss_mib"]:.0f} MiB**
- agent CPU in the live phase (all threads, user + system): {r["agent_cpu_s"]:.1f} s \
= {1e6 * r["agent_cpu_s"] / n:.0f} µs
  per stored message ({n / r["agent_cpu_s"]:,.0f} messages per CPU-second)
- the live publisher finished after {r["publish_s"]:.2f} s; load average (1/5/15 min) at the end: {load}
"""
    live_ratio, drain_ratio = live["agent"] / live["sub"], drain["agent"] / drain["sub"]
    write_section(
        "mqtt_ingest",
        "MQTT ingest",
        body,
        command,
        headline=f"agent {live['agent']:,.0f} /s live = {live_ratio:.2f}× mosquitto_sub, backlog {drain_ratio:.2f}×; "
        f"{r['lost']} lost, {r['duplicates']} duplicates",
        goal=f"≥ {RATIO_GOAL} × mosquitto_sub, live and backlog, 0 lost: "
        f"{met(min(live_ratio, drain_ratio) >= RATIO_GOAL and r['lost'] == 0)}",
    )


if __name__ == "__main__":
    main()
