"""The one backoff rule (`edge_agent.base.backoff`): doubling, the cap, and the three jitters, by hand-worked cases."""

from __future__ import annotations

import random

import pytest

from edge_agent.base.backoff import MAX_DOUBLINGS, backoff_delay


class FixedDraw(random.Random):
    """A jitter source whose every draw sits at `fraction` of the way from low to high (0 = low, 1 = high)."""

    def __init__(self, fraction: float) -> None:
        super().__init__(0)
        self.fraction = fraction

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.fraction


class TestBackoffDelay:
    def test_no_jitter_doubles_then_caps(self) -> None:
        """Without jitter attempt n waits exactly min(max, initial * 2**n): the supervisor's restart delays."""
        delays = [backoff_delay(n, 0.05, 0.15, jitter="none") for n in range(4)]
        assert delays == [0.05, 0.1, 0.15, 0.15]  # 0.05, 0.05·2, 0.05·4 capped, 0.05·8 capped

    def test_no_jitter_draws_nothing(self) -> None:
        """A delay without jitter leaves the random source untouched."""
        rng = random.Random(7)
        state = rng.getstate()
        backoff_delay(3, 1.0, 60.0, jitter="none", rng=rng)
        assert rng.getstate() == state

    @pytest.mark.parametrize(
        ("fraction", "expected"),
        [
            (0.0, [0.25, 0.5, 1.0, 2.0, 2.0]),  # half of 0.5, 1, 2, 4, 4 (cap)
            (1.0, [0.5, 1.0, 2.0, 4.0, 4.0]),  # the whole ceiling
        ],
    )
    def test_equal_jitter_spans_half_to_all_of_the_ceiling(self, fraction: float, expected: list[float]) -> None:
        """Equal jitter (MQTT, outbox, ingest): attempt n lies between half and all of min(max, initial * 2**n)."""
        rng = FixedDraw(fraction)
        assert [backoff_delay(n, 0.5, 4.0, jitter="equal", rng=rng) for n in range(5)] == expected

    @pytest.mark.parametrize(
        ("fraction", "expected"),
        [
            (0.0, [0.5, 0.5, 0.5, 0.5, 0.5]),  # never below initial
            (1.0, [0.5, 1.0, 2.0, 4.0, 4.0]),  # the whole ceiling
        ],
    )
    def test_full_jitter_spans_initial_to_the_ceiling(self, fraction: float, expected: list[float]) -> None:
        """Full jitter (OPC UA): attempt n lies between initial and min(max, initial * 2**n)."""
        rng = FixedDraw(fraction)
        assert [backoff_delay(n, 0.5, 4.0, jitter="full", rng=rng) for n in range(5)] == expected

    def test_equal_jitter_is_the_default(self) -> None:
        """Without a jitter argument a delay is equal-jittered: every network retry is one of a fleet's."""
        assert backoff_delay(2, 0.5, 4.0, rng=FixedDraw(0.0)) == 1.0

    def test_seeded_source_reproduces_its_delays(self) -> None:
        """The same seed gives the same jittered delays."""
        first = [backoff_delay(n, 0.5, 30.0, rng=random.Random(3)) for n in range(6)]
        again = [backoff_delay(n, 0.5, 30.0, rng=random.Random(3)) for n in range(6)]
        assert first == again

    def test_doubling_stops_after_max_doublings(self) -> None:
        """Attempts past MAX_DOUBLINGS wait as long as attempt MAX_DOUBLINGS, and never overflow a float."""
        huge = 1e300
        assert backoff_delay(MAX_DOUBLINGS, 1.0, huge, jitter="none") == 2.0**MAX_DOUBLINGS
        assert backoff_delay(5000, 1.0, huge, jitter="none") == 2.0**MAX_DOUBLINGS
        assert backoff_delay(5000, 1.0, 60.0, jitter="none") == 60.0
