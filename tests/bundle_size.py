"""How large an auditor's bundle of shift summaries with their evidence is: the figures docs/audit.md's "Size"
quotes (tests/test_audit_docs.py checks that it names this command).

    .venv/bin/python -m tests.bundle_size              # one simulated day: three 8-hour shift summaries (20 s)
    .venv/bin/python -m tests.bundle_size --days 30    # a month (90 reports), measured rather than multiplied (12 min)

The plant simulator (seed 7, 13 tags each sampled every 10 s, the KPI scenarios on) from 06:00 UTC, stored; the
shift summaries of every day (06-14, 14-22, 22-06 UTC) made from the store as the agent makes them (configs/demo.toml's
`[reports]`) and exported with their evidence, as a directory and as each archive `audit export` writes. Prints the
size of each file unpacked and of each archive; docs/audit.md quotes the figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from edge_agent.audit import AuditLog
from edge_agent.audit.export import export_bundle, write_archive
from edge_agent.config import load_config
from edge_agent.reports.document import StoreEvidence
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.sim.records import plant_records
from edge_agent.store import Store
from tests.fixtures.evidence import file_reports

REPO = Path(__file__).resolve().parents[1]
ORIGIN = "edge-agent/bundle-size"
START = datetime(2026, 11, 2, 6, 0, tzinfo=UTC)
CONFIG = """
[site]
id = "bundle-size"

[paths]
state_dir = "{state}"

[audit]
origin = "{origin}"
"""


def requests(days: int) -> list[tuple[str, ResolvedRequest]]:
    out = []
    for day in range(days):
        for n, shift in enumerate("ABC"):
            start = START + timedelta(days=day, hours=8 * n)
            window = ResolvedWindow(start=start, end=start + timedelta(hours=8), shift=shift, timezone="UTC")
            request = ResolvedRequest(type="shift_summary", language="en", window=window, scope=Scope())
            out.append((f"shift-{start:%Y%m%d}-{shift}", request))
    return out


def mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bundle_size", description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.monotonic()
    records = plant_records(args.seed, START, 24 * args.days, tick_s=10, kpi_scenarios=True)
    with tempfile.TemporaryDirectory(prefix="bundle-size-") as tmp:
        root = Path(tmp)
        demo = load_config(REPO / "configs" / "demo.toml")
        (root / "edge-agent.toml").write_text(CONFIG.format(state=root / "state", origin=ORIGIN), encoding="utf-8")
        config = load_config(root / "edge-agent.toml").model_copy(update={"reports": demo.reports})
        state = config.paths.state_dir
        count = len(records)
        file_reports(state, config, ORIGIN, records, requests(args.days))
        del records  # a month is 3.4 million records: the export holds its own copy
        out = root / "bundle"
        with Store(config.paths.store_path) as store, AuditLog.open(state / "audit", ORIGIN) as log:
            result = export_bundle(
                state / "audit",
                out,
                reports_dir=state / "reports",
                log=log,
                evidence=StoreEvidence(store, config.reports),
            )
        assert result.verification is not None and result.verification.ok and result.without_evidence == {}
        files = sorted((p for p in out.rglob("*") if p.is_file()), key=lambda p: -p.stat().st_size)
        unpacked = sum(p.stat().st_size for p in files)
        print(f"{count:,} records, {len(result.reports)} reports, {args.days} day(s)")
        print(f"unpacked: {mb(unpacked)}")
        for p in files[:4]:
            print(f"  {p.relative_to(out)}: {mb(p.stat().st_size)}")
        for suffix in (".tar.gz", ".tar.xz"):
            archive = root / f"bundle{suffix}"
            write_archive(out, archive)
            size = archive.stat().st_size
            print(f"{suffix}: {mb(size)}" + (f", a month of days like it {mb(size * 30)}" if args.days == 1 else ""))
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
