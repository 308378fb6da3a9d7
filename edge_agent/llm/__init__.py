"""The LLM engine: one interface (`Engine.generate`) over an in-process vLLM engine or a remote vLLM server.

The types every engine speaks are here; `edge_agent.llm.engine.open_engine(config)` opens one (an async context
manager). Importing this package loads neither the engine clients nor the config: the reports import only types.
"""

from __future__ import annotations

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
]
