"""The reference writer (pure, deterministic): one section's narrative as a careful shift supervisor writes it.

It is the target a small model is fine-tuned on and the text published when the model's own text for a section fails
its checks, so it must read well and always pass them. Every figure, time and duration comes from the section's
facts through the phrasebook's formatting (`format_number`, `format_duration`, `format_time`), so the grounding
check reads it back exactly; record text (alarm messages, reasons, authors, units) goes through `safe_text`, and is
left out where it would read as more than one sentence. Counts the facts do not hold (how many notes, how many state
changes) are never written as figures: a figure the check cannot trace is one the model must not learn to write.

Each kind of sentence has at least three wordings per language, kept as data in the reference phrasebook
(`wording/phrasebook/v2/<lang>.toml`) and written out by `phrasebook.writer.SectionWriter`; the wording is chosen from a
hash of the section's content, so the same facts always give the same text and different reports read differently.
Each sentence is a slot, a list of candidates, richest first (`slots/`, one module per kind of section); the first
that passes the grounding check on its own is kept (a reason such as `seal_2` is an id no fact names), and a section
where nothing passes still gets one figure-free sentence.
"""

from __future__ import annotations

from collections.abc import Callable

from edge_agent.reports.narrative.grounding import section_grounding
from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.prompts import fact_sentence
from edge_agent.reports.narrative.prose import prose_problems
from edge_agent.reports.narrative.sections import Section
from edge_agent.reports.narrative.slots import alarms, downtime, kpis, notes, process_values, production
from edge_agent.reports.narrative.slots.slot import MAX_SENTENCES, Slot
from edge_agent.reports.request import ResolvedRequest

# r2: the causes sentence reads the `downtime_cause` facts (every stop of the window, not only the listed ones);
# r3: the longest stop is the `downtime_longest` fact's (likewise); r4: "{fails}" (a count with its noun, "4 controles
# fallidos") no longer followed by the noun's adjective again in es and pt ("4 controles fallidos fallidos de 16");
# r5: the notes tie is `sections.note_tie`'s, and the notes section's related facts are that one event (the same tie
# as r4's; the wording, picked by a hash over the section's facts, differs); r6: the process-values section lists its
# tag statistics peaks first (`sections.tag_peak`), and that hash reads them in that order (the same tags are named,
# some in other wordings); r7: that section holds only the `sections.TAGS_MAX` top peaks, which the hash reads (the
# same tags are named, some in other wordings); r8: the plant KPIs' sections (`oee`, `maintenance`,
# `alarm_performance`), their wordings only added to the phrasebook: every earlier section's text is unchanged;
# r9: phrasebook v2, tags named as people say them ("la vibración de la bomba P-101", "pump P-101's vibration",
# `SectionWriter.tag`) and their figures with the unit their key names ("9.12 mm/s"), in the process values'
# peaks and state changes; every other section's text is unchanged. r10: the maintenance sentence no longer
# agrees its verb with a count ("1 falla ... dan": "con 1 falla ..., el MTTR fue de"), pt names no article before an
# asset id ("A C-201"), and a line with no planned stop says so (`oee.time_unplanned`, not "otros 0 s"); a stop's
# reason is said as people say it (`[words.reasons]`, the ask's answers' too): "por la cavitación", "pela cavitação",
# "for a mechanical seal leak", not "por cavitation"; "se debieron a {reason}" became "tuvieron el mismo motivo:";
# why an OEE is not computable is said in words ("sin recuento de desecho", `[words.missing]`), not its code ("scrap").
# r11: words said of an asset agree with its kind's gender (`[words.agree]`, `names.Grammar.agree`): "mientras P-101
# seguía parada", "sobre ella", "que tinha ficado parada" for a pump, not "parado", "sobre él" whatever the asset (the
# stop and note sentences; en says "stopped" where it said "down"); pt no longer writes "da {asset}" in the alarm
# flood ("deles de C-201"); a two-state tag's change is said in words, not as "de on a off" / "de true a false": a run
# state of its asset ("la bomba P-101 pasó de en marcha a parada", "pump P-101 went from running to stopped"), any
# other tag as active or not ("de activo a inactivo").
REFERENCE_VERSION = "r11"
# An alarm performance review says rate, floods, the worst flood, the top alarms, chattering/standing/stale and the
# priority mix: six sentences, each short.
SECTION_SENTENCES = {"alarm_performance": 6}

_BUILDERS: dict[str, Callable[[SectionWriter], list[Slot]]] = {
    "alarms": alarms.alarm_slots,
    "downtime": downtime.downtime_slots,
    "production_quality": production.production_quality_slots,
    "notes": notes.note_slots,
    "process_values": process_values.process_value_slots,
    "oee": kpis.oee_slots,
    "maintenance": kpis.maintenance_slots,
    "alarm_performance": kpis.alarm_performance_slots,
}


def reference_sentences(section: Section, request: ResolvedRequest) -> list[str]:
    """The section's narrative as 1 to 4 sentences, each grounded in the section's facts on its own, none repeated,
    none a phrasebook fact sentence, none holding prompt text; the same section and request always give the same."""
    writer = SectionWriter.for_section(section, request)
    tz_name = request.window.timezone
    fact_lines = {s for f in section.grounding_facts() if (s := fact_sentence(f, writer.book, request)) is not None}

    def fit(sentence: str, kept: list[str]) -> bool:
        # The same prose rules a model's section must pass, on the text as it would be published.
        return (
            not prose_problems(" ".join([*kept, sentence]), fact_lines)
            and section_grounding(sentence, section, tz_name).ok
        )

    builder = _BUILDERS.get(section.name)
    kept: list[str] = []
    for slot in builder(writer) if builder is not None else []:
        chosen = next((sentence for sentence in slot if fit(sentence, kept)), None)
        if chosen is not None:
            kept.append(chosen)
        if len(kept) == SECTION_SENTENCES.get(section.name, MAX_SENTENCES):
            break
    if not kept:  # figure-free, so it always passes: the net under the net
        kept.append(writer.phrase("fallback", topic=writer.words.topic.get(section.name, section.name)))
    return kept


def reference_text(section: Section, request: ResolvedRequest) -> str:
    """The section's narrative: `reference_sentences` joined into one paragraph."""
    return " ".join(reference_sentences(section, request))
