"""One ASGI middleware for what every request gets: its session (a new anonymous one when the cookie names none),
the CSRF check on every state-changing request, the session cookie (Secure, HttpOnly, SameSite=Strict) and the
security headers (a Content-Security-Policy that allows no inline script)."""

from __future__ import annotations

import hmac
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from edge_agent.console.auth.sessions import COOKIE
from edge_agent.console.context import ConsoleContext

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none';"
    " base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# A sign-off's comment (2000 characters) and a WebAuthn response fit in a few KiB; 64 KiB bounds what is buffered.
MAX_BODY = 64 * 1024
CSRF_FIELD, CSRF_HEADER = "csrf_token", "x-csrf-token"


def session_cookie(value: str, max_age: int) -> bytes:
    return f"{COOKIE}={value}; Path=/; Max-Age={max_age}; Secure; HttpOnly; SameSite=Strict".encode()


class ConsoleMiddleware:
    def __init__(self, app: ASGIApp, ctx: ConsoleContext) -> None:
        self.app, self.ctx = app, ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        ctx, headers = self.ctx, Headers(scope=scope)
        now = ctx.now()
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 (a cookie header http.cookies cannot read is no session)
            cookies = SimpleCookie()
        morsel = cookies.get(COOKIE)
        session = ctx.sessions.from_cookie(morsel.value if morsel else None, now)
        original = session
        if session is None:
            session = ctx.sessions.new(now)
        state: dict[str, Any] = scope.setdefault("state", {})
        state["session"] = session
        state["roles"] = ctx.config.console.roles_of(session.name) if session.name else frozenset()

        if scope["method"] not in SAFE_METHODS:
            body = await _read_body(receive)
            if body is None:
                await PlainTextResponse("request body too large", 413)(scope, receive, send)
                return
            if not _csrf_ok(headers, body, session.csrf) or original is None:
                await _send_with(PlainTextResponse("CSRF token missing or wrong", 403), scope, send, session, ctx)
                return
            receive = _replay(body, receive)

        async def send_wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = list(SECURITY_HEADERS)
                current = state["session"]
                if current is not original:
                    max_age = ctx.config.console.session_max_age_s
                    extra.append((b"set-cookie", session_cookie(ctx.sessions.cookie(current), max_age)))
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await self.app(scope, receive, send_wrapped)


async def _send_with(response: Any, scope: Scope, send: Send, session: Any, ctx: ConsoleContext) -> None:
    async def send_wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            cookie = session_cookie(ctx.sessions.cookie(session), ctx.config.console.session_max_age_s)
            message["headers"] = list(message.get("headers", [])) + SECURITY_HEADERS + [(b"set-cookie", cookie)]
        await send(message)

    async def no_body() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    await response(scope, no_body, send_wrapped)


async def _read_body(receive: Receive) -> bytes | None:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, upstream: Receive) -> Receive:
    """The body read for the CSRF check, once; then the server's own `receive`, so that a streamed response
    (FileResponse, StreamingResponse) waits for the client's real disconnect instead of seeing one at once."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await upstream()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _csrf_ok(headers: Headers, body: bytes, expected: str) -> bool:
    """The token from the X-CSRF-Token header (fetch) or the csrf_token field of a url-encoded form."""
    token = headers.get(CSRF_HEADER)
    if token is None and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        try:
            values = parse_qs(body.decode(), max_num_fields=100).get(CSRF_FIELD)
        except (UnicodeDecodeError, ValueError):
            values = None
        token = values[0] if values else None
    return token is not None and hmac.compare_digest(token.encode(), expected.encode())
