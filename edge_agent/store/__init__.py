"""SQLite (WAL) store: records, quarantine, outbox."""

from edge_agent.store.migrations import MigrationError
from edge_agent.store.store import Store, StoreError, StoreFullError, from_us, to_us
from edge_agent.store.writer import RecordWriter

__all__ = ["MigrationError", "RecordWriter", "Store", "StoreError", "StoreFullError", "from_us", "to_us"]
