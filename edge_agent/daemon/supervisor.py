"""The asyncio supervisor: starts components in order, restarts crashed ones, stops them in reverse on SIGTERM.

Start: each component runs in its own named task of one TaskGroup; the next starts only once the previous reported
ready (or the start fails after its ready timeout). READY=1 goes to systemd only when every component is ready, i.e.
the store is open and the connectors are up.

Crash: the exception is logged with its traceback, counted in `edge_agent_component_restarts_total`, and the
component is run again after an exponential backoff; /readyz reports it as restarting meanwhile. Never silently lost.

Flapping: a component restarted more than `daemon.flap_restarts` times within `daemon.flap_window_s` is crash-looping
(e.g. on a poison message the broker redelivers forever), not recovering. Backoff alone would show it ready between
crashes; instead the agent is not ready (/readyz 503 naming it), STATUS= says "degraded: <component> restarted <n>
times in <window>: <error>" and `edge_agent_component_flapping{component=...}` is 1, until the window holds no more
than `flap_restarts` restarts again. /healthz stays about the event loop: a flapping component is not a stuck process.

Stop (SIGTERM, SIGINT): STOPPING=1, then each component is cancelled in reverse start order, so intake stops first
and the store writer flushes last, each awaited before the next. The whole stop fits in `daemon.shutdown_grace_s`;
a component that overruns its share is logged by name and the process exits 1 rather than outliving systemd's
TimeoutStopSec and being SIGKILLed with nothing said.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Literal

import structlog
from prometheus_client import Counter, Gauge
from pydantic import BaseModel, ConfigDict

from edge_agent.base.backoff import backoff_delay
from edge_agent.config import DaemonConfig
from edge_agent.daemon.component import Component, ExplainsNotReady, HearsStop, StartOptions
from edge_agent.daemon.restarts import RestartWindow
from edge_agent.daemon.sdnotify import SdNotifier, watchdog_interval, watchdog_loop

log = structlog.get_logger(component="supervisor")

RESTARTS = Counter("edge_agent_component_restarts", "Restarts of a component after it crashed", ["component"])
READY = Gauge("edge_agent_component_ready", "1 while the component reports ready, else 0", ["component"])
AGENT_READY = Gauge("edge_agent_ready", "1 while every component is ready (what /readyz reports)")
FLAPPING = Gauge(
    "edge_agent_component_flapping",
    "1 while the component restarted more than daemon.flap_restarts times within daemon.flap_window_s, else 0",
    ["component"],
)

# Of the shutdown grace: components stop one by one within the first 80 %; one that overruns has the others
# cancelled together and sharing the next 15 %; the last 5 % is left for logging and process exit.
_ORDERED_STOP_SHARE = 0.80
_FINAL_STOP_SHARE = 0.95
# Startup: systemd is asked for this much beyond a component's own ready timeout, so our timeout fires first and is
# logged with the component's name instead of systemd killing us anonymously.
_EXTEND_MARGIN_S = 10.0

ComponentState = Literal["pending", "starting", "ready", "degraded", "restarting", "stopping", "stopped"]
Phase = Literal["starting", "running", "stopping", "stopped"]


class ComponentStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    # degraded: was ready in this run and has cleared its ready event (e.g. broker connection lost, reconnecting)
    state: ComponentState
    ready: bool
    restarts: int
    restarts_in_window: int  # within daemon.flap_window_s
    flapping: bool  # restarts_in_window > daemon.flap_restarts: the agent is not ready while any component is
    last_error: str | None = None


class AgentStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    phase: Phase
    ready: bool
    flapping: list[str]  # the components flapping now, by name: the first thing to read off a 503
    components: list[ComponentStatus]


class SupervisorError(Exception):
    """The supervisor was used wrongly (e.g. two components with one name)."""


def hard_exit(code: int) -> None:
    """Leave now, even with tasks or threads still busy: flush what was logged, then _exit."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe must not stop us from exiting
            pass
    os._exit(code)


def _tell_stop(component: Component) -> None:
    if isinstance(component, HearsStop):
        component.stop_requested()


