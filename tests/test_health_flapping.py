"""Honest health: the restart window, and a crash-looping component seen through /readyz, STATUS= and /metrics."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from structlog.testing import capture_logs

from edge_agent.config import DaemonConfig, HealthConfig
from edge_agent.daemon.health import HealthServer
from edge_agent.daemon.restarts import RestartWindow
from edge_agent.daemon.sdnotify import SdNotifier
from edge_agent.daemon.supervisor import ComponentStatus, Supervisor
from tests.fixtures.notify import NotifySocket
from tests.test_daemon import FAST, get, wait_until

POISON = OverflowError("int too large to convert to float")
POISON_TEXT = "OverflowError: int too large to convert to float"


class TestRestartWindow:
    def test_empty_window_counts_zero(self) -> None:
        """No restart recorded: nothing in the window."""
        assert RestartWindow(600.0).count(1000.0) == 0

    def test_restarts_inside_the_window_are_counted(self) -> None:
        """Restarts at 0, 100 and 200 s are all within a 600 s window at 599 s."""
        window = RestartWindow(600.0)
        for t in (0.0, 100.0, 200.0):
            window.record(t)
        assert window.count(599.0) == 3

    def test_a_restart_leaves_the_window_exactly_window_s_later(self) -> None:
        """A restart at t counts while now < t + window_s: at 0 s it is still in at 599.999 s, gone at 600 s."""
        window = RestartWindow(600.0)
        window.record(0.0)
        window.record(100.0)
        assert (window.count(599.999), window.count(600.0), window.count(700.0)) == (2, 1, 0)

    def test_recording_drops_what_has_left_the_window(self) -> None:
        """A restart at 700 s sees only itself and the one at 200 s in a 600 s window (0 and 100 have left)."""
        window = RestartWindow(600.0)
        for t in (0.0, 100.0, 200.0, 700.0):
            window.record(t)
        assert window.count(700.0) == 2

    def test_clears_at_is_exactly_when_the_count_drops_despite_rounding(self) -> None:
        """Found by Hypothesis: for t = 2.633… and w = 61.44…, (t + w) - t < w in floating point; the restarts at t
        must already be gone at the time clears_at returned, not one rounding step later."""
        first = 1.347722124210506
        second = first + 1.2856790248365613  # 2.6334011490470672
        window = RestartWindow(61.4440356451412)
        for t in (first, second, second):
            window.record(t)
        clears_at = window.clears_at(1, second)
        assert clears_at is not None
        assert (window.count(math.nextafter(clears_at, 0.0)), window.count(clears_at)) == (2, 0)

    def test_clears_at_is_none_within_the_limit(self) -> None:
        """Two restarts with a limit of 2: not over the limit, nothing to wait for."""
        window = RestartWindow(600.0)
        window.record(0.0)
        window.record(10.0)
        assert window.clears_at(2, 10.0) is None

    def test_clears_at_is_when_the_excess_has_left(self) -> None:
        """Restarts at 0, 10, 20, 30 with a limit of 2: two must leave, the second of them (10 s) at 610 s."""
        window = RestartWindow(600.0)
        for t in (0.0, 10.0, 20.0, 30.0):
            window.record(t)
        assert (window.clears_at(2, 30.0), window.clears_at(2, 605.0), window.clears_at(2, 610.0)) == (
            610.0,
            610.0,
            None,
        )


class TestRestartWindowProperty:
    @given(
        gaps=st.lists(st.floats(0.0, 100.0), max_size=30),
        window_s=st.floats(0.5, 200.0),
        later=st.floats(0.0, 300.0),
        limit=st.integers(1, 10),
    )
    def test_agrees_with_a_naive_count(self, gaps: list[float], window_s: float, later: float, limit: int) -> None:
        """count is the restarts t with now < t + window_s, and clears_at is the first time that count is <= limit."""
        times = list(itertools.accumulate(gaps))
        window = RestartWindow(window_s)
        for t in times:
            window.record(t)
        now = (times[-1] if times else 0.0) + later

        def naive(at: float) -> int:
            return sum(1 for t in times if at < t + window_s)

        clears_at = window.clears_at(limit, now)
        assert window.count(now) == naive(now)
        if clears_at is None:
            assert naive(now) <= limit
        else:
            assert (naive(now) > limit, naive(clears_at) <= limit, naive(math.nextafter(clears_at, 0.0)) > limit) == (
                True,
                True,
                True,
            )


class PoisonLoop:
    """Connects (ready), then crashes on a redelivered poison message, on each of its first `crashes` runs (every run
    when None); after that it stays up."""

    def __init__(self, name: str, crashes: int | None) -> None:
        self.name = name
        self.crashes = crashes
        self.runs = 0

    async def run(self, ready: asyncio.Event) -> None:
        self.runs += 1
        ready.set()
        await asyncio.sleep(0.01)  # the broker redelivers the message a moment after the connection is up
        if self.crashes is None or self.runs <= self.crashes:
            raise POISON
        await asyncio.Event().wait()


# Flapping after 3 restarts in a minute; the fast backoff (0.05 s doubling to 0.15 s) gets there in about 0.3 s.
FLAP = FAST.model_copy(update={"flap_restarts": 2, "flap_window_s": 60.0})


@dataclass
class Agent:
    """A supervisor running the real health server and a PoisonLoop, with sd_notify going to a real socket."""

    port: int
    sup: Supervisor
    notify: NotifySocket
    logs: list[dict[str, Any]]
    received: list[str] = field(default_factory=list)

    def component(self, name: str) -> ComponentStatus:
        return next(c for c in self.sup.status().components if c.name == name)

    def statuses(self) -> list[str]:
        """Every STATUS= line received so far. Call it while waiting, too: the kernel queues only 10 datagrams
        (net.unix.max_dgram_qlen) and a sender beyond that blocks, as it would with a wedged systemd."""
        self.received += [line for lines in self.notify.drain() for line in lines if line.startswith("STATUS=")]
        return self.received

    async def until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """wait_until, reading the notify socket meanwhile."""

        def check() -> bool:
            self.statuses()
            return predicate()

        await wait_until(check, timeout)


Start = Callable[[PoisonLoop, DaemonConfig], Awaitable[Agent]]


@pytest.fixture
async def start_agent(path_socket: NotifySocket) -> AsyncIterator[Start]:
    running: list[tuple[Supervisor, asyncio.Task[int]]] = []
    # Captured, not rendered: the console renderer's rich traceback of every crash takes most of a second on a
    # busy 2-core box, which would stretch the crash loop beyond the short windows these tests use.
    with capture_logs() as logs:

        async def start(poison: PoisonLoop, config: DaemonConfig) -> Agent:
            sup = Supervisor(config, SdNotifier(path_socket.address), handle_signals=False)
            server = HealthServer(HealthConfig(port=0), sup.status)
            sup.add(server)
            sup.add(poison)
            running.append((sup, asyncio.create_task(sup.run())))
            await wait_until(lambda: server.port is not None)
            assert server.port is not None
            return Agent(server.port, sup, path_socket, logs)

        yield start
        for sup, run in running:
            sup.request_stop("test")
            await run


class TestFlapping:
    async def test_readyz_is_503_naming_the_flapping_component_and_its_count(self, start_agent: Start) -> None:
        """A component crashing on every run is, after flap_restarts + 1 restarts, named in a 503 /readyz."""
        agent = await start_agent(PoisonLoop("mqtt-ingest", crashes=None), FLAP)
        await agent.until(lambda: agent.component("mqtt-ingest").flapping)
        status, _, body = await get(agent.port, "/readyz")
        data = json.loads(body)
        entry = next(c for c in data["components"] if c["name"] == "mqtt-ingest")
        assert (status, data["ready"], data["flapping"], entry["flapping"], entry["restarts_in_window"] >= 3) == (
            503,
            False,
            ["mqtt-ingest"],
            True,
            True,
        )
        assert entry["last_error"] == POISON_TEXT

    async def test_healthz_stays_200_while_a_component_flaps(self, start_agent: Start) -> None:
        """/healthz is about the event loop, which still turns: a crash loop does not fail it."""
        agent = await start_agent(PoisonLoop("mqtt-ingest", crashes=None), FLAP)
        await agent.until(lambda: agent.component("mqtt-ingest").flapping)
        status, _, body = await get(agent.port, "/healthz")
        assert (status, json.loads(body)["status"]) == (200, "alive")

    async def test_status_line_says_degraded_with_component_count_and_error(self, start_agent: Start) -> None:
        """The restart that starts the flapping sends STATUS=degraded: <component> restarted <n> times in <window>."""
        agent = await start_agent(PoisonLoop("mqtt-ingest", crashes=None), FLAP)
        await agent.until(lambda: agent.component("mqtt-ingest").flapping)
        degraded = [line for line in agent.statuses() if "degraded" in line]
        assert degraded[0] == f"STATUS=degraded: mqtt-ingest restarted 3 times in 1 min: {POISON_TEXT}"

    async def test_the_start_of_flapping_is_logged_once_with_count_and_window(self, start_agent: Start) -> None:
        """component_flapping is an error log line, sent when the count first exceeds flap_restarts, not per crash."""
        agent = await start_agent(PoisonLoop("mqtt-ingest", crashes=None), FLAP)
        await agent.until(lambda: agent.component("mqtt-ingest").restarts_in_window >= 5)
        fields = ("log_level", "component", "restarts_in_window", "window_s", "last_error")
        flapping = [tuple(e[f] for f in fields) for e in agent.logs if e["event"] == "component_flapping"]
        assert flapping == [("error", "mqtt-ingest", 3, 60.0, POISON_TEXT)]

    async def test_metrics_carry_the_flapping_gauge_at_1(self, start_agent: Start) -> None:
        """/metrics has edge_agent_component_flapping{component=...} 1.0 next to the restarts counter."""
        agent = await start_agent(PoisonLoop("flap-gauge", crashes=None), FLAP)
        await agent.until(lambda: agent.component("flap-gauge").flapping)
        _, _, body = await get(agent.port, "/metrics")
        lines = body.decode().splitlines()
        assert (
            'edge_agent_component_flapping{component="flap-gauge"} 1.0' in lines,
            'edge_agent_component_flapping{component="health"} 0.0' in lines,
            "# TYPE edge_agent_component_restarts_total counter" in lines,
        ) == (True, True, True)

    async def test_flap_restarts_restarts_in_the_window_are_not_flapping(self, start_agent: Start) -> None:
        """Exactly flap_restarts restarts is still within the rule: the agent is ready once the component is up."""
        poison = PoisonLoop("mqtt-ingest", crashes=2)
        agent = await start_agent(poison, FLAP)
        await agent.until(lambda: poison.runs == 3 and agent.sup.ready)
        component = agent.component("mqtt-ingest")
        assert (component.restarts_in_window, component.flapping, (await get(agent.port, "/readyz"))[0]) == (
            2,
            False,
            200,
        )

    async def test_a_component_that_stops_crashing_is_ready_again_after_the_window(self, start_agent: Start) -> None:
        """Three crashes, then up: flapping until the window holds two restarts again, then ready and STATUS running."""
        config = FLAP.model_copy(update={"flap_window_s": 1.5})
        agent = await start_agent(PoisonLoop("flap-clears", crashes=3), config)
        await agent.until(lambda: agent.component("flap-clears").flapping)
        during = await get(agent.port, "/readyz")
        await agent.until(lambda: agent.sup.ready, timeout=10.0)
        after = await get(agent.port, "/readyz")
        _, _, metrics = await get(agent.port, "/metrics")
        assert (during[0], after[0], json.loads(after[2])["components"][1]["flapping"]) == (503, 200, False)
        assert 'edge_agent_component_flapping{component="flap-clears"} 0.0' in metrics.decode().splitlines()
        assert agent.statuses()[-2:] == [
            f"STATUS=degraded: flap-clears restarted 3 times in 1.5 s: {POISON_TEXT}",
            "STATUS=running: 2 components ready",
        ]
        assert [e["component"] for e in agent.logs if e["event"] == "component_flapping_cleared"] == ["flap-clears"]
