"""What a question or a tool call looks like on the wire: `{"question": str, "lang": "es"|"en"|"pt"|null}` or
`{"tool": str, "args": {...}}`. Bytes become one of the two models or a `RequestError` naming the field, with the
rules every JSON input is held to (`edge_agent.reports.request.json_object`: UTF-8, depth, string and number domains).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edge_agent.reports.errors import RequestError
from edge_agent.reports.request import field_name, json_object

# 16 KiB: a question is a sentence and a tool call a handful of arguments; the reports' 1 MiB would let one user
# make the agent parse megabytes per message.
MAX_ASK_BYTES = 16 * 1024


class QuestionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # 1000 characters: a question of a few sentences; longer text is not a question to a plant.
    question: str = Field(min_length=1, max_length=1000)
    lang: Literal["es", "en", "pt"] | None = None


class ToolRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1, max_length=64)
    args: dict[str, Any] = Field(default_factory=dict)


def parse_ask(payload: bytes) -> QuestionRequest | ToolRequest:
    """Bytes → a question or a tool call, or `RequestError` naming the first bad field."""
    if len(payload) > MAX_ASK_BYTES:
        raise RequestError("<payload>", f"{len(payload)} bytes, more than {MAX_ASK_BYTES}")
    data = json_object(payload)
    model: type[QuestionRequest] | type[ToolRequest] = ToolRequest if "tool" in data else QuestionRequest
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise RequestError(field_name(err["loc"]), err["msg"].removeprefix("Value error, ")) from exc
