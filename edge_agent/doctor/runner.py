"""Run every probe, whatever any one of them does: a probe that raises becomes a fail naming the exception, and the
others still run.

Local probes (files, hashes, subprocesses) run one after another in one worker thread, in order; network probes run
concurrently on the event loop, each under an outer time limit. The result keeps the order the probes were given in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import structlog

from edge_agent.doctor.types import Check

log = structlog.get_logger(component="doctor")

Checks = Check | list[Check]
# The outer bound of one network probe. Each bounds its own steps (a few seconds each); this catches a step that
# does not, so the command always ends: 30 s is a connect, a handshake and a session with room to spare.
PROBE_TIMEOUT_S = 30.0
CRASH_FIX = "a bug in edge-agent doctor, not in the install: report it with this output (the other checks ran)"


@dataclass(frozen=True)
class Probe:
    """A local check: its id (the one a crash is reported under) and a function returning its finding(s)."""

    id: str
    run: Callable[[], Checks]


@dataclass(frozen=True)
class AsyncProbe:
    """A network check: as `Probe`, awaited, and given up after `timeout_s`."""

    id: str
    run: Callable[[], Awaitable[Checks]]
    timeout_s: float = PROBE_TIMEOUT_S


def _as_list(result: Checks) -> list[Check]:
    return [result] if isinstance(result, Check) else list(result)


def _crashed(probe: Probe | AsyncProbe, exc: BaseException) -> list[Check]:
    log.debug("doctor.check_crashed", check=probe.id, error=repr(exc), exc_info=exc)
    return [Check.fail(probe.id, f"the check itself crashed: {type(exc).__name__}: {exc}", CRASH_FIX)]


def _run_local(probes: Sequence[Probe]) -> list[list[Check]]:
    results: list[list[Check]] = []
    for probe in probes:
        try:
            results.append(_as_list(probe.run()))
        except Exception as exc:  # any bug in one check must not hide the others' findings
            results.append(_crashed(probe, exc))
    return results


def run_local(probes: Sequence[Probe]) -> list[Check]:
    """Local probes' findings, in order, in the calling thread; never raises for a probe's sake."""
    return [check for checks in _run_local(probes) for check in checks]


async def _run_network(probe: AsyncProbe) -> list[Check]:
    try:
        async with asyncio.timeout(probe.timeout_s):
            return _as_list(await probe.run())
    except TimeoutError:
        return [
            Check.fail(
                probe.id,
                f"no result within {probe.timeout_s:g} s",
                "the peer accepts connections but never answers: check it is the right service and not overloaded",
            )
        ]
    except Exception as exc:  # as in _run_local
        return _crashed(probe, exc)


async def run_probes(probes: Sequence[Probe | AsyncProbe]) -> list[Check]:
    """Every probe's findings, in the probes' order; never raises for a probe's sake."""
    local = [p for p in probes if isinstance(p, Probe)]
    network = [p for p in probes if isinstance(p, AsyncProbe)]
    local_results, network_results = await asyncio.gather(
        asyncio.to_thread(_run_local, local), asyncio.gather(*(_run_network(p) for p in network))
    )
    local_iter, network_iter = iter(local_results), iter(network_results)
    return [check for p in probes for check in next(local_iter if isinstance(p, Probe) else network_iter)]
