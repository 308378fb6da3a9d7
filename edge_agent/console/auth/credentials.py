"""The console's own table, `<state_dir>/console.sqlite3`: one-time enrolment links and the passkeys people
registered with them ({identity, credential_id, public_key, sign_count}). `edge-agent console enrol` writes a link
while the agent runs; the console reads it (SQLite WAL: both may hold the file)."""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from edge_agent.signing import PasskeyKey
from edge_agent.store import from_us, to_us

SCHEMA = """
CREATE TABLE IF NOT EXISTS enrolments (
    token_sha256 TEXT PRIMARY KEY, identity TEXT NOT NULL, role TEXT NOT NULL,
    issued_us INTEGER NOT NULL, expires_us INTEGER NOT NULL, used_us INTEGER
);
CREATE TABLE IF NOT EXISTS credentials (
    credential_id BLOB PRIMARY KEY, identity TEXT NOT NULL, public_key BLOB NOT NULL,
    sign_count INTEGER NOT NULL, created_us INTEGER NOT NULL
);
"""


@dataclass(frozen=True)
class Enrolment:
    token_sha256: str
    identity: str
    role: str
    issued: datetime
    expires: datetime
    used: datetime | None


@dataclass(frozen=True)
class Credential:
    identity: str
    credential_id: bytes
    public_key: bytes  # COSE_Key
    sign_count: int

    def key(self) -> PasskeyKey:
        return PasskeyKey(self.identity, self.credential_id, self.public_key)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class CredentialStore:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._conn.executescript(SCHEMA)
        self._lock = threading.Lock()

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> CredentialStore:
        return cls(state_dir / "console.sqlite3")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CredentialStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def issue(self, identity: str, role: str, now: datetime, max_age: timedelta) -> str:
        """A new one-time enrolment token (only its hash is stored)."""
        token = secrets.token_urlsafe(32)
        with self._lock:
            self._conn.execute(
                "INSERT INTO enrolments VALUES (?, ?, ?, ?, ?, NULL)",
                (token_hash(token), identity, role, to_us(now), to_us(now + max_age)),
            )
        return token

    def enrolment(self, token: str, now: datetime) -> Enrolment | None:
        """The unused, unexpired enrolment of `token`, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT token_sha256, identity, role, issued_us, expires_us, used_us FROM enrolments"
                " WHERE token_sha256 = ? AND used_us IS NULL AND expires_us > ?",
                (token_hash(token), to_us(now)),
            ).fetchone()
        if row is None:
            return None
        return Enrolment(row[0], row[1], row[2], from_us(row[3]), from_us(row[4]), None)

    def register(self, token: str, credential: Credential, now: datetime) -> bool:
        """Use the token once and store its passkey; False when the token was used meanwhile (or expired)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                used = self._conn.execute(
                    "UPDATE enrolments SET used_us = ? WHERE token_sha256 = ? AND used_us IS NULL AND expires_us > ?",
                    (to_us(now), token_hash(token), to_us(now)),
                ).rowcount
                if used == 1:
                    self._conn.execute(
                        "INSERT INTO credentials VALUES (?, ?, ?, ?, ?)",
                        (
                            credential.credential_id,
                            credential.identity,
                            credential.public_key,
                            credential.sign_count,
                            to_us(now),
                        ),
                    )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
        return used == 1

    def get(self, credential_id: bytes) -> Credential | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT identity, credential_id, public_key, sign_count FROM credentials WHERE credential_id = ?",
                (credential_id,),
            ).fetchone()
        return Credential(row[0], bytes(row[1]), bytes(row[2]), row[3]) if row else None

    def of(self, identity: str) -> list[Credential]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT identity, credential_id, public_key, sign_count FROM credentials WHERE identity = ?",
                (identity,),
            ).fetchall()
        return [Credential(r[0], bytes(r[1]), bytes(r[2]), r[3]) for r in rows]

    def bump(self, credential_id: bytes, sign_count: int) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE credentials SET sign_count = ? WHERE credential_id = ?", (sign_count, credential_id)
            )
