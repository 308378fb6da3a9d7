"""The MCP server over HTTPS (edge_agent.ask.mcp_http): the agent's component serving the stdio server's tools at
`/mcp` with a self-signed certificate, over a real store and audit log, driven by the SDK's own client
(`streamable_http_client` + `ClientSession`, trusting the certificate through the httpx client it is handed); the
tokens made and revoked with `edge-agent mcp token`, and `[mcp]` in the config."""

from __future__ import annotations

import asyncio
import json
import os
import re
import ssl
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from edge_agent.app import AgentContext, build_components
from edge_agent.ask.mcp import AUDIT_SEQ_META, offered_tools
from edge_agent.ask.mcp_http import UNAUTHORIZED, McpHttpServer
from edge_agent.ask.mcp_tokens import TokenError, TokenFile
from edge_agent.ask.pipeline import AskAnswer
from edge_agent.ask.tools import ToolContext, run_tool
from edge_agent.audit import AuditLog
from edge_agent.audit.component import open_audit_log
from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.base.types import utcnow
from edge_agent.config import AgentConfig, load_config
from edge_agent.store import RecordWriter, Store
from harness.shift import SHIFT_START, shift_records
from tests.test_ask_mcp import CALLS, SHIFT_A, error_text
from tests.test_console_auth import self_signed

REPO = Path(__file__).resolve().parents[1]


def write_config(tmp_path: Path, **mcp: Any) -> Path:
    """An agent of site `demo` (shift A as in harness.shift) with [mcp] on, port 0, the certificate in `tmp_path`,
    and two people; no throttle a test would run into."""
    cert_file, key_file = self_signed(tmp_path)
    keys = {"enabled": True, "port": 0, "cert_file": str(cert_file), "key_file": str(key_file)} | mcp
    block = "\n".join(f"{k} = {json.dumps(v)}" for k, v in keys.items())
    path = tmp_path / "agent.toml"
    path.write_text(
        f"""[site]
id = "demo"
timezone = "America/Mexico_City"
[paths]
state_dir = "{tmp_path / "state"}"
[ask]
throttle = 100000
[mcp]
{block}
[[reports.shifts]]
name = "A"
start = "06:00"
end = "14:00"
[[identities]]
name = "alice"
[[identities]]
name = "bob"
"""
    )
    return path


