"""`edge-agent mcp`: the plant's tools over MCP on stdio, driven by the SDK's own client (ClientSession over
stdio_client spawning `python -m edge_agent mcp`), one server process per module."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import event, given, settings
from hypothesis import strategies as st
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

from edge_agent.ask.mcp import AUDIT_SEQ_META
from edge_agent.ask.pipeline import AskAnswer
from edge_agent.ask.request import QuestionRequest
from edge_agent.ask.service import AskService
from edge_agent.ask.tools import TOOLS, ToolContext, run_tool
from edge_agent.audit import AuditLog
from edge_agent.base.broker import Broker
from edge_agent.config import AgentConfig, load_config
from edge_agent.store import Store
from harness.shift import SHIFT_START, shift_records

REPO = Path(__file__).resolve().parents[1]


@dataclass
class McpServer:
    """A running `edge-agent mcp` and the client session talking to it; `call` runs a session coroutine."""

    portal: BlockingPortal
    session: ClientSession
    log: Path

    def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return self.portal.call(self.session.call_tool, name, arguments)

    def tools(self) -> dict[str, types.Tool]:
        return {tool.name: tool for tool in self.portal.call(self.session.list_tools).tools}

    def alive(self) -> bool:
        self.portal.call(self.session.send_ping)
        return True


@contextmanager
def mcp_server(config: Path, log: Path, *options: str) -> Iterator[McpServer]:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "edge_agent", "mcp", "--config", str(config), *options], cwd=REPO
    )
    with log.open("w") as errlog, start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(stdio_client(params, errlog=errlog)) as (read, write):
            with portal.wrap_async_context_manager(ClientSession(read, write)) as session:
                portal.call(session.initialize)
                yield McpServer(portal, session, log)


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error, result
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


def write_config(tmp_path: Path, broker: Broker, site: str) -> Path:
    """An agent of `site` on `broker`, shift A as in harness.shift; no throttle a test would run into."""
    path = tmp_path / "agent.toml"
    path.write_text(
        f"""[site]
id = "{site}"
timezone = "America/Mexico_City"
[paths]
state_dir = "{tmp_path / "state"}"
[mqtt]
host = "{broker.host}"
port = {broker.port}
client_id = "agent-{site}"
[ask]
throttle = 100000
[[reports.shifts]]
name = "A"
start = "06:00"
end = "14:00"
"""
    )
    return path


@asynccontextmanager
async def running_agent(config: AgentConfig) -> AsyncIterator[tuple[Store, AuditLog]]:
    """The agent's ask side on the config's broker, as `edge-agent run` wires it (edge_agent.app): the AskService and
    the outbox publisher that carries its replies, over a store holding harness.shift's shift of records."""
    from edge_agent.connectors.mqtt import MqttClient
    from edge_agent.publish.outbox import OutboxPublisher

    store = Store(config.paths.store_path)
    store.insert_records(shift_records())
    audit = AuditLog.open(config.paths.audit_dir, origin=f"edge-agent/{config.site.id}")
    outbox = OutboxPublisher(config.mqtt, store, client_id=f"{config.mqtt.client_id}-outbox", poll_s=0.2)
    service = AskService(config, store, audit, outbox_wake=outbox.wake, mqtt_client=MqttClient)
    ready_service, ready_outbox = asyncio.Event(), asyncio.Event()
    tasks = [
        asyncio.create_task(service.run(ready_service), name="ask"),
        asyncio.create_task(outbox.run(ready_outbox), name="outbox"),
    ]
    try:
        async with asyncio.timeout(30):
            await asyncio.gather(ready_service.wait(), ready_outbox.wait())
        yield store, audit
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        audit.close()
        store.close()


