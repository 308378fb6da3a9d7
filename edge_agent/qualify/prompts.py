"""The fixed prompts the draft and plain engines are compared and timed on: for each report type, the first
section the model writes, built from the private agent's seeded records exactly as the report service builds it."""

from __future__ import annotations

from collections.abc import Sequence

from edge_agent.config import AgentConfig
from edge_agent.llm.types import ChatMessage
from edge_agent.qualify.requests import Answered
from edge_agent.reports.document import ReportRepository
from edge_agent.reports.narrative import KPI_SECTIONS, report_facts, report_records, section_prompts
from edge_agent.reports.request import ResolvedRequest
from edge_agent.store import Store


def section_messages(config: AgentConfig, answered: Sequence[Answered]) -> list[list[ChatMessage]]:
    """One prompt per report type that got a report: its first model-written section's messages."""
    first_of_type = {a.type: a.report_id for a in reversed(answered) if a.report_id is not None}
    repo = ReportRepository.for_state_dir(config.paths.state_dir)
    try:
        requests = [
            ResolvedRequest.model_validate(repo.get(report_id)["body"]["request"])
            for report_id in first_of_type.values()
        ]
    finally:
        repo.close()
    prompts: list[list[ChatMessage]] = []
    with Store(config.paths.store_path) as store:
        for request in requests:
            facts = report_facts(report_records(store, request.window), request, config.reports)
            for section, prompt in section_prompts(facts, request, config.reports).items:
                if section.name not in KPI_SECTIONS or config.reports.kpi.model_writes_sections:
                    prompts.append(prompt.messages(False))
                    break
    return prompts
