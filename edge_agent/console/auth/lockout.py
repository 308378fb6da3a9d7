"""Failed sign-ins per client address: `max_failed` in any `window` locks the address out for `lockout`, during
which every sign-in from it is refused before its passkey is even checked."""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta


class Lockout:
    def __init__(self, max_failed: int, window: timedelta, lockout: timedelta) -> None:
        self._max, self._window, self._lockout = max_failed, window, lockout
        self._failures: dict[str, deque[datetime]] = {}
        self._locked: dict[str, datetime] = {}

    def locked_until(self, address: str, now: datetime) -> datetime | None:
        until = self._locked.get(address)
        if until is not None and until <= now:
            del self._locked[address]
            return None
        return until

    def strike(self, address: str, now: datetime) -> bool:
        """Count a failed sign-in; True when it locks the address out."""
        failures = self._failures.setdefault(address, deque())
        failures.append(now)
        while failures and now - failures[0] > self._window:
            failures.popleft()
        if len(failures) >= self._max:
            failures.clear()
            self._locked[address] = now + self._lockout
            return True
        return False

    def clear(self, address: str) -> None:
        self._failures.pop(address, None)
