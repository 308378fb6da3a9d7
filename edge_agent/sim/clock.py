"""Simulated time: starts in the past, runs `speed` times faster until it reaches the wall clock, then keeps pace."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta

from edge_agent.base.types import to_utc, utcnow


class SimClock:
    """sim(e) = min(start + speed·e, wall0 + e) for e seconds of monotonic time since construction.

    With no backfill (start == wall0) the simulation is real time whatever the speed: it never runs into the
    future, so the records it produces always lie in a window a report can ask for.
    """

    def __init__(
        self,
        start: datetime,
        speed: float = 1.0,
        *,
        wall_start: datetime | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed < 1.0:
            raise ValueError(f"speed must be >= 1, got {speed}")
        self.start = to_utc(start)
        self.speed = speed
        self.wall_start = to_utc(wall_start) if wall_start is not None else utcnow()
        if self.start > self.wall_start:
            raise ValueError(f"simulation start {self.start} is after the wall clock {self.wall_start}")
        self._monotonic = monotonic
        self._m0 = monotonic()

    def elapsed(self) -> float:
        return self._monotonic() - self._m0

    def now(self) -> datetime:
        e = self.elapsed()
        return min(self.start + timedelta(seconds=self.speed * e), self.wall_start + timedelta(seconds=e))

    def elapsed_at(self, sim_time: datetime) -> float:
        """Seconds after construction at which the simulated clock shows `sim_time`."""
        sim_time = to_utc(sim_time)
        # Both branches of the min() must have reached sim_time.
        fast = (sim_time - self.start).total_seconds() / self.speed
        paced = (sim_time - self.wall_start).total_seconds()
        return max(fast, paced, 0.0)
