"""Exponential backoff: the one delay rule for every retry (MQTT and OPC UA reconnects, outbox and ingest, restarts).

Attempt n waits `min(max_s, initial_s * 2**n)` (the ceiling), drawn from a range that depends on the jitter:

- "equal": between half the ceiling and the ceiling. A fleet of agents reconnecting after a broker restart does not
  come back in lockstep, and no attempt comes much sooner than the plain doubling would have it.
- "full": between `initial_s` and the ceiling: wider spread, for servers many agents hit at once (OPC UA).
- "none": exactly the ceiling. For one process restarting its own components, where operators and tests read the
  delays (`component_restart_scheduled delay_s=...`) and nothing else competes.
"""

from __future__ import annotations

import random
from typing import Literal

Jitter = Literal["equal", "full", "none"]

# 2**32 times any sensible initial delay is far beyond any sensible maximum; past it the doubling stops, so a source
# that has failed for days never computes 2**1100 (a float overflow) on its next attempt.
MAX_DOUBLINGS = 32


def backoff_delay(
    attempt: int, initial_s: float, max_s: float, jitter: Jitter = "equal", rng: random.Random | None = None
) -> float:
    """Seconds to wait before retry `attempt` (0 for the first retry); see the module docstring for `jitter`.

    Jittered by default ("equal"): every network retry the agent makes is one of a fleet's; only the supervisor's
    restarts opt out.

    `rng` draws the jitter (a seeded `random.Random` makes it reproducible); None uses the `random` module's own.
    """
    ceiling = min(max_s, initial_s * 2 ** min(attempt, MAX_DOUBLINGS))
    uniform = rng.uniform if rng is not None else random.uniform
    if jitter == "equal":
        return ceiling * uniform(0.5, 1.0)
    if jitter == "full":
        return uniform(initial_s, max(initial_s, ceiling))
    return ceiling


__all__ = ["MAX_DOUBLINGS", "Jitter", "backoff_delay"]
