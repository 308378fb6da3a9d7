"""Sessions: a random id in a signed cookie (itsdangerous), the state behind it in memory. Every visitor has one
from the first page on, so the sign-in form has a CSRF token too; signing in replaces it (a new id), and a restart
signs everyone out."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from itsdangerous import BadSignature, URLSafeTimedSerializer

COOKIE = "session"
# Every visitor gets a session, signed in or not: past this many, the oldest anonymous ones go first, so a flood of
# cookie-less requests costs ~3 MB of memory at most and never signs anybody out.
MAX_ANONYMOUS = 10_000


@dataclass
class Session:
    sid: str
    csrf: str
    created: datetime
    name: str | None = None
    # The ceremony in progress: its WebAuthn challenge and, for a sign-off, the statement being signed.
    challenge: bytes | None = None
    pending: dict[str, Any] | None = field(default=None)


class Sessions:
    def __init__(self, secret: bytes, max_age: timedelta) -> None:
        self._serializer = URLSafeTimedSerializer(secret, salt="edge-agent-console-session")
        self._max_age = max_age
        self._sessions: dict[str, Session] = {}

    def new(self, now: datetime, name: str | None = None) -> Session:
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), now, name)
        self._sessions[session.sid] = session
        self._expire(now)
        return session

    def from_cookie(self, cookie: str | None, now: datetime) -> Session | None:
        """The live session a cookie names, or None (missing, tampered with, expired, or ended)."""
        if not cookie:
            return None
        try:
            sid = self._serializer.loads(cookie, max_age=int(self._max_age.total_seconds()))
        except BadSignature:
            return None
        session = self._sessions.get(sid) if isinstance(sid, str) else None
        if session is None or now - session.created > self._max_age:
            return None
        return session

    def cookie(self, session: Session) -> str:
        return self._serializer.dumps(session.sid)

    def end(self, session: Session) -> None:
        self._sessions.pop(session.sid, None)

    def _expire(self, now: datetime) -> None:
        for sid in [s.sid for s in self._sessions.values() if now - s.created > self._max_age]:
            del self._sessions[sid]
        anonymous = [s.sid for s in self._sessions.values() if s.name is None]  # oldest first: dicts keep order
        for sid in anonymous[: max(0, len(anonymous) - MAX_ANONYMOUS)]:
            del self._sessions[sid]
