"""Health endpoints on a localhost port: /healthz, /readyz, /metrics.

A minimal HTTP/1.1 server on asyncio streams (one request per connection, GET and HEAD only): three read-only
endpoints for a local Prometheus or load checker do not justify a web framework in the agent's dependencies.

- /healthz: 200 when the process is alive and its event loop answers; the body carries the loop's scheduling lag.
  A blocked loop cannot answer at all, which is the failure a prober sees as a timeout. A flapping component does
  not fail it: that is the supervisor doing its job, reported by /readyz, not a stuck process.
- /readyz: 200 only when every component is ready and none is restarting, stopping or flapping (restarted more than
  daemon.flap_restarts times within daemon.flap_window_s), else 503; the JSON body names each component's state,
  restarts within the window and whether it is flapping (so "broker connected, engine loaded" is read off the mqtt
  and engine entries, and a crash loop off the one flapping).
- /metrics: the prometheus_client default registry in the text exposition format.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from http import HTTPStatus

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from edge_agent.config import HealthConfig
from edge_agent.daemon.supervisor import AgentStatus

log = structlog.get_logger(component="health")

# A request line and headers from a prober fit in far less; anything bigger is not one of ours.
_MAX_REQUEST_BYTES = 8192
# Long enough for a prober on a loaded box, short enough that idle or half-open connections do not pile up.
_REQUEST_TIMEOUT_S = 5.0


class HealthError(Exception):
    """The health server could not start (e.g. the port is taken)."""


class HealthServer:
    """A component: ready once listening; `port` is the bound port (useful when configured as 0)."""

    name = "health"

    def __init__(self, config: HealthConfig, status: Callable[[], AgentStatus]) -> None:
        self._config = config
        self._status = status
        self._started = time.monotonic()
        self.port: int | None = None

    async def run(self, ready: asyncio.Event) -> None:
        try:
            server = await asyncio.start_server(
                self._handle, self._config.host, self._config.port, limit=_MAX_REQUEST_BYTES
            )
        except OSError as exc:
            raise HealthError(f"cannot listen on {self._config.host}:{self._config.port}: {exc}") from exc
        async with server:
            self.port = server.sockets[0].getsockname()[1]
            log.info("health_listening", host=self._config.host, port=self.port)
            ready.set()
            await server.serve_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = b""
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _REQUEST_TIMEOUT_S)
            method, path = _parse_request_line(head)
            status, content_type, body = await self._respond(method, path)
        except (asyncio.IncompleteReadError, TimeoutError, ConnectionError):
            writer.close()  # the client went away or never finished its request: nobody to answer
            return
        except asyncio.LimitOverrunError:
            status, content_type, body = _plain(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, "request too large")
        except _BadRequest as exc:
            status, content_type, body = _plain(exc.status, str(exc))
        try:
            writer.write(
                f"HTTP/1.1 {status.value} {status.phrase}\r\n"
                f"Content-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\n"
                "Cache-Control: no-store\r\n"
                "Connection: close\r\n\r\n".encode("latin-1")
            )
            if not head.startswith(b"HEAD "):
                writer.write(body)
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    async def _respond(self, method: str, path: str) -> tuple[HTTPStatus, str, bytes]:
        if method not in ("GET", "HEAD"):
            raise _BadRequest(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} not allowed")
        route = path.split("?", 1)[0]
        if route == "/healthz":
            return HTTPStatus.OK, "application/json", _json(await self._healthz())
        if route == "/readyz":
            status = self._status()
            code = HTTPStatus.OK if status.ready else HTTPStatus.SERVICE_UNAVAILABLE
            return code, "application/json", _json(status.model_dump(mode="json"))
        if route == "/metrics":
            return HTTPStatus.OK, CONTENT_TYPE_LATEST, generate_latest(REGISTRY)
        raise _BadRequest(HTTPStatus.NOT_FOUND, f"{route} not found; try /healthz, /readyz or /metrics")

    async def _healthz(self) -> dict[str, object]:
        loop = asyncio.get_running_loop()
        before = loop.time()
        await asyncio.sleep(0)  # one trip through the ready queue: how long other work makes us wait
        return {
            "status": "alive",
            "loop_lag_ms": round((loop.time() - before) * 1000, 3),
            "uptime_s": round(time.monotonic() - self._started, 3),
        }


class _BadRequest(Exception):
    def __init__(self, status: HTTPStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


def _parse_request_line(head: bytes) -> tuple[str, str]:
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
        raise _BadRequest(HTTPStatus.BAD_REQUEST, f"malformed request line {line[:80]!r}")
    return parts[0], parts[1]


def _plain(status: HTTPStatus, message: str) -> tuple[HTTPStatus, str, bytes]:
    return status, "text/plain; charset=utf-8", f"{message}\n".encode()


def _json(data: object) -> bytes:
    return (json.dumps(data, sort_keys=True) + "\n").encode()
