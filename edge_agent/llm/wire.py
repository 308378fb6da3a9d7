"""Messages between the agent and its engine process: JSON lines over a socket pair, one model per message.

agent → engine (`Request`):  Start        {"op": "start", "spec": WorkerSpec}          first message, once
                             Generate     {"op": "generate", "id": 7, "messages": [...], "params": {...}}
                             Abort        {"op": "abort", "id": 7}    the caller gave up (timeout, cancellation)
                             Shutdown     {"op": "shutdown"}
engine → agent (`Reply`):    Ready        {"op": "ready", "info": {...}}  engine loaded; info feeds the fingerprint
                             Fatal        {"op": "fatal", "message": "..."}  could not load; the process exits
                             Result       {"op": "result", "id": 7, ...}     one per generate, or
                             TooLong      {"op": "error", "id": 7, "kind": "prompt_too_long", ...}
                             Refused      {"op": "error", "id": 7, "kind": "bad_request" | "engine", ...}
                             Heartbeat    {"op": "heartbeat", "loop_age_s": 0.4}  every HEARTBEAT_S from a thread
                                          of its own; loop_age_s: since the serve loop last went round

Both sides encode with `encode` and decode with `decode_request` / `decode_reply`: a line that is not one of these
messages raises `WireError` naming the line, whichever side reads it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from edge_agent.llm.launcher import WorkerSpec
from edge_agent.llm.types import ChatMessage, EngineError, GenerationParams

# Socket stream limit: a 4096-token completion is ~30 kB of JSON; 64 MiB leaves room for any max_model_len.
MAX_LINE = 64 * 1024 * 1024

T = TypeVar("T")


class WireError(EngineError, ValueError):
    """A line from the other process that is not an engine message (a ValueError too, as a bad line always was)."""

    def __init__(self, direction: Literal["request", "reply"], line: bytes, reason: str) -> None:
        self.direction = direction
        self.line = line
        super().__init__(f"not an engine {direction}: {line[:200]!r} ({reason})")


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- agent → engine ---------------------------------------------------------------------------------------------


class Start(_Message):
    op: Literal["start"] = "start"
    spec: WorkerSpec


class Generate(_Message):
    op: Literal["generate"] = "generate"
    id: int
    messages: list[ChatMessage]
    params: GenerationParams


class Abort(_Message):
    op: Literal["abort"] = "abort"
    id: int


class Shutdown(_Message):
    op: Literal["shutdown"] = "shutdown"


Request = Start | Generate | Abort | Shutdown


# -- engine → agent ---------------------------------------------------------------------------------------------


class Ready(_Message):
    op: Literal["ready"] = "ready"
    info: dict[str, Any]


class Fatal(_Message):
    op: Literal["fatal"] = "fatal"
    message: str


# How often the engine process says it is alive. 2 s: a stopped or dead engine is noticed within a few of them
# (llm.heartbeat_timeout_s), and ~60 bytes every 2 s costs nothing.
HEARTBEAT_S = 2.0


class Heartbeat(_Message):
    """Sent by the engine process's heartbeat thread: the process runs (a SIGSTOP'd one sends none) and its serve
    loop last went round `loop_age_s` ago (a wedged engine step shows as a growing age)."""

    op: Literal["heartbeat"] = "heartbeat"
    loop_age_s: float


class SpecCounts(_Message):
    """vLLM's per-request acceptance figures, as `specstats.spec_stats` takes them."""

    histogram: list[int]
    num_draft_tokens: int
    num_spec_tokens: int


class Result(_Message):
    op: Literal["result"] = "result"
    id: int
    text: str
    token_ids: list[int]
    finish_reason: str
    prompt_tokens: int
    first_token_s: float
    total_s: float
    spec: SpecCounts | None


class TooLong(_Message):
    """The prompt plus max_tokens does not fit the engine's context window."""

    op: Literal["error"] = "error"
    id: int
    kind: Literal["prompt_too_long"] = "prompt_too_long"
    prompt_tokens: int
    max_tokens: int
    max_model_len: int
    message: str = "prompt too long"


class Refused(_Message):
    """The engine could not run the request: a bad request (chat template, vLLM's checks) or an engine failure."""

    op: Literal["error"] = "error"
    id: int
    kind: Literal["bad_request", "engine"]
    message: str


Answer = Result | TooLong | Refused  # the reply to one generate
Reply = Ready | Fatal | Heartbeat | Answer

# One discriminated union per direction: "op" picks the message; among errors, "kind" picks which.
_REQUESTS: TypeAdapter[Request] = TypeAdapter(Annotated[Request, Field(discriminator="op")])
_REPLIES: TypeAdapter[Reply] = TypeAdapter(
    Annotated[
        Ready | Fatal | Heartbeat | Result | Annotated[TooLong | Refused, Field(discriminator="kind")],
        Field(discriminator="op"),
    ]
)


def encode(message: Request | Reply) -> bytes:
    """One JSON line; fields in declaration order, so the bytes are those of the dict literals this replaced."""
    return (
        json.dumps(message.model_dump(mode="json"), separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"
    )


def decode_request(line: bytes) -> Request:
    """What the engine process reads; WireError if `line` is not a request."""
    return _decode(_REQUESTS, line, "request")


def decode_reply(line: bytes) -> Reply:
    """What the agent reads; WireError if `line` is not a reply."""
    return _decode(_REPLIES, line, "reply")


def _decode(adapter: TypeAdapter[T], line: bytes, direction: Literal["request", "reply"]) -> T:
    try:
        # json.loads, as before the models: the same Python values (the ready info is hashed into fingerprints).
        return adapter.validate_python(json.loads(line))
    except ValidationError as exc:
        reason = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'message'}: {e['msg']}" for e in exc.errors())
        raise WireError(direction, line, reason) from exc
    except ValueError as exc:  # bad UTF-8 or bad JSON
        raise WireError(direction, line, str(exc)) from exc
