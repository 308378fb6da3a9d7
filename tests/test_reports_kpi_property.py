"""Properties of the plant KPIs over generated stops, counts and alarms: every ratio in [0, 1] or not computable,
A × P × Q = OEE, flood time within the window, MTTR × failures = unplanned downtime."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from edge_agent.reports.facts.kpi.alarms import INTERVAL_S, Activation, flood_seconds, floods, rates
from edge_agent.reports.facts.kpi.intervals import Stop
from edge_agent.reports.facts.kpi.oee import oee_figures, ratio
from edge_agent.reports.facts.kpi.reliability import reliability

WINDOW = 8 * 3600.0
intervals = st.lists(
    st.tuples(st.floats(0, WINDOW), st.floats(0, 7200)).map(lambda p: (p[0], min(p[0] + p[1], WINDOW))), max_size=8
)


@given(
    planned=intervals,
    unplanned=intervals,
    produced=st.none() | st.floats(0, 1e6),
    scrap=st.none() | st.floats(0, 1e6),
    ideal=st.none() | st.floats(0.01, 1e4),
)
def test_oee_ratios_are_in_0_1_or_not_computable(
    planned: list[tuple[float, float]],
    unplanned: list[tuple[float, float]],
    produced: float | None,
    scrap: float | None,
    ideal: float | None,
) -> None:
    """Each ratio is in [0, 1] or None with a reason; OEE = A × P × Q whenever it is computed."""
    f = oee_figures(WINDOW, planned, unplanned, produced, scrap, ideal)
    for value in (f.availability, f.performance, f.quality, f.oee):
        assert value is None or 0 <= value <= 1
    if f.oee is None:
        assert f.missing
    else:
        assert f.availability is not None and f.performance is not None and f.quality is not None
        assert abs(f.oee - f.availability * f.performance * f.quality) < 1e-12
        # as the facts hold them (4 decimals) the product stays within rounding of the OEE: each of a, p, q is off by
        # at most 5e-5 (3 × 5e-5 in the product, every factor ≤ 1) and the OEE itself by 5e-5
        a, p, q, o = (ratio(x) for x in (f.availability, f.performance, f.quality, f.oee))
        assert a is not None and p is not None and q is not None and o is not None
        assert abs(a * p * q - o) <= 2e-4 + 1e-12
    assert 0 <= f.actual_production_s <= f.planned_busy_s <= WINDOW


stops = st.lists(st.tuples(st.floats(-3600, WINDOW), st.none() | st.floats(0, 7200), st.booleans()), max_size=8)


@given(stops)
def test_mttr_times_failures_is_unplanned_downtime(items: list[tuple[float, float | None, bool]]) -> None:
    """MTTR × failures = unplanned downtime; MTBF × failures = operating time; operating time ≤ the period."""
    built = [Stop("P-101", "L1", "x", s, None if d is None else s + d, ()) for s, d, _ in items]
    r = reliability(built, [u for *_, u in items], 0.0, WINDOW)
    assert 0 <= r.operating_s <= WINDOW
    if r.failures == 0:
        assert r.mttr_s is None and r.mtbf_s is None
    else:
        assert r.mttr_s is not None and r.mtbf_s is not None
        assert abs(r.mttr_s * r.failures - r.unplanned_down_s) < 1e-6
        assert abs(r.mtbf_s * r.failures - r.operating_s) < 1e-6


@given(st.lists(st.floats(0, WINDOW - 1e-3), max_size=200), st.integers(1, 20), st.floats(600, WINDOW))
def test_flood_time_within_the_window(times: list[float], threshold: int, window: float) -> None:
    """Flood minutes never exceed the window; the share of intervals in flood is in [0, 1]; episodes hold their
    alarms; the rates add up."""
    alarms = [Activation(t, "A-1", "c", 500, True, i) for i, t in enumerate(times) if t < window]
    flooded, episodes = floods(alarms, 0.0, window, threshold)
    assert 0 <= flood_seconds(flooded, 0.0, window) <= window
    assert 0 <= sum(flooded) / len(flooded) <= 1
    assert all(e.count > threshold for e in episodes)
    assert all(0 <= e.start < e.end <= window for e in episodes)
    r = rates([a.at for a in alarms], 0.0, window)
    assert sum(r.interval_counts) == r.count == len(alarms)
    assert r.per_10min_peak <= r.per_hour_peak or window < INTERVAL_S
