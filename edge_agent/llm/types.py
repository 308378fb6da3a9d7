"""What the engine takes and gives back: chat messages, generation parameters, completions, errors.

Every engine implementation (in-process vLLM, remote vLLM server) speaks these types, so the report service never
knows which one it talks to.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from edge_agent.base.canonical import canonical_json, sha256_hex


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ChatMessage(_Frozen):
    role: Literal["system", "user", "assistant"]
    content: str


class GenerationParams(_Frozen):
    """Sampling settings for one request. The defaults are the deterministic ones: greedy, fixed seed."""

    max_tokens: int = Field(ge=1)
    temperature: float = Field(0.0, ge=0.0)
    seed: int = 0
    stop: list[str] = Field(default_factory=list)
    # A JSON schema the output must match (structured outputs: vLLM's xgrammar backend constrains each token), so a
    # planner's answer always parses. None: free text.
    json_schema: dict[str, Any] | None = None

    @model_serializer(mode="wrap")
    def _without_unset_schema(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A free-text request dumps without `json_schema`: its wire bytes and its fingerprint (reports recorded
        before structured outputs existed replay with theirs) are what they were."""
        dumped: dict[str, Any] = handler(self)
        if self.json_schema is None:
            dumped.pop("json_schema", None)
        return dumped


class SpecStats(_Frozen):
    """Speculative-decoding figures for one request.

    `per_position[i]` is the fraction of drafting steps whose i-th drafted token was accepted;
    `mean_acceptance_length` is 1 + accepted / drafting steps (tokens emitted per target forward pass).
    """

    num_speculative_tokens: int = Field(ge=1)
    drafts: int = Field(ge=0, description="drafting steps (target forward passes that verified a draft)")
    drafted: int = Field(ge=0, description="draft tokens proposed")
    accepted: int = Field(ge=0, description="draft tokens accepted")
    per_position: list[float]
    mean_acceptance_length: float


class Timings(_Frozen):
    """Wall-clock seconds, measured by the engine client around one request."""

    queued_s: float = Field(ge=0.0, description="waiting for the engine (one generation at a time)")
    first_token_s: float = Field(ge=0.0, description="engine start of request → first token (prefill)")
    total_s: float = Field(ge=0.0, description="engine start of request → last token")

    @property
    def decode_s(self) -> float:
        return max(self.total_s - self.first_token_s, 0.0)


class Completion(_Frozen):
    text: str
    token_ids: list[int]
    finish_reason: str = Field(description="stop (EOS or a stop string) | length (max_tokens)")
    prompt_tokens: int = Field(ge=0)
    timings: Timings
    spec: SpecStats | None = None
    # Everything that decides the output bytes: versions, device, dtype, threads, numerics env, model and draft
    # manifest hashes, sampling params. Same fingerprint + same prompt → same token ids.
    fingerprint: dict[str, Any]
    fingerprint_sha256: str

    @property
    def completion_tokens(self) -> int:
        return len(self.token_ids)

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.timings.total_s if self.timings.total_s > 0 else 0.0


def fingerprint_sha256(fingerprint: dict[str, Any]) -> str:
    """SHA-256 of the fingerprint in canonical JSON (`edge_agent.base.canonical`)."""
    return sha256_hex(canonical_json(fingerprint))


@runtime_checkable
class Engine(Protocol):
    async def generate(self, messages: list[ChatMessage], params: GenerationParams) -> Completion: ...


class EngineError(Exception):
    """Root of every engine failure: start refused, engine process died, request failed."""


class PromptTooLong(EngineError):
    """The prompt plus max_tokens does not fit the engine's context window."""

    def __init__(self, prompt_tokens: int, max_tokens: int, max_model_len: int) -> None:
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.max_model_len = max_model_len
        super().__init__(
            f"prompt of {prompt_tokens} tokens + max_tokens {max_tokens} exceeds max_model_len {max_model_len}"
        )


class ModelVerificationError(EngineError):
    """A model or draft directory does not match its manifest (or has none): the engine refuses to start."""


class EngineStartError(EngineError):
    """The engine process could not be started."""


class EngineDied(EngineError):
    """The engine process exited while a request was in flight; it is being restarted."""
