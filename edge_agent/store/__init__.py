"""SQLite (WAL) store: records, quarantine, outbox."""

from edge_agent.store.migrations import MigrationError
from edge_agent.store.store import Store, StoreError, from_us, to_us
from edge_agent.store.writer import RecordWriter

__all__ = ["MigrationError", "RecordWriter", "Store", "StoreError", "from_us", "to_us"]