class _Slot:
    """One component and what the supervisor knows about it."""

    def __init__(self, component: Component, config: DaemonConfig) -> None:
        self.component = component
        self.flap_restarts = config.flap_restarts
        self.window = RestartWindow(config.flap_window_s)
        self.name = component.name
        self.ready = asyncio.Event()  # replaced by a fresh event on every (re)start
        self.up = asyncio.Event()  # set the first time the component reports ready; the start waits on it
        self.was_ready = False  # in the current run
        self.phase: Literal["pending", "running", "restarting", "stopping", "stopped"] = "pending"
        self.restarts = 0
        self.last_error: str | None = None
        self.task: asyncio.Task[None] | None = None

    @property
    def stopping(self) -> bool:
        # Read through a property, not compared inline: `phase` changes under us while the component runs.
        return self.phase == "stopping"

    @property
    def not_ready_reason(self) -> str | None:
        return self.component.not_ready_reason if isinstance(self.component, ExplainsNotReady) else None

    @property
    def is_ready(self) -> bool:
        return self.phase == "running" and self.ready.is_set() and self.not_ready_reason is None

    def flapping(self, now: float) -> bool:
        return self.window.count(now) > self.flap_restarts

    def flap_summary(self, now: float) -> str:
        """e.g. "mqtt-ingest restarted 6 times in 10 min: OverflowError: …", for STATUS= and the log."""
        count, span = self.window.count(now), _span(self.window.window_s)
        return f"{self.name} restarted {count} times in {span}: {self.last_error}"

    def status(self, now: float) -> ComponentStatus:
        state: ComponentState
        if self.phase == "running":
            state = "ready" if self.is_ready else ("degraded" if self.was_ready else "starting")
        else:
            state = self.phase
        return ComponentStatus(
            name=self.name,
            state=state,
            ready=self.is_ready,
            restarts=self.restarts,
            restarts_in_window=self.window.count(now),
            flapping=self.flapping(now),
            last_error=self.not_ready_reason or self.last_error,
        )


def _span(seconds: float) -> str:
    """A window as an operator reads it: "10 min" for whole minutes, else seconds."""
    return f"{seconds / 60:g} min" if seconds >= 60 and seconds % 60 == 0 else f"{seconds:g} s"


