"""An ASGI app served over TLS inside the agent (the console, MCP over HTTPS): uvicorn under the supervisor.

The supervisor owns SIGTERM and SIGINT, so uvicorn's own handlers are not installed; the component is ready once the
socket listens, and a bind or certificate failure before that is raised as the component's crash.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import uvicorn


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None]:
        yield  # the agent's supervisor owns SIGTERM and SIGINT


async def serve_tls(
    app: Any,
    *,
    host: str,
    port: int,
    cert_file: Path,
    key_file: Path,
    ready: asyncio.Event,
    listening: Callable[[int], None],
    what: str,
    **options: Any,
) -> None:
    """Serve `app` until cancelled; `listening(port)` (the bound port: useful when configured as 0), then `ready`,
    once the socket listens. `options` go to uvicorn.Config (e.g. limit_concurrency)."""
    server = _Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            lifespan="off",
            log_config=None,
            access_log=False,
            server_header=False,
            ssl_certfile=str(cert_file),
            ssl_keyfile=str(key_file),
            **options,
        )
    )
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()  # a bind or certificate failure: raised as the component's crash
                raise RuntimeError(f"the {what} stopped before it listened")
            await asyncio.sleep(0.05)
        listening(server.servers[0].sockets[0].getsockname()[1])
        ready.set()
        await asyncio.shield(task)
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
