"""Replay: regenerate a stored report from its recorded request, records, templates and generation settings, and say
whether the body comes out byte-identical.

Refuses (no generation, `refused` says why) when the inputs are not the recorded ones: a template or phrasebook file
changed, the grounding rules or reference writer changed (a section could be judged differently), the records behind
the facts changed (retention, late data), or the prompt differs. After generating, a different engine fingerprint
(model or draft hashes, engine version, dtype, threads) is reported as a refusal too: the comparison would be
meaningless, and the report says which fingerprint keys differ.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.config import AgentConfig
from edge_agent.llm.types import Engine
from edge_agent.reports.document.repository import ReportRepository
from edge_agent.reports.narrative import (
    GROUNDING_RULES,
    REFERENCE_VERSION,
    TEMPLATE_VERSION,
    build_draft,
    load_phrasebook,
    load_template,
    report_facts,
    report_records,
    section_prompts,
)
from edge_agent.reports.request import ResolvedRequest
from edge_agent.store import Store


@dataclass(frozen=True)
class ReplayResult:
    report_id: str
    identical: bool
    recorded_body_sha256: str
    replayed_body_sha256: str | None = None
    refused: str | None = None
    differences: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "report_id": self.report_id,
            "identical": self.identical,
            "recorded_body_sha256": self.recorded_body_sha256,
            "replayed_body_sha256": self.replayed_body_sha256,
            "refused": self.refused,
            "differences": self.differences,
        }


def replay_report(config: AgentConfig, report_id: str) -> ReplayResult:
    """Open the configured engine and replay `report_id` (blocking; for the CLI)."""
    from edge_agent.llm.engine import open_engine

    async def run() -> ReplayResult:
        async with open_engine(config) as engine:
            return await replay_with_engine(config, report_id, engine)

    return asyncio.run(run())


async def replay_with_engine(config: AgentConfig, report_id: str, engine: Engine) -> ReplayResult:
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    try:
        document = repo.get(report_id)
    finally:
        repo.close()
    body = document["body"]
    recorded = document["body_sha256"]

    def refused(reason: str, differences: list[str] | None = None) -> ReplayResult:
        return ReplayResult(report_id, False, recorded, refused=reason, differences=differences or [])

    if sha256_hex(canonical_json(body)) != recorded:
        return refused("the stored body does not match its recorded hash")
    request = ResolvedRequest.model_validate(body["request"])
    prompt_info = body["prompt"]
    if prompt_info["template_version"] != TEMPLATE_VERSION:
        return refused(
            f"the report was written with prompt templates {prompt_info['template_version']};"
            f" this agent writes {TEMPLATE_VERSION}"
        )
    checks = {"rules": GROUNDING_RULES, "reference": REFERENCE_VERSION}
    if body.get("grounding") != checks:
        # Another rule set may pass or refuse a section differently: the bodies would differ for that reason alone.
        was = body.get("grounding") or {}
        return refused(
            f"the report was checked with grounding rules {was.get('rules')} and reference writer"
            f" {was.get('reference')}; this agent has {GROUNDING_RULES} and {REFERENCE_VERSION}"
        )
    template = load_template(request.language)
    book = load_phrasebook(request.language)
    if template.sha256 != prompt_info["template_sha256"]:
        return refused(f"prompt template {template.name} changed since the report was made")
    if book.sha256 != prompt_info["phrasebook_sha256"]:
        return refused(f"phrasebook {book.name} changed since the report was made")
    params = body["generation"]["params"]
    reports_config = config.reports.model_copy(update={"narrative_max_tokens": params["max_tokens"]})
    with Store(config.paths.store_path) as store:
        records = report_records(store, request.window)
    facts = report_facts(records, request, reports_config)
    if [f.model_dump(mode="json") for f in facts] != body["facts"]:
        return refused(
            "the facts differ from the recorded ones (records changed by retention or late data,"
            " or reports.list_facts_max or notes_max changed)"
        )
    asked = {s["name"] for s in body["sections"] if s["attempts"]}  # the others were not asked of the model
    rebuilt = [p.sha256(False) for s, p in section_prompts(facts, request, reports_config).items if s.name in asked]
    recorded_prompts = [s["attempts"][0]["prompt_sha256"] for s in body["sections"] if s["attempts"]]
    if rebuilt != recorded_prompts:
        return refused("the prompts differ from the recorded ones (reports limits changed in config)")
    draft = await build_draft(
        request, records, engine, site_id=body["site"], config=reports_config, seed=params["seed"]
    )
    was = body["generation"]["fingerprint"] or {}
    now = draft.body["generation"]["fingerprint"] or {}
    if body["generation"]["fingerprint_sha256"] != draft.body["generation"]["fingerprint_sha256"]:
        keys = sorted(k for k in set(was) | set(now) if was.get(k) != now.get(k))
        return ReplayResult(
            report_id,
            False,
            recorded,
            replayed_body_sha256=draft.body_sha256,
            refused="engine fingerprint differs (model hashes, engine version or numerics): " + ", ".join(keys),
            differences=keys,
        )
    differences = sorted(k for k in body if body[k] != draft.body.get(k))
    return ReplayResult(report_id, draft.body_sha256 == recorded, recorded, draft.body_sha256, None, differences)
