"""One report from records: facts → sections → per section a prompt, a narrative and its checks → body.

Each narrative section (`reports.sections`) is written from its own facts only and checked on its own: grounded,
with its figures bound to the asset or tag they are said of (`grounding.section_grounding`), and prose
(`prose.prose_problems`). A section that fails is asked for once more with the strict instructions; if that fails
too, the reference writer's text (`reports.reference`, deterministic and grounded by construction) is published in
its place and the section says so (`status: reference`).

The body is everything the report says and everything that decided it, and nothing that varies between two runs
of the same request (no wall-clock, no timings, no speculative acceptance figures, no request id): the same request
over the same records on the same engine fingerprint gives the same bytes. What varies goes in the run record.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import structlog
from pydantic import BaseModel, ConfigDict

from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.base.types import StoredRecord
from edge_agent.config.reports import ReportsConfig
from edge_agent.llm.types import Completion, Engine, GenerationParams, PromptTooLong
from edge_agent.reports.facts import DATA_GAP, Fact, compute_facts
from edge_agent.reports.narrative.grounding import GroundingResult, Offence, section_grounding
from edge_agent.reports.narrative.names import said_with_names
from edge_agent.reports.narrative.phrasebook import tag_grammar
from edge_agent.reports.narrative.prompts import (
    TEMPLATE_VERSION,
    Phrasebook,
    Prompt,
    Template,
    build_prompt,
    fact_sentence,
    load_phrasebook,
    load_template,
)
from edge_agent.reports.narrative.prose import dedupe_lists, prose_problems
from edge_agent.reports.narrative.reference import REFERENCE_VERSION, reference_text
from edge_agent.reports.narrative.sections import KPI_SECTIONS, Section, split_sections
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow
from edge_agent.store import Store, to_us

log = structlog.get_logger(component="reports")

BODY_SCHEMA = "edge-agent.report.body/2"
# v2: figures are bound to the id they follow in a sentence (grounding.check_bound), notes excepted; v3: the stop
# called the longest is one (grounding.check_longest); v4: of every stop, as the `downtime_longest` fact names it;
# v5: a word said twice in a row is a prose problem (prose.prose_problems); v6: a sentence naming a note ties it
# only to what the note is about (grounding.check_note_ties); v7: a note's time and the author said with it must be
# one note's; v8: a note said to be left while a stop went on, or after it, was (grounding.check_note_when); v9: the
# process-values section rests on its `sections.TAGS_MAX` top peaks only, the tags its prompt shows; v10: a
# percentage is read against the ratio facts (`facts.is_ratio`, the plant KPIs') × 100, and a ratio only as one;
# v11: a tag named as people say it ("la vibración de la bomba P-101", "pump P-101's vibration") binds the figures
# after it to that tag's facts, as its id does (`grounding.tag_named`), not to every fact of the asset; and the
# model's text is checked with an item said twice in one list said once (`clean_narrative`, `prose.dedupe_lists`);
# v12: the model's text, once it passes, is published with its tags and stop reasons named as people say them
# (`names.said_with_names`: "la vibración de la bomba P-101" for "P-101.vibration_mm_s", "por una fuga en el sello
# mecánico" for "por mechanical_seal_leak") and checked again as such.
GROUNDING_RULES = "v12"
# Stops and alarms this far before a window are loaded with it, for the KPIs alone: a standing alarm raised up to
# 2 days earlier is seen (stale after 24 h), and MTBF/MTTR may look back `reports.kpi.lookback_days` (at most 2).
KPI_HISTORY = timedelta(days=2)


def clean_narrative(text: str, truncated: bool = False) -> str:
    """The model's text as published: one paragraph, anything after a fence marker dropped, an item said twice in a
    list said once (`prose.dedupe_lists`: "juan.perez, juan.perez, john.smith"), and when the token limit cut it
    (`truncated`), only up to the last full sentence."""
    for marker in ("<<<", "NOTE>>>"):
        text = text.split(marker, 1)[0]
    # A small model often opens by echoing a header ("Hechos:", "FACTS:"): not part of the narrative.
    text = re.sub(r"^\s*[^\n.:]{1,20}:\s*\n", "", text)
    text = dedupe_lists(" ".join(text.split()))
    if truncated:
        cut = max(text.rfind(". "), text.rfind(".\n"), len(text) - 1 if text.endswith(".") else -1)
        text = text[: cut + 1] if cut >= 0 else ""
    return text


class Provenance(BaseModel):
    """What decided a draft besides its facts, as the `report.generated` audit entry records it: per attempt (all
    sections, in order) the prompt's and completion's hashes and the speculative figures, and the template,
    phrasebook and engine hashes."""

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
        attempts = [a for s in self.body["sections"] for a in s["attempts"]]
        return Provenance(
            prompt_sha256=[a["prompt_sha256"] for a in attempts],
            completion_sha256=[a.get("completion_sha256") for a in attempts],
            template_sha256=self.body["prompt"]["template_sha256"],
            phrasebook_sha256=self.body["prompt"]["phrasebook_sha256"],
            fingerprint_sha256=self.body["generation"]["fingerprint_sha256"],
            speculative=[r["speculative"] for r in self.run],
        )


def report_records(store: Store, window: ResolvedWindow) -> list[StoredRecord]:
    """What a report reads: the window's records, every data gap that began before the window, since one may
    last into it (the facts keep those that do; gap records are few, one per outage and tag: reading all is cheap),
    and the alarms and MES events of `KPI_HISTORY` before it, which only the KPIs read."""
    history = store.records(window.start - KPI_HISTORY, window.start, kinds=["alarm", "mes_event"])
    return store.records(None, window.start, kinds=[DATA_GAP]) + history + store.records(window.start, window.end)


# The earliest source time a hold reaches: data gaps are read however old they are.
_HOLD_FROM_US = -(2**63)


def held_ranges(window: ResolvedWindow) -> list[tuple[str | None, int, int]]:
    """What `report_records` reads for `window`, as the store's record_holds ranges (kind or None for any,
    from_us, to_us): an approved report's records are exactly those retention and the insert caps must keep."""
    start, end = to_us(window.start), to_us(window.end)
    history = to_us(window.start - KPI_HISTORY)
    return [
        (DATA_GAP, _HOLD_FROM_US, start),
        ("alarm", history, start),
        ("mes_event", history, start),
        (None, start, end),
    ]


