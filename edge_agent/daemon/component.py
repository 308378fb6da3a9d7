"""The contract between the supervisor and everything it runs: a named coroutine that signals readiness."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class Component(Protocol):
    """A long-running part of the agent (store writer, connector, report service, engine, health server).

    `run` sets `ready` once the component is up (e.g. broker connected, engine loaded) and then runs until
    cancelled. Cancellation is the orderly stop: finish or fail in-flight work, flush, then return or re-raise
    `CancelledError`. Raising anything else is a crash: the supervisor logs it and restarts the component with
    exponential backoff, handing it a fresh `ready` event.

    A component may clear `ready` while degraded (e.g. broker connection lost, reconnecting) and set it again when
    recovered; /readyz reports it meanwhile. How it is started can differ from the default: see `StartOptions`.
    """

    name: str

    async def run(self, ready: asyncio.Event) -> None: ...


@runtime_checkable
class SlowToStart(Protocol):
    """A component that needs longer than `daemon.ready_timeout_s` to become ready (the engine loading a model)."""

    ready_timeout_s: float


@runtime_checkable
class StartsInBackground(Protocol):
    """A component whose users wait for it themselves: the components after it start without waiting for it
    (READY=1 still waits for it) when `start_in_background` is true."""

    start_in_background: bool


@runtime_checkable
class ExplainsNotReady(Protocol):
    """A component that is up but not ready for a reason it names (the audit anchor after a rollback): while
    `not_ready_reason` is set the component counts as not ready and /readyz shows the reason as its `last_error`."""

    not_ready_reason: str | None


@runtime_checkable
class HearsStop(Protocol):
    """A component told before it is cancelled for the agent's stop. For one whose library can turn a cancellation
    into another error (an OPC UA session lost as the stop arrives): it must not take that error for a reason to
    reconnect."""

    def stop_requested(self) -> None: ...


@dataclass(frozen=True)
class StartOptions:
    """How the supervisor starts one component: what it declares (`SlowToStart`, `StartsInBackground`), or the
    defaults, which suit every component but the engine."""

    ready_timeout_s: float | None = None  # None: daemon.ready_timeout_s
    start_in_background: bool = False

    @classmethod
    def of(cls, component: Component) -> StartOptions:
        return cls(
            ready_timeout_s=component.ready_timeout_s if isinstance(component, SlowToStart) else None,
            start_in_background=isinstance(component, StartsInBackground) and component.start_in_background,
        )
