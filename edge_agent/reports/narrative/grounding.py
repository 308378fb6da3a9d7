"""Grounding check (pure): every number, asset/tag id, time, date and duration in a narrative must match a fact.

The claims are read as `claims.check_narrative` reads them (its docstring holds the rules); the checks here and in
`note_grounding` hold each figure to what the sentence says it is of.

Binding (`check_bound`): a figure (number, time, date, duration) said after an asset or tag id in the same sentence
must be a figure of a fact naming that id, or of the window. "P-101.flow_m3h peaked at 887.86" fails when 887.86 is
C-201.flow_m3h's maximum, although 887.86 is a fact. `section_grounding` applies it to every section; in the notes
the notes' own figures are bound to nothing, since a note's time follows the asset the note is about.
A tag named as people say it names that tag (`tag_named`): an asset id with one of its tags' quantity names before
it ("la vibración de la bomba P-101", "the vibration of pump P-101", "a vazão do compressor C-201") or after it in
the possessive ("pump P-101's vibration") binds the figures after it to that tag's facts, as "P-101.vibration_mm_s"
does; "la vibración de la bomba P-101 llegó a 57.56" fails when 57.56 is P-101's bearing temperature.

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
from collections import defaultdict

from edge_agent.base.quantities import quantity_of
from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.claims import SENTENCE_END, Claim, GroundingResult, Offence, check_narrative
from edge_agent.reports.narrative.note_grounding import check_note_ties, check_note_when
from edge_agent.reports.narrative.sections import Section

# What may stand between a quantity's name and its asset's id, in es/en/pt: "de", "of", articles and contractions,
# "en"/"on"/"in"; then one word right before the id, the asset's kind ("la vibración de la bomba P-101").
_LINKS = r"(?:de|del|la|el|da|do|of|the|a|o|en|em|na|no|on|in)"
# How far before an asset id its tag's name is looked for: a long name with its links, not the sentence's start.
_NAME_REACH = 120


def tag_names(facts: list[Fact]) -> dict[str, dict[str, set[str]]]:
    """Per asset, each name of a tag the facts name (every language's, `base.quantities`, and the key's own words,
    folded) → the tags so called: {"P-101": {"vibración": {"P-101.vibration_mm_s"}, ...}}."""
    names: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for fact in facts:
        for ident in fact.ids:
            asset, dot, measure = ident.partition(".")
            if not dot or not asset or not measure:
                continue
            q = quantity_of(ident)
            for said in [*(n for per_language in q.names.values() for n in per_language), q.quantity]:
                key = " ".join(said.replace("_", " ").split()).casefold()
                if key:
                    names[asset][key].add(ident)
    return names


def _name_pattern(names: list[str]) -> str:
    """The names, longest first, as one alternation; a space in a name matches any run of spaces."""
    return "|".join(r"\s+".join(map(re.escape, n.split())) for n in sorted(names, key=len, reverse=True))


def tag_named(narrative: str, claim: Claim, names: dict[str, dict[str, set[str]]], start: int) -> set[str]:
    """The tags an asset id claim names by a quantity's name, in its sentence (which begins at `start`): before it,
    joined by `_LINKS` and the asset's kind ("la temperatura del rodamiento de la bomba P-101"), or after it in the
    possessive ("pump P-101's vibration"). Empty when no name of the asset's tags is joined to it."""
    called = names.get(claim.text)
    if not called:
        return set()
    pattern = _name_pattern(list(called))
    before = re.compile(rf"(?<!\w)({pattern})(?:\s+{_LINKS})*(?:\s+[^\W\d_]+)?\s+$", re.I)
    said = before.search(narrative, max(start, claim.start - _NAME_REACH), claim.start)
    if said is None:
        after = re.compile(rf"(?:'s|’s)\s+({pattern})(?!\w)", re.I)
        said = after.match(narrative, claim.end, claim.end + _NAME_REACH)
    if said is None:
        return set()
    return set(called.get(" ".join(said.group(1).split()).casefold(), set()))


def check_bound(narrative: str, facts: list[Fact], tz_name: str, free: frozenset[str] = frozenset()) -> GroundingResult:
    """`check_narrative`, plus binding: in a sentence, each figure after an id must be a fact of that id's (or the
    window's); the nearest id before it is the one it is said of. An asset id with a tag's name joined to it
    (`tag_named`) is that tag's id. A figure of a `free` fact (a note's time, which follows the asset the note is
    about, or how many notes are not listed) is bound to nothing."""
    result = check_narrative(narrative, facts, tz_name)
    names = tag_names(facts)
    of_tag = {
        ident: {f.id for f in facts if ident in f.ids}
        for per_asset in names.values()
        for t in per_asset.values()
        for ident in t
    }
    window = {f.id for f in facts if f.kind == "window"} | free
    ends = [m.end() for m in SENTENCE_END.finditer(narrative)]
    offending = list(result.offending)
    subject: Claim | None = None
    subject_facts: set[str] = set()
    sentence = 0
    for claim in result.claims:
        here = bisect.bisect_right(ends, claim.start)  # sentence ends at or before the claim
        if here != sentence:
            subject, sentence = None, here
        if claim.kind == "id":
            subject, subject_facts = claim, set(claim.fact_ids)
            tags = tag_named(narrative, claim, names, ends[here - 1] if here else 0)
            if tags:
                subject_facts = set().union(*(of_tag[t] for t in tags))
        elif subject is not None and not set(claim.fact_ids) & (subject_facts | window):
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
