"""Per-user throttle on questions and tool calls: at most `ask.throttle` in any sliding 60 s."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

# Users tracked at once. A broker that does not vouch for users lets a client invent names: beyond this the users
# with nothing in the last 60 s are forgotten, then the oldest, so memory stays bounded.
MAX_TRACKED_USERS = 10_000
WINDOW_S = 60.0


class UserThrottle:
    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        if per_minute < 1:
            raise ValueError(f"throttle needs at least 1 per minute, not {per_minute}")
        self.per_minute = per_minute
        self._clock = clock
        self._seen: dict[str, deque[float]] = {}

    def allow(self, user: str) -> bool:
        """Count one message from `user`; False (not counted) when it already has `per_minute` in the last 60 s."""
        now = self._clock()
        seen = self._seen.get(user)
        if seen is None:
            if len(self._seen) >= MAX_TRACKED_USERS:
                self._evict(now)
            seen = self._seen[user] = deque()
        while seen and now - seen[0] >= WINDOW_S:
            seen.popleft()
        if len(seen) >= self.per_minute:
            return False
        seen.append(now)
        return True

    def _evict(self, now: float) -> None:
        for user in [u for u, s in self._seen.items() if not s or now - s[-1] >= WINDOW_S]:
            del self._seen[user]
        while len(self._seen) >= MAX_TRACKED_USERS:
            del self._seen[next(iter(self._seen))]

    def __len__(self) -> int:
        return len(self._seen)