def token_command(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    run = [sys.executable, "-m", "edge_agent", "mcp", "token", *args, "--config", str(config)]
    return subprocess.run(run, capture_output=True, text=True, cwd=REPO, timeout=60)


@dataclass
class Served:
    portal: BlockingPortal
    config: AgentConfig
    store: Store
    audit: AuditLog
    server: McpHttpServer

    @property
    def url(self) -> str:
        return f"https://localhost:{self.server.port}/mcp"

    @property
    def trust(self) -> ssl.SSLContext:
        assert self.config.mcp.cert_file is not None
        return ssl.create_default_context(cafile=str(self.config.mcp.cert_file))

    def entries(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.audit.path.read_text().splitlines()]

    def entry(self, seq: int) -> dict[str, Any]:
        [entry] = [e for e in self.entries() if e["seq"] == seq]
        return entry

    def post(self, body: bytes, headers: dict[str, str]) -> httpx2.Response:
        """One raw request to /mcp over TLS (no MCP client)."""

        async def post() -> httpx2.Response:
            async with httpx2.AsyncClient(verify=self.trust) as client:
                return await client.post(self.url, content=body, headers=headers)

        return self.portal.call(post)

    @contextmanager
    def client(self, token: str) -> Iterator[Client]:
        """The SDK's client on /mcp, sending `token`, initialized."""
        http = httpx2.AsyncClient(verify=self.trust, headers={"Authorization": f"Bearer {token}"})
        with self.portal.wrap_async_context_manager(http) as http:
            with self.portal.wrap_async_context_manager(streamable_http_client(self.url, http_client=http)) as (r, w):
                with self.portal.wrap_async_context_manager(ClientSession(r, w)) as session:
                    self.portal.call(session.initialize)
                    yield Client(self.portal, session)


@dataclass
class Client:
    portal: BlockingPortal
    session: ClientSession

    def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return self.portal.call(self.session.call_tool, name, arguments)

    def tools(self) -> dict[str, types.Tool]:
        return {tool.name: tool for tool in self.portal.call(self.session.list_tools).tools}

    def alive(self) -> bool:
        self.portal.call(self.session.send_ping)
        return True


@asynccontextmanager
async def serving(config: AgentConfig) -> AsyncIterator[tuple[Store, AuditLog, McpHttpServer]]:
    """The component as `edge-agent run` builds it, over a store holding harness.shift's shift of records."""
    store = Store(config.paths.store_path)
    store.insert_records(shift_records())
    audit = open_audit_log(config)  # as `edge-agent run` opens it (the origin the token command signs under)
    [server] = [c for c in build_components(_context(config, store, audit)) if isinstance(c, McpHttpServer)]
    ready = asyncio.Event()
    task = asyncio.create_task(server.run(ready), name="mcp")
    try:
        async with asyncio.timeout(20):
            await ready.wait()
        yield store, audit, server
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        audit.close()
        store.close()


def _context(config: AgentConfig, store: Store, audit: AuditLog) -> AgentContext:
    return AgentContext(
        config=config, store=store, writer=RecordWriter(store), audit=audit, status=lambda: pytest.fail("unread")
    )


@dataclass
class Tokens:
    alice: str
    bob: str


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Tokens, list[subprocess.CompletedProcess[str]]]:
    """A config and a token each for alice and bob, made with `edge-agent mcp token add` before the agent starts."""
    tmp_path = tmp_path_factory.mktemp("mcp_http")
    path = write_config(tmp_path)
    added = [token_command(path, "add", "--user", name) for name in ("alice", "bob")]
    for done in added:
        assert done.returncode == 0, done.stderr
    return path, Tokens(*(done.stdout.strip() for done in added)), added


@pytest.fixture(scope="module")
def served(made: tuple[Path, Tokens, Any]) -> Iterator[Served]:
    config = load_config(made[0])
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(serving(config)) as (store, audit, srv):
        yield Served(portal, config, store, audit, srv)


@pytest.fixture
def alice(served: Served, made: tuple[Path, Tokens, Any]) -> Iterator[Client]:
    with served.client(made[1].alice) as client:
        yield client


def unauthorized(why: str) -> float:
    return UNAUTHORIZED.labels(why)._value.get()


INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
).encode()
# What an HTTP header can carry (printable ASCII, no surrounding blanks), often after a scheme.
HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)
HEADERS = (HEADER_TEXT | HEADER_TEXT.map(lambda t: "Bearer " + t) | HEADER_TEXT.map(lambda t: "bearer  " + t)).map(
    str.strip
)
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


