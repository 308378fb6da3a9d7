"""Note checks (pure, the notes section): what a sentence naming a note may say with it.

Note ties (`check_note_ties`, the notes section): a sentence naming a note (its local time, or its author) may give
only assets, times, durations and numbers of that note, of stops and alarms of the assets the note's text names, of
the notes left off the list, or of the window. "At 13:46, after P-101's 26 min stop, john.smith left a note" fails
when john.smith's 13:46 note is about T-301, although P-101's stop is a fact of the section (another note names it).

A note left during or after a stop (`check_note_when`, the notes section): a sentence naming a note and saying it
was left while a stop went on ("mientras P-101 seguía parado", "with P-102 still down", "parado desde 16:19") needs
the note's time within a stop of an asset the note names; saying it was left after one ("tras la parada de 20 min",
"which had been down for 28 min"), at or after that stop's end. "At 23:52, while P-101 was still down" fails when
that stop ended at 23:13 (seen in `make demo`): the figures bind, the words do not.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.claims import SENTENCE_END, Claim, GroundingResult, Offence
from edge_agent.reports.narrative.sections import Section, left_after, left_during, note_assets

_NOTE_TIME_KINDS = frozenset({"time", "datetime"})


def _author_pattern(author: object) -> re.Pattern[str] | None:
    """An author as a whole word of the text; none for a name holding a digit (the reference writer says "an
    operator" instead, and the model's copy of it is an id no fact names)."""
    name = str(author or "").strip()
    if len(name) < 2 or any(c.isdigit() for c in name):
        return None
    return re.compile(rf"(?<![\w.\-]){re.escape(name)}(?![\w\-])")


@dataclass
class _NotesNamed:
    """Which listed notes each sentence names (sentence index → note ids), by a note's local time or its author."""

    by_time: dict[int, set[str]] = field(default_factory=dict)
    by_author: dict[int, set[str]] = field(default_factory=dict)
    time_claims: list[tuple[int, Claim, set[str]]] = field(default_factory=list)  # claims that are only notes' times

    def named(self) -> dict[int, set[str]]:
        keys = self.by_time.keys() | self.by_author.keys()
        return {k: self.by_time.get(k, set()) | self.by_author.get(k, set()) for k in keys}


def _notes_named(narrative: str, notes: tuple[Fact, ...], result: GroundingResult, ends: list[int]) -> _NotesNamed:
    ids = {n.id for n in notes}
    out = _NotesNamed()
    for claim in result.claims:
        if claim.kind in _NOTE_TIME_KINDS and (times := set(claim.fact_ids) & ids):
            sentence = bisect.bisect_right(ends, claim.start)
            out.by_time.setdefault(sentence, set()).update(times)
            if set(claim.fact_ids) <= ids:  # only a note's time, not also a stop's or an alarm's
                out.time_claims.append((sentence, claim, times))
    for note in notes:
        if (pattern := _author_pattern(note.values.get("author"))) is not None:
            for m in pattern.finditer(narrative):
                out.by_author.setdefault(bisect.bisect_right(ends, m.start()), set()).add(note.id)
    return out


def check_note_ties(narrative: str, section: Section, result: GroundingResult) -> GroundingResult:
    """`result` plus an offence for each claim in a sentence that names a note (its time or its author) and is not
    that note's, of a stop or alarm of an asset its text names, of the unlisted notes, or of the window; and for a
    note's time given with an author who did not write a note at that time."""
    notes = section.notes
    if not notes:
        return result
    shared = {section.window.id} | {f.id for f in section.facts if f.kind == "operator_notes_not_listed"}
    tied = {
        n.id: {n.id, *shared, *(f.id for f in section.related if f.subject.split(".", 1)[0] in note_assets(n))}
        for n in notes
    }
    at_of = {n.id: str(n.values.get("at")) for n in notes}
    ends = [m.end() for m in SENTENCE_END.finditer(narrative)]
    found = _notes_named(narrative, notes, result, ends)
    named = found.named()
    if not named:
        return result
    offending = list(result.offending)
    # "ana.silva wrote at 20:04" when the 20:04 note is luis.ramirez's: each half is a note, but not the same one.
    for sentence, claim, times in found.time_claims:
        if (authors := found.by_author.get(sentence)) and not times & authors:
            reason = f"the note at {claim.text} is not by the author this sentence names"
            offending.append(Offence(start=claim.start, end=claim.end, text=claim.text, kind="note_tie", reason=reason))
    for claim in result.claims:
        sentence = bisect.bisect_right(ends, claim.start)
        if sentence not in named:
            continue
        allowed = set().union(*(tied[n] for n in named[sentence]))
        if not set(claim.fact_ids) & allowed:
            said_with = ", ".join(sorted(at_of[n] for n in named[sentence]))
            reason = f"said of the note at {said_with}, which is not about this"
            offending.append(Offence(start=claim.start, end=claim.end, text=claim.text, kind="note_tie", reason=reason))
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)