class Supervisor:
    """Runs components; `run()` returns the process exit code (0 after an orderly stop, 1 if the start failed)."""

    def __init__(
        self,
        config: DaemonConfig,
        notifier: SdNotifier | None = None,
        *,
        watchdog_s: float | None = None,
        handle_signals: bool = True,
        on_stuck: Callable[[int], None] = hard_exit,
    ) -> None:
        self._config = config
        self._notifier = notifier or SdNotifier(None)
        # None → from WATCHDOG_USEC / WATCHDOG_PID, as systemd set them
        self._watchdog_s = watchdog_interval() if watchdog_s is None else watchdog_s
        self._handle_signals = handle_signals
        self._on_stuck = on_stuck
        self._slots: list[_Slot] = []
        self._phase: Phase = "starting"
        self._stop = asyncio.Event()
        self._stop_reason: str | None = None

    def add(self, component: Component) -> None:
        """Append a component; components start in the order added and stop in reverse."""
        if any(slot.name == component.name for slot in self._slots):
            raise SupervisorError(f"two components are named {component.name!r}")
        slot = _Slot(component, self._config)
        self._slots.append(slot)
        READY.labels(component.name).set_function(lambda: 1.0 if slot.is_ready else 0.0)
        FLAPPING.labels(component.name).set_function(lambda: 1.0 if slot.flapping(time.monotonic()) else 0.0)

    @property
    def ready(self) -> bool:
        return self.status().ready

    @property
    def stop_reason(self) -> str | None:
        """Why the agent stopped or is stopping (a signal's name, or the component that failed to start)."""
        return self._stop_reason

    def status(self) -> AgentStatus:
        now = time.monotonic()
        components = [slot.status(now) for slot in self._slots]
        flapping = [c.name for c in components if c.flapping]
        # One snapshot (one `now`) for the components and the verdict, so a /readyz body never contradicts itself.
        ready = self._phase == "running" and all(c.ready for c in components) and not flapping
        return AgentStatus(phase=self._phase, ready=ready, flapping=flapping, components=components)

    def request_stop(self, reason: str = "requested") -> None:
        """Begin the orderly stop (what SIGTERM does). A second request while stopping exits at once."""
        if self._stop.is_set():
            log.warning("stop_requested_again", reason=reason, action="exit now")
            self._on_stuck(1)
            return
        log.info("stop_requested", reason=reason)
        self._stop_reason = reason
        self._stop.set()

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        AGENT_READY.set_function(lambda: 1.0 if self.ready else 0.0)
        if self._handle_signals:
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, self.request_stop, signal.Signals(signum).name)
        backstop: threading.Timer | None = None
        exit_code = 0
        try:
            async with asyncio.TaskGroup() as tg:
                watchdog = None
                if self._watchdog_s is not None and self._notifier.enabled:
                    watchdog = tg.create_task(watchdog_loop(self._notifier, self._watchdog_s), name="sd-watchdog")
                started = await self._start_all(tg)
                if started:
                    self._phase = "running"
                    log.info("agent_ready", components=[slot.name for slot in self._slots])
                    self._notifier.ready(f"running: {len(self._slots)} components ready")
                    await self._stop.wait()
                else:
                    exit_code = 0 if self._stop.is_set() else 1
                # From a thread: if the loop itself is blocked, nothing inside it can enforce the grace period.
                backstop = threading.Timer(self._config.shutdown_grace_s, self._backstop)
                backstop.daemon = True
                backstop.start()
                await self._stop_all(loop)
                if watchdog is not None:
                    watchdog.cancel()
        finally:
            if backstop is not None:
                backstop.cancel()
            if self._handle_signals:
                for signum in (signal.SIGTERM, signal.SIGINT):
                    loop.remove_signal_handler(signum)
            self._phase = "stopped"
        log.info("agent_stopped", exit_code=exit_code, reason=self._stop_reason or "start failed")
        return exit_code

    async def _start_all(self, tg: asyncio.TaskGroup) -> bool:
        """Start each component in order, waiting for it to be ready before the next; False if the start failed.

        A component with `start_in_background = True` (the engine: minutes to load a model, while its callers wait
        for it themselves) does not hold up the ones after it; it is waited for after the last has started.
        """
        loop = asyncio.get_running_loop()
        background: list[tuple[_Slot, float]] = []  # (slot, deadline)
        for slot in self._slots:
            if self._stop.is_set():
                return False
            timeout = self._ready_timeout(slot)
            log.info("component_starting", component=slot.name, ready_timeout_s=timeout)
            self._notifier.status(f"starting {slot.name}")
            slot.task = tg.create_task(self._supervise(slot), name=f"component:{slot.name}")
            if StartOptions.of(slot.component).start_in_background:
                background.append((slot, loop.time() + timeout))
                continue
            if not await self._await_up(slot, timeout):
                return False
        for slot, deadline in background:
            if not slot.up.is_set():
                self._notifier.status(f"waiting for {slot.name}")
            if not await self._await_up(slot, max(0.0, deadline - loop.time())):
                return False
        return True

    def _ready_timeout(self, slot: _Slot) -> float:
        return StartOptions.of(slot.component).ready_timeout_s or self._config.ready_timeout_s

    async def _await_up(self, slot: _Slot, timeout: float) -> bool:
        """Wait until the component first reports ready; False (start failed or stop requested) otherwise."""
        self._notifier.extend_timeout(timeout + _EXTEND_MARGIN_S)
        up = asyncio.ensure_future(slot.up.wait())
        stop = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({up, stop}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            up.cancel()
            stop.cancel()
        if self._stop.is_set():
            return False
        if not slot.up.is_set():
            limit = self._ready_timeout(slot)
            log.error("component_ready_timeout", component=slot.name, timeout_s=limit, last_error=slot.last_error)
            self._notifier.status(f"start failed: {slot.name} not ready within {limit:g}s")
            self._stop_reason = f"{slot.name} not ready within {limit:g}s"
            return False
        return True

    async def _supervise(self, slot: _Slot) -> None:
        """Run one component until cancelled, restarting it with exponential backoff whenever it fails."""
        loop = asyncio.get_running_loop()
        attempt = 0
        while True:
            slot.ready = ready = asyncio.Event()
            slot.was_ready = False
            slot.phase = "running"
            watcher = asyncio.create_task(self._watch_ready(slot, ready), name=f"component:{slot.name}:ready")
            began = loop.time()
            try:
                await slot.component.run(ready)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a crash of one component must not take the others down
                slot.last_error = f"{type(exc).__name__}: {exc}"
                log.error("component_crashed", component=slot.name, error=slot.last_error, exc_info=exc)
            else:
                current = asyncio.current_task()
                assert current is not None, "run inside a task"
                if current.cancelling():
                    return  # it swallowed our cancel and returned: an orderly stop all the same
                slot.last_error = "returned without being stopped"
                log.error("component_exited", component=slot.name, error=slot.last_error)
            finally:
                watcher.cancel()
            if slot.stopping:
                return  # it failed while flushing after our cancel: logged above, and not to be started again
            # A component that ran healthy for a long stretch starts its backoff afresh on the next failure.
            if slot.was_ready and loop.time() - began >= self._config.restart_backoff_max_s:
                attempt = 0
            delay = backoff_delay(
                attempt, self._config.restart_backoff_initial_s, self._config.restart_backoff_max_s, jitter="none"
            )
            attempt += 1
            slot.phase = "restarting"
            log.warning("component_restart_scheduled", component=slot.name, delay_s=delay, attempt=attempt)
            if slot.flapping(time.monotonic()):
                self._notifier.status(self._degraded_summary())
            else:
                self._notifier.status(f"restarting {slot.name} in {delay:g}s after {slot.last_error}")
            await asyncio.sleep(delay)
            slot.restarts += 1
            RESTARTS.labels(slot.name).inc()
            now = time.monotonic()
            was_flapping = slot.flapping(now)
            slot.window.record(now)
            log.info("component_restarting", component=slot.name, restarts=slot.restarts)
            if slot.flapping(now) and not was_flapping:
                log.error(
                    "component_flapping",
                    component=slot.name,
                    restarts_in_window=slot.window.count(now),
                    window_s=slot.window.window_s,
                    last_error=slot.last_error,
                )
                self._notifier.status(self._degraded_summary())

    async def _watch_ready(self, slot: _Slot, ready: asyncio.Event) -> None:
        await ready.wait()
        slot.was_ready = True
        slot.up.set()
        log.info("component_ready", component=slot.name, restarts=slot.restarts)
        # Flapping ends by the clock, not by an event: wait it out here (a new crash cancels this watcher and
        # reports for itself), then say what the agent is now.
        waited = False
        while (clears_at := slot.window.clears_at(slot.flap_restarts, time.monotonic())) is not None:
            waited = True
            await asyncio.sleep(clears_at - time.monotonic())
        if waited:
            log.info("component_flapping_cleared", component=slot.name, restarts=slot.restarts)
        if self._phase != "running":
            return
        if any(s.flapping(time.monotonic()) for s in self._slots):
            self._notifier.status(self._degraded_summary())
        elif self.ready:
            self._notifier.status(f"running: {len(self._slots)} components ready")

    def _degraded_summary(self) -> str:
        now = time.monotonic()
        return "degraded: " + "; ".join(slot.flap_summary(now) for slot in self._slots if slot.flapping(now))

    async def _stop_all(self, loop: asyncio.AbstractEventLoop) -> None:
        self._phase = "stopping"
        self._notifier.stopping(f"stopping ({self._stop_reason or 'start failed'})")
        grace = self._config.shutdown_grace_s
        began = loop.time()
        running = [slot for slot in reversed(self._slots) if slot.task is not None and not slot.task.done()]
        for index, slot in enumerate(running):
            assert slot.task is not None
            slot.phase = "stopping"
            log.info("component_stopping", component=slot.name)
            _tell_stop(slot.component)
            slot.task.cancel()
            budget = began + grace * _ORDERED_STOP_SHARE - loop.time()
            done, _ = await asyncio.wait({slot.task}, timeout=max(0.0, budget))
            if not done:
                log.error("component_stop_overran", component=slot.name, budget_s=grace * _ORDERED_STOP_SHARE)
                await self._stop_together(running[index + 1 :], began + grace * _FINAL_STOP_SHARE, loop)
                stuck = [s.name for s in running[index:] if s.task is not None and not s.task.done()]
                if stuck:
                    log.critical("shutdown_incomplete", components=stuck, grace_s=grace)
                    self._on_stuck(1)
                break
            slot.phase = "stopped"
            log.info("component_stopped", component=slot.name, after_s=round(loop.time() - began, 3))

    async def _stop_together(self, slots: list[_Slot], deadline: float, loop: asyncio.AbstractEventLoop) -> None:
        tasks = {slot.task for slot in slots if slot.task is not None}
        for slot in slots:
            slot.phase = "stopping"
            _tell_stop(slot.component)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=max(0.0, deadline - loop.time()))
        for slot in slots:
            if slot.task is not None and slot.task.done():
                slot.phase = "stopped"

    def _backstop(self) -> None:
        # Runs in a timer thread only when the loop did not finish the stop within the grace period.
        log.critical("shutdown_grace_exceeded", grace_s=self._config.shutdown_grace_s)
        self._on_stuck(1)
