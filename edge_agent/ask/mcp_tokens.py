"""The MCP server's per-user bearer tokens: a JSON file (0600) holding, per token, its id, the user it names, the
SHA-256 of its secret, when it was made and when it was revoked. The secret itself is printed once by
`edge-agent mcp token add` and kept nowhere.

Adding and revoking are audit entries (`mcp.token_added`, `mcp.token_revoked`; ids, users and times, never a secret
or its digest). The audit log belongs to whichever process holds it: the command writes the entry itself when the
agent is stopped; while the agent runs, the entry waits in the file's `unaudited` list and the agent's MCP server
appends it before it honours the file again (`TokenFile.audit_pending`). Every change to the file is one locked
read-modify-write (flock on `<file>.lock`) and one atomic replace, so the command and the agent never lose each
other's changes.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge_agent.audit import AuditSink
from edge_agent.signing import write_durably

ADDED_EVENT = "mcp.token_added"
REVOKED_EVENT = "mcp.token_revoked"
# 32 bytes: 256 bits from the OS's CSPRNG, as the brief for the HTTP server asks; guessing one is out of reach.
SECRET_BYTES = 32
# 4 bytes of id: enough to tell a site's few dozen tokens apart in `token list`; an id grants nothing.
ID_BYTES = 4


class TokenError(Exception):
    """The tokens file cannot be read or written, or a change names no token."""


class TokenRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^mcp_[0-9a-f]{8}$")
    user: str = Field(min_length=1, max_length=256)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def listing(self) -> dict[str, Any]:
        """What `mcp token list` shows: everything but the digest."""
        return self.model_dump(mode="json", exclude={"sha256"})


class PendingEntry(BaseModel):
    """An audit entry the file's last writer could not append (the running agent held the log)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    event: Literal["mcp.token_added", "mcp.token_revoked"]
    actor: str = Field(min_length=1, max_length=256)
    payload: dict[str, Any]


class Tokens(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = 1
    tokens: tuple[TokenRecord, ...] = ()
    unaudited: tuple[PendingEntry, ...] = ()

    def match(self, secret: str) -> TokenRecord | None:
        """The active token whose digest is the secret's, or None. Every active digest is compared, each in constant
        time, so the time taken says nothing about which one (or how much of one) matched."""
        digest = digest_of(secret)
        found: TokenRecord | None = None
        for record in self.tokens:
            if hmac.compare_digest(record.sha256, digest) and record.active:
                found = record
        return found


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _audit_payload(record: TokenRecord, event: str) -> dict[str, Any]:
    payload: dict[str, Any] = {"id": record.id, "user": record.user, "created_at": record.created_at.isoformat()}
    if event == REVOKED_EVENT:
        assert record.revoked_at is not None
        payload["revoked_at"] = record.revoked_at.isoformat()
    return payload


class TokenFile:
    """The tokens file at `path` (created with its directory, 0700/0600, on the first change)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock_path = path.with_name(path.name + ".lock")

    def read(self) -> Tokens:
        """The file's tokens; none when it does not exist. TokenError when it cannot be read or parsed."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return Tokens()
        except OSError as exc:
            raise TokenError(f"{self.path}: {exc.strerror or exc}") from exc
        try:
            return Tokens.model_validate_json(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "<root>"
            raise TokenError(f"{self.path}: {where}: {err['msg']}") from exc

    def stamp(self) -> tuple[int, int, int] | None:
        """(inode, size, mtime_ns) of the file, or None when absent: changes whenever a change is written."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def add(self, user: str, now: datetime, actor: str) -> tuple[str, TokenRecord]:
        """A new token for `user`: its secret (shown once) and its record; the audit entry waits in `unaudited`."""
        secret = secrets.token_urlsafe(SECRET_BYTES)
        with self._locked():
            tokens = self.read()
            taken = {r.id for r in tokens.tokens}
            token_id = f"mcp_{secrets.token_hex(ID_BYTES)}"
            while token_id in taken:
                token_id = f"mcp_{secrets.token_hex(ID_BYTES)}"
            record = TokenRecord(id=token_id, user=user, sha256=digest_of(secret), created_at=now)
            pending = PendingEntry(event=ADDED_EVENT, actor=actor, payload=_audit_payload(record, ADDED_EVENT))
            self._write(Tokens(tokens=(*tokens.tokens, record), unaudited=(*tokens.unaudited, pending)))
        return secret, record

    def revoke(
        self, now: datetime, actor: str, *, user: str | None = None, token_id: str | None = None
    ) -> list[TokenRecord]:
        """Revoke the active tokens of `user`, or the one with `token_id`; the records revoked. TokenError when none
        is active (a token revoked twice is a mistake worth saying)."""
        if (user is None) == (token_id is None):
            raise TokenError("name a user or a token id, not both")
        with self._locked():
            tokens = self.read()
            revoked: list[TokenRecord] = []
            kept: list[TokenRecord] = []
            for record in tokens.tokens:
                if record.active and (record.user == user or record.id == token_id):
                    record = record.model_copy(update={"revoked_at": now})
                    revoked.append(record)
                kept.append(record)
            if not revoked:
                which = f"user {user!r}" if user is not None else f"id {token_id!r}"
                raise TokenError(f"no active token for {which} in {self.path}")
            pending = [
                PendingEntry(event=REVOKED_EVENT, actor=actor, payload=_audit_payload(r, REVOKED_EVENT))
                for r in revoked
            ]
            self._write(Tokens(tokens=tuple(kept), unaudited=(*tokens.unaudited, *pending)))
        return revoked

    def audit_pending(self, audit: AuditSink) -> Tokens:
        """Append the waiting audit entries (all at once), clear them, and return the tokens as now written."""
        with self._locked():
            tokens = self.read()
            if not tokens.unaudited:
                return tokens
            audit.append_many([(p.event, p.actor, dict(p.payload)) for p in tokens.unaudited])
            done = tokens.model_copy(update={"unaudited": ()})
            self._write(done)
            return done

    @contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise TokenError(f"{self._lock_path}: {exc.strerror or exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _write(self, tokens: Tokens) -> None:
        """Replace the file with `tokens` so that a crash leaves the old file or the new one, 0600 either way."""
        try:
            write_durably(self.path, tokens.model_dump_json(indent=2).encode("utf-8") + b"\n", mode=0o600)
        except OSError as exc:
            raise TokenError(f"{self.path}: {exc.strerror or exc}") from exc


__all__ = [
    "ADDED_EVENT",
    "REVOKED_EVENT",
    "PendingEntry",
    "TokenError",
    "TokenFile",
    "TokenRecord",
    "Tokens",
    "digest_of",
]
