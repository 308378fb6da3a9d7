"""Health: each component's readiness as the supervisor sees it (what /readyz serves) and doctor's latest checks,
both handed to the console by the agent; outside the agent the page says they are not available."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import context
from edge_agent.console.context import ConsoleContext
from edge_agent.console.views.page import respond


def health_data(ctx: ConsoleContext) -> dict[str, Any]:
    status = ctx.readiness() if ctx.readiness is not None else None
    checks = list(ctx.doctor_checks()) if ctx.doctor_checks is not None else None
    return {
        "readiness": None if status is None else status.model_dump(mode="json"),
        "doctor": None
        if checks is None
        else [{"id": c.id, "status": c.status, "detail": c.detail, "fix": c.fix} for c in checks],
    }


@requires("read")
async def view(request: Request) -> Response:
    data = await asyncio.to_thread(health_data, context(request))
    return respond(request, "health.html", data)
