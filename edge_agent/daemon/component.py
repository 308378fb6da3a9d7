"""The contract between the supervisor and everything it runs: a named coroutine that signals readiness."""

from __future__ import annotations

import asyncio
from typing import Protocol, runtime_checkable


@runtime_checkable
class Component(Protocol):
    """A long-running part of the agent (store writer, connector, report service, engine, health server).

    `run` sets `ready` once the component is up (e.g. broker connected, engine loaded) and then runs until
    cancelled. Cancellation is the orderly stop: finish or fail in-flight work, flush, then return or re-raise
    `CancelledError`. Raising anything else is a crash: the supervisor logs it and restarts the component with
    exponential backoff, handing it a fresh `ready` event.

    A component may clear `ready` while degraded (e.g. broker connection lost, reconnecting) and set it again when
    recovered; /readyz reports it meanwhile. A component that needs longer than `daemon.ready_timeout_s` to become
    ready (the engine loading a model) declares an attribute `ready_timeout_s: float`; one whose users wait for it
    themselves may declare `start_in_background = True`, so the components after it start without waiting (READY=1
    still waits for it).
    """

    name: str

    async def run(self, ready: asyncio.Event) -> None: ...
