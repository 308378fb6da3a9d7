"""OPC UA ingest rate: data changes per second sustained from a real asyncua server into the store.

A separate process runs the simulator's OPC UA server and writes a new value to each of the plant's 13 tags as fast
as it can (or at `--rate` writes/s) for `--seconds`; this process runs the agent's `OpcuaSource` + `RecordWriter` +
`Store` and counts what was stored. Reported: offered writes/s, stored/s over the same window, lost (written but
never stored, after a drain), duplicates, reconnects, and this process's peak RSS.

    .venv/bin/python -m bench.opcua_rate [--seconds 20] [--rate 0] [--no-report]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import resource
import sys
import tempfile
import time
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path

# Sample values start here, apart from the 0.0 the server presents before its first write.
FIRST = 1_000_000.0
# After the writer stops, give the agent this long to store what is still queued (or backfill it).
DRAIN_S = 20.0


def _serve(port: int, seconds: float, rate: float, started: "multiprocessing.Event", result: "multiprocessing.Queue") -> None:
    asyncio.run(_serve_async(port, seconds, rate, started, result))


async def _serve_async(port: int, seconds: float, rate: float, started: "multiprocessing.Event",
                       result: "multiprocessing.Queue") -> None:
    import logging

    from edge_agent.sim import PlantServer, tag_names

    logging.getLogger("asyncua").setLevel(logging.ERROR)
    tags = [t for t in tag_names() if not t.endswith(".running")]
    async with PlantServer(f"opc.tcp://127.0.0.1:{port}/bench") as server:
        started.set()
        await asyncio.sleep(2.0)  # let the agent subscribe before the clock starts
        written = 0
        t0 = time.monotonic()
        n = 0
        while (elapsed := time.monotonic() - t0) < seconds:
            now = datetime.now(timezone.utc)
            await server.write({tag: FIRST + n for tag in tags}, now)
            written += len(tags)
            n += 1
            if rate > 0:
                ahead = written / rate - (time.monotonic() - t0)
                await asyncio.sleep(max(ahead, 0.0))
            elif n % 20 == 0:
                await asyncio.sleep(0)  # let the server publish
        result.put({"written": written, "seconds": time.monotonic() - t0, "tags": len(tags)})
        await asyncio.sleep(DRAIN_S + 5)  # keep serving (history too) while the agent drains


async def _agent(port: int, seconds: float, rate: float, workdir: Path) -> dict[str, float]:
    import logging

    from connectors.opcua import RECONNECTS, OpcuaSource
    from edge_agent.config import NodeConfig, OpcuaSourceConfig
    from edge_agent.sim import tag_names
    from edge_agent.store import RecordWriter, Store

    logging.getLogger("asyncua").setLevel(logging.ERROR)
    tags = [t for t in tag_names() if not t.endswith(".running")]
    ctx = multiprocessing.get_context("spawn")
    started, result = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=_serve, args=(port, seconds, rate, started, result), daemon=True)
    proc.start()
    if not await asyncio.to_thread(started.wait, 60):
        raise RuntimeError("benchmark server did not start")
    config = OpcuaSourceConfig(
        name="bench",
        endpoint=f"opc.tcp://127.0.0.1:{port}/bench",
        publishing_interval_ms=100.0,
        watchdog_interval_s=2.0,
        events=False,
        nodes=[NodeConfig(node_id=f"ns=2;s={t}", tag=t, sampling_interval_ms=0, queue_size=5000) for t in tags],
    )
    store = Store(workdir / "store.sqlite3")
    writer = RecordWriter(store)
    writer_task = asyncio.create_task(writer.run())
    source = OpcuaSource(config, writer, pki_dir=workdir / "pki")
    ready = asyncio.Event()
    task = asyncio.create_task(source.run(ready))
    reconnects0 = RECONNECTS.labels("bench")._value.get()
    await asyncio.wait_for(ready.wait(), 30)

    def stored() -> int:
        return store._query("SELECT COUNT(*) FROM records WHERE source = 'bench' AND CAST(value AS REAL) >= ?",
                            (FIRST,))[0][0]

    # Stored-per-second over the writer's window: count at its start and end.
    await asyncio.sleep(2.0)
    t_start, n_start = time.monotonic(), stored()
    info = await asyncio.to_thread(result.get, True, seconds + 60)
    t_end, n_end = time.monotonic(), stored()
    deadline = time.monotonic() + DRAIN_S
    while stored() < info["written"] and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
    total = stored()
    distinct = store._query(
        "SELECT COUNT(*) FROM (SELECT DISTINCT key, source_time_us FROM records WHERE source = 'bench'"
        " AND CAST(value AS REAL) >= ?)", (FIRST,))[0][0]
    task.cancel()
    with suppress(asyncio.CancelledError):
        await task
    writer_task.cancel()
    with suppress(asyncio.CancelledError):
        await writer_task
    store.close()
    proc.terminate()
    proc.join(10)
    return {
        "tags": info["tags"],
        "seconds": info["seconds"],
        "written": info["written"],
        "offered_per_s": info["written"] / info["seconds"],
        "stored_per_s": (n_end - n_start) / (t_end - t_start),
        "stored": total,
        "lost": info["written"] - total,
        "duplicates": total - distinct,
        "reconnects": RECONNECTS.labels("bench")._value.get() - reconnects0,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the server writes (default 20)")
    parser.add_argument("--rate", type=float, default=0.0, help="target writes/s in total, 0 = as fast as possible")
    parser.add_argument("--no-report", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    from tests.fixtures.broker import free_port

    with tempfile.TemporaryDirectory() as tmp:
        figures = asyncio.run(_agent(free_port(), args.seconds, args.rate, Path(tmp)))
    lines = [
        f"| tags | {figures['tags']} |",
        f"| server writes (offered) | {figures['written']} in {figures['seconds']:.1f} s = "
        f"{figures['offered_per_s']:.0f} values/s |",
        f"| stored per second (sustained, same window) | {figures['stored_per_s']:.0f} values/s "
        f"({figures['stored_per_s'] / figures['offered_per_s']:.2f} of offered) |",
        f"| lost after drain | {figures['lost']} |",
        f"| duplicates | {figures['duplicates']} |",
        f"| reconnects (queue overflow → backfill) | {figures['reconnects']:.0f} |",
        f"| agent peak RSS | {figures['peak_rss_mib']:.0f} MiB |",
    ]
    body = (
        "Server (simulator `PlantServer`, separate process) writes every tag in a loop; the agent's `OpcuaSource`"
        " (publishing 100 ms, queue 5000 per item) stores through `RecordWriter` (SQLite WAL, synchronous=FULL)."
        " Both share the same CPUs.\n\n| figure | value |\n| --- | --- |\n" + "\n".join(lines)
    )
    print(body)
    if not args.no_report:
        from bench.report import write_section

        command = ".venv/bin/python -m bench.opcua_rate " + " ".join(sys.argv[1:] if argv is None else argv)
        write_section("opcua_rate", "OPC UA ingest", body, command=command.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
