"""The ask's audit entries: `ask.answered` for every question (answered, needing clarification or refused) and
`ask.tool_called` for every direct tool call, appended to the agent's audit sink (the one the reports write to)."""

from __future__ import annotations

from typing import Any

from edge_agent.ask.pipeline import ASK_VERSION, AskAnswer
from edge_agent.audit import AuditSink
from edge_agent.base.canonical import canonical_json, sha256_hex

ACTOR = "ask"
# The members `answered(...)` gives, in its order: what replay compares.
ANSWERED_MEMBERS = ("status", "reason", "candidates", "plan", "cited", "facts_sha256", "answer")


def record_answer(
    audit: AuditSink, answer: AskAnswer, question: str, user: str | None, engine: dict[str, Any] | None = None
) -> int:
    """One `ask.answered` entry: what was asked, by whom, when (the accepted time the answer was computed at), in
    which language, by which code (`ask_version`), who planned (`planner`) and, when the model read the question,
    its output and fingerprint (`engine`: `ModelReading.as_entry()`; null when no model took part), then what
    `answered(...)` gives; returns its seq."""
    payload: dict[str, Any] = {
        "question_id": answer.question_id,
        "question": question,
        "user": user,
        "asked_at": answer.asked_at.isoformat(),
        "lang": answer.lang,
        "ask_version": ASK_VERSION,
        "planner": answer.planner,
        "engine": engine,
        **answered(answer),
    }
    return audit.append("ask.answered", ACTOR, payload).seq


def answered(answer: AskAnswer) -> dict[str, Any]:
    """The members of an `ask.answered` entry the pipeline computes, which `audit replay` recomputes: the status,
    reason and candidates, the plan, per fact its id, kind, subject, cited record ids and SHA-256 (`cited`), the
    SHA-256 of all the facts' canonical JSON (`facts_sha256`) and the answer's text."""
    facts = [f.model_dump(mode="json") for f in answer.facts]
    return {
        "status": answer.status,
        "reason": answer.reason,
        "candidates": answer.candidates,
        "plan": answer.plan.model_dump(mode="json") if answer.plan is not None else None,
        "cited": [
            {"id": f["id"], "kind": f["kind"], "subject": f["subject"], "ids": f["ids"], "sha256": _sha256(f)}
            for f in facts
        ],
        "facts_sha256": _sha256(facts),
        "answer": answer.answer,
    }


def _sha256(value: Any) -> str:
    return sha256_hex(canonical_json(value))


def record_tool_call(
    audit: AuditSink,
    user: str | None,
    tool: str,
    args: dict[str, Any],
    result: dict[str, Any] | None,
    reason: str | None,
) -> int:
    """One `ask.tool_called` entry: who called which tool with which arguments, and the hash of what it returned
    (None and the refusal's reason code when it was refused); returns its seq."""
    payload = {
        "user": user,
        "tool": tool,
        "arguments": args,
        "result_sha256": sha256_hex(canonical_json(result)) if result is not None else None,
        "status": "answered" if result is not None else "refused",
        "reason": reason,
    }
    return audit.append("ask.tool_called", ACTOR, payload).seq
