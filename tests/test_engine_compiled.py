"""The default engine mode, compiled (`enforce_eager = false`), on the real engine: at float32 the tokens are eager's
(at int8 they are not: the fingerprint names the mode), and the kernels it compiled are kept with the agent's state,
so a restart compiles nothing.

One cold compile (~100 s on 2 cores) and one restart; every other test engine runs eager (tests.fixtures.engine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from edge_agent.config.llm import LlmConfig
from edge_agent.llm.types import ChatMessage, GenerationParams
from tests.fixtures.engine import EngineHandle, engine_config

pytestmark = [pytest.mark.engine, pytest.mark.slow]

PROMPTS = [
    [ChatMessage(role="user", content="Pump P-101 tripped twice on high vibration this shift. Summarise it.")],
    [ChatMessage(role="user", content="Explain in two sentences why a centrifugal pump might cavitate.")],
    [
        ChatMessage(role="system", content="Eres un asistente de planta. Responde en español."),
        ChatMessage(role="user", content="¿Qué revisar cuando sube la temperatura de un rodamiento?"),
    ],
]
PARAMS = GenerationParams(max_tokens=48)


def kernel_files(cache: Path) -> dict[str, int]:
    """Every file in the kernel cache with its modification time (ns): what a start compiled or rewrote."""
    return {str(p.relative_to(cache)): p.stat().st_mtime_ns for p in cache.rglob("*") if p.is_file()}


def test_compiled_is_the_default() -> None:
    assert LlmConfig().enforce_eager is False


async def test_compiled_gives_eager_tokens_and_a_restart_compiles_nothing(engine: EngineHandle, tmp_path: Path) -> None:
    """The compiled engine's greedy tokens equal the session's eager engine's on every prompt; restarted on the
    same state directory it answers the same again without writing a kernel to its cache."""
    eager = [(await engine.generate(messages, PARAMS)).token_ids for messages in PROMPTS]
    config = engine_config(tmp_path / "state", enforce_eager=False)
    cache = tmp_path / "state" / "compile-cache"

    first = EngineHandle(config)
    try:
        assert first.engine.info["enforce_eager"] is False
        compiled = [(await first.generate(messages, PARAMS)).token_ids for messages in PROMPTS]
    finally:
        first.close()
    assert compiled == eager
    built = kernel_files(cache)
    assert any(name.endswith(".so") for name in built), sorted(built)[:20]

    again = EngineHandle(config)
    try:
        restarted = [(await again.generate(messages, PARAMS)).token_ids for messages in PROMPTS]
    finally:
        again.close()
    assert restarted == eager
    assert kernel_files(cache) == built
