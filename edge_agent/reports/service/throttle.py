"""Per-user throttle on invalid report requests and refused sign-offs (`reports.throttle_invalid_max` per
`reports.throttle_window_s`).

Each broker user has a fixed window that opens at its first strike (an invalid request, a request whose reply topic
is refused or missing, a refused sign-off). Within it the first `limit` strikes are handled as usual; once `limit`
are counted, every further request and sign-off from that user is dropped unread until the window ends. The first
drop of a window is reported (`Verdict.FIRST_DROP`: one log line and one audit entry per user per window), and so is
the first dropped sign-off (`dropped(user, "signoff") == 1`: one `report.signoff_refused`); the rest are only
counted, so a flood cannot fill the audit log. Other users have their own windows.
"""

from __future__ import annotations

import enum
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

# Windows kept at once: one per user with a recent strike. Beyond this the expired ones are dropped, then the oldest
# (a broker that does not vouch for users lets a client invent names; memory stays bounded either way).
MAX_TRACKED_USERS = 10_000


class Verdict(enum.Enum):
    HANDLE = "handle"
    FIRST_DROP = "first_drop"
    DROP = "drop"


@dataclass
class _Window:
    opened: float
    strikes: int = 0
    dropped: Counter[str] = field(default_factory=Counter)  # by kind: "request", "signoff"


class Throttle:
    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        if limit < 1 or window_s <= 0:
            raise ValueError(f"throttle needs limit >= 1 and window_s > 0, not {limit}, {window_s}")
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._windows: dict[str, _Window] = {}

    def _current(self, user: str, now: float) -> _Window | None:
        window = self._windows.get(user)
        if window is not None and now - window.opened >= self.window_s:
            del self._windows[user]
            return None
        return window

    def check(self, user: str, kind: str = "request") -> Verdict:
        """Whether a message (of `kind`) from `user` is handled; a dropped one is counted in the user's window."""
        window = self._current(user, self._clock())
        if window is None or window.strikes < self.limit:
            return Verdict.HANDLE
        window.dropped[kind] += 1
        return Verdict.FIRST_DROP if window.dropped.total() == 1 else Verdict.DROP

    def dropped(self, user: str, kind: str) -> int:
        """Messages of `kind` dropped from `user` in its current window."""
        window = self._current(user, self._clock())
        return 0 if window is None else window.dropped[kind]

    def strike(self, user: str) -> None:
        """Count one invalid request or refused sign-off from `user`."""
        now = self._clock()
        window = self._current(user, now)
        if window is None:
            if len(self._windows) >= MAX_TRACKED_USERS:
                self._evict(now)
            window = self._windows[user] = _Window(now)
        window.strikes += 1

    def until(self, user: str) -> float | None:
        """Seconds until `user`'s window ends, None without one."""
        now = self._clock()
        window = self._current(user, now)
        return None if window is None else window.opened + self.window_s - now

    def _evict(self, now: float) -> None:
        for user in [u for u, w in self._windows.items() if now - w.opened >= self.window_s]:
            del self._windows[user]
        while len(self._windows) >= MAX_TRACKED_USERS:
            del self._windows[next(iter(self._windows))]  # insertion order: the oldest window

    def __len__(self) -> int:
        return len(self._windows)
