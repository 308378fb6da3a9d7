"""One report from records: facts → prompt → narrative → grounding check → body.

The body is everything the report says and everything that decided it, and nothing that varies between two runs
of the same request (no wall-clock, no timings, no speculative acceptance figures, no request id): the same request
over the same records on the same engine fingerprint gives the same bytes. What varies goes in the run record.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

import structlog
from pydantic import BaseModel, ConfigDict

from edge_agent.canonical import canonical_json, sha256_hex
from edge_agent.config.reports import ReportsConfig
from edge_agent.llm.types import Completion, Engine, GenerationParams, PromptTooLong
from edge_agent.reports.facts import DATA_GAP, Fact, compute_facts
from edge_agent.reports.grounding import GroundingResult, check_narrative
from edge_agent.reports.prompts import TEMPLATE_VERSION, Prompt, build_prompt
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow
from edge_agent.store import Store
from edge_agent.types import StoredRecord

log = structlog.get_logger(component="reports")

BODY_SCHEMA = "edge-agent.report.body/1"
GROUNDING_RULES = "v1"


def clean_narrative(text: str, truncated: bool = False) -> str:
    """The model's text as published: one paragraph, anything after a fence marker dropped, and when the token
    limit cut it (`truncated`), only up to the last full sentence."""
    for marker in ("<<<", "NOTE>>>"):
        text = text.split(marker, 1)[0]
    # A small model often opens by echoing the section header ("Hechos:", "FACTS:"): not part of the narrative.
    text = re.sub(r"^\s*[^\n.:]{1,20}:\s*\n", "", text)
    text = " ".join(text.split())
    if truncated:
        cut = max(text.rfind(". "), text.rfind(".\n"), len(text) - 1 if text.endswith(".") else -1)
        text = text[: cut + 1] if cut >= 0 else ""
    return text


class Provenance(BaseModel):
    """What decided a draft besides its facts, as the `report.generated` audit entry records it: per attempt the
    prompt's and completion's hashes and the speculative figures, and the template, phrasebook and engine hashes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt_sha256: list[str]
    completion_sha256: list[str | None]  # None: the attempt had no completion (prompt too long)
    template_sha256: str
    phrasebook_sha256: str
    fingerprint_sha256: str | None
    speculative: list[Any]


@dataclass
class Draft:
    body: dict[str, Any]
    body_bytes: bytes
    body_sha256: str
    # Per attempt: speculative figures, timings, token counts. Varies run to run; never hashed into the body.
    run: list[dict[str, Any]] = field(default_factory=list)

    @property
    def narrative_status(self) -> str:
        return str(self.body["narrative_status"])

    @property
    def provenance(self) -> Provenance:
        # Read back from the body this module builds (`report_body`), so only this module knows its shape.
        attempts = self.body["grounding"]["attempts"]
        return Provenance(
            prompt_sha256=[a["prompt_sha256"] for a in attempts],
            completion_sha256=[a.get("completion_sha256") for a in attempts],
            template_sha256=self.body["prompt"]["template_sha256"],
            phrasebook_sha256=self.body["prompt"]["phrasebook_sha256"],
            fingerprint_sha256=self.body["generation"]["fingerprint_sha256"],
            speculative=[r["speculative"] for r in self.run],
        )


def report_records(store: Store, window: ResolvedWindow) -> list[StoredRecord]:
    """What a report reads: the window's records, and every data gap that began before the window, since one may
    last into it (the facts keep those that do). Gap records are few, one per outage and tag: reading all is cheap."""
    return store.records(None, window.start, kinds=[DATA_GAP]) + store.records(window.start, window.end)


def generation_params(config: ReportsConfig, seed: int) -> GenerationParams:
    # Greedy at a fixed seed: the report must be reproducible byte for byte.
    return GenerationParams(max_tokens=config.narrative_max_tokens, temperature=0.0, seed=seed, stop=["<<<"])


