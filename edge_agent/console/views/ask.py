"""Ask: a question to the agent's ask pipeline (docs/ask.md), answered in process and audited exactly as a question
over MQTT is (edge_agent.ask.answerer: the model's reading when the model plans, the answer at the accepted time, a
refusal `deadline` past `ask.deadline_s`, one `ask.answered` entry) with the signed-in identity as the user; each
fact of the answer links to its records; and the person's own history, the newest `HISTORY_MAX` `ask.answered`
entries of theirs in the audit log."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response

from edge_agent.ask.answerer import Answerer
from edge_agent.ask.pipeline import AskAnswer
from edge_agent.ask.request import QuestionRequest
from edge_agent.audit.files import ENTRIES, iter_lines
from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import context
from edge_agent.console.context import ConsoleContext
from edge_agent.console.templating import render
from edge_agent.console.views.page import refuse, respond, wants_json
from edge_agent.console.views.reports import IDS_MAX

# A page of history is what a person scrolls back through in a shift; older answers stay in the log (audit replay).
HISTORY_MAX = 50
# The MQTT request's own bound (edge_agent.ask.request), shown as the field's maxlength.
QUESTION_MAX: int = next(
    m.max_length for m in QuestionRequest.model_fields["question"].metadata if hasattr(m, "max_length")
)
ANSWERED = b'"event":"ask.answered"'


def records_url(ids: list[int]) -> str | None:
    """The records page of a fact's ids (the first IDS_MAX: what one records page lists); None for no ids."""
    return "/records?ids=" + ",".join(str(i) for i in ids[:IDS_MAX]) if ids else None


def answer_data(answer: AskAnswer) -> dict[str, Any]:
    """The answer as the MQTT reply carries it, each fact with the link to its records."""
    data = answer.model_dump(mode="json")
    for fact in data["facts"]:
        fact["records_url"] = records_url(fact["ids"])
    return data


def history(ctx: ConsoleContext, name: str) -> list[dict[str, Any]]:
    """The newest HISTORY_MAX `ask.answered` entries asked by `name` (in the console) or by their broker user (over
    MQTT), newest first. One pass over the log: its lines are read, only those naming the event are parsed."""
    users = {name, ctx.identities.broker_user_of(name)} - {None}
    path = ctx.config.paths.audit_dir / ENTRIES
    newest: deque[dict[str, Any]] = deque(maxlen=HISTORY_MAX)
    if not path.exists():
        return []
    for line in iter_lines(path):
        if ANSWERED not in line:
            continue
        entry = json.loads(line)
        payload = entry["payload"]
        if entry["event"] != "ask.answered" or payload.get("user") not in users:
            continue
        newest.append(
            {
                "seq": entry["seq"],
                "asked_at": payload["asked_at"],
                "question": payload["question"],
                "status": payload["status"],
                "reason": payload["reason"],
                "answer": payload["answer"],
                "facts": [
                    {"id": f["id"], "kind": f["kind"], "subject": f["subject"], "records_url": records_url(f["ids"])}
                    for f in payload["cited"]
                ],
            }
        )
    return list(reversed(newest))


def page_data(ctx: ConsoleContext, name: str) -> dict[str, Any]:
    enabled = ctx.config.ask.enabled and ctx.store is not None
    return {"enabled": enabled, "question_max": QUESTION_MAX, "history": history(ctx, name) if enabled else []}


@requires("read")
async def view(request: Request) -> Response:
    ctx = context(request)
    data = await asyncio.to_thread(page_data, ctx, request.state.session.name)
    return respond(request, "ask.html", data)


@requires("read")
async def ask(request: Request) -> Response:
    """POST the form's `question` (and optionally `lang`): the answer, as the fragment htmx swaps in (HX-Request),
    the whole page otherwise, or JSON at /ask.json."""
    ctx = context(request)
    name = request.state.session.name
    if not (ctx.config.ask.enabled and ctx.store is not None):
        return refuse(request, 404, "ask", "the ask is off in this agent ([ask] enabled)")
    form = await request.form()
    try:  # the MQTT request's model: the same question is accepted or refused either way
        asked = QuestionRequest.model_validate({"question": form.get("question"), "lang": form.get("lang") or None})
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        reason = "one of es, en, pt" if field == "lang" else f"a question of 1 to {QUESTION_MAX} characters"
        return refuse(request, 400, field, reason)
    if not ctx.ask_throttle.allow(name):
        return refuse(request, 429, "question", f"more than {ctx.config.ask.throttle} questions in 60 s (ask.throttle)")
    assert ctx.store is not None
    answerer = Answerer(ctx.config, ctx.store, ctx.audit, ctx.engine)  # as over MQTT (edge_agent.ask.answerer)
    answer = await answerer.answer(asked.question, user=name, lang=asked.lang, now=ctx.now())
    data = answer_data(answer)
    if wants_json(request):
        return respond(request, "ask.html", data)
    if request.headers.get("hx-request") == "true":
        return render(request, "_answer.html", {"answer": data})
    page = await asyncio.to_thread(page_data, ctx, name)
    return render(request, "ask.html", {"data": page, "answer": data, "question": asked.question})
