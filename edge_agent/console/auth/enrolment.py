"""Enrolling a person from the console: an admin picks an identity and one of the roles `[console] roles` gives it,
and gets the one-time link `edge-agent console enrol` would print. Each link issued here is a
`console.enrolment_issued` audit entry naming the admin (the command line, which cannot append while the agent holds
the log, leaves that to the `console.enrolled` entry of the registration)."""

from __future__ import annotations

from datetime import timedelta

from starlette.requests import Request
from starlette.responses import Response

from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import address, audit, context
from edge_agent.console.auth.credentials import token_hash
from edge_agent.console.templating import render


def _choices(request: Request) -> dict[str, list[str]]:
    roles = context(request).config.console.roles
    return {name: sorted(given) for name, given in sorted(roles.items()) if given}


@requires("enrol")
async def enrol_form(request: Request) -> Response:
    return render(request, "admin_enrol.html", {"choices": _choices(request)})


@requires("enrol")
async def enrol_issue(request: Request) -> Response:
    ctx = context(request)
    form = await request.form()
    name, role = form.get("name"), form.get("role")
    choices = _choices(request)
    if not isinstance(name, str) or not isinstance(role, str) or role not in choices.get(name, []):
        error = f"[console] roles gives {str(name)[:256]!r} no role {str(role)[:40]!r}"
        return render(request, "admin_enrol.html", {"choices": choices, "error": error}, status=400)
    console = ctx.config.console
    now, max_age = ctx.now(), timedelta(seconds=console.enrol_link_max_age_s)
    token = ctx.credentials.issue(name, role, now, max_age)
    await audit(
        ctx,
        "console.enrolment_issued",
        f"operator:{request.state.session.name}",
        {
            "name": name,
            "role": role,
            "enrolment_sha256": token_hash(token),
            "expires": (now + max_age).isoformat(),
            "address": address(request),
        },
    )
    link = f"{console.effective_origin}/enrol/{token}"
    return render(request, "admin_enrol.html", {"choices": choices, "link": link, "issued_for": name})
