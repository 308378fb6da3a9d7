"""The engine as a daemon component: how the supervisor starts it (`StartOptions`), declared by the component."""

from __future__ import annotations

import asyncio
from pathlib import Path

from edge_agent.daemon.component import Component, SlowToStart, StartOptions, StartsInBackground
from edge_agent.llm.component import EngineComponent
from tests.fixtures.engine import engine_config


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
