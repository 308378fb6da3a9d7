"""The LLM engine: one interface (`Engine.generate`) over an in-process vLLM engine or a remote vLLM server.

`open_engine(config)` is an async context manager; vLLM itself is imported only when an engine is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from edge_agent.llm.types import (
    ChatMessage,
    Completion,
    Engine,
    EngineDied,
    EngineError,
    EngineStartError,
    GenerationParams,
    ModelVerificationError,
    PromptTooLong,
    SpecStats,
    Timings,
    fingerprint_sha256,
)

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from edge_agent.config import AgentConfig


def open_engine(config: AgentConfig) -> AbstractAsyncContextManager[Engine]:
    """The engine `config.llm.backend` names, as an async context manager: `async with open_engine(c) as engine:`."""
    from edge_agent.llm.engine import open_engine as _open

    return _open(config)


__all__ = [
    "ChatMessage",
    "Completion",
    "Engine",
    "EngineDied",
    "EngineError",
    "EngineStartError",
    "GenerationParams",
    "ModelVerificationError",
    "PromptTooLong",
    "SpecStats",
    "Timings",
    "fingerprint_sha256",
    "open_engine",
]
