"""How often a component restarted lately: the sliding window that tells a crash-looping component from a
component that crashed once.

Pure bookkeeping on times the caller passes in (the supervisor passes `time.monotonic()`), so the rule is tested
with hand-worked times and no clock.
"""

from __future__ import annotations

from collections import deque


class RestartWindow:
    """Restart times within the last `window_s` seconds: a restart at `t` counts while `now < t + window_s`.

    Written as a sum, not a difference, so that the moment `clears_at` returns is exactly when the count drops: in
    floating point `(t + w) - t` can fall short of `w`, and the restart would linger one more sleep.
    """

    def __init__(self, window_s: float) -> None:
        self.window_s = window_s
        self._times: deque[float] = deque()

    def record(self, now: float) -> None:
        """One restart at `now` (never earlier than the previous one: monotonic time)."""
        assert not self._times or now >= self._times[-1], (now, self._times[-1])
        self._times.append(now)
        self._expire(now)

    def count(self, now: float) -> int:
        """Restarts within the window ending at `now`."""
        self._expire(now)
        return len(self._times)

    def clears_at(self, limit: int, now: float) -> float | None:
        """When the window will next hold no more than `limit` restarts, if it holds more at `now`; else None."""
        excess = self.count(now) - limit
        if excess <= 0:
            return None
        # The excess-th oldest restart is the last one that has to leave the window.
        return self._times[excess - 1] + self.window_s

    def _expire(self, now: float) -> None:
        while self._times and self._times[0] + self.window_s <= now:
            self._times.popleft()
