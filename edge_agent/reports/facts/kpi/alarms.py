"""Alarm performance as ISA-18.2 and EEMUA 191 measure it (pure): rates per operator position, floods, chattering,
stale and standing alarms, the most frequent alarms' share and the priority mix.

Definitions (docs/kpis.md names the source of each benchmark):
  annunciated alarm   an activation (`active` true) in the window; a clear is not an alarm
  rates               per operator position: the window's count / its hours (/ its 10-minute intervals), and the
                      largest count in one clock hour / 10-minute interval counted from the window's start
  flood               a 10-minute interval with more than `flood_per_10min` alarms; consecutive ones are one episode
  chattering          an alarm (asset, condition) activated `chatter_count` times or more within `chatter_window_s`
  standing            an alarm whose last transition at the window's end is an activation
  stale               a standing alarm active for more than `stale_after_s` at the window's end
  priority            OPC UA severity banded: to `priority_low_max` low, to `priority_medium_max` medium, above high
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

INTERVAL_S = 600  # ISA-18.2 and EEMUA 191 count alarm rates and floods per 10 minutes
HOUR_S = 3600


@dataclass(frozen=True)
class Activation:
    at: float
    asset: str
    condition: str
    severity: int
    active: bool
    index: int  # position in the input, to point back at its record


@dataclass(frozen=True)
class Rates:
    count: int
    per_hour_mean: float
    per_10min_mean: float
    per_hour_peak: int
    per_10min_peak: int
    peak_10min_start: float
    interval_counts: tuple[int, ...]


def bucket_counts(times: Sequence[float], start: float, end: float, width: float) -> list[int]:
    """Alarms per interval of `width` seconds from `start`; the last interval may be short."""
    n = max(1, math.ceil((end - start) / width))
    counts = [0] * n
    for t in times:
        if start <= t < end:
            counts[min(int((t - start) // width), n - 1)] += 1
    return counts


def rates(times: Sequence[float], start: float, end: float) -> Rates:
    window = end - start
    tens = bucket_counts(times, start, end, INTERVAL_S)
    hours = bucket_counts(times, start, end, HOUR_S)
    count = sum(tens)
    peak = max(range(len(tens)), key=lambda i: (tens[i], -i))
    return Rates(
        count=count,
        per_hour_mean=count * HOUR_S / window,
        per_10min_mean=count * INTERVAL_S / window,
        per_hour_peak=max(hours),
        per_10min_peak=tens[peak],
        peak_10min_start=start + peak * INTERVAL_S,
        interval_counts=tuple(tens),
    )


@dataclass(frozen=True)
class Flood:
    start: float
    end: float
    count: int
    members: tuple[Activation, ...]


def floods(alarms: Sequence[Activation], start: float, end: float, threshold: int) -> tuple[list[bool], list[Flood]]:
    """Which 10-minute intervals are in flood, and the episodes: runs of consecutive flooded intervals."""
    counts = bucket_counts([a.at for a in alarms], start, end, INTERVAL_S)
    flooded = [c > threshold for c in counts]
    episodes: list[Flood] = []
    i = 0
    while i < len(flooded):
        if not flooded[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(flooded) and flooded[j + 1]:
            j += 1
        lo, hi = start + i * INTERVAL_S, min(start + (j + 1) * INTERVAL_S, end)
        members = tuple(a for a in alarms if lo <= a.at < hi)
        episodes.append(Flood(lo, hi, len(members), members))
        i = j + 1
    return flooded, episodes


def flood_seconds(flooded: Sequence[bool], start: float, end: float) -> float:
    return sum(min(start + (i + 1) * INTERVAL_S, end) - (start + i * INTERVAL_S) for i, f in enumerate(flooded) if f)


def max_burst(times: Sequence[float], window_s: float) -> int:
    """The most activations within any `window_s` seconds (both ends included)."""
    ordered = sorted(times)
    best, lo = 0, 0
    for hi, t in enumerate(ordered):
        while t - ordered[lo] > window_s:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def top_contributors(members: Sequence[Activation], n: int) -> list[tuple[tuple[str, str], int]]:
    """The `n` alarms (asset, condition) with the most activations; ties by asset, then condition."""
    counts = Counter((a.asset, a.condition) for a in members)
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


@dataclass(frozen=True)
class Standing:
    asset: str
    condition: str
    since: float
    index: int  # the activation that began it


def standing(transitions: Sequence[Activation], end: float) -> list[Standing]:
    """Alarms active at `end`: per (asset, condition), the last transition before `end` is an activation; `since`
    is the first activation after the last clear (a repeated activation does not restart it)."""
    state: dict[tuple[str, str], Activation | None] = {}
    for t in sorted(transitions, key=lambda a: (a.at, a.index)):
        if t.at >= end:
            continue
        key = (t.asset, t.condition)
        if not t.active:
            state[key] = None
        elif state.get(key) is None:
            state[key] = t
    out = [Standing(k[0], k[1], a.at, a.index) for k, a in state.items() if a is not None]
    return sorted(out, key=lambda s: (s.since, s.asset, s.condition))


def priority(severity: int, low_max: int, medium_max: int) -> str:
    if severity <= low_max:
        return "low"
    return "medium" if severity <= medium_max else "high"
