"""The MCP server over streamable HTTP, as one of the agent's components: uvicorn on `[mcp] listen:port` with the TLS
certificate and key, inside the agent process, serving at `/mcp` the server `edge_agent.ask.mcp.build_server` makes
(the tools and call path the stdio server has), each call answered in process as the caller's token's user
(edge_agent.ask.local_agent) and audited.

Every request carries `Authorization: Bearer <token>`; `TokenGate` answers 401 to one without it or with a token
that is unknown or revoked (counted by why), before anything reads its body. The tokens file is read again whenever
it changes, so `mcp token revoke` takes effect on the next request; entries it holds for the audit log are appended
first (edge_agent.ask.mcp_tokens). The SDK's session manager runs stateless (one fresh MCP session per request: no
session a token could share with another) with JSON responses, and refuses a body over `mcp.max_request_bytes` (413).
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import Any

import mcp_types as types
import structlog
from mcp.server import ServerRequestContext
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from prometheus_client import Counter
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from edge_agent.ask.local_agent import LocalAgent
from edge_agent.ask.mcp import AgentCall, build_server
from edge_agent.ask.mcp_tokens import TokenError, TokenFile, Tokens
from edge_agent.audit import AuditSink
from edge_agent.config import AgentConfig
from edge_agent.daemon.tls_server import serve_tls
from edge_agent.llm.types import Engine
from edge_agent.store import Store

log = structlog.get_logger(component="mcp")

PATH = "/mcp"
# 64 connections at once, then 503: a site has a handful of assistants; beyond that it is a client gone wrong.
MAX_CONNECTIONS = 64

UNAUTHORIZED = Counter(
    "edge_agent_mcp_unauthorized_total",
    "MCP requests answered 401: without a bearer token (missing) or with one no active token matches (unknown)",
    ["why"],
)


class TokenView:
    """The tokens file as last read, read again (after appending its waiting audit entries) when it has changed."""

    def __init__(self, file: TokenFile, audit: AuditSink | None) -> None:
        self.file, self.audit = file, audit
        self._tokens = Tokens()
        self._stamp: tuple[int, int, int] | None = None
        self._loaded = False
        self._reload = asyncio.Lock()
        # Why the file cannot be used (every request is refused meanwhile), or None.
        self.failure: str | None = None

    async def current(self) -> Tokens | None:
        """The tokens now, or None while the file cannot be read."""
        stamp = self.file.stamp()
        if not self._loaded or stamp != self._stamp:
            async with self._reload:
                stamp = self.file.stamp()
                if not self._loaded or stamp != self._stamp:
                    await asyncio.to_thread(self._load)
        return None if self.failure is not None else self._tokens

    def _load(self) -> None:
        # The stamp before the read: a change written after it shows as a new stamp on the next request. After
        # appending the waiting entries (a write of our own) none is kept, so the next request reads once more.
        stamp = self.file.stamp()
        try:
            tokens = self.file.read()
            if tokens.unaudited and self.audit is not None:
                tokens, stamp = self.file.audit_pending(self.audit), None
        except TokenError as exc:
            self.failure = f"mcp tokens file unusable: {exc}"
            log.error("mcp_tokens_unusable", error=str(exc))
            self._loaded = False
            return
        self._tokens, self._stamp, self._loaded, self.failure = tokens, stamp, True, None


class TokenGate:
    """ASGI middleware: lets through only requests with an active token, as that token's user (`scope["user"]`, the
    form the SDK's own bearer middleware leaves, so the SDK's transport sees the same principal)."""

    def __init__(self, app: ASGIApp, tokens: TokenView) -> None:
        self.app, self.tokens = app, tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secret = bearer(scope)
        if secret is None:
            UNAUTHORIZED.labels("missing").inc()
            await _plain(send, 401, "a bearer token is required (Authorization: Bearer <token>)", bearer_error=None)
            return
        tokens = await self.tokens.current()
        if tokens is None:
            await _plain(send, 503, "the MCP server cannot read its tokens file; see the agent's log")
            return
        record = tokens.match(secret)
        if record is None:
            UNAUTHORIZED.labels("unknown").inc()
            await _plain(send, 401, "the token is unknown or revoked", bearer_error="invalid_token")
            return
        access = AccessToken(token=record.id, client_id=record.user, scopes=[], subject=record.id)
        await self.app({**scope, "user": AuthenticatedUser(access)}, receive, send)


def bearer(scope: Scope) -> str | None:
    """The token of the request's `Authorization: Bearer <token>` header, or None without one."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            token = token.strip()
            return token if scheme.lower() == "bearer" and token else None
    return None


