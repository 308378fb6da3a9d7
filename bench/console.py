"""Console pages benchmark: each read page's server time, p95, on a store holding 30 simulated days of the plant.

    .venv/bin/python -m bench.console [--days 30] [--runs 30] [--keep DIR]

Fills a store with `--days` days of the simulated plant (edge_agent.sim: every tag every 10 s, alarms, MES events,
operator notes; one fresh plant per day, ~113 000 records a day), files a shift report made from the last whole
shift's facts, writes an audit log with a checkpoint, then asks each page (HTML and JSON) `--runs` times through the
ASGI app in process (httpx), signed in, and times each request from send to last byte: the server's time, with no
network. The clock stands mid-shift on the last day. `--keep DIR` keeps the store there and reuses it next time
(filling 30 days takes ~10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from bench.report import met, write_section
from edge_agent.audit import AuditLog
from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.config import AgentConfig, load_config
from edge_agent.console.app import build_app
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.console.context import ConsoleContext
from edge_agent.reports.document import ReportRepository, new_document
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.narrative import Draft
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.sim.records import plant_records
from edge_agent.store import Store

COMMAND = ".venv/bin/python -m bench.console"
REPO = Path(__file__).resolve().parents[1]
START = datetime(2026, 11, 1, 6, 0, tzinfo=UTC)
# Every page p95 ≤ 300 ms server time on 2 cores with 30 days of a simulated plant in the store (the console issue).
GOAL_P95_S = 0.300
ORIGIN = "https://localhost:8443"


def bench_config(state: Path) -> AgentConfig:
    demo = load_config(REPO / "configs" / "demo.toml")
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": demo.site.timezone},
            "paths": {"state_dir": str(state)},
            "mqtt": {"username": "agent", "password": "agent-pw"},
            "reports": demo.reports.model_dump(mode="python"),
            "identities": [{"name": "viewer", "broker_user": "viewer"}, {"name": "auditor", "broker_user": "auditor"}],
            "console": {"roles": {"viewer": ["viewer"], "auditor": ["auditor"]}},
        }
    )


def fill(store: Store, days: int, seed: int) -> int:
    count = 0
    for day in range(days):
        records = plant_records(seed + day, START + timedelta(days=day), 24, tick_s=10, kpi_scenarios=True)
        store.insert_records(records)
        count += len(records)
        print(f"day {day + 1}/{days}: {count:,} records", flush=True)
    return count


def file_report(repo: ReportRepository, store: Store, config: AgentConfig, end: datetime) -> str:
    """A shift summary of the 8 hours before `end`, from the store through the facts wing (no narrative)."""
    window = ResolvedWindow(start=end - timedelta(hours=8), end=end, shift="bench", timezone=config.site.timezone)
    request = ResolvedRequest(type="shift_summary", language="es", window=window, scope=Scope())
    facts = compute_facts(store.records(window.start, window.end), request, kpi=config.reports.kpi)
    body: dict[str, Any] = {
        "schema": "edge-agent.report.body/2",
        "site": "demo",
        "request": request.as_json(),
        "facts": [f.model_dump(mode="json") for f in facts],
        "narrative": None,
        "narrative_status": "empty",
        "sections": [],
    }
    data = canonical_json(body)
    document = new_document(
        report_id="rpt-bench",
        request_id="bench",
        requested_by="operator",
        requested_at=end.isoformat(),
        formats=["json"],
        draft=Draft(body=body, body_bytes=data, body_sha256=sha256_hex(data)),
        audit_requested=None,
        audit_generated=None,
    )
    repo.insert(document, "0" * 64)
    return str(document["report_id"])


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1] if len(values) > 1 else values[0]


async def measure(ctx: ConsoleContext, paths: list[tuple[str, str]], runs: int) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for role, path in paths:
        session = ctx.sessions.new(ctx.now(), role)
        cookies = {"session": ctx.sessions.cookie(session)}
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(ctx)), base_url=ORIGIN, cookies=cookies
        ) as client:
            times = []
            for _ in range(runs + 1):
                began = time.perf_counter()
                response = await client.get(path)
                times.append(time.perf_counter() - began)
                if response.status_code != 200:
                    raise RuntimeError(f"{path}: {response.status_code} {response.text[:200]}")
            times = times[1:]  # the first warms the template cache and SQLite's pages
        label = re.sub(r"ids=[0-9,]+", "ids=<50 ids>", path)
        out[label] = {
            "p50": statistics.median(times),
            "p95": p95(times),
            "max": max(times),
            "bytes": len(response.content),
        }
        print(f"{label}: p95 {out[label]['p95'] * 1000:.0f} ms", flush=True)
    return out


def table(results: dict[str, dict[str, float]]) -> str:
    rows = ["| page | p50 ms | p95 ms | max ms | bytes |", "|---|---|---|---|---|"]
    for path, r in results.items():
        rows.append(
            f"| `{path}` | {r['p50'] * 1000:.0f} | {r['p95'] * 1000:.0f} | {r['max'] * 1000:.0f} | {r['bytes']:,.0f} |"
        )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="keep the state here and reuse its store next time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-console-") as tmp:
        state = args.keep or Path(tmp)
        state.mkdir(parents=True, exist_ok=True)
        config = bench_config(state)
        store = Store(config.paths.store_path)
        count = store.record_count() or fill(store, args.days, args.seed)
        now = START + timedelta(days=args.days - 1, hours=6)  # 12:00 on the last day, mid-shift (site time)
        audit = AuditLog.open(config.paths.audit_dir, origin="edge-agent/bench")
        repo = ReportRepository.for_state_dir(state)
        report_id = "rpt-bench"
        try:
            repo.get(report_id)
        except Exception:  # noqa: BLE001 (a fresh state: file it)
            report_id = file_report(repo, store, config, now - timedelta(hours=4))
        audit.append("bench.console", "bench", {"records": count})
        audit.checkpoint()
        credentials = CredentialStore.for_state_dir(state)
        ctx = ConsoleContext(config, store, audit, repo, credentials, now=lambda: now)
        ids = ",".join(str(i) for i in range(count - 49, count + 1))
        pages = ["/now", "/reports", f"/reports/{report_id}", f"/records?ids={ids}", "/alarms", "/health"]
        paths = [("viewer", p) for p in pages] + [
            ("viewer", p.replace("?", ".json?") if "?" in p else p + ".json") for p in pages
        ]
        paths += [("auditor", "/audit"), ("auditor", "/audit.json")]
        load = os.getloadavg()[0]
        results = asyncio.run(measure(ctx, paths, args.runs))
        credentials.close()
        repo.close()
        audit.close()
        store.close()
    worst_path, worst = max(results.items(), key=lambda kv: kv[1]["p95"])
    body = (
        f"{count:,} records ({args.days} simulated days), {args.runs} requests per page after one warm-up, in process"
        " (httpx ASGI transport), signed in; server time from send to last byte. The 1-minute load average was"
        f" {load:.1f} when the requests began (other jobs share the CPUs: the figures are upper bounds).\n\n"
        + table(results)
    )
    write_section(
        "console",
        "Console pages",
        body,
        f"{COMMAND} --days {args.days} --runs {args.runs}",
        headline=f"slowest page p95 {worst['p95'] * 1000:.0f} ms (`{worst_path}`) with {args.days} days in the store",
        goal=f"every page p95 ≤ {GOAL_P95_S * 1000:.0f} ms on 2 cores: {met(worst['p95'] <= GOAL_P95_S)}",
    )
    print(table(results))


if __name__ == "__main__":
    main()
