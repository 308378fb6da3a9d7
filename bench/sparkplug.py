"""Sparkplug B ingest throughput: NDATA messages of 100 metrics each, metrics stored durably per second.

One run, a private Mosquitto, the real `SparkplugHost` (its own session, `HostState`, the store's `RecordWriter`
with fsync, acks after commit) in this process, and a publisher in a separate process (`python -m bench.sparkplug
--publish`): one NBIRTH of 100 Double metrics with aliases, then N NDATA messages by alias only (seq wrapping), at
QoS 0 as edge nodes send DATA. Rate = metrics stored / seconds from the first NDATA published to the last metric
committed. Lost = metrics published - metrics stored; sequence gaps and quarantine rows are counted too.

    .venv/bin/python -m bench.sparkplug               # 2 000 messages = 200 000 metrics; prints the table rows
    .venv/bin/python -m bench.sparkplug -n 500
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import met, write_section
from edge_agent.base.broker import Broker
from edge_agent.config.mqtt import MqttConfig
from edge_agent.config.sparkplug import SparkplugConfig
from edge_agent.connectors.sparkplug import SparkplugHost
from edge_agent.store import RecordWriter, Store

REPO = Path(__file__).resolve().parents[1]
METRICS_PER_MESSAGE = 100
GOAL_PER_S = 50_000
COMMAND = ".venv/bin/python -m bench.sparkplug"
# Store polls: coarse enough to cost the host nothing noticeable, fine enough not to blur a ~5 s run.
POLL_S = 0.1


def publish(port: int, messages: int) -> None:
    """The edge node: NBIRTH, then `messages` NDATA of 100 metrics by alias, QoS 0, as fast as paho sends."""
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    from edge_agent.sim.sparkplug import EdgeNodeEncoder

    node = EdgeNodeEncoder("Bench", "E1")
    names = [f"Line1/P-{i:03d}/Vibration" for i in range(METRICS_PER_MESSAGE)]
    t0 = int(time.time() * 1000) - messages  # one ms per message, ending now: all plausible
    birth = node.nbirth(dict.fromkeys(names, 0.0), t0)
    payloads = [node.data(None, {n: float(i + j) for j, n in enumerate(names)}, t0 + i + 1) for i in range(messages)]
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id="bench-edge", protocol=paho.MQTTv5)
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", port)
    client.loop_start()
    client.publish(node.topic("NBIRTH"), birth, qos=1).wait_for_publish(10)
    print(f"start {time.time()}", flush=True)
    for payload in payloads:
        info = client.publish(node.topic("NDATA"), payload, qos=0)
        info.wait_for_publish(10)
    client.publish("bench/done", b"", qos=1).wait_for_publish(10)  # flush the QoS 0 stream: outside spBv1.0
    client.disconnect()
    client.loop_stop()


def stored(db: Path, after: int) -> tuple[int, int]:
    """Tag values committed with an id above `after`, and the highest id committed. Only the store's one connection
    writes, and nothing is deleted, so a later commit's ids are above every earlier one: each poll reads only the
    new rows. (A count over the whole table took ~0.8 s of the host's event loop thread per 200 000 rows.)"""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            count, last = conn.execute(
                "SELECT count(CASE WHEN kind = 'tag_value' THEN 1 END), max(id) FROM records WHERE id > ?", (after,)
            ).fetchone()
            return int(count), after if last is None else int(last)
    except sqlite3.Error:
        return 0, after


async def measure(messages: int, workdir: Path) -> dict[str, float]:
    broker = Broker(workdir)
    broker.start()
    db = workdir / "store.sqlite3"
    try:
        with Store(db) as store:
            mqtt = MqttConfig(host=broker.host, port=broker.port, client_id="bench-host")
            config = SparkplugConfig(enabled=True, group_ids=["Bench"])
            writer = RecordWriter(store, max_rows=5000, max_delay_s=0.05)
            host = SparkplugHost(mqtt, config, store, writer)
            writer_task = asyncio.create_task(writer.run())
            ready = asyncio.Event()
            host_task = asyncio.create_task(host.run(ready))
            await asyncio.wait_for(ready.wait(), 10)
            await asyncio.sleep(0.2)
            cpu0 = time.process_time()
            publisher = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench.sparkplug",
                "--publish",
                str(broker.port),
                "-n",
                str(messages),
                cwd=REPO,
                stdout=subprocess.PIPE,
            )
            assert publisher.stdout is not None
            line = (await publisher.stdout.readline()).decode()
            start = float(line.split()[1])
            expected = messages * METRICS_PER_MESSAGE + METRICS_PER_MESSAGE  # the NBIRTH's values too
            last, last_change, last_id = 0, time.time(), 0
            while True:
                await asyncio.sleep(POLL_S)
                new, last_id = stored(db, last_id)
                count = last + new
                if count != last:
                    last, last_change = count, time.time()
                if count >= expected or time.time() - last_change > 5:
                    break
            end = last_change
            total, _ = stored(db, 0)  # once, over the whole table: the polls' sum must be the count
            assert total == last, f"polls counted {last:,} tag values, the table holds {total:,}"
            cpu = time.process_time() - cpu0
            await publisher.wait()
            quarantined = len(store.quarantined())
            host_task.cancel()
            writer_task.cancel()
            for task in (host_task, writer_task):
                try:
                    await task
                except asyncio.CancelledError:
                    pass
    finally:
        broker.stop()
    data_metrics = last - METRICS_PER_MESSAGE
    return {
        "messages": messages,
        "metrics": messages * METRICS_PER_MESSAGE,
        "stored": data_metrics,
        "lost": messages * METRICS_PER_MESSAGE - data_metrics,
        "quarantined": quarantined,
        "seconds": end - start,
        "rate": data_metrics / (end - start),
        "host_cpu_s": cpu,
    }


def table(result: dict[str, float]) -> str:
    return "\n".join(
        [
            "| NDATA messages (100 metrics each) | metrics stored | lost | quarantined | seconds | metrics stored /s | "
            "host CPU per metric |",
            "|---|---|---|---|---|---|---|",
            f"| {result['messages']:,} | {result['stored']:,} | {result['lost']:,} | {result['quarantined']} | "
            f"{result['seconds']:.2f} | **{result['rate']:,.0f}** | "
            f"{result['host_cpu_s'] / max(result['stored'], 1) * 1e6:.1f} µs |",
            "",
            "One Mosquitto on loopback; a separate process publishes an NBIRTH and then the NDATA messages as fast as "
            "it can; the host (`SparkplugHost`) decodes, resolves aliases and commits through the `RecordWriter` "
            "(SQLite WAL, synchronous=FULL); stored = rows committed, lost = published metrics never stored.",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sparkplug", description=__doc__)
    parser.add_argument("-n", type=int, default=2000, help="NDATA messages (default 2000)")
    parser.add_argument("--publish", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.publish:
        publish(args.publish, args.n)
        return
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(measure(args.n, Path(tmp)))
    command = COMMAND + (f" -n {args.n}" if args.n != 2000 else "")
    write_section(
        "sparkplug",
        "Sparkplug B ingest",
        table(result),
        command,
        headline=f"{result['rate']:,.0f} metrics/s stored durably, {result['lost']:,} lost",
        goal=f"≥ {GOAL_PER_S:,} metrics/s on 2 cores, 0 lost: "
        f"{met(result['rate'] >= GOAL_PER_S and result['lost'] == 0)}",
    )
    print(table(result))


if __name__ == "__main__":
    main()
