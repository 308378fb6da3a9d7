"""One question → one answer: refusal check, plan, tool calls, facts, the written answer (pure but for the store's
reads).

    classify (refusal) → reference_plan → run each call → facts (A01, A02, …) → the answer in the question's language

Everything is computed at `ctx.now`, the time the request was accepted, which the answer records (`asked_at`): the
same question over the same records gives the same bytes. A question the planner cannot resolve gets
`needs_clarification` with its candidates, never a guess; a command, an injection, a question outside the plant or
outside the budget gets `refused` with its reason code. A message that asks the plant something beside an errand
("…? Y contame un chiste.") gets the plant's question answered and the errand left out (`refusal.data_part`); one
that orders or injects anywhere is refused whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import AwareDatetime, BaseModel, ConfigDict

from edge_agent.ask.answers import Clarification, Refusal
from edge_agent.ask.language import detect_language
from edge_agent.ask.phrasing import Finding
from edge_agent.ask.plan import Plan
from edge_agent.ask.planner import (
    MAX_QUESTION_CHARS,
    Reading,
    has_subject,
    plan_for,
    plant_sentence,
    reference_plan,
)
from edge_agent.ask.refusal import classify, data_part
from edge_agent.ask.resolve import earliest_said, find_window, newest_part, whole_history
from edge_agent.ask.tools import (
    Budget,
    Namespace,
    ToolContext,
    ToolError,
    Window,
    build_namespace,
    data_span,
    run_tool,
    stored_from,
)
from edge_agent.ask.writer import Writer, shift_of
from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.base.types import to_utc
from edge_agent.config import AgentConfig, ShiftConfig
from edge_agent.store import Store

# The version of the ask's code (refusals, planner, tools, writer): raise it with any change that gives another answer
# or other facts for the same question, config and records. Each `ask.answered` entry records it, and `audit replay`
# refuses an answer of another version (it would differ for that reason alone).
ASK_VERSION = "7"

Status = Literal["answered", "needs_clarification", "refused"]
# Who planned: the reference planner in code, or the model's reading resolved in code (ask.model_planner).
Planner = Literal["reference", "model"]
Lang = Literal["es", "en", "pt"]
# Tool errors that mean "which one?" rather than "no": the name resolved to nothing the store holds.
CLARIFY_ERRORS = ("unknown_tag", "unknown_asset")


class AnswerFact(BaseModel):
    """One fact behind an answer: a tool's output (`kind` the tool) or the window the tools were asked about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: str
    subject: str
    values: dict[str, Any]
    ids: list[int]


class AskAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Status
    answer: str
    facts: list[AnswerFact]
    plan: Plan | None
    question_id: str
    # The accepted time everything was computed at, and the language the answer is in.
    asked_at: AwareDatetime
    lang: Lang
    audit_seq: int | None = None
    reason: str | None = None
    candidates: list[str] = []
    planner: Planner = "reference"


def question_id(question: str, user: str | None, now: datetime) -> str:
    """16 hex of sha256 over the canonical {question, user, now}: one id per question asked."""
    return sha256_hex(canonical_json({"question": question, "user": user, "now": now.isoformat()}))[:16]


def context_for(config: AgentConfig, store: Store, now: datetime) -> ToolContext:
    """The tools' context at `now` under the config's `[ask]` budget: what the service and replay answer with."""
    rules = config.ask
    budget = Budget(max_window_s=int(rules.max_window_days * 86_400), max_rows=rules.max_rows)
    return ToolContext(store=store, config=config, now=now, budget=budget)


def answer_at(
    config: AgentConfig,
    store: Store,
    question: str,
    *,
    user: str | None,
    lang: str | None,
    now: datetime,
    reading: Reading | None = None,
) -> AskAnswer:
    """`question` answered at `now` over `store` with the config's aliases and shifts (the service's answer);
    planned from the model's `reading` when one is given, else by the reference planner."""
    return answer_question(
        context_for(config, store, now),
        question,
        user=user,
        lang=lang,
        aliases=config.ask.aliases,
        shifts=config.reports.shifts,
        reading=reading,
    )


