"""What the state directory holds that its caps do not bound, and how soon it fills the disk.

The store is held to its caps (store.retention_max_mb and the others; `files.disk_verdict`), but three things are
not: the audit log (append-only evidence), the reports (`<state_dir>/reports/*.json`; drafts and rejections age out
with reports.retention_days, approved reports never), and the outbox (unpublished replies, never dropped). Doctor
counts each, and warns while the disk left after the store's caps would fill within DISK_WARN_DAYS at the rate the
audit log and reports have grown since the log's first entry. Pure verdicts; `measure_state` reads the disk.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from edge_agent.audit.files import ENTRIES
from edge_agent.store.retention import OUTBOX

MIB = 1024 * 1024
DAY_S = 86_400.0
# 30 days: time to order a disk or export and move the audit log's older months (docs/deployment.md, "Disk").
DISK_WARN_DAYS = 30
# 50 MiB of unpublished replies (20-40 kB each, store/retention.py) is well over a thousand: the broker has refused
# or been unreachable for days, and the outbox keeps growing until it answers.
OUTBOX_WARN_MIB = 50
# The rate is measured over at least a day: a log started an hour ago would extrapolate its start-up entries.
MIN_AGE_DAYS = 1.0


@dataclass(frozen=True)
class StateUsage:
    """Bytes on disk: the audit directory, the report files, the outbox rows (an estimate, inside the store; None
    when the store cannot be read), and the audit log's age in days (None: no entry yet)."""

    audit: int
    reports: int
    report_files: int
    outbox: int | None
    outbox_rows: int | None
    age_days: float | None

    @property
    def unbounded(self) -> int:
        """What no cap trims: the audit log and the reports."""
        return self.audit + self.reports

    def describe(self) -> str:
        outbox = (
            "outbox unreadable"
            if self.outbox is None
            else f"outbox {self.outbox / MIB:,.1f} MiB ({self.outbox_rows} replies)"
        )
        return (
            f"audit log {self.audit / MIB:,.1f} MiB, reports {self.reports / MIB:,.1f} MiB ({self.report_files}"
            f" files), {outbox}"
        )


def dir_bytes(path: Path) -> tuple[int, int]:
    """(bytes, files) of the regular files under `path` (0, 0 when absent); symlinks are not followed."""
    total = count = 0
    if path.is_dir():
        for item in path.rglob("*"):
            if item.is_file() and not item.is_symlink():
                total, count = total + item.stat().st_size, count + 1
    return total, count


def log_age_days(audit_dir: Path, now: datetime) -> float | None:
    """Days since the audit log's first entry (its `time`), or None when it has none."""
    try:
        with open(audit_dir / ENTRIES, "rb") as f:
            first = f.readline()
        started = datetime.fromisoformat(json.loads(first)["time"].replace("Z", "+00:00"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return max((now - started).total_seconds(), 0.0) / DAY_S


def outbox_usage(store_path: Path) -> tuple[int | None, int | None]:
    """(estimated bytes, rows) of the outbox, read-only (doctor never migrates or writes the store)."""
    if not store_path.is_file():
        return 0, 0
    try:
        conn = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True, timeout=5)
        try:
            rows, size = conn.execute(f"SELECT COUNT(*), IFNULL(SUM({OUTBOX.size}), 0) FROM outbox").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None, None
    return int(size), int(rows)


def measure_state(state_dir: Path, audit_dir: Path, now: datetime | None = None) -> StateUsage:
    audit, _ = dir_bytes(audit_dir)
    reports, files = dir_bytes(state_dir / "reports")
    outbox, rows = outbox_usage(state_dir / "store.sqlite3")
    return StateUsage(audit, reports, files, outbox, rows, log_age_days(audit_dir, now or datetime.now(UTC)))


def growth_verdict(spare_bytes: int, usage: StateUsage) -> tuple[str, str]:
    """ok / warn for the disk left after the store's caps (`spare_bytes`) against the audit log's and the reports'
    growth per day since the log's first entry, with the numbers."""
    if usage.age_days is None or usage.unbounded == 0:
        return "ok", "no audit entries yet to measure growth by"
    per_day = usage.unbounded / max(usage.age_days, MIN_AGE_DAYS)
    days = spare_bytes / per_day
    numbers = f"the audit log and reports grow {per_day / MIB:,.2f} MiB/day: the disk fills in about {days:,.0f} days"
    return ("warn" if days < DISK_WARN_DAYS else "ok"), numbers


def outbox_verdict(usage: StateUsage) -> str | None:
    """Why the outbox is worth a warning, or None."""
    if usage.outbox is None:
        return "the store's outbox could not be read"
    if usage.outbox > OUTBOX_WARN_MIB * MIB:
        return (
            f"the outbox holds {usage.outbox / MIB:,.0f} MiB of unpublished replies (over {OUTBOX_WARN_MIB} MiB): the"
            " broker has not taken them"
        )
    return None
