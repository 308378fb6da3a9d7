"""The model planner: the local model (or a plant's own, behind `llm.backend = "remote"`) reads a question under a
JSON schema (vLLM structured outputs), and code resolves what it read.

The model names three things and nothing else: the intents the question asks about (`planner.INTENTS`), the words
naming its subject and the words naming its time, copied from the question. Schema-constrained decoding means its
output always parses; code then checks that each span is in the question (a model that invents a name is not
followed) and resolves the spans against the namespace, the site's timezone and its shifts exactly as the reference
planner resolves the whole question (`planner.plan_for`). What the model cannot decide never reaches a tool: times,
ids, windows and budgets are the code's.

A reading that breaks a rule (not valid JSON for the schema, a span not in the question) is not used: the reference
planner plans instead and the answer says so (`AskAnswer.planner`), as the reference writer stands in for a
narrative section.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rapidfuzz import fuzz

from edge_agent.ask.plan import MAX_CALLS
from edge_agent.ask.planner import INTENTS, Reading
from edge_agent.ask.resolve import fold
from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.llm.types import ChatMessage, Engine, GenerationParams
from edge_agent.reports.narrative import read_wording

# v1: the planner's first instructions, six examples in es/en/pt.
PLANNER_VERSION = "v1"
# 80 characters: the longest subject or time of the planning examples is under 40 ("la vibración de la P-102").
SPAN_MAX = 80
# 90 of 100 (rapidfuzz partial_ratio on folded text) for a span copied with a slip ("bomba" for the question's
# "bomva"); its numbers must be the question's all the same: "la bomba 102" scores 91.7 against a question about
# "la bomba 101", and a number is what names an asset.
SPAN_CUTOFF = 90.0
_NUMBER = re.compile(r"\d+")
# 96 tokens: the widest reading ({"intents": four names, two spans of 80 characters}) is about 70 of SmolLM2's
# tokens; a reading that runs longer is cut and fails the schema's check, so the reference planner answers.
MAX_TOKENS = 96

Intent = Literal[INTENTS]  # type: ignore[valid-type]


class PlanDraft(BaseModel):
    """What the model reads in a question: the JSON its output is constrained to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    intents: list[Intent] = Field(max_length=MAX_CALLS)
    subject: str | None = Field(max_length=SPAN_MAX)
    time: str | None = Field(max_length=SPAN_MAX)


@functools.cache
def draft_schema() -> dict[str, Any]:
    """The reading's JSON schema, what the engine constrains the model's output to."""
    return PlanDraft.model_json_schema()


@dataclass(frozen=True)
class ModelReading:
    """The model's output for one question: its text (recorded in the `ask.answered` entry, from which replay
    resolves it again), the completion's fingerprint, and the reading or why it is not used."""

    text: str
    fingerprint_sha256: str
    prompt_sha256: str
    reading: Reading | None
    rejected: str | None
    # Tokens per target pass when the engine drafts (speculative decoding), for the benches; None without a draft.
    tau: float | None = None

    def as_entry(self) -> dict[str, Any]:
        """The `engine` member of the `ask.answered` entry."""
        return {
            "planner_version": PLANNER_VERSION,
            "output": self.text,
            "prompt_sha256": self.prompt_sha256,
            "fingerprint_sha256": self.fingerprint_sha256,
            "rejected": self.rejected,
        }


@functools.cache
def _instructions() -> str:
    """wording/ask/<version>/planner.txt, read once (a question must not read a file)."""
    return read_wording("planner", PLANNER_VERSION).raw.decode("utf-8")


def planner_messages(question: str) -> list[ChatMessage]:
    """The chat the model reads: the instructions, then the question."""
    return [ChatMessage(role="system", content=_instructions()), ChatMessage(role="user", content=f"Q: {question}")]


def planner_params(seed: int = 0) -> GenerationParams:
    """Greedy, fixed seed, constrained to `draft_schema()`: the deterministic settings of every report."""
    return GenerationParams(max_tokens=MAX_TOKENS, temperature=0.0, seed=seed, json_schema=draft_schema())


async def read_question(engine: Engine, question: str) -> ModelReading:
    """The model's reading of `question` (EngineError propagates: the caller plans in code instead)."""
    messages = planner_messages(question)
    completion = await engine.generate(messages, planner_params())
    prompt_sha256 = sha256_hex(canonical_json([m.model_dump() for m in messages]))
    reading, rejected = reading_of(completion.text, question)
    tau = completion.spec.mean_acceptance_length if completion.spec is not None else None
    return ModelReading(completion.text, completion.fingerprint_sha256, prompt_sha256, reading, rejected, tau)


def reading_of(text: str, question: str) -> tuple[Reading | None, str | None]:
    """The `Reading` the model's output `text` gives for `question`, or None and why it is not followed."""
    try:
        draft = PlanDraft.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "output"
        return None, f"not a plan reading: {where}: {first['msg']}"
    for name, span in (("subject", draft.subject), ("time", draft.time)):
        if span is not None and not in_question(span, question):
            return None, f"its {name} {span!r} is not in the question"
    intents = list(dict.fromkeys(draft.intents))
    return Reading(intents=intents, subject=draft.subject or "", time=draft.time or ""), None


def in_question(span: str, question: str) -> bool:
    """Whether `span` is words of `question` (folded: case and accents aside; SPAN_CUTOFF for a copying slip, with
    every number of the span one of the question's)."""
    needle, haystack = fold(span).strip(), fold(question)
    if not needle:
        return False
    if needle in haystack:
        return True
    numbers_kept = set(_NUMBER.findall(needle)) <= set(_NUMBER.findall(haystack))
    return numbers_kept and fuzz.partial_ratio(needle, haystack) >= SPAN_CUTOFF
