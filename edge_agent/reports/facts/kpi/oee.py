"""OEE per line, as ISO 22400-2 defines it (pure).

  planned busy time (PBT)      = the window (the planned operation time) − planned stops of the line
  actual production time (APT) = PBT − unplanned stops of the line (a moment in both kinds of stop is planned)
  availability                 = APT / PBT
  performance (effectiveness)  = planned run time per item × produced quantity / APT,
                                 the planned run time per item being 60 / ideal_rate_per_min seconds
  quality rate                 = good quantity / produced quantity, good = produced − scrap
  OEE                          = availability × performance × quality rate

A line's stops are those of MES events whose `line` is the line, or whose asset is the line, merged where they
overlap (a serial line stops while any of its assets does). A ratio whose input is missing, zero or inconsistent is
None, and `missing` names why ("ideal_rate_per_min", "production_count", "scrap", "actual_production_time",
"ideal_rate_below_achieved", "scrap_above_count"): never guessed, never capped at 100 %.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from edge_agent.reports.facts.builder import round_value
from edge_agent.reports.facts.kpi.intervals import Interval, Stop, clip, length, minus

# Ratios to 4 decimals: a percentage to 2, the precision of every other measured figure in a report.
RATIO_DECIMALS = 4


@dataclass(frozen=True)
class OeeFigures:
    planned_busy_s: float
    planned_down_s: float
    unplanned_down_s: float
    actual_production_s: float
    availability: float | None
    performance: float | None
    quality: float | None
    oee: float | None
    missing: tuple[str, ...]


def stop_intervals(stops: Sequence[Stop], start: float, end: float) -> list[Interval]:
    return clip(((s.start, s.until(end)) for s in stops), start, end)


def oee_figures(
    window_s: float,
    planned: Sequence[Interval],
    unplanned: Sequence[Interval],
    produced: float | None,
    scrap: float | None,
    ideal_rate_per_min: float | None,
) -> OeeFigures:
    """The ISO 22400-2 figures of one line over a window of `window_s` seconds; `planned` and `unplanned` are its
    stops' intervals, already cut to the window; `produced` None: no production count; `scrap` None: no count of
    scrap; `ideal_rate_per_min` None: not configured."""
    planned_s = length(planned)
    unplanned_s = length(minus(unplanned, planned))
    pbt = max(window_s - planned_s, 0.0)
    apt = max(pbt - unplanned_s, 0.0)
    missing: list[str] = []
    availability = apt / pbt if pbt > 0 else None
    if availability is None:
        missing.append("planned_busy_time")
    performance = None
    if ideal_rate_per_min is None:
        missing.append("ideal_rate_per_min")
    if produced is None:
        missing.append("production_count")
    elif ideal_rate_per_min is not None:
        if apt <= 0:
            missing.append("actual_production_time")
        else:
            performance = produced * 60.0 / ideal_rate_per_min / apt
            if performance > 1:
                # More made than the ideal rate allows: the configured rate is wrong, and no figure above 100 % is
                # an effectiveness (ISO 22400-2); said, not capped.
                performance = None
                missing.append("ideal_rate_below_achieved")
    quality = None
    if produced is not None:
        if scrap is None:
            missing.append("scrap")
        elif produced <= 0:
            missing.append("production_count")
        elif scrap > produced:
            missing.append("scrap_above_count")
        else:
            quality = (produced - scrap) / produced
    parts = (availability, performance, quality)
    oee = parts[0] * parts[1] * parts[2] if all(p is not None for p in parts) else None  # type: ignore[operator]
    return OeeFigures(
        planned_busy_s=pbt,
        planned_down_s=planned_s,
        unplanned_down_s=unplanned_s,
        actual_production_s=apt,
        availability=availability,
        performance=performance,
        quality=quality,
        oee=oee,
        missing=tuple(dict.fromkeys(missing)),
    )


def ratio(value: float | None) -> float | None:
    """A ratio as a fact holds it: 4 decimals, half away from zero; None stays None."""
    return None if value is None else float(round_value(value, RATIO_DECIMALS))
