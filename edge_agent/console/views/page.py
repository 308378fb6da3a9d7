"""What every read page shares: HTML or the same data as JSON (a path ending in `.json`), query parameters read at
the boundary (a bad one is a 400 naming it, never a 500), and the page's words in the visitor's language."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from edge_agent.console.templating import render
from edge_agent.reports.request import iso

# A query value longer than this is no value any page takes (the longest is 200 record ids of up to 19 digits).
MAX_PARAM_CHARS = 4096


class BadParam(ValueError):
    """A query parameter no page can use: `field` names it, `reason` says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def wants_json(request: Request) -> bool:
    return request.url.path.endswith(".json")


def respond(request: Request, template: str, data: dict[str, Any], status: int = 200) -> Response:
    """The page, or with `.json` its data: the same dict either way, so scripts read what people see."""
    if wants_json(request):
        return JSONResponse(data, status_code=status)
    return render(request, template, {"data": data}, status=status)


def refuse(request: Request, status: int, field: str, reason: str) -> Response:
    """A 400 (bad parameter) or 404 (nothing by that id), as JSON or as a short page."""
    return respond(request, "problem.html", {"error": reason, "field": field, "status": status}, status=status)


def param(request: Request, name: str) -> str | None:
    value = request.query_params.get(name)
    if value is not None and len(value) > MAX_PARAM_CHARS:
        raise BadParam(name, f"longer than {MAX_PARAM_CHARS} characters")
    return value


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter in [low, high]; `default` when absent."""
    text = param(request, name)
    if text is None or text == "":
        return default
    if not text.isascii() or not text.strip().lstrip("+-").isdigit() or len(text) > 12:
        raise BadParam(name, f"a whole number from {low} to {high}")
    value = int(text)
    if not low <= value <= high:
        raise BadParam(name, f"a whole number from {low} to {high}")
    return value


def choice_param(request: Request, name: str, choices: tuple[str, ...]) -> str | None:
    text = param(request, name)
    if text is None or text == "":
        return None
    if text not in choices:
        raise BadParam(name, f"one of {', '.join(choices)}")
    return text


def when(value: datetime) -> str:
    return iso(value)
