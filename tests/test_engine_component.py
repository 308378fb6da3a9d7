"""The engine as a daemon component: how the supervisor starts it (`StartOptions`), declared by the component."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

from edge_agent.daemon.component import Component, SlowToStart, StartOptions, StartsInBackground
from edge_agent.llm.component import EngineComponent
from edge_agent.llm.types import ChatMessage, GenerationParams
from tests.fixtures.engine import EngineHandle, engine_config


class Plain:
    """A component that declares nothing about its start."""

    name = "plain"

    async def run(self, ready: asyncio.Event) -> None:
        ready.set()


class TestStartOptions:
    def test_engine_starts_in_background_with_the_llm_start_timeout(self, tmp_path: Path) -> None:
        """Loading takes minutes (llm.start_timeout_s) and generate() waits for it, so intake need not."""
        config = engine_config(tmp_path, start_timeout_s=420.0)
        engine = EngineComponent(config)
        assert isinstance(engine, Component)
        assert isinstance(engine, SlowToStart) and isinstance(engine, StartsInBackground)
        assert StartOptions.of(engine) == StartOptions(ready_timeout_s=420.0, start_in_background=True)

    def test_a_component_declaring_nothing_gets_the_defaults(self) -> None:
        """No ready timeout of its own (daemon.ready_timeout_s applies) and a start the next one waits for."""
        assert StartOptions.of(Plain()) == StartOptions(ready_timeout_s=None, start_in_background=False)

    def test_start_in_background_false_is_honoured(self) -> None:
        """Declaring the attribute is not enough: its value decides."""

        class Foreground(Plain):
            start_in_background = False

        assert isinstance(Foreground(), StartsInBackground)
        assert StartOptions.of(Foreground()) == StartOptions()


class FakeEngine:
    """Stands in for LocalEngine's liveness: `loaded` and why the last process went away."""

    def __init__(self) -> None:
        self.loaded = True
        self.last_death = "engine unresponsive: no heartbeat for 11 s"


class TestLiveness:
    def test_readiness_follows_the_engine(self, tmp_path: Path) -> None:
        """A dead or hung engine clears `ready` and names why; loaded again, it is ready again."""
        component = EngineComponent(engine_config(tmp_path))
        engine, ready = FakeEngine(), asyncio.Event()
        ready.set()
        engine.loaded = False
        component._follow(engine, ready)  # type: ignore[arg-type]
        assert not ready.is_set()
        assert component.not_ready_reason == (
            "engine not running (engine unresponsive: no heartbeat for 11 s); restarting"
        )
        engine.loaded = True
        component._follow(engine, ready)  # type: ignore[arg-type]
        assert ready.is_set() and component.not_ready_reason is None


class TestHang:
    """Runs on the session engine: stops its process (SIGSTOP); the watchdog kills and restarts it."""

    def test_a_stopped_engine_is_not_ready_within_30_s_and_recovers(self, engine: EngineHandle) -> None:
        """SIGSTOP → not ready, naming the missed heartbeat, within 30 s; then a new process answers."""
        component = EngineComponent(engine.config)
        ready = asyncio.Event()
        ready.set()
        old_pid = engine.engine.pid
        assert old_pid is not None and engine.engine.loaded
        stopped = time.monotonic()
        os.kill(old_pid, signal.SIGSTOP)
        while ready.is_set():
            assert time.monotonic() - stopped < 30, "still ready 30 s after the engine stopped"
            time.sleep(0.5)
            component._follow(engine.engine, ready)
        assert "no heartbeat" in (component.not_ready_reason or "")
        params = GenerationParams(max_tokens=4)
        answer = asyncio.run(engine.generate([ChatMessage(role="user", content="Say hi.")], params))
        assert answer.text and engine.engine.pid not in (None, old_pid)
        component._follow(engine.engine, ready)
        assert ready.is_set()
