"""OPC UA ingest rate: data changes per second sustained from a real asyncua server into the store.

A separate process runs the simulator's OPC UA server and writes a new value to each of the plant's 13 tags as fast
as it can (or at `--rate` writes/s) for `--seconds`; this process runs the agent's `OpcuaSource` + `RecordWriter` +
`Store` and counts what was stored. Reported: offered writes/s, stored/s over the same window, lost (written but
never stored, after a drain), how much of the lost lies inside the `data_gap` records the agent stored (accounted
for) and how much outside any (silent), duplicates, reconnects, and this process's peak RSS.

    .venv/bin/python -m bench.opcua_rate [--seconds 15] [--rates 2000,0] [--no-report]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import multiprocessing
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.report import met, write_section

if TYPE_CHECKING:
    import multiprocessing.synchronize

    from edge_agent.store import Store

# Sample values start here, apart from the 0.0 the server presents before its first write.
FIRST = 1_000_000.0
# After the writer stops the agent drains what is queued (or backfills it) until it stalls this long, at most
# DRAIN_MAX_S: what is then still missing is lost, not merely late.
DRAIN_STALL_S = 10.0
DRAIN_MAX_S = 180.0
# A paced phase keeps up when this share of the offered rate is stored within the writer's own window.
PACED_SHARE = 0.99


def _missing(store: Store, tags: Sequence[str], times: Sequence[float]) -> tuple[int, int, int]:
    """(in a recorded gap, silent, gap records): each written value never stored, inside a data_gap span or not."""
    stored: dict[str, set[int]] = {tag: set() for tag in tags}
    for key, value in store._query(
        "SELECT key, CAST(value AS REAL) FROM records WHERE source = 'bench'"
        " AND kind = 'tag_value' AND CAST(value AS REAL) >= ?",
        (FIRST,),
    ):
        stored.setdefault(key, set()).add(int(value - FIRST))
    gaps = store.records(kinds=["data_gap"], sources=["bench"])
    spans: dict[str | None, list[tuple[float, float]]] = {}
    for gap in gaps:
        end = datetime.fromisoformat(gap.value["end"]).timestamp() if gap.value["end"] else float("inf")
        spans.setdefault(gap.value["tag"], []).append((datetime.fromisoformat(gap.value["start"]).timestamp(), end))
    in_gap = silent = 0
    for tag in tags:
        merged: list[list[float]] = []  # overlapping spans joined, so one bisect finds the only candidate
        for start, end in sorted(spans.get(tag, [])):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        starts = [start for start, _ in merged]
        for n, when in enumerate(times):
            if n in stored[tag]:
                continue
            i = bisect.bisect_right(starts, when) - 1
            if i >= 0 and when <= merged[i][1]:
                in_gap += 1
            else:
                silent += 1
    return in_gap, silent, len(gaps)


def _serve(
    port: int, seconds: float, rate: float, started: multiprocessing.synchronize.Event, result: multiprocessing.Queue
) -> None:
    asyncio.run(_serve_async(port, seconds, rate, started, result))


async def _serve_async(
    port: int, seconds: float, rate: float, started: multiprocessing.synchronize.Event, result: multiprocessing.Queue
) -> None:
    import logging

    from edge_agent.sim import PlantServer, tag_names

    logging.getLogger("asyncua").setLevel(logging.ERROR)
    tags = [t for t in tag_names() if not t.endswith(".running")]
    async with PlantServer(f"opc.tcp://127.0.0.1:{port}/bench") as server:
        started.set()
        await asyncio.sleep(2.0)  # let the agent subscribe before the clock starts
        written = 0
        times: list[float] = []  # write n's source time (POSIX seconds): where a missing value would have been
        t0 = time.monotonic()
        n = 0
        while time.monotonic() - t0 < seconds:
            now = datetime.now(UTC)
            await server.write({tag: FIRST + n for tag in tags}, now)
            times.append(now.timestamp())
            written += len(tags)
            n += 1
            if rate > 0:
                ahead = written / rate - (time.monotonic() - t0)
                # Sleep only when well ahead: asyncio.sleep's own overhead would otherwise cap the rate.
                if ahead > 0.005:
                    await asyncio.sleep(ahead)
                elif n % 20 == 0:
                    await asyncio.sleep(0)
            elif n % 20 == 0:
                await asyncio.sleep(0)  # let the server publish
        result.put({"written": written, "seconds": time.monotonic() - t0, "tags": len(tags), "times": times})
        await asyncio.sleep(DRAIN_MAX_S + 60)  # keep serving (history too) until the agent has drained


async def _agent(port: int, seconds: float, rate: float, workdir: Path) -> dict[str, float]:
    import logging

    from edge_agent.config import NodeConfig, OpcuaSourceConfig
    from edge_agent.connectors.opcua import RECONNECTS, OpcuaSource
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
    source = OpcuaSource(config, writer, quarantine=store, pki_dir=workdir / "pki")
    ready = asyncio.Event()
    task = asyncio.create_task(source.run(ready))
    reconnects0 = RECONNECTS.labels("bench")._value.get()
    await asyncio.wait_for(ready.wait(), 30)

    def stored() -> int:
        return store._query(
            "SELECT COUNT(*) FROM records WHERE source = 'bench' AND CAST(value AS REAL) >= ?", (FIRST,)
        )[0][0]

    # Stored-per-second over the writer's window: count at its start and end.
    await asyncio.sleep(2.0)
    t_start, n_start = time.monotonic(), stored()
    info = await asyncio.to_thread(result.get, True, seconds + 60)
    t_end, n_end = time.monotonic(), stored()
    deadline = time.monotonic() + DRAIN_MAX_S
    last, last_progress = stored(), time.monotonic()
    while last < info["written"] and time.monotonic() < deadline and time.monotonic() - last_progress < DRAIN_STALL_S:
        await asyncio.sleep(0.5)
        if (now := stored()) > last:
            last, last_progress = now, time.monotonic()
    drain_s = time.monotonic() - t_end
    # Cut off while still storing (the backfill was not done), or stalled: only then is "lost" lost, not late.
    drain_end = (
        "complete"
        if last >= info["written"]
        else ("stalled" if time.monotonic() - last_progress >= DRAIN_STALL_S else "cut off while still storing")
    )
    total = stored()
    in_gap, silent, gap_records = _missing(store, tags, info["times"])
    distinct = store._query(
        "SELECT COUNT(*) FROM (SELECT DISTINCT key, source_time_us FROM records WHERE source = 'bench'"
        " AND CAST(value AS REAL) >= ?)",
        (FIRST,),
    )[0][0]
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
        "lost_in_gaps": in_gap,
        "lost_silent": silent,
        "gap_records": gap_records,
        "duplicates": total - distinct,
        "reconnects": RECONNECTS.labels("bench")._value.get() - reconnects0,
        "drain_s": drain_s,
        "drain_end": drain_end,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def headline(runs: list[dict[str, Any]], rates: list[float]) -> str:
    """Per phase: what was stored per second against what the server offered, and what was lost."""
    return "; ".join(
        f"{'unpaced: ' if not rate else ''}{f['stored_per_s']:.0f}/s stored of {f['offered_per_s']:.0f}/s offered, "
        f"{f['lost']} lost"
        for f, rate in zip(runs, rates, strict=True)
    )


def goal(runs: list[dict[str, Any]], rates: list[float]) -> str:
    """Paced phases keep up with the server (≥ PACED_SHARE of the offered rate stored in the same window, nothing
    lost) and no phase loses a value without a recorded data_gap."""
    paced = [f for f, rate in zip(runs, rates, strict=True) if rate]
    keeps_up = all(f["stored_per_s"] >= PACED_SHARE * f["offered_per_s"] and f["lost"] == 0 for f in paced)
    silent = sum(f["lost_silent"] for f in runs)
    targets = ", ".join(f"{rate:.0f}/s" for rate in rates if rate) or "none run"
    return (
        f"paced ({targets}): ≥ {PACED_SHARE:.2f} of offered stored in the same window, 0 lost; every phase: 0 lost "
        f"without a data_gap: {met(keeps_up and silent == 0)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="how long the server writes per phase (default 15)")
    parser.add_argument(
        "--rates",
        default="2000,0",
        help="comma-separated target writes/s, one phase each; 0 = as fast as the server can (default 2000,0)",
    )
    parser.add_argument("--no-report", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)
    from edge_agent.base.broker import free_port

    rates = [float(r) for r in args.rates.split(",") if r.strip()]
    runs = []
    for rate in rates:
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(asyncio.run(_agent(free_port(), args.seconds, rate, Path(tmp))))
    header = "| figure | " + " | ".join(f"target {r:.0f}/s" if r else "unpaced (server max)" for r in rates) + " |"
    rows = [
        ("tags", lambda f: f"{f['tags']}"),
        ("server writes (offered)", lambda f: f"{f['written']} in {f['seconds']:.1f} s = {f['offered_per_s']:.0f}/s"),
        (
            "stored per second, same window",
            lambda f: f"{f['stored_per_s']:.0f}/s ({f['stored_per_s'] / f['offered_per_s']:.2f} of offered)",
        ),
        (
            "stored in all (incl. drain)",
            lambda f: f"{f['stored']} after a {f['drain_s']:.0f} s drain ({f['drain_end']})",
        ),
        ("lost", lambda f: f"{f['lost']} ({f['lost'] / f['written']:.3f} of written)"),
        ("lost inside recorded data_gap spans", lambda f: f"{f['lost_in_gaps']} in {f['gap_records']} gap records"),
        ("lost with no data_gap (silent)", lambda f: f"{f['lost_silent']}"),
        ("duplicates", lambda f: f"{f['duplicates']}"),
        ("reconnects (client queue overflow → backfill)", lambda f: f"{f['reconnects']:.0f}"),
        ("agent peak RSS", lambda f: f"{f['peak_rss_mib']:.0f} MiB"),
    ]
    table = "\n".join(
        [header, "| --- |" + " --- |" * len(rates)]
        + [f"| {name} | " + " | ".join(fmt(f) for f in runs) + " |" for name, fmt in rows]
    )
    body = (
        "Server: the simulator's `PlantServer` in a separate process, writing every analog tag in a loop. Agent:"
        " `OpcuaSource` (publishing 100 ms, queue 5000 per item, overflow repaired from history) into `RecordWriter`"
        " (SQLite WAL, synchronous=FULL). Both processes share the machine's CPUs. After the writer stops the agent"
        f' drains until it makes no progress for {DRAIN_STALL_S:.0f} s; "lost" is what is still missing then.'
        " Values the live path could not take in time are fetched with HistoryRead.\n\n" + table
    )
    print(body)
    if not args.no_report:
        command = ".venv/bin/python -m bench.opcua_rate " + " ".join(sys.argv[1:] if argv is None else argv)
        write_section(
            "opcua_rate",
            "OPC UA ingest",
            body,
            command=command.strip(),
            headline=headline(runs, rates),
            goal=goal(runs, rates),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
