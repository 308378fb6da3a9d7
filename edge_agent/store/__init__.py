"""SQLite (WAL) store: records, quarantine, outbox, dead letters; retention per table."""

from edge_agent.store.errors import StoreError, StoreFullError
from edge_agent.store.migrations import MigrationError
from edge_agent.store.retention import RetentionPolicy, RetentionResult
from edge_agent.store.rows import DeadLetter, StoredRow, from_us, storable, to_us
from edge_agent.store.store import Inserted, Store
from edge_agent.store.writer import RecordWriter

__all__ = [
    "DeadLetter",
    "Inserted",
    "MigrationError",
    "RecordWriter",
    "RetentionPolicy",
    "RetentionResult",
    "Store",
    "StoreError",
    "StoreFullError",
    "StoredRow",
    "from_us",
    "storable",
    "to_us",
]
