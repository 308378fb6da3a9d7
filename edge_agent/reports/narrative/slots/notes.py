"""The operator notes section's slots: who wrote, the note tied to a stop or an alarm, flagged notes, the notes
not listed."""

from __future__ import annotations

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.sections import left_after, note_tie
from edge_agent.reports.narrative.slots.slot import Slot, of

# Three authors named, then "and others": a handover names people, it does not list a roster.
AUTHORS_MAX = 3


def _author(w: SectionWriter, note: Fact) -> str:
    """The author's name, or "an operator" when the name holds a digit (an id, not a name) or cannot be shown."""
    name = w.inline(note.values.get("author", ""), 40)
    return name if name and not any(c.isdigit() for c in name) else w.words.an_operator


def note_slots(w: SectionWriter) -> list[Slot]:
    notes = list(w.section.notes)
    slots: list[Slot] = []
    if notes:
        slots.append(_who(w, notes))
    tie = _note_tie(w, [n for n in notes if not n.values.get("flagged")])
    if tie:
        slots.append(tie)
    flagged = [n for n in notes if n.values.get("flagged")]
    if flagged:
        kind = "nt.flagged.one" if len(flagged) == 1 else "nt.flagged.other"
        at = flagged[0].values["at"]
        slots.append([w.phrase(kind, at=w.at(at), at_bare=w.bare(at))])
    for more in of(w.section.facts, "operator_notes_not_listed"):
        n = more.values["count"]
        slots.append([w.phrase(f"nt.more.{'one' if n == 1 else 'other'}", notes=w.count("note", n))])
    if not slots:
        slots.append([w.phrase("fallback", topic=w.words.topic["notes"])])
    return slots


def _who(w: SectionWriter, notes: list[Fact]) -> Slot:
    authors: list[str] = []
    for note in notes:
        name = _author(w, note)
        if name not in authors:
            authors.append(name)
    named = [a for a in authors if a != w.words.an_operator]
    if len(notes) == 1:
        return [w.phrase("nt.one", who=authors[0])]
    if len(authors) == 1:
        return [w.phrase("nt.many.one", who=authors[0])]
    shown = named[:AUTHORS_MAX]
    if len(shown) < len(authors):
        shown.append(w.words.others)
    return [w.phrase("nt.many.other", who=w.listing(shown))]


def _note_tie(w: SectionWriter, notes: list[Fact]) -> Slot:
    """The note tie (`note_tie`): after (or during) the stop, else after the alarm."""
    tie = note_tie(tuple(notes), w.section.related)
    if tie is None:
        return []
    note, v = tie.note, tie.event.values
    fields = {
        "who": _author(w, note),
        "asset": tie.asset,
        "at": w.at(note.values["at"]),
        "at_bare": w.bare(note.values["at"]),
        **w.agreeing(tie.asset),  # "mientras {asset} seguía {stopped}", "sobre {it}": "parada", "ella" of a pump
    }
    if tie.event.kind == "downtime":
        kind = "nt.tie_after" if left_after(note, tie.event) else "nt.tie_during"
        extra = {"dur": w.dur(v["duration_s"]), "start_bare": w.bare(v["start_at"])}
        return [w.phrase(kind, cause=c, **fields, **extra) for c in (w.cause(v["reason"]), "")]
    return [w.phrase("nt.tie_alarm", alarm=w.alarm(tie.event, n), **fields) for n in w.alarm_names(tie.event)]