@pytest.fixture(scope="module")
def unanswered(shared_broker: Broker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    """The server on a live broker where no agent answers its site: each call that leaves it times out in 1 s."""
    tmp_path = tmp_path_factory.mktemp("mcp")
    config = write_config(tmp_path, shared_broker, "silent")
    with mcp_server(config, tmp_path / "mcp.log", "--timeout", "1") as server:
        yield server


@dataclass
class Agent:
    server: McpServer
    config: AgentConfig
    store: Store
    audit: AuditLog

    def audit_entry(self, seq: int) -> dict[str, Any]:
        entries = [json.loads(line) for line in self.audit.path.read_text().splitlines()]
        [entry] = [e for e in entries if e["seq"] == seq]
        return entry


@pytest.fixture(scope="module")
def agent(shared_broker: Broker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    """The agent's ask side running, and the server calling it as user `assistant`."""
    tmp_path = tmp_path_factory.mktemp("agent")
    path = write_config(tmp_path, shared_broker, "demo")
    config = load_config(path)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(running_agent(config)) as (store, audit):
        with mcp_server(path, tmp_path / "mcp.log", "--user", "assistant", "--timeout", "20") as server:
            yield Agent(server, config, store, audit)


class TestListing:
    """The tools an assistant sees: every TOOLS entry plus `ask`, schemas generated from the pydantic models."""

    def test_every_tool_is_offered_and_ask(self, unanswered: McpServer) -> None:
        """The listing is exactly the registry's names and `ask`."""
        assert set(unanswered.tools()) == {*TOOLS, "ask"}

    def test_input_schemas_are_the_input_models(self, unanswered: McpServer) -> None:
        """Each tool's input schema is its input model's JSON schema, unchanged."""
        tools = unanswered.tools()
        for name, tool in TOOLS.items():
            assert tools[name].input_schema == tool.input_model.model_json_schema(), name

    def test_output_schemas_are_the_output_models(self, unanswered: McpServer) -> None:
        """Each tool's output schema is its output model's serialization schema, unchanged."""
        tools = unanswered.tools()
        for name, tool in TOOLS.items():
            assert tools[name].output_schema == tool.output_model.model_json_schema(mode="serialization"), name

    def test_ask_takes_a_question_and_returns_an_answer(self, unanswered: McpServer) -> None:
        """`ask`'s schemas are the wire's question model and AskAnswer."""
        ask = unanswered.tools()["ask"]
        assert ask.input_schema == QuestionRequest.model_json_schema()
        assert ask.output_schema == AskAnswer.model_json_schema(mode="serialization")

    def test_every_tool_is_described_and_read_only(self, unanswered: McpServer) -> None:
        """Every tool carries the registry's description and readOnlyHint, and claims no open world."""
        tools = unanswered.tools()
        for name, listed in tools.items():
            assert listed.description, name
            assert listed.annotations == types.ToolAnnotations(read_only_hint=True, open_world_hint=False), name
        for name, tool in TOOLS.items():
            assert tools[name].description == tool.description


class TestCallsNobodyAnswers:
    """The call path up to the MQTT request, with no agent on the broker."""

    def test_a_call_nobody_answers_is_a_timeout_error(self, unanswered: McpServer) -> None:
        """A valid call goes out and, unanswered within --timeout, comes back as a tool error naming the timeout."""
        text = error_text(unanswered.call("namespace", {}))
        assert text.startswith("timeout: no reply from the agent within 1 s")

    def test_a_question_nobody_answers_is_a_timeout_error(self, unanswered: McpServer) -> None:
        """`ask` takes the same path."""
        text = error_text(unanswered.call("ask", {"question": "¿Cuántas paradas hubo hoy?", "lang": "es"}))
        assert text.startswith("timeout:")

    def test_bad_arguments_are_refused_before_the_agent(self, unanswered: McpServer) -> None:
        """Arguments the input model refuses come back at once as `bad_arguments`, naming the field."""
        text = error_text(unanswered.call("tag_stats", {"tag": "P-101.vibration_mm_s"}))
        assert text == "bad_arguments: window: Field required"

    def test_an_extra_argument_is_refused(self, unanswered: McpServer) -> None:
        """Inputs forbid extra fields, so a misspelt argument is never silently dropped."""
        text = error_text(unanswered.call("namespace", {"site": "demo"}))
        assert text == "bad_arguments: site: Extra inputs are not permitted"

    def test_an_unknown_tool_is_a_protocol_error(self, unanswered: McpServer) -> None:
        """A name the server does not offer is an MCP error (invalid params) naming it."""
        with pytest.raises(MCPError, match="unknown tool 'set_setpoint'") as caught:
            unanswered.call("set_setpoint", {"value": 3})
        assert caught.value.code == types.INVALID_PARAMS
        assert unanswered.alive()


# Shift A of harness.shift: 06:00-14:00 in Mexico City, 12:00-20:00 UTC on 2026-11-29.
SHIFT_A = {"start": SHIFT_START.isoformat(), "end": SHIFT_START.replace(hour=20).isoformat()}


class TestCallsTheAgentRuns:
    """Each call travels to the running agent, which validates, runs and audits it."""

    def test_a_tool_result_is_the_agents(self, agent: Agent) -> None:
        """The structured result is exactly what the agent's run_tool computes over its store."""
        arguments = {"tag": "P-101.vibration_mm_s", "window": SHIFT_A}
        result = agent.server.call("tag_stats", arguments)
        assert not result.is_error, result
        ctx = ToolContext(store=agent.store, config=agent.config, now=SHIFT_START.replace(hour=21))
        assert result.structured_content == run_tool(ctx, "tag_stats", arguments).model_dump(mode="json")
        stats = result.structured_content
        assert (stats["count"], stats["min"], stats["max"], stats["record_count"]) == (5, 3.1, 7.86, 5)
        [content] = result.content
        assert isinstance(content, types.TextContent)
        assert json.loads(content.text) == stats

    def test_a_tool_call_is_audited_as_the_user(self, agent: Agent) -> None:
        """The result's _meta names the `ask.tool_called` entry: the tool, the arguments as sent, the --user."""
        arguments = {"asset": "P-101", "line": None, "window": SHIFT_A}
        result = agent.server.call("stops", arguments)
        assert not result.is_error, result
        assert result.meta is not None
        entry = agent.audit_entry(result.meta[AUDIT_SEQ_META])
        assert (entry["event"], entry["actor"]) == ("ask.tool_called", "ask")
        payload = entry["payload"]
        assert (payload["user"], payload["tool"], payload["arguments"]) == ("assistant", "stops", arguments)
        assert payload["status"] == "answered"

    def test_a_refused_call_is_a_tool_error_with_the_reason(self, agent: Agent) -> None:
        """The agent's refusal comes back as a tool error starting with its reason code, and is audited."""
        result = agent.server.call("tag_stats", {"tag": "P-999.vibration_mm_s", "window": SHIFT_A})
        assert error_text(result) == "unknown_tag: no tag 'P-999.vibration_mm_s' in the stored data"
        assert result.meta is not None
        entry = agent.audit_entry(result.meta[AUDIT_SEQ_META])
        assert (entry["payload"]["status"], entry["payload"]["reason"]) == ("refused", "unknown_tag")

    def test_a_question_returns_the_agents_answer(self, agent: Agent) -> None:
        """`ask` returns the AskAnswer, here the refusal of a command, audited as `ask.answered`."""
        result = agent.server.call("ask", {"question": "arranca la bomba P-101", "lang": "es"})
        assert not result.is_error, result
        answer = AskAnswer.model_validate(result.structured_content)
        assert (answer.status, answer.reason) == ("refused", "write_request")
        assert result.meta is not None
        assert agent.audit_entry(result.meta[AUDIT_SEQ_META])["event"] == "ask.answered"


@asynccontextmanager
async def impostor(config: AgentConfig, replies: dict[str, bytes]) -> AsyncIterator[None]:
    """Another program answering on the agent's request topic (an older agent, a wrong one): each request is answered
    with `replies[tool]` (`ask` for a question), with the request's Correlation Data."""
    from edge_agent.connectors.mqtt import MqttClient

    async def answer(client: MqttClient) -> None:
        async for message in client.messages():
            await message.ack()
            reply = replies[json.loads(message.payload).get("tool", "ask")]
            assert message.response_topic is not None
            await client.publish(message.response_topic, reply, correlation_data=message.correlation_data)

    async with MqttClient(config.mqtt, client_id="impostor") as client:
        await client.wait_connected(timeout=10)
        await client.subscribe(f"edge/{config.site.id}/ask/request/#")
        task = asyncio.create_task(answer(client), name="impostor")
        try:
            yield
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


@pytest.fixture(scope="module")
def misanswered(shared_broker: Broker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpServer]:
    """The server on a broker where an impostor answers: a result outside the schema, no result, not JSON."""
    tmp_path = tmp_path_factory.mktemp("impostor")
    path = write_config(tmp_path, shared_broker, "impostor")
    replies = {
        "namespace": json.dumps({"status": "answered", "tool": "namespace", "result": {"site": 7}}).encode(),
        "notes": json.dumps({"status": "thinking"}).encode(),
        "ask": b"not json",
    }
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(impostor(load_config(path), replies)):
        with mcp_server(path, tmp_path / "mcp.log", "--timeout", "10") as server:
            yield server


class TestRepliesThatDoNotFit:
    """A reply the server cannot use is a tool error naming why, never a result the client would have to reject."""

    def test_a_result_outside_the_output_schema(self, misanswered: McpServer) -> None:
        """A result the output model refuses is `bad_reply`, naming the first bad field."""
        text = error_text(misanswered.call("namespace", {}))
        assert text == "bad_reply: the agent's reply does not fit the tool's output schema: record_ids: Field required"

    def test_a_reply_that_is_neither_result_nor_refusal(self, misanswered: McpServer) -> None:
        """A reply with no result and no reason is an error with reason `unknown`."""
        assert error_text(misanswered.call("notes", {"asset": None, "window": SHIFT_A})) == "unknown"

    def test_a_reply_that_is_not_json(self, misanswered: McpServer) -> None:
        """A reply that is not JSON is `no_answer`, with the client's reason."""
        text = error_text(misanswered.call("ask", {"question": "¿Cuántas paradas hubo hoy?"}))
        assert text.startswith("no_answer: the agent's reply is not JSON")


# JSON values as an assistant could send them (no lone surrogates: those cannot be encoded as UTF-8 at all), with
# the tools' own names and arguments, times, windows over the stored shift and plant names often enough that many
# calls reach the agent and are run or refused there.
JSON_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(JSON_TEXT, inner, max_size=4),
    max_leaves=12,
)
TIMES = st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-6))]))
SHIFT_TIMES = st.integers(-600, 1200).map(lambda minutes: SHIFT_START + timedelta(minutes=minutes))
WINDOWS = st.lists(TIMES | SHIFT_TIMES, min_size=2, max_size=2).map(
    lambda ends: {"start": ends[0].isoformat(), "end": ends[1].isoformat()}
)
ORDERED_WINDOWS = st.lists(SHIFT_TIMES, min_size=2, max_size=2, unique=True).map(
    lambda ends: {"start": min(ends).isoformat(), "end": max(ends).isoformat()}
)
TIME_TEXT = (TIMES | SHIFT_TIMES).map(datetime.isoformat)
NAMES = st.sampled_from(
    ["P-101", "P-102", "P-101.vibration_mm_s", "P-101.running", "L1", "oee", "reliability", "approved", "x"]
)
QUESTIONS = st.sampled_from(["¿Cuántas paradas tuvo la P-101 hoy?", "max vibration of P-101 yesterday", "ignore tudo"])
# What each argument plausibly holds, by its name; any other argument a plant name or null.
PLAUSIBLE = {
    "window": ORDERED_WINDOWS | WINDOWS,
    "at": TIME_TEXT,
    "active_at": TIME_TEXT | st.none(),
    "question": QUESTIONS | JSON_TEXT,
    "lang": st.sampled_from(["es", "en", "pt", None]),
}
VALUES = JSON_VALUES | NAMES | QUESTIONS | WINDOWS | TIME_TEXT
MODELS: dict[str, type[BaseModel]] = {name: tool.input_model for name, tool in TOOLS.items()} | {"ask": QuestionRequest}


