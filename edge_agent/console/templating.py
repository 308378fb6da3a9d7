"""Rendering a page: the template with the language's messages, the session's CSRF token and who is signed in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from edge_agent.console.i18n import LANGUAGES, language, messages

TEMPLATES = Path(__file__).parent / "templates"
ENV = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]))


def render(request: Request, template: str, context: dict[str, Any] | None = None, status: int = 200) -> HTMLResponse:
    session = request.state.session
    lang = language(request)
    page = {
        "request": request,
        "lang": lang,
        "languages": LANGUAGES,
        "t": messages(lang),
        "csrf_token": session.csrf,
        "user": session.name,
        "roles": sorted(request.state.roles),
        **(context or {}),
    }
    return HTMLResponse(ENV.get_template(template).render(page), status_code=status)
