"""Versioned schema migrations. Append only: a shipped migration is never edited, PRAGMA user_version counts them."""

from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[str, ...] = (
    # 1: records, quarantine, outbox. Times are integer microseconds since the Unix epoch, UTC.
    """
    CREATE TABLE records (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        source_time_us INTEGER NOT NULL,
        received_time_us INTEGER NOT NULL,
        value TEXT,
        quality TEXT NOT NULL,
        raw BLOB NOT NULL,
        idempotency_key TEXT NOT NULL UNIQUE,
        historical INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX records_key_time ON records (key, source_time_us);
    CREATE INDEX records_time ON records (source_time_us);
    CREATE INDEX records_received ON records (received_time_us);
    CREATE TABLE quarantine (
        id INTEGER PRIMARY KEY,
        source TEXT NOT NULL,
        topic TEXT NOT NULL,
        raw BLOB NOT NULL,
        reason TEXT NOT NULL,
        received_time_us INTEGER NOT NULL
    );
    CREATE TABLE outbox (
        id INTEGER PRIMARY KEY,
        topic TEXT NOT NULL,
        payload BLOB NOT NULL,
        qos INTEGER NOT NULL,
        retain INTEGER NOT NULL,
        properties TEXT NOT NULL,
        created_time_us INTEGER NOT NULL
    );
    """,
    # 2: reports (owner: edge_agent.reports). One row per report; the full JSON document is also written to
    # <state_dir>/reports/<report_id>.json for audit export. request_id is the requester's idempotency key.
    """
    CREATE TABLE reports (
        report_id TEXT PRIMARY KEY,
        request_id TEXT NOT NULL UNIQUE,
        request_sha256 TEXT NOT NULL,
        type TEXT NOT NULL,
        status TEXT NOT NULL,
        body_sha256 TEXT NOT NULL,
        requested_by TEXT,
        created_time_us INTEGER NOT NULL,
        updated_time_us INTEGER NOT NULL,
        document TEXT NOT NULL
    );
    CREATE INDEX reports_created ON reports (created_time_us);
    """,
    # 3: report_queue (owner: edge_agent.reports). Accepted requests without their final reply yet, so a restart
    # loses none; `entry` is the PendingRequest JSON, accepted_time_us keeps them in arrival order.
    """
    CREATE TABLE report_queue (
        request_id TEXT PRIMARY KEY,
        entry TEXT NOT NULL,
        accepted_time_us INTEGER NOT NULL
    );
    """,
    # 4: dead letters (owner: edge_agent.publish.outbox). A reply the broker refused N times moves out of the outbox,
    # so it
    # never blocks later rows; the row keeps its outbox id, the attempts and the broker's last reason. Quarantine
    # gets a time index for its own retention.
    """
    ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE dead_letter (
        id INTEGER PRIMARY KEY,
        topic TEXT NOT NULL,
        payload BLOB NOT NULL,
        qos INTEGER NOT NULL,
        retain INTEGER NOT NULL,
        properties TEXT NOT NULL,
        created_time_us INTEGER NOT NULL,
        failed_time_us INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        reason TEXT NOT NULL
    );
    CREATE INDEX dead_letter_failed ON dead_letter (failed_time_us);
    CREATE INDEX quarantine_received ON quarantine (received_time_us);
    """,
    # 5: request ids are scoped per requester (owner: edge_agent.reports): one broker user can no longer answer,
    # block or read another's request by reusing its id. `requester` is the authenticated user, '' when the broker
    # names none (NULL would make UNIQUE ignore the pair). SQLite cannot change a UNIQUE constraint in place, so
    # both tables are rebuilt.
    """
    CREATE TABLE reports_v5 (
        report_id TEXT PRIMARY KEY,
        requester TEXT NOT NULL,
        request_id TEXT NOT NULL,
        request_sha256 TEXT NOT NULL,
        type TEXT NOT NULL,
        status TEXT NOT NULL,
        body_sha256 TEXT NOT NULL,
        requested_by TEXT,
        created_time_us INTEGER NOT NULL,
        updated_time_us INTEGER NOT NULL,
        document TEXT NOT NULL,
        UNIQUE (requester, request_id)
    );
    INSERT INTO reports_v5 SELECT report_id, COALESCE(requested_by, ''), request_id, request_sha256, type, status,
        body_sha256, requested_by, created_time_us, updated_time_us, document FROM reports;
    DROP TABLE reports;
    ALTER TABLE reports_v5 RENAME TO reports;
    CREATE INDEX reports_created ON reports (created_time_us);
    CREATE TABLE report_queue_v5 (
        requester TEXT NOT NULL,
        request_id TEXT NOT NULL,
        entry TEXT NOT NULL,
        accepted_time_us INTEGER NOT NULL,
        PRIMARY KEY (requester, request_id)
    );
    INSERT INTO report_queue_v5 SELECT COALESCE(json_extract(entry, '$.requested_by'), ''), request_id, entry,
        accepted_time_us FROM report_queue;
    DROP TABLE report_queue;
    ALTER TABLE report_queue_v5 RENAME TO report_queue;
    """,
    # 6: the nonces of signed sign-offs (owner: edge_agent.reports): each is acted on at most once, so a captured
    # sign-off replayed later is refused by name. Kept as long as the store: a row is ~150 bytes a decision.
    """
    CREATE TABLE signoff_nonces (
        nonce TEXT PRIMARY KEY,
        approver TEXT NOT NULL,
        report_id TEXT NOT NULL,
        signed_time_us INTEGER NOT NULL,
        seen_time_us INTEGER NOT NULL
    );
    """,
    # 7: records an approved report read (owner: edge_agent.reports writes them, retention honours them): per report,
    # source-time ranges (of one kind, or any when NULL) whose records no cap or age may delete.
    """
    CREATE TABLE record_holds (
        report_id TEXT NOT NULL,
        kind TEXT,
        from_us INTEGER NOT NULL,
        to_us INTEGER NOT NULL
    );
    CREATE INDEX record_holds_report ON record_holds (report_id);
    """,
    # 8: records of one kind over a window (alarms for the console, ask and the reports' KPI history) are read
    # through (kind, source_time), not every row of the window: on a 30-day store of 3.4 M records, 7 days of alarms
    # (660 rows among 790 000) take 0.2-0.4 ms in SQL instead of 107-228 ms. Its price, on 2 CPUs: ~30 bytes a
    # record (+9 %, 1025 to 1117 MB there), 2-3 s to build it there, and no change bench.mqtt_ingest can see (agent
    # CPU per 200 000 messages 10.15 s without, 10.28 s with; rates within the runs' noise).
    """
    CREATE INDEX IF NOT EXISTS records_kind_time ON records (kind, source_time_us);
    """,
)


class MigrationError(Exception):
    pass


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to the newest version; returns it. Refuses a database written by a newer agent."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > len(MIGRATIONS):
        raise MigrationError(
            f"store schema version {current} is newer than this agent knows ({len(MIGRATIONS)}); upgrade the agent"
        )
    for version in range(current, len(MIGRATIONS)):
        # One transaction per migration: a crash mid-way leaves the previous version intact.
        conn.executescript(f"BEGIN; {MIGRATIONS[version]} PRAGMA user_version = {version + 1}; COMMIT;")
    return len(MIGRATIONS)
