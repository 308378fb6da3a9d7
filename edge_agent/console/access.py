"""Who may do what: roles from `[console] roles` on the signed-in identity. viewer reads the pages; approver also
signs; auditor also reads the audit log and downloads bundles; admin also enrols."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

Permission = Literal["read", "sign", "audit", "enrol"]
GRANTS: dict[str, frozenset[Permission]] = {
    "viewer": frozenset({"read"}),
    "approver": frozenset({"read", "sign"}),
    "auditor": frozenset({"read", "audit"}),
    "admin": frozenset({"read", "enrol"}),
}

Handler = Callable[[Request], Awaitable[Response]]


def may(request: Request, permission: Permission) -> bool:
    return any(permission in GRANTS[role] for role in request.state.roles)


def requires(permission: Permission) -> Callable[[Handler], Handler]:
    """A view for signed-in people with `permission`: anyone else is sent to /signin (a page) or refused 401 (JSON,
    or any POST); signed in without it, 403."""

    def wrap(view: Handler) -> Handler:
        @wraps(view)
        async def guarded(request: Request) -> Response:
            if request.state.session.name is None:
                if request.method == "GET" and not request.url.path.endswith(".json"):
                    return RedirectResponse("/signin", status_code=303)
                return JSONResponse({"error": "sign in first"}, status_code=401)
            if not may(request, permission):
                return PlainTextResponse("forbidden", status_code=403)
            return await view(request)

        return guarded

    return wrap
