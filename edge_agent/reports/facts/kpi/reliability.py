"""MTBF and MTTR per asset (pure).

Over a period (the window, or the window and `lookback_days` before it):
  failures          = the asset's unplanned stops that began in the period
  unplanned downtime = their durations, an open one cut at the period's end
  MTTR              = unplanned downtime / failures
  operating time    = the period − every stop of the asset (planned or not) within it
  MTBF              = operating time / failures   (mean operating time between failures, IEC 60050-192's sense;
                      ISO/TR 12489 keeps MTBF = MTTF + MTTR instead, which is this MTBF plus MTTR: docs/kpis.md)
No failure: both are None (not computable), with the operating time still given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from edge_agent.reports.facts.kpi.intervals import Stop, clip, length


@dataclass(frozen=True)
class Reliability:
    failures: int
    unplanned_down_s: float
    operating_s: float
    mttr_s: float | None
    mtbf_s: float | None


def reliability(stops: Sequence[Stop], unplanned: Sequence[bool], start: float, end: float) -> Reliability:
    """One asset's figures over [start, end); `unplanned[i]` says whether `stops[i]` is a failure."""
    failures = [s for s, u in zip(stops, unplanned, strict=True) if u and start <= s.start < end]
    down = sum(s.until(end) - s.start for s in failures)
    operating = (end - start) - length(clip(((s.start, s.until(end)) for s in stops), start, end))
    n = len(failures)
    return Reliability(
        failures=n,
        unplanned_down_s=down,
        operating_s=operating,
        mttr_s=down / n if n else None,
        mtbf_s=operating / n if n else None,
    )