async def build_draft(
    request: ResolvedRequest,
    records: list[StoredRecord],
    engine: Engine,
    *,
    site_id: str,
    config: ReportsConfig,
    seed: int,
) -> Draft:
    # In a thread: a large window's facts take seconds of CPU, which must not stall the event loop (health, watchdog).
    facts, prompt = await asyncio.to_thread(_facts_and_prompt, request, records, config)
    params = generation_params(config, seed)
    attempts: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    narrative: str | None = None
    status = "omitted_ungrounded"
    last: Completion | None = None
    for strict in (False, True):
        try:
            completion = await engine.generate(prompt.messages(strict), params)
        except PromptTooLong as exc:
            log.warning("prompt_too_long", error=str(exc))
            status = "omitted_prompt_too_long"
            attempts.append({"strict": strict, "prompt_sha256": prompt.sha256(strict), "error": str(exc)})
            break
        last = completion
        text = clean_narrative(completion.text, truncated=completion.finish_reason == "length")
        result = check_narrative(text, facts, request.window.timezone)
        attempts.append(_attempt(strict, prompt, completion, result))
        run.append(_run(strict, completion))
        if result.ok:
            narrative, status = text, ("grounded_after_retry" if strict else "grounded")
            break
        log.info("narrative_ungrounded", strict=strict, offending=[o.text for o in result.offending][:10])
    body = report_body(
        request,
        facts,
        prompt,
        site_id=site_id,
        narrative=narrative,
        status=status,
        attempts=attempts,
        params=params,
        last=last,
    )
    body_bytes = canonical_json(body)
    return Draft(body=body, body_bytes=body_bytes, body_sha256=sha256_hex(body_bytes), run=run)


def report_body(
    request: ResolvedRequest,
    facts: list[Fact],
    prompt: Prompt,
    *,
    site_id: str,
    narrative: str | None,
    status: str,
    attempts: list[dict[str, Any]],
    params: GenerationParams,
    last: Completion | None,
) -> dict[str, Any]:
    """The body (pure): what the report says and everything that decided it."""
    return {
        "schema": BODY_SCHEMA,
        "site": site_id,
        "request": request.as_json(),
        "facts": [f.model_dump(mode="json") for f in facts],
        "flags": {"instruction_like_record_ids": list(prompt.flagged_record_ids)},
        "narrative": narrative,
        "narrative_status": status,
        "grounding": {"rules": GROUNDING_RULES, "attempts": attempts},
        "prompt": {
            "template_version": TEMPLATE_VERSION,
            "template": prompt.template.name,
            "template_sha256": prompt.template.sha256,
            "phrasebook": prompt.phrasebook.name,
            "phrasebook_sha256": prompt.phrasebook.sha256,
        },
        "generation": {
            "params": params.model_dump(mode="json"),
            "fingerprint": last.fingerprint if last is not None else None,
            "fingerprint_sha256": last.fingerprint_sha256 if last is not None else None,
        },
    }


def _facts_and_prompt(
    request: ResolvedRequest, records: list[StoredRecord], config: ReportsConfig
) -> tuple[list[Fact], Prompt]:
    facts = compute_facts(records, request, list_max=config.list_facts_max)
    return facts, build_prompt(facts, request, note_max_chars=config.note_max_chars, notes_max=config.notes_max)


def _attempt(strict: bool, prompt: Prompt, completion: Completion, result: GroundingResult) -> dict[str, Any]:
    # The text of a rejected narrative is never published; its hash and the offending spans say what was wrong.
    return {
        "strict": strict,
        "prompt_sha256": prompt.sha256(strict),
        "completion_sha256": sha256_hex(completion.text),
        "completion_tokens": completion.completion_tokens,
        "finish_reason": completion.finish_reason,
        "ok": result.ok,
        "claims": [c.model_dump() for c in result.claims] if result.ok else [],
        "offending": [o.model_dump() for o in result.offending],
    }


def _run(strict: bool, completion: Completion) -> dict[str, Any]:
    return {
        "strict": strict,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "timings": completion.timings.model_dump(mode="json"),
        "speculative": completion.spec.model_dump(mode="json") if completion.spec is not None else None,
    }