def generation_params(config: ReportsConfig, seed: int) -> GenerationParams:
    # Greedy at a fixed seed: the report must be reproducible byte for byte.
    return GenerationParams(max_tokens=config.narrative_max_tokens, temperature=0.0, seed=seed, stop=["<<<"])


@dataclass
class SectionPrompts:
    """A report's sections, each with the prompt it is written from (what replay rebuilds and compares)."""

    template: Template
    book: Phrasebook
    items: list[tuple[Section, Prompt]]


def section_prompts(facts: list[Fact], request: ResolvedRequest, config: ReportsConfig) -> SectionPrompts:
    template, book = load_template(request.language), load_phrasebook(request.language)
    items = [
        (
            section,
            build_prompt(
                section,
                request,
                template=template,
                book=book,
                note_max_chars=config.note_max_chars,
            ),
        )
        for section in split_sections(facts)
    ]
    return SectionPrompts(template, book, items)


def section_tags(section: Section) -> set[str]:
    """The tags a section's facts name ("P-101.vibration_mm_s"), which its published text says by their names."""
    return {i for f in section.grounding_facts() for i in f.ids if "." in i}


def section_reasons(section: Section) -> set[str]:
    """The stop reasons a section's facts give ("cavitation"), which its published text says as people do."""
    return {r for f in section.grounding_facts() if isinstance(r := f.values.get("reason"), str)}


def check_section(text: str, section: Section, request: ResolvedRequest, book: Phrasebook) -> GroundingResult:
    """Grounded on the section's facts, and prose: a prose problem is an offence like an ungrounded figure."""
    result = section_grounding(text, section, request.window.timezone)
    lines = [s for f in section.grounding_facts() if (s := fact_sentence(f, book, request)) is not None]
    problems = [Offence(start=0, end=len(text), text=p, kind="prose", reason=p) for p in prose_problems(text, lines)]
    if not problems:
        return result
    return GroundingResult(ok=False, claims=result.claims, offending=[*result.offending, *problems])


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
    facts, prompts = await asyncio.to_thread(_facts_and_prompts, request, records, config)
    params = generation_params(config, seed)
    sections: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    last: Completion | None = None
    for section, prompt in prompts.items:
        if section.name in KPI_SECTIONS and not config.kpi.model_writes_sections:
            # Not asked of the model (reports.kpi.model_writes_sections): written from the facts, no attempts.
            sections.append(_section(section, "reference", reference_text(section, request), []))
            continue
        written, section_run, completion = await _write_section(section, prompt, request, engine, params)
        sections.append(written)
        run += section_run
        last = completion or last
    body = report_body(request, facts, prompts, site_id=site_id, sections=sections, params=params, last=last)
    body_bytes = canonical_json(body)
    return Draft(body=body, body_bytes=body_bytes, body_sha256=sha256_hex(body_bytes), run=run)