# A note said to be left while a stop went on, as the reference writer words it (`nt.tie_during`) and the model
# copies it: "mientras P-101 seguía parado", "with P-102 still down", "parado por cavitation desde 16:19" (but not
# "down since 10:51 until 11:17", which says when the stop ended).
_DURING = re.compile(
    r"\bmientras\b|\benquanto\b|\b(?:seguía|seguia)\s+parad[oa]\b|\bstill\s+(?:down|stopped)\b"
    r"|\b(?:parad[oa]|detenid[oa]|down|stopped)\b[^.!?]*?\b(?:desde|since)\b(?![^.!?]*\b(?:until|till|hasta|até)\b)",
    re.I,
)
# A note said to be left after a stop had ended (`nt.tie_after`): "tras la parada de 20 min de C-201", "after its
# 26 min stop", "which had been down for 28 min", "após a parada". After an alarm ("tras la alarma") is not read.
_AFTER = re.compile(
    r"\b(?:tras|después\s+de)\s+(?:la|su)\s+parada\b|\bhabía\s+estado\s+parad[oa]\b"
    r"|\bafter\s+(?:the|its)\s+(?:[^\s.!?]+\s+){0,4}?stop\b|\bhad\s+been\s+(?:down|stopped)\b"
    r"|\b(?:após\s+[ao]|depois\s+d[ao])\s+parada\b|\btinha\s+ficado\s+parad[oa]\b",
    re.I,
)


_WHEN = (("during", _DURING, left_during), ("after", _AFTER, left_after))


def _left(note: Fact, stops: list[Fact], said: set[str], holds: Callable[[Fact, Fact], bool]) -> bool:
    """Whether `holds` of the note and a stop of an asset it names (of those `said`, when the sentence names any)."""
    assets = (note_assets(note) & said) or note_assets(note)
    return any(f.subject in assets and holds(note, f) for f in stops)


def check_note_when(narrative: str, section: Section, result: GroundingResult) -> GroundingResult:
    """`result` plus an offence for a sentence that names a note (by a time only notes have, else by its author, else
    by a time) and says it was left while a stop went on, or after one, when no note it names was left so with
    respect to a stop of an asset the note's text names (of the one the sentence names, when it names one). "At
    23:52, while P-101 was still down" fails when P-101's stop ended at 23:13, although every figure is the note's or
    the stop's."""
    if not section.notes:
        return result
    ends = [m.end() for m in SENTENCE_END.finditer(narrative)]
    found = _notes_named(narrative, section.notes, result, ends)
    notes = {n.id: n for n in section.notes}
    stops = [f for f in section.related if f.kind == "downtime"]
    only_notes: dict[int, set[str]] = {}  # a time that is also a stop's may mean the stop: the author decides then
    for sentence, _, times in found.time_claims:
        only_notes.setdefault(sentence, set()).update(times)
    offending = list(result.offending)
    for kind, pattern, holds in _WHEN:
        firsts: dict[int, re.Match[str]] = {}  # sentence → its first such wording
        for m in pattern.finditer(narrative):
            firsts.setdefault(bisect.bisect_right(ends, m.start()), m)
        for sentence, mark in firsts.items():
            named = only_notes.get(sentence) or found.by_author.get(sentence) or found.by_time.get(sentence)
            if not named:
                continue
            said = {c.text for c in result.claims if c.kind == "id" and bisect.bisect_right(ends, c.start) == sentence}
            if not any(_left(notes[n], stops, said, holds) for n in named):
                at = ", ".join(sorted(str(notes[n].values.get("at")) for n in named))
                reason = f"the note at {at} was not left {kind} a stop of an asset it names"
                offending.append(
                    Offence(start=mark.start(), end=mark.end(), text=mark.group(), kind=kind, reason=reason)
                )
    offending.sort(key=lambda o: o.start)
    return GroundingResult(ok=not offending, claims=result.claims, offending=offending)
