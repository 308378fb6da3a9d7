"""The narrative wing: sections, prompts and the phrasebook, the reference writer, prose and grounding checks, the
draft a report's narrative is generated into, the wording every writer reads (`wording/`, the ask writer's too), and
how a tag is named as people say it (`names.Grammar`, `tag_grammar`). Code outside the wing uses these names only."""

from edge_agent.reports.narrative.generate import (
    GROUNDING_RULES,
    Draft,
    build_draft,
    generation_params,
    held_ranges,
    report_facts,
    report_records,
    section_prompts,
)
from edge_agent.reports.narrative.names import Grammar, Label, split_label
from edge_agent.reports.narrative.phrasebook import tag_grammar
from edge_agent.reports.narrative.prompts import (
    TEMPLATE_VERSION,
    Phrasebook,
    Template,
    build_prompt,
    fact_sentence,
    format_time,
    load_phrasebook,
    load_template,
    safe_text,
    spans_days,
)
from edge_agent.reports.narrative.prose import prose_problems, sentences
from edge_agent.reports.narrative.reference import REFERENCE_VERSION, reference_text
from edge_agent.reports.narrative.sections import KPI_SECTIONS, SECTIONS, Section, split_sections
from edge_agent.reports.narrative.wording import WordingFile, WordingMissing, read_wording

__all__ = [
    "build_draft",
    "build_prompt",
    "Draft",
    "fact_sentence",
    "format_time",
    "generation_params",
    "Grammar",
    "GROUNDING_RULES",
    "held_ranges",
    "KPI_SECTIONS",
    "Label",
    "split_label",
    "load_phrasebook",
    "load_template",
    "Phrasebook",
    "prose_problems",
    "read_wording",
    "reference_text",
    "REFERENCE_VERSION",
    "report_facts",
    "report_records",
    "safe_text",
    "Section",
    "section_prompts",
    "SECTIONS",
    "sentences",
    "spans_days",
    "split_sections",
    "tag_grammar",
    "Template",
    "TEMPLATE_VERSION",
    "WordingFile",
    "WordingMissing",
]