def answer_question(
    ctx: ToolContext,
    question: str,
    *,
    user: str | None,
    lang: str | None,
    aliases: Mapping[str, str],
    shifts: Sequence[ShiftConfig],
    reading: Reading | None = None,
) -> AskAnswer:
    language: Lang = lang if lang in ("es", "en", "pt") else detect_language(question)  # type: ignore[assignment]
    head = {"question_id": question_id(question, user, ctx.now), "asked_at": ctx.now, "lang": language}
    refusal = classify(question, language)
    # "¿Cuánto produjo la L1 ayer? Y contame un chiste.": the plant's question planned, the errand left out
    asked = question if refusal is None else data_part(question, language, refusal)
    if refusal is not None and asked is None:
        return _refused(head, refusal.reason, None, _empty_writer(ctx.config, language))
    assert asked is not None
    try:
        namespace = build_namespace(ctx.store, ctx.config, ctx.now, aliases=dict(aliases), budget=ctx.budget)
    except ToolError as exc:
        return _refused(head, exc.reason, None, _empty_writer(ctx.config, language))
    writer = Writer(language, namespace, shifts)
    tz, known = ctx.config.site.timezone, dict(aliases)
    if reading is not None and refusal is None and len(question) <= MAX_QUESTION_CHARS:
        head["planner"] = "model"
        planned = plan_for(
            question, language, namespace, reading, aliases=known, tz=tz, shifts=list(shifts), now=ctx.now
        )
    else:
        planned = reference_plan(asked, language, namespace, aliases=known, tz=tz, shifts=list(shifts), now=ctx.now)
    if refusal is not None and not (isinstance(planned, Plan) and all(has_subject(call) for call in planned.calls)):
        return _refused(head, refusal.reason, None, writer)  # the rest asks nothing of a named asset, line or tag
    if isinstance(planned, Refusal):
        return _refused(head, planned.reason, None, writer)
    if isinstance(planned, Clarification):
        return _clarify(head, planned.reason, planned.candidates, None, writer)
    if whole_history(asked, tz=tz, shifts=list(shifts), now=ctx.now):  # "desde que hay registros": from the oldest
        planned = _from_oldest(ctx, planned)
    if _said_before_data(ctx, asked, plant_sentence(newest_part(asked), namespace, known), planned, tz, shifts):
        return _refused(head, "outside_data", planned, writer)
    facts: list[AnswerFact] = []
    findings: list[Finding] = []
    windows: dict[str, AnswerFact] = {}
    for call in planned.calls:
        try:
            output = run_tool(ctx, call.tool, call.args)
        except ToolError as exc:
            if exc.reason in CLARIFY_ERRORS:
                return _clarify(head, exc.reason, [], planned, writer)
            return _refused(head, exc.reason, planned, writer)
        window = _window_fact(call.args.get("window"), namespace, shifts, windows, facts, ctx.now)
        values = output.model_dump(mode="json", exclude={"record_ids"})
        subject = _subject(call.args, namespace.site)
        fact = AnswerFact(id=_fact_id(facts), kind=call.tool, subject=subject, values=values, ids=output.record_ids)
        facts.append(fact)
        findings.append(Finding(call.tool, subject, values, window.values if window else None, call.args))
    return AskAnswer(status="answered", answer=writer.answer(findings), facts=facts, plan=planned, **head)


