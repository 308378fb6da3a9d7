"""What a qualification records: a `Check` passes only when what its `shows` states holds; a `Measure` is recorded
beside the checks and never judged (what an assessor should see but no criterion can require, e.g. how often the
draft changes the output at int8)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field


class Check(BaseModel):
    """One check: a stable id (`iq.*`, `oq.*`, `pq.*`), what passing it shows an assessor, the acceptance criterion,
    what was measured, and the verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^(iq|oq|pq)\.[a-z0-9_.-]+$")
    shows: str
    criterion: str
    measured: str
    passed: bool


class Measure(BaseModel):
    """One recorded figure: a stable id, what it tells an assessor, and what was measured. No verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^(iq|oq|pq)\.[a-z0-9_.-]+$")
    shows: str
    measured: str


def at_least(id: str, shows: str, what: str, value: float, minimum: float, unit: str) -> Check:
    return Check(
        id=id,
        shows=shows,
        criterion=f"{what} ≥ {minimum:g} {unit}".rstrip(),
        measured=f"{value:.2f} {unit}".rstrip(),
        passed=value >= minimum,
    )


def at_most(id: str, shows: str, what: str, value: float, maximum: float, unit: str) -> Check:
    return Check(
        id=id,
        shows=shows,
        criterion=f"{what} ≤ {maximum:g} {unit}".rstrip(),
        measured=f"{value:.2f} {unit}".rstrip(),
        passed=value <= maximum,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100): a value that was measured, never an interpolation between two."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))
    return ordered[int(rank) - 1]


def all_passed(checks: Sequence[Check]) -> bool:
    return all(c.passed for c in checks)


def split(records: Sequence[Check | Measure]) -> tuple[list[Check], list[Measure]]:
    """The checks and the measures of a run, each in the order recorded."""
    return [r for r in records if isinstance(r, Check)], [r for r in records if isinstance(r, Measure)]