class TestTokens:
    """`edge-agent mcp token add|list|revoke` and the file they keep."""

    def test_add_prints_the_token_once_and_keeps_only_its_digest(
        self, made: tuple[Path, Tokens, list[subprocess.CompletedProcess[str]]]
    ) -> None:
        """stdout is the token alone (32 bytes, urlsafe base64); the file (0600) holds its SHA-256, not the token."""
        path, tokens, added = made
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", tokens.alice) and tokens.alice != tokens.bob
        assert "for alice; the token is shown once" in added[0].stderr
        file = load_config(path).mcp.tokens_path(load_config(path).paths.state_dir)
        assert stat.S_IMODE(file.stat().st_mode) == 0o600
        text = file.read_text()
        assert tokens.alice not in text and sha256_hex(tokens.alice.encode()) in text

    def test_list_shows_no_secret(self, made: tuple[Path, Tokens, Any]) -> None:
        """`token list` names each token's id, user and times, never the digest."""
        listed = json.loads(token_command(made[0], "list").stdout)
        assert [(t["user"], t["revoked_at"]) for t in listed] == [("alice", None), ("bob", None)]
        assert all(set(t) == {"id", "user", "created_at", "revoked_at"} for t in listed)

    def test_add_refuses_a_name_no_identity_has(self, made: tuple[Path, Tokens, Any]) -> None:
        done = token_command(made[0], "add", "--user", "mallory")
        assert done.returncode == 1 and "'mallory' is no [[identities]] name" in done.stderr

    def test_added_while_the_agent_was_stopped_is_audited_at_once(self, served: Served) -> None:
        """With the log free, the command itself appends `mcp.token_added`: id, user, time; no secret or digest."""
        added = [e for e in served.entries() if e["event"] == "mcp.token_added"]
        assert [(e["actor"], e["payload"]["user"]) for e in added] == [("operator", "alice"), ("operator", "bob")]
        assert set(added[0]["payload"]) == {"id", "user", "created_at"}

    @given(st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
    @settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
    def test_any_file_is_tokens_or_a_token_error(self, tmp_path: Path, data: bytes) -> None:
        """Whatever the tokens file holds, reading it gives tokens or a TokenError naming the file, nothing else."""
        file = TokenFile(tmp_path / "tokens.json")
        file.path.write_bytes(data)
        try:
            file.read()
        except TokenError as exc:
            assert str(exc).startswith(str(file.path))
            event("refused")
        else:
            event("read")

    def test_a_token_matches_only_while_active(self, tmp_path: Path) -> None:
        file = TokenFile(tmp_path / "tokens.json")
        secret, record = file.add("alice", utcnow(), "t")
        assert file.read().match(secret) == record and file.read().match(secret + "x") is None
        file.revoke(utcnow(), "t", token_id=record.id)
        assert file.read().match(secret) is None
        with pytest.raises(TokenError, match=f"no active token for id '{record.id}'"):
            file.revoke(utcnow(), "t", token_id=record.id)


class TestServed:
    """The SDK's client over TLS with alice's token."""

    def test_the_listing_is_the_stdio_servers(self, alice: Client) -> None:
        """Every offered tool, each with the schemas and hints the stdio server lists."""
        listed = alice.tools()
        offered = {name: tool.listing() for name, tool in offered_tools().items()}
        assert set(listed) == set(offered)
        for name, tool in offered.items():
            got = listed[name]
            assert (got.input_schema, got.output_schema, got.annotations) == (
                tool.input_schema,
                tool.output_schema,
                tool.annotations,
            ), name

    def test_a_tool_result_is_run_tool_over_the_store(self, served: Served, alice: Client) -> None:
        """The structured result is what run_tool computes in process, as the stdio server's test has it."""
        arguments = {"tag": "P-101.vibration_mm_s", "window": SHIFT_A}
        result = alice.call("tag_stats", arguments)
        assert not result.is_error, result
        ctx = ToolContext(store=served.store, config=served.config, now=SHIFT_START.replace(hour=21))
        assert result.structured_content == run_tool(ctx, "tag_stats", arguments).model_dump(mode="json")
        assert (result.structured_content["count"], result.structured_content["max"]) == (5, 7.86)

    def test_a_call_is_audited_as_the_tokens_user(self, served: Served, alice: Client) -> None:
        """`ask.tool_called` names alice, the tool, the arguments as sent and the SHA-256 of the result returned."""
        arguments = {"asset": "P-101", "line": None, "window": SHIFT_A}
        result = alice.call("stops", arguments)
        assert not result.is_error and result.meta is not None
        entry = served.entry(result.meta[AUDIT_SEQ_META])
        assert (entry["event"], entry["actor"]) == ("ask.tool_called", "ask")
        payload = entry["payload"]
        assert (payload["user"], payload["tool"], payload["arguments"], payload["status"]) == (
            "alice",
            "stops",
            arguments,
            "answered",
        )
        assert payload["result_sha256"] == sha256_hex(canonical_json(result.structured_content))

    def test_a_question_is_answered_and_audited_as_the_user(self, served: Served, alice: Client) -> None:
        result = alice.call("ask", {"question": "arranca la bomba P-101", "lang": "es"})
        answer = AskAnswer.model_validate(result.structured_content)
        assert (answer.status, answer.reason) == ("refused", "write_request") and result.meta is not None
        entry = served.entry(result.meta[AUDIT_SEQ_META])
        assert (entry["event"], entry["payload"]["user"]) == ("ask.answered", "alice")

    def test_a_refusal_is_a_tool_error_with_the_reason(self, served: Served, alice: Client) -> None:
        result = alice.call("tag_stats", {"tag": "P-999.vibration_mm_s", "window": SHIFT_A})
        assert error_text(result) == "unknown_tag: no tag 'P-999.vibration_mm_s' in the stored data"

    def test_bad_arguments_are_refused_before_the_agent(self, alice: Client) -> None:
        assert error_text(alice.call("tag_stats", {"tag": 3})) == "bad_arguments: tag: Input should be a valid string"

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(call=CALLS)
    def test_any_arguments(self, alice: Client, call: tuple[str, dict[str, Any]]) -> None:
        """Any JSON object through the HTTP path is a result or a clear tool error (an MCP error for a tool name
        not offered), never a 500; the server still answers after."""
        name, arguments = call
        try:
            result = alice.call(name, arguments)
        except MCPError as exc:
            assert exc.code == types.INVALID_PARAMS and name not in offered_tools()
            event("mcp error")
        else:
            assert result.is_error or result.structured_content is not None
            event(f"tool error {error_text(result).split(':')[0]}" if result.is_error else f"result of {name}")
        assert alice.alive()

    def test_the_component_is_ready_and_listening(self, served: Served) -> None:
        """Ready once listening, with no reason against it; the port is the one bound."""
        assert served.server.port and served.server.not_ready_reason is None


class TestRefused:
    """What never reaches the tools."""

    def test_no_token_is_401_and_counted(self, served: Served) -> None:
        before = unauthorized("missing")
        response = served.post(INITIALIZE, MCP_HEADERS)
        assert response.status_code == 401 and response.headers["www-authenticate"] == 'Bearer realm="edge-agent"'
        assert unauthorized("missing") == before + 1

    def test_an_unknown_token_is_401_and_counted(self, served: Served) -> None:
        before = unauthorized("unknown")
        response = served.post(INITIALIZE, MCP_HEADERS | {"authorization": "Bearer " + "A" * 43})
        assert response.status_code == 401 and 'error="invalid_token"' in response.headers["www-authenticate"]
        assert unauthorized("unknown") == before + 1

    def test_the_sdk_client_with_an_unknown_token_is_refused(self, served: Served) -> None:
        """The SDK's client gets no session: its initialize fails on the 401, which is counted."""
        before = unauthorized("unknown")
        with pytest.raises(ExceptionGroup) as caught:
            with served.client("not-a-token"):
                pytest.fail("initialized without a valid token")
        assert caught.group_contains(MCPError, match="Server returned an error response")
        assert unauthorized("unknown") == before + 1

    def test_a_revoked_token_is_401_and_the_revocation_audited(
        self, served: Served, made: tuple[Path, Tokens, Any]
    ) -> None:
        """Revoked while the agent runs: the next request with it is 401, and the agent appends `mcp.token_revoked`
        (the command could not: the agent holds the log)."""
        path, tokens, _ = made
        assert served.post(INITIALIZE, MCP_HEADERS | {"authorization": f"Bearer {tokens.bob}"}).status_code == 200
        done = token_command(path, "revoke", "--user", "bob")
        assert done.returncode == 0 and "the running agent holds the audit log" in done.stderr
        assert served.post(INITIALIZE, MCP_HEADERS | {"authorization": f"Bearer {tokens.bob}"}).status_code == 401
        [revoked] = [e for e in served.entries() if e["event"] == "mcp.token_revoked"]
        assert revoked["payload"]["user"] == "bob" and set(revoked["payload"]) == {
            "id",
            "user",
            "created_at",
            "revoked_at",
        }
        assert tokens.bob not in served.audit.path.read_text()
        assert served.post(INITIALIZE, MCP_HEADERS | {"authorization": f"Bearer {tokens.alice}"}).status_code == 200

    def test_a_token_added_while_the_agent_runs_is_audited_before_its_first_call(
        self, served: Served, made: tuple[Path, Tokens, Any]
    ) -> None:
        """The command leaves `mcp.token_added` to the agent, which appends it before it lets the token through."""
        done = token_command(made[0], "add", "--user", "alice")
        assert done.returncode == 0 and "its MCP server records the change" in done.stderr
        with served.client(done.stdout.strip()) as client:
            result = client.call("namespace", {})
        assert not result.is_error and result.meta is not None
        added = [e for e in served.entries() if e["event"] == "mcp.token_added"][-1]
        assert added["payload"]["user"] == "alice" and added["seq"] < result.meta[AUDIT_SEQ_META]
        assert served.entry(result.meta[AUDIT_SEQ_META])["payload"]["user"] == "alice"

    def test_an_oversized_body_is_413(self, served: Served, made: tuple[Path, Tokens, Any]) -> None:
        body = b'{"x": "' + b"a" * served.config.mcp.max_request_bytes + b'"}'
        response = served.post(body, MCP_HEADERS | {"authorization": f"Bearer {made[1].alice}"})
        assert response.status_code == 413

    def test_plain_http_to_the_tls_port_fails(self, served: Served) -> None:
        async def plain() -> None:
            async with httpx2.AsyncClient() as client:
                await client.post(f"http://localhost:{served.server.port}/mcp", content=INITIALIZE)

        with pytest.raises(httpx2.TransportError):
            served.portal.call(plain)

    @given(HEADERS)
    @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    def test_any_authorization_header_without_a_token_is_401(self, served: Served, header: str) -> None:
        """Whatever the header says, short of an active token, the answer is 401."""
        headers = MCP_HEADERS | ({"authorization": header} if header else {})
        assert served.post(INITIALIZE, headers).status_code == 401


class TestConfig:
    def test_enabled_without_tls_is_a_config_error(self) -> None:
        with pytest.raises(ValidationError, match="mcp.enabled needs cert_file and key_file"):
            AgentConfig.model_validate({"site": {"id": "s"}, "mcp": {"enabled": True}})

    def test_off_by_default_on_loopback(self) -> None:
        mcp = AgentConfig.model_validate({"site": {"id": "s"}}).mcp
        assert (mcp.enabled, mcp.listen, mcp.tokens_path(Path("/s"))) == (
            False,
            "127.0.0.1",
            Path("/s/mcp/tokens.json"),
        )

    def test_config_check_names_a_missing_certificate(self, tmp_path: Path) -> None:
        """As for the console: exit 2 and the key whose file is absent."""
        path = write_config(tmp_path, cert_file=str(tmp_path / "absent.crt"))
        run = [sys.executable, "-m", "edge_agent", "config", "check", "--config", str(path)]
        done = subprocess.run(run, capture_output=True, text=True, cwd=REPO, timeout=60)
        assert done.returncode == 2 and f"mcp.cert_file: file {tmp_path / 'absent.crt'} does not exist" in (
            done.stdout + done.stderr
        )


async def test_an_unreadable_tokens_file_makes_it_not_ready(tmp_path: Path) -> None:
    """A tokens file that does not parse: not ready with the reason, and every request 503 until it is mended."""
    config = load_config(write_config(tmp_path))
    tokens = config.mcp.tokens_path(config.paths.state_dir)
    tokens.parent.mkdir(parents=True)
    tokens.write_text("{not json")
    async with serving(config) as (_, _, server):
        assert (server.not_ready_reason or "").startswith(f"mcp tokens file unusable: {tokens}:")
        trust = ssl.create_default_context(cafile=str(config.mcp.cert_file))
        url = f"https://localhost:{server.port}/mcp"
        async with httpx2.AsyncClient(verify=trust) as client:
            refused = await client.post(url, content=INITIALIZE, headers=MCP_HEADERS | {"authorization": "Bearer x"})
            os.unlink(tokens)
            mended = await client.post(url, content=INITIALIZE, headers=MCP_HEADERS | {"authorization": "Bearer x"})
        assert (refused.status_code, mended.status_code, server.not_ready_reason) == (503, 401, None)