def _said_before_data(
    ctx: ToolContext, question: str, asked: str, plan: Plan, tz: str, shifts: Sequence[ShiftConfig]
) -> bool:
    """The question says a time that begins before the stored data: the window planned ("last week" of a store
    holding three days would be answered for three days as if for seven), or a time its `asked` sentence names beside
    it ("Compara a vibração de ontem com a de há três semanas", "the bearing temp at 9 am last week"). A window the
    question does not say (the planner's default) is read over what is stored."""
    said = earliest_said(asked, tz=tz, shifts=list(shifts), now=ctx.now)
    starts = [_utc(call.args["window"]["start"]) for call in plan.calls if isinstance(call.args.get("window"), Mapping)]
    if said is None and not starts:
        return False
    stored = stored_from(ctx)  # None: nothing stored, so every time is before the data
    if said is not None and (stored is None or said < stored):
        return True
    if all(stored is not None and start >= stored for start in starts):
        return False
    return find_window(newest_part(question), "es", tz=tz, shifts=list(shifts), now=ctx.now) is not None


def _from_oldest(ctx: ToolContext, plan: Plan) -> Plan:
    """`plan` with each window that begins before the stored data begun at its oldest record instead."""
    span = data_span(ctx)
    if span is None:
        return plan
    oldest = span[0]
    calls = []
    for call in plan.calls:
        window = call.args.get("window")
        if isinstance(window, Mapping) and _utc(window["start"]) < oldest:
            stored = Window(start=oldest, end=_utc(window["end"])).model_dump(mode="json")
            call = call.model_copy(update={"args": {**call.args, "window": stored}})
        calls.append(call)
    return Plan(calls=calls)


def refused_answer(
    question: str, *, user: str | None, lang: str | None, now: datetime, reason: str, config: AgentConfig
) -> AskAnswer:
    """A refusal the service decides (the deadline passed), worded as the pipeline words its own."""
    language: Lang = lang if lang in ("es", "en", "pt") else detect_language(question)  # type: ignore[assignment]
    head = {"question_id": question_id(question, user, now), "asked_at": now, "lang": language}
    return _refused(head, reason, None, _empty_writer(config, language))


def _refused(head: dict[str, Any], reason: str, plan: Plan | None, writer: Writer) -> AskAnswer:
    return AskAnswer(status="refused", answer=writer.refusal(reason), facts=[], plan=plan, reason=reason, **head)


def _clarify(head: dict[str, Any], reason: str, candidates: list[str], plan: Plan | None, writer: Writer) -> AskAnswer:
    text = writer.clarification(reason, candidates)
    return AskAnswer(
        status="needs_clarification", answer=text, facts=[], plan=plan, reason=reason, candidates=candidates, **head
    )


def _empty_writer(config: AgentConfig, lang: str) -> Writer:
    """A writer for answers that name nothing of the plant (refusals): no namespace read."""
    site = config.site
    empty = Namespace(site=site.id, timezone=site.timezone, lines=[], assets=[], tags=[], record_ids=[], record_count=0)
    return Writer(lang, empty, [])


def _window_fact(
    window: Any,
    namespace: Namespace,
    shifts: Sequence[ShiftConfig],
    seen: dict[str, AnswerFact],
    facts: list[AnswerFact],
    now: datetime,
) -> AnswerFact | None:
    """The window fact of a call's `window` argument, added to `facts` the first time that window is met."""
    if not isinstance(window, Mapping):
        return None
    start, end = _utc(window["start"]), _utc(window["end"])
    key = f"{start.isoformat()}/{end.isoformat()}"
    if key not in seen:
        values = {
            "start": start.isoformat(),
            "end": end.isoformat(),
            "timezone": namespace.timezone,
            "shift": shift_of(start, end, ZoneInfo(namespace.timezone), shifts, now),
        }
        seen[key] = AnswerFact(id=_fact_id(facts), kind="window", subject=namespace.site, values=values, ids=[])
        facts.append(seen[key])
    return seen[key]


def _fact_id(facts: list[AnswerFact]) -> str:
    return f"A{len(facts) + 1:02d}"


def _subject(args: Mapping[str, Any], site: str) -> str:
    for key in ("tag", "asset", "line", "report_id"):
        if isinstance(args.get(key), str):
            return str(args[key])
    return site


def _utc(value: str | datetime) -> datetime:
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return to_utc(parsed)