async def _plain(send: Send, status: int, text: str, bearer_error: str | None = "") -> None:
    body = json.dumps({"error": text}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode("ascii"))]
    if status == 401:  # RFC 6750 section 3: the scheme, and the error when a token was presented
        challenge = 'Bearer realm="edge-agent"' + (f', error="{bearer_error}"' if bearer_error else "")
        headers.append((b"www-authenticate", challenge.encode("ascii")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def caller(ctx: ServerRequestContext[Any]) -> str:
    """The user of the token the request came with (TokenGate put it in the request's scope)."""
    request = ctx.request
    user = request.scope.get("user") if request is not None else None
    if not isinstance(user, AuthenticatedUser):
        raise MCPError(types.INVALID_REQUEST, "no authenticated user on this request")
    return user.access_token.client_id


def build_app(
    agent: LocalAgent, tokens: TokenView, max_request_bytes: int
) -> tuple[ASGIApp, StreamableHTTPSessionManager]:
    """The ASGI app (the gate in front of the SDK's transport at `/mcp`) and the session manager to run around it."""

    def agent_for(ctx: ServerRequestContext[Any]) -> AgentCall:
        return partial(agent.call, user=caller(ctx))

    manager = StreamableHTTPSessionManager(
        build_server(agent_for), json_response=True, stateless=True, max_request_body_size=max_request_bytes
    )
    routes = [Route(PATH, endpoint=StreamableHTTPASGIApp(manager), methods=["GET", "POST", "DELETE"])]
    return TokenGate(Starlette(routes=routes), tokens), manager


class McpHttpServer:
    """A component: ready once listening over TLS with a readable tokens file; `port` is the bound port (useful when
    configured as 0)."""

    name = "mcp"

    def __init__(
        self, config: AgentConfig, store: Store, audit: AuditSink | None, engine: Engine | None = None
    ) -> None:
        self._config, self._store, self._audit, self._engine = config, store, audit, engine
        self.port: int | None = None
        self.tokens = TokenView(TokenFile(config.mcp.tokens_path(config.paths.state_dir)), audit)

    @property
    def not_ready_reason(self) -> str | None:
        return self.tokens.failure

    async def run(self, ready: asyncio.Event) -> None:
        mcp = self._config.mcp
        agent = LocalAgent(self._config, self._store, self._audit, mcp.max_concurrent_calls, self._engine)
        await self.tokens.current()  # append what waits for the audit log, and say at once if the file is unusable
        app, manager = build_app(agent, self.tokens, mcp.max_request_bytes)
        assert mcp.cert_file is not None and mcp.key_file is not None  # config check's rule when enabled
        async with manager.run():
            await serve_tls(
                app,
                host=mcp.listen,
                port=mcp.port,
                cert_file=mcp.cert_file,
                key_file=mcp.key_file,
                ready=ready,
                listening=self._listening,
                what="MCP server",
                limit_concurrency=MAX_CONNECTIONS,
            )

    def _listening(self, port: int) -> None:
        self.port = port
        log.info("mcp_listening", host=self._config.mcp.listen, port=port, tls=True, path=PATH)


__all__ = ["PATH", "UNAUTHORIZED", "McpHttpServer", "TokenGate", "TokenView", "bearer", "build_app", "caller"]
