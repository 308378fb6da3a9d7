"""Grounding check (pure): every number, asset/tag id, time, date and duration in a narrative must match a fact.

The claims are read as `claims.check_narrative` reads them (its docstring holds the rules); the checks here and in
`note_grounding` hold each figure to what the sentence says it is of.

Binding (`check_bound`): a figure (number, time, date, duration) said after an asset or tag id in the same sentence
must be a figure of a fact naming that id, or of the window. "P-101.flow_m3h peaked at 887.86" fails when 887.86 is
C-201.flow_m3h's maximum, although 887.86 is a fact. `section_grounding` applies it to every section; in the notes
the notes' own figures are bound to nothing, since a note's time follows the asset the note is about.

The longest stop (`check_longest`): a sentence calling a stop the longest (es/en/pt) may name only assets, times
and durations of the longest stop (the `downtime_longest` fact, over every stop of the window; a listed stop as
long) or the window's. "The longest was P-101's 12:40-13:13 stop (34 min)" fails when P-101's 10:20-10:57 stop
lasted longer, although every figure is P-101's.

In the notes section, a sentence naming a note is held to that note (`note_grounding.check_note_ties`,
`check_note_when`).
"""

from __future__ import annotations

import bisect
import re

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.claims import SENTENCE_END, Claim, GroundingResult, Offence, check_narrative
from edge_agent.reports.narrative.note_grounding import check_note_ties, check_note_when
from edge_agent.reports.narrative.sections import Section


def check_bound(narrative: str, facts: list[Fact], tz_name: str, free: frozenset[str] = frozenset()) -> GroundingResult:
    """`check_narrative`, plus binding: in a sentence, each figure after an id must be a fact of that id's (or the
    window's); the nearest id before it is the one it is said of. A figure of a `free` fact (a note's time, which
    follows the asset the note is about, or how many notes are not listed) is bound to nothing."""
    result = check_narrative(narrative, facts, tz_name)
    window = {f.id for f in facts if f.kind == "window"} | free
    ends = [m.end() for m in SENTENCE_END.finditer(narrative)]
    offending = list(result.offending)
    subject: Claim | None = None
    sentence = 0
    for claim in result.claims:
        here = bisect.bisect_right(ends, claim.start)  # sentence ends at or before the claim
        if here != sentence:
            subject, sentence = None, here
        if claim.kind == "id":
            subject = claim
        elif subject is not None and not set(claim.fact_ids) & (set(subject.fact_ids) | window):
            reason = f"no fact of {subject.text} has this figure"
            offending.append(Offence(start=claim.start, end=claim.end, text=claim.text, kind="binding", reason=reason))
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)


# "longest"/"más larga"/"mais longo", as the reference writer and the model word the longest stop.
_LONGEST = re.compile(r"\b(?:longest|más\s+larg[oa]s?|mais\s+long[oa]s?)\b", re.I)
_LONGEST_KINDS = frozenset({"id", "time", "datetime", "date", "duration"})


def check_longest(narrative: str, facts: list[Fact], result: GroundingResult) -> GroundingResult:
    """`result` plus an offence for each asset, time or duration in a sentence that calls a stop the longest and is
    not of a stop with the greatest duration (the `downtime_longest` fact, or a listed stop as long) or the window."""
    stops = [f for f in facts if f.kind == "downtime"]
    named = [f for f in facts if f.kind == "downtime_longest"]
    marked_at = [m.start() for m in _LONGEST.finditer(narrative)]
    if not (stops or named) or not marked_at:
        return result
    # Over every stop when the facts name it (only the first few stops may be listed), else over the listed ones.
    top = named[0].values["duration_s"] if named else max(f.values["duration_s"] for f in stops)
    longest = {f.id for f in [*named, *stops] if f.values["duration_s"] == top}
    longest |= {f.id for f in facts if f.kind == "window"}
    ends = [m.end() for m in SENTENCE_END.finditer(narrative)]
    marked = {bisect.bisect_right(ends, at) for at in marked_at}
    offending = list(result.offending)
    for claim in result.claims:
        if claim.kind in _LONGEST_KINDS and bisect.bisect_right(ends, claim.start) in marked:
            if not set(claim.fact_ids) & longest:
                reason = "said of the longest stop, but no longest stop has it"
                offending.append(
                    Offence(start=claim.start, end=claim.end, text=claim.text, kind="longest", reason=reason)
                )
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)


def section_grounding(text: str, section: Section, tz_name: str) -> GroundingResult:
    """The grounding a section's text must pass: on the section's facts, bound (in the notes, a note's own figures
    excepted, and a sentence naming a note held to that note's ties); the longest stop must be the longest."""
    facts = section.grounding_facts()
    if section.name == "notes":  # "X wrote about P-101 at 08:29": a note's time follows what it is about
        bound = check_bound(text, facts, tz_name, free=frozenset(f.id for f in section.facts))
        tied = check_note_ties(text, section, check_longest(text, facts, bound))
        return check_note_when(text, section, tied)
    return check_longest(text, facts, check_bound(text, facts, tz_name))
