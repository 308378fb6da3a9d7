"""Retention: what each table keeps, and how a row's size on disk is estimated.

Every trimmed table has its own age and bytes cap, so a flood in one (bad input piling up in quarantine) never
deletes another's rows: records are deleted only for their own age or their own bytes, and never one an approved
report read (`record_holds`, see UNHELD). Records and quarantine are also held to their caps at each insert
(`Store.set_caps`). Two tables are never trimmed:
the outbox (an unpublished reply is not ours to drop; its size is reported instead) and `reports` (owned by
edge_agent.reports: signed-off reports are audit evidence; drafts and rejections age out by reports.retention_days
in its repository's `trim_unapproved`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field

# Bytes per row beyond its variable-length columns: the integer columns, the cell and record headers, and the rowid
# repeated in every index. Measured against dbstat (tests/test_store.py::TestEstimate) with these values: typical
# records take 1.06x their estimate, quarantine 1.01x, replies of 20-40 kB 1.03x (of 2-3 kB, one per 4 KiB page,
# 1.5x); so a cap in MB is honoured to within a few percent for the rows that fill a disk.
RECORD_OVERHEAD = 117
QUARANTINE_OVERHEAD = 48
DEAD_LETTER_OVERHEAD = 64
OUTBOX_OVERHEAD = 48


@dataclass(frozen=True, slots=True)
class Table:
    """A table as retention sees it: its age column, and an SQL expression for one row's approximate bytes.

    LENGTH() of a BLOB reads only the record header (SQLite skips loading the value), so the estimate costs a scan of
    the table's rows, not of its payloads; LENGTH() of TEXT counts characters, close enough for mostly-ASCII text.
    """

    name: str
    time_column: str
    size: str


RECORDS = Table(
    "records",
    "received_time_us",
    # kind, key and idempotency_key are counted twice: each is also held by an index.
    "LENGTH(source) + 2 * LENGTH(kind) + 2 * LENGTH(key) + IFNULL(LENGTH(value), 0) + LENGTH(quality) + LENGTH(raw)"
    f" + 2 * LENGTH(idempotency_key) + {RECORD_OVERHEAD}",
)
QUARANTINE = Table(
    "quarantine",
    "received_time_us",
    f"LENGTH(source) + LENGTH(topic) + LENGTH(raw) + LENGTH(reason) + {QUARANTINE_OVERHEAD}",
)
DEAD_LETTER = Table(
    "dead_letter",
    "failed_time_us",
    f"LENGTH(topic) + LENGTH(payload) + LENGTH(properties) + LENGTH(reason) + {DEAD_LETTER_OVERHEAD}",
)
OUTBOX = Table("outbox", "created_time_us", f"LENGTH(topic) + LENGTH(payload) + LENGTH(properties) + {OUTBOX_OVERHEAD}")


class RetentionPolicy(BaseModel):
    """What `Store.apply_retention` keeps: rows younger than `max_age`, and per table at most its bytes cap (the
    oldest go first beyond it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_age: timedelta = Field(gt=timedelta(0))
    records_max_bytes: int = Field(ge=0)
    quarantine_max_bytes: int = Field(ge=0)
    dead_letter_max_bytes: int = Field(ge=0)

    def max_bytes(self, table: Table) -> int:
        return {
            RECORDS: self.records_max_bytes,
            QUARANTINE: self.quarantine_max_bytes,
            DEAD_LETTER: self.dead_letter_max_bytes,
        }[table]


class RetentionResult(BaseModel):
    """Rows deleted per table, and the outbox's size (never trimmed, so reported: a growing outbox needs a person)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    deleted: dict[str, int]
    outbox_rows: int
    outbox_bytes: int

    @property
    def total_deleted(self) -> int:
        return sum(self.deleted.values())


TRIMMED = (RECORDS, QUARANTINE, DEAD_LETTER)

# Rows summed per lock hold when estimating a table's bytes: ~10 ms each on a 2-core box, so ingest never stalls
# behind a scan of a multi-gigabyte table.
SCAN_STEP = 20_000
# Rows deleted per retention transaction: the writer waits at most one step (milliseconds) for the lock, and a
# million expired rows still go in about a thousand commits.
TRIM_STEP = 1024
# A record inside a range an approved report holds (table record_holds, written by edge_agent.reports at approval):
# neither a bytes cap nor age deletes it. Holds are one to three rows per approved report, so the check is cheap.
UNHELD = (
    "NOT EXISTS (SELECT 1 FROM record_holds h WHERE records.source_time_us >= h.from_us"
    " AND records.source_time_us < h.to_us AND (h.kind IS NULL OR h.kind = records.kind))"
)


def deletable(table: Table) -> str:
    return UNHELD if table is RECORDS else "1=1"
