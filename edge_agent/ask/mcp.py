"""The plant's tools for other people's assistants: an MCP server (the official `mcp` SDK's low-level `Server`).

It offers one MCP tool per entry of `TOOLS`, whose input and output schemas are that tool's pydantic models' JSON
schemas, and `ask`, which takes a question and returns the agent's `AskAnswer`. The server runs nothing itself: it
checks the arguments against the tool's input model, then hands the call to the agent, where it is checked again, run
against the store within the budget and audited. Two transports share this one server: on stdio (`edge-agent mcp`)
the agent is reached as one MQTT request (`ask_agent`); over HTTPS (edge_agent.ask.mcp_http) the server runs inside
the agent and the call is answered in process (edge_agent.ask.local_agent) as the token's user. The server holds no
writer, so it is read-only by construction; every tool says so (`readOnlyHint`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from edge_agent import __version__
from edge_agent.ask.client import AskClientError, ask_agent
from edge_agent.ask.pipeline import AskAnswer
from edge_agent.ask.request import QuestionRequest
from edge_agent.ask.tools import TOOLS
from edge_agent.config import AgentConfig

# One request to the agent: the payload in, its reply out (`ask_agent` bound to a config, a user and a timeout).
AgentCall = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
# The call path for the request in hand: the stdio server's one (its user is fixed), or one per HTTP caller.
AgentFor = Callable[[ServerRequestContext[Any]], AgentCall]

# The key under the result's `_meta` that carries the audit entry the agent wrote for the call.
AUDIT_SEQ_META = "edge-agent/audit_seq"

# Hints only (clients must not trust them), but true here: no tool can write, and each reads only the plant's store.
READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)

ASK_DESCRIPTION = (
    "Ask a question about the plant's data in Spanish, English or Portuguese and get a grounded answer: one to "
    "three sentences, every figure computed from stored records whose ids it cites, or a clarification (with "
    "candidates) or a refusal (with its reason). Returns the AskAnswer JSON; the agent audits every answer."
)


@dataclass(frozen=True)
class OfferedTool:
    """One MCP tool: its models, its description, and how a call becomes the agent's payload and back."""

    name: str
    description: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]
    # True for `ask`: the payload is the question itself and the reply is the AskAnswer, not a tool result.
    is_question: bool = False

    def listing(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.input_model.model_json_schema(),
            output_schema=self.output_model.model_json_schema(mode="serialization"),
            annotations=READ_ONLY,
        )

    def payload(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The request the agent gets: the assistant's own arguments, as sent, so that the agent checks them again
        and audits exactly what was asked (a question's arguments are the question request itself)."""
        return dict(arguments) if self.is_question else {"tool": self.name, "args": arguments}

    def result(self, reply: dict[str, Any]) -> dict[str, Any] | None:
        """The reply's result, checked against the output model, or None when the agent did not answer the call."""
        if self.is_question:
            body: Any = reply if "answer" in reply else None
        else:
            body = reply.get("result") if reply.get("status") == "answered" else None
        if body is None:
            return None
        return self.output_model.model_validate(body).model_dump(mode="json")


def offered_tools() -> dict[str, OfferedTool]:
    """Every tool the server offers, by name: one per entry of `TOOLS`, then `ask`."""
    offered = {
        name: OfferedTool(name, tool.description, tool.input_model, tool.output_model) for name, tool in TOOLS.items()
    }
    offered["ask"] = OfferedTool("ask", ASK_DESCRIPTION, QuestionRequest, AskAnswer, is_question=True)
    return offered


def audit_meta(reply: dict[str, Any]) -> dict[str, Any] | None:
    """The result's `_meta`: the seq of the audit entry the agent wrote for the call, when it wrote one."""
    audit_seq = reply.get("audit_seq")
    return {AUDIT_SEQ_META: audit_seq} if audit_seq is not None else None


def first_error(exc: ValidationError) -> str:
    """The first bad field and what is wrong with it, as the agent's own check names it (`run_tool`): one line an
    assistant can act on."""
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "<root>"
    return f"{where}: {err['msg']}"


def tool_error(text: str, meta: dict[str, Any] | None = None) -> types.CallToolResult:
    """A tool-level error: shown to the assistant (which may correct its call), not a protocol failure."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True, meta=meta)


async def call_offered(tool: OfferedTool, arguments: dict[str, Any], call_agent: AgentCall) -> types.CallToolResult:
    """Check `arguments` against the tool's input model, have the agent run the call, and turn its reply into the
    MCP result: the output model's JSON as structured content, or an error naming the agent's reason."""
    try:
        tool.input_model.model_validate(arguments)
    except ValidationError as exc:
        return tool_error(f"bad_arguments: {first_error(exc)}")
    try:
        reply = await call_agent(tool.payload(arguments))
    except TimeoutError as exc:
        return tool_error(f"timeout: {exc} (is `edge-agent run` up, with [ask] enabled?)")
    except AskClientError as exc:
        return tool_error(f"no_answer: {exc}")
    try:
        result = tool.result(reply)
    except ValidationError as exc:
        return tool_error(f"bad_reply: the agent's reply does not fit the tool's output schema: {first_error(exc)}")
    if result is None:
        reason = reply.get("reason", "unknown")
        detail = reply.get("detail", "")
        return tool_error(f"{reason}: {detail}" if detail else str(reason), audit_meta(reply))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False, sort_keys=True))],
        structured_content=result,
        meta=audit_meta(reply),
    )


def build_server(agent_for: AgentFor) -> Server[Any]:
    """The MCP server: lists the offered tools and forwards each call through `agent_for(ctx)`, the call path for
    the request's caller."""
    offered = offered_tools()
    listing = types.ListToolsResult(tools=[tool.listing() for tool in offered.values()])

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return listing

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        tool = offered.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; the tools are {sorted(offered)}")
        return await call_offered(tool, params.arguments or {}, agent_for(ctx))

    return Server(
        "edge-agent",
        version=__version__,
        instructions=(
            "Read-only tools over one plant's stored data (OPC UA and MES records, alarms, notes, reports). Times are "
            "ISO 8601 with a UTC offset; call `namespace` first for the site's lines, assets and tags. Every call is "
            "run and audited by the plant's agent."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(config: AgentConfig, user: str | None, timeout_s: float) -> None:
    """Serve the tools on stdin/stdout until the client closes them, each call made as `user` within `timeout_s`."""

    async def call_agent(payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return await ask_agent(config, payload, user=user, timeout_s=timeout_s)
        except TimeoutError as exc:
            raise TimeoutError(f"no reply from the agent within {timeout_s:g} s") from exc

    server = build_server(lambda ctx: call_agent)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


__all__ = ["AUDIT_SEQ_META", "AgentCall", "AgentFor", "OfferedTool", "build_server", "offered_tools", "serve_stdio"]