async def _write_section(
    section: Section, prompt: Prompt, request: ResolvedRequest, engine: Engine, params: GenerationParams
) -> tuple[dict[str, Any], list[dict[str, Any]], Completion | None]:
    """One section: the model's text if it passes (first try or the strict retry), else the reference text."""
    attempts: list[dict[str, Any]] = []
    run: list[dict[str, Any]] = []
    last: Completion | None = None
    for strict in (False, True):
        try:
            completion = await engine.generate(prompt.messages(strict), params)
        except PromptTooLong as exc:
            log.warning("prompt_too_long", section=section.name, error=str(exc))
            attempts.append({"strict": strict, "prompt_sha256": prompt.sha256(strict), "error": str(exc)})
            break
        last = completion
        text = clean_narrative(completion.text, truncated=completion.finish_reason == "length")
        result = check_section(text, section, request, prompt.phrasebook)
        if result.ok:  # published with its tags and stop reasons named as people say them, and checked as published
            grammar = tag_grammar(request.language)
            text = said_with_names(text, section_tags(section), grammar, section_reasons(section))
            result = check_section(text, section, request, prompt.phrasebook)
        attempts.append(_attempt(strict, prompt, completion, result))
        run.append(_run(section.name, strict, completion))
        if result.ok:
            status = "model_after_retry" if strict else "model"
            return _section(section, status, text, attempts), run, last
        log.info(
            "section_rejected", section=section.name, strict=strict, offending=[o.text for o in result.offending][:10]
        )
    return _section(section, "reference", reference_text(section, request), attempts), run, last


def _section(section: Section, status: str, text: str, attempts: list[dict[str, Any]]) -> dict[str, Any]:
    fact_ids = [f.id for f in (*section.facts, *section.related)]
    return {"name": section.name, "status": status, "text": text, "fact_ids": fact_ids, "attempts": attempts}


def narrative_status(sections: Sequence[dict[str, Any]]) -> str:
    """Over the sections the model was asked to write (the others have no attempts): `model`: every one
    model-written; `reference`: none, or none was asked; `mixed`: some; `empty`: no section to write."""
    if not sections:
        return "empty"
    written = [s["status"] != "reference" for s in sections if s["attempts"]]
    if not written:
        return "reference"
    return "model" if all(written) else ("reference" if not any(written) else "mixed")


def report_body(
    request: ResolvedRequest,
    facts: list[Fact],
    prompts: SectionPrompts,
    *,
    site_id: str,
    sections: list[dict[str, Any]],
    params: GenerationParams,
    last: Completion | None,
) -> dict[str, Any]:
    """The body (pure): what the report says and everything that decided it."""
    flagged = sorted({rid for _, p in prompts.items for rid in p.flagged_record_ids})
    return {
        "schema": BODY_SCHEMA,
        "site": site_id,
        "request": request.as_json(),
        "facts": [f.model_dump(mode="json") for f in facts],
        "flags": {"instruction_like_record_ids": flagged},
        "narrative": "\n\n".join(s["text"] for s in sections) or None,
        "narrative_status": narrative_status(sections),
        "sections": sections,
        "grounding": {"rules": GROUNDING_RULES, "reference": REFERENCE_VERSION},
        "prompt": {
            "template_version": TEMPLATE_VERSION,
            "template": prompts.template.name,
            "template_sha256": prompts.template.sha256,
            "phrasebook": prompts.book.name,
            "phrasebook_sha256": prompts.book.sha256,
        },
        "generation": {
            "params": params.model_dump(mode="json"),
            "fingerprint": last.fingerprint if last is not None else None,
            "fingerprint_sha256": last.fingerprint_sha256 if last is not None else None,
        },
    }


def report_facts(records: list[StoredRecord], request: ResolvedRequest, config: ReportsConfig) -> list[Fact]:
    """The facts of a report under the plant's list limits: the one call writing, replaying and benching share."""
    return compute_facts(records, request, list_max=config.list_facts_max, notes_max=config.notes_max, kpi=config.kpi)


def _facts_and_prompts(
    request: ResolvedRequest, records: list[StoredRecord], config: ReportsConfig
) -> tuple[list[Fact], SectionPrompts]:
    facts = report_facts(records, request, config)
    return facts, section_prompts(facts, request, config)


def _attempt(strict: bool, prompt: Prompt, completion: Completion, result: GroundingResult) -> dict[str, Any]:
    # The text of a rejected section is never published; its hash and the offending spans say what was wrong.
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


def _run(section: str, strict: bool, completion: Completion) -> dict[str, Any]:
    return {
        "section": section,
        "strict": strict,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "timings": completion.timings.model_dump(mode="json"),
        "speculative": completion.spec.model_dump(mode="json") if completion.spec is not None else None,
    }