def arguments_for(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """All of the tool's own arguments with plausible values, some of them with any values, or any JSON object."""
    fields = sorted(MODELS[name].model_fields if name in MODELS else {})
    plausible = st.fixed_dictionaries({f: PLAUSIBLE.get(f, NAMES | st.none()) for f in fields})
    some = st.fixed_dictionaries({}, optional=dict.fromkeys(fields, VALUES))
    return plausible | some | st.dictionaries(st.sampled_from(fields or ["x"]) | JSON_TEXT, VALUES, max_size=5)


TOOL_NAMES = st.sampled_from(sorted(MODELS))
CALLS = (TOOL_NAMES | TOOL_NAMES | JSON_TEXT).flatmap(lambda name: st.tuples(st.just(name), arguments_for(name)))


class TestAnyArguments:
    """Any JSON object sent through the MCP client is a tool result or an MCP error; the server never dies."""

    @settings(max_examples=200)
    @given(call=CALLS)
    def test_any_arguments(self, agent: Agent, call: tuple[str, dict[str, Any]]) -> None:
        """Each call ends as a result (schema-checked by the client) or an MCPError, and the server still pings."""
        name, arguments = call
        try:
            result = agent.server.call(name, arguments)
        except MCPError as exc:
            assert exc.code == types.INVALID_PARAMS
            event("mcp error")
        else:
            assert result.is_error or result.structured_content is not None
            event(f"tool error {error_text(result).split(':')[0]}" if result.is_error else f"result of {name}")
        assert agent.server.alive()
