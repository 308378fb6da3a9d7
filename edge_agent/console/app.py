"""The console's ASGI app: the routes table and one middleware (edge_agent/console/middleware.py: session, CSRF,
cookie, Content-Security-Policy). Views read the ConsoleContext from `request.app.state.ctx`."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from edge_agent.console import signoff
from edge_agent.console.auth import ceremonies, enrolment
from edge_agent.console.context import ConsoleContext
from edge_agent.console.i18n import LANGUAGES
from edge_agent.console.middleware import ConsoleMiddleware
from edge_agent.console.views import alarms, ask, audit, health, now, reports

STATIC = Path(__file__).parent / "static"


async def home(request: Request) -> Response:
    """The console opens on the Now page (where sign-in lands)."""
    return RedirectResponse("/now", 303)


async def switch_language(request: Request) -> Response:
    """The language switch: sets the `lang` cookie and goes back to the page it came from."""
    code = request.path_params["code"]
    back = request.query_params.get("next", "/")
    response = RedirectResponse(back if back.startswith("/") and not back.startswith("//") else "/", 303)
    if code in LANGUAGES:
        response.set_cookie("lang", code, max_age=365 * 86400, secure=True, httponly=True, samesite="strict")
    return response


ROUTES: list[BaseRoute] = [
    Route("/", home, methods=["GET"]),
    Route("/signin", ceremonies.signin_page, methods=["GET"]),
    Route("/signin/options", ceremonies.signin_options, methods=["POST"]),
    Route("/signin/verify", ceremonies.signin_verify, methods=["POST"]),
    Route("/signout", ceremonies.signout, methods=["POST"]),
    Route("/enrol/{token}", ceremonies.enrol_page, methods=["GET"]),
    Route("/enrol/{token}/options", ceremonies.enrol_options, methods=["POST"]),
    Route("/enrol/{token}/verify", ceremonies.enrol_verify, methods=["POST"]),
    Route("/reports/{report_id}/sign", signoff.sign_page, methods=["GET"]),
    Route("/reports/{report_id}/sign/options", signoff.sign_options, methods=["POST"]),
    Route("/reports/{report_id}/sign/verify", signoff.sign_verify, methods=["POST"]),
    Route("/admin/enrol", enrolment.enrol_form, methods=["GET"]),
    Route("/admin/enrol", enrolment.enrol_issue, methods=["POST"]),
    Route("/lang/{code}", switch_language, methods=["GET"]),
    # pages:
    Route("/now", now.view, methods=["GET"]),
    Route("/now.json", now.view, methods=["GET"]),
    Route("/reports", reports.list_view, methods=["GET"]),
    Route("/reports.json", reports.list_view, methods=["GET"]),
    Route("/reports/{report_id}", reports.report_view, methods=["GET"]),
    Route("/records", reports.records_view, methods=["GET"]),
    Route("/records.json", reports.records_view, methods=["GET"]),
    Route("/alarms", alarms.view, methods=["GET"]),
    Route("/alarms.json", alarms.view, methods=["GET"]),
    Route("/audit", audit.view, methods=["GET"]),
    Route("/audit.json", audit.view, methods=["GET"]),
    Route("/audit/bundle", audit.bundle, methods=["POST"]),
    Route("/ask", ask.view, methods=["GET"]),
    Route("/ask.json", ask.view, methods=["GET"]),
    Route("/ask", ask.ask, methods=["POST"]),
    Route("/ask.json", ask.ask, methods=["POST"]),
    Route("/health", health.view, methods=["GET"]),
    Route("/health.json", health.view, methods=["GET"]),
    Mount("/static", StaticFiles(directory=STATIC), name="static"),
]


def build_app(ctx: ConsoleContext) -> Starlette:
    app = Starlette(routes=ROUTES, middleware=[Middleware(ConsoleMiddleware, ctx=ctx)])
    app.state.ctx = ctx
    return app
