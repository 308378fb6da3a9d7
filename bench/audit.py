"""Audit log benchmark: append rate (fsync per entry vs. group commit) and verification rate of a large log.

    .venv/bin/python -m bench.audit                       # issue size: a 1 000 000-entry log
    .venv/bin/python -m bench.audit --entries 100000      # quicker

Writes its figures into BENCHMARKS.md (## Audit). The log lives in a temporary directory on the same disk as
/tmp unless --dir says otherwise; it is deleted afterwards.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from bench.report import met, write_section
from edge_agent.audit import AuditLog
from edge_agent.audit.log import iter_lines
from edge_agent.audit.verify import scan_chain, verify_log

ORIGIN = "edge-agent/bench"
# 10 000 entries per checkpoint: each checkpoint costs three fsyncs, which would dominate building a million-entry
# log at the production cadence (256) without telling us anything about append or verify throughput.
BENCH_CHECKPOINT_EVERY = 10_000
# The goal the audit bench holds `verify_log` to, in entries per second.
VERIFY_GOAL = 100_000


def payload(i: int) -> dict[str, object]:
    """What a typical `ingest.batch` entry carries (≈ 330-byte lines)."""
    return {
        "source": "opcua-1",
        "count": 500,
        "first_record_id": i * 500,
        "last_record_id": i * 500 + 499,
        "raw_sha256": f"{i:064x}",
    }


def append_rate(directory: Path, batch: int, total: int) -> float:
    """Entries/s appending `total` entries in groups of `batch` (one write + one fsync per group)."""
    with AuditLog.open(directory, ORIGIN, checkpoint_every_entries=BENCH_CHECKPOINT_EVERY) as log:
        start = time.perf_counter()
        done = 0
        while done < total:
            n = min(batch, total - done)
            if batch == 1:
                log.append("ingest.batch", "bench", payload(done))
            else:
                log.append_many([("ingest.batch", "bench", payload(done + k)) for k in range(n)])
            done += n
        return total / (time.perf_counter() - start)


def concurrent_rate(directory: Path, threads: int, per_thread: int) -> float:
    """Entries/s with `threads` threads each calling `append` (one entry per call): fsyncs are shared (group
    commit), as when several components append at once."""
    with AuditLog.open(directory, ORIGIN, checkpoint_every_entries=BENCH_CHECKPOINT_EVERY) as log:
        barrier = threading.Barrier(threads + 1)

        def work(n: int) -> None:
            barrier.wait()
            for i in range(per_thread):
                log.append("ingest.batch", f"bench-{n}", payload(i))

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for w in workers:
            w.start()
        barrier.wait()
        start = time.perf_counter()
        for w in workers:
            w.join()
        return threads * per_thread / (time.perf_counter() - start)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000, help="size of the log to verify")
    parser.add_argument("--single", type=int, default=300, help="entries appended one fsync each")
    parser.add_argument("--threads", type=int, default=8, help="threads appending concurrently (group commit)")
    parser.add_argument("--batches", default="10,100,1000", help="group-commit sizes to measure")
    parser.add_argument("--batch-total", type=int, default=20_000, help="entries per group-commit measurement")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the logs (default: a temp dir)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="bench-audit-", dir=args.dir))
    try:
        rows = []
        rate = append_rate(root / "single", 1, args.single)
        rows.append(("1 (fsync per entry)", args.single, rate))
        print(f"append, fsync per entry: {rate:,.0f} entries/s", flush=True)
        rate = concurrent_rate(root / "threads", args.threads, args.single)
        rows.append(
            (f"shared: {args.threads} threads calling `append` (group commit)", args.threads * args.single, rate)
        )
        print(f"{args.threads} threads, append: {rate:,.0f} entries/s", flush=True)
        for batch in (int(b) for b in args.batches.split(",")):
            rate = append_rate(root / f"batch{batch}", batch, args.batch_total)
            rows.append((f"{batch} (`append_many`)", args.batch_total, rate))
            print(f"append_many({batch}): {rate:,.0f} entries/s", flush=True)

        big = root / "big"
        started = time.perf_counter()
        build_rate = append_rate(big, 1000, args.entries - 1)  # entry 0 is the key
        print(f"built {args.entries:,} entries at {build_rate:,.0f} entries/s", flush=True)
        size_mb = (big / "entries.jsonl").stat().st_size / 1e6

        t = time.perf_counter()
        result = verify_log(big)
        verify_s = time.perf_counter() - t
        assert result.ok and result.entries == args.entries, result.summary()
        verify_rate = args.entries / verify_s
        print(f"verify_log: {verify_rate:,.0f} entries/s ({verify_s:.2f} s) — {result.summary()}", flush=True)

        lines = list(iter_lines(big / "entries.jsonl"))
        t = time.perf_counter()
        chain = scan_chain(lines)
        scan_rate = len(lines) / (time.perf_counter() - t)
        assert chain.problem is None
        print(f"chain + tree from memory: {scan_rate:,.0f} entries/s", flush=True)
        del lines
        total_s = time.perf_counter() - started
    finally:
        shutil.rmtree(root, ignore_errors=True)

    table = "\n".join(f"| {label} | {n:,} | {rate:,.0f} |" for label, n, rate in rows)
    body = f"""
Append (every call returns only after an fsync covering its entries; `append_many` writes a group with one write and
one fsync; concurrent `append` calls share fsyncs — whoever fsyncs first covers everyone whose write finished):

| entries per fsync | entries | entries/s |
|---|---|---|
{table}

Verification of a {args.entries:,}-entry log ({size_mb:,.0f} MB of JSONL, {result.checkpoints} signed checkpoints, one
every {BENCH_CHECKPOINT_EVERY:,} entries):

| what | entries/s | goal |
|---|---|---|
| `verify_log` (read file, hash chain, RFC 6962 tree, every checkpoint's signature and root) \
| {verify_rate:,.0f} | ≥ {VERIFY_GOAL:,} |
| chain + tree only, lines already in memory | {scan_rate:,.0f} | |

The {args.entries:,}-entry log was built with `append_many(1000)` at {build_rate:,.0f} entries/s; the whole run took
{total_s:.0f} s, with a 1-minute load average of {load_before:.1f} on this machine when it started (other jobs share
the CPUs, so CPU-bound figures are lower bounds). \
fsync on this machine's disk takes ≈ {1 / rows[0][2] * 1000:.1f} ms, which bounds the
one-fsync-per-entry figure; per-entry CPU cost (canonical JSON, SHA-256) bounds the batched ones. Verification
never builds a pydantic model: it slices the canonical line (entry.py) and hashes with hashlib.
"""
    print(body)
    if not args.no_write:
        given = list(sys.argv[1:] if argv is None else argv)
        command = " ".join([".venv/bin/python -m bench.audit", *given])
        write_section(
            "audit",
            "Audit",
            body,
            command=command,
            headline=f"`verify_log` {verify_rate:,.0f} entries/s; append {rows[0][2]:,.0f} entries/s with an fsync "
            f"per entry, {rows[-1][2]:,.0f} with `append_many({rows[-1][0].split()[0]})`",
            goal=f"`verify_log` ≥ {VERIFY_GOAL:,} entries/s: {met(verify_rate >= VERIFY_GOAL)}",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
