"""The reference writer (pure, deterministic): one section's narrative as a careful shift supervisor writes it.

It is the target a small model is fine-tuned on and the text published when the model's own text for a section fails
its checks, so it must read well and always pass them. Every figure, time and duration comes from the section's
facts through the phrasebook's formatting (`format_number`, `format_duration`, `format_time`), so the grounding
check reads it back exactly; record text (alarm messages, reasons, authors, units) goes through `safe_text`, and is
left out where it would read as more than one sentence. Counts the facts do not hold (how many notes, how many state
changes) are never written as figures: a figure the check cannot trace is one the model must not learn to write.

Each kind of sentence has at least three wordings per language, kept as data in the reference phrasebook
(`phrasebook/v1/<language>.toml`) and written out by `phrasebook.writer.SectionWriter`; the wording is chosen from a
hash of the section's content, so the same facts always give the same text and different reports read differently.
Each sentence is a list of candidates, richest first; the first that passes the grounding check on its own is kept (a
reason such as `seal_2` is an id no fact names), and a section where nothing passes still gets one figure-free
sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from edge_agent.reports.facts import Fact
from edge_agent.reports.narrative.grounding import section_grounding
from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.prompts import fact_sentence, format_number, format_percent
from edge_agent.reports.narrative.prose import prose_problems
from edge_agent.reports.narrative.sections import Section, left_after, note_tie
from edge_agent.reports.request import ResolvedRequest, from_iso

# r2: the causes sentence reads the `downtime_cause` facts (every stop of the window, not only the listed ones);
# r3: the longest stop is the `downtime_longest` fact's (likewise); r4: "{fails}" (a count with its noun, "4 controles
# fallidos") no longer followed by the noun's adjective again in es and pt ("4 controles fallidos fallidos de 16");
# r5: the notes tie is `sections.note_tie`'s, and the notes section's related facts are that one event (the same tie
# as r4's; the wording, picked by a hash over the section's facts, differs); r6: the process-values section lists its
# tag statistics peaks first (`sections.tag_peak`), and that hash reads them in that order (the same tags are named,
# some in other wordings); r7: that section holds only the `sections.TAGS_MAX` top peaks, which the hash reads (the
# same tags are named, some in other wordings); r8: the plant KPIs' sections (`oee`, `maintenance`,
# `alarm_performance`), their wordings only added to the phrasebook: every earlier section's text is unchanged.
REFERENCE_VERSION = "r8"
MAX_SENTENCES = 4
# An alarm performance review says rate, floods, the worst flood, the top alarms, chattering/standing/stale and the
# priority mix: six sentences, each short.
SECTION_SENTENCES = {"alarm_performance": 6}
# An alarm is tied to a stop on its asset that starts from its first activation to an hour after its last: long
# enough for a vibration alarm to end in a trip, short enough not to blame an alarm for the next shift's stop.
TIE_WINDOW_S = 3600
# Three authors named, then "and others": a handover names people, it does not list a roster.
AUTHORS_MAX = 3
PRODUCTION_MAX = 4

# Units written with an exponent (m3, m2): as m³ and m², which is how they are printed, and not a token the grounding
# check would take for an id.
_UNIT_POWER = re.compile(r"([A-Za-z]+)([23])")
_SUPERSCRIPT = {"2": "²", "3": "³"}

# A sentence slot: its candidate wordings, richest first; the first that passes the checks is written.
_Slot = list[str]


def _of(facts: Sequence[Fact], kind: str) -> list[Fact]:
    return [f for f in facts if f.kind == kind]


def _seconds(iso_utc: str) -> float:
    return from_iso(iso_utc).timestamp()


# --- downtime -----------------------------------------------------------------------------------------------------


def _downtime(w: SectionWriter) -> list[_Slot]:
    facts = w.section.facts
    totals = _of(facts, "downtime_total")
    stops = _of(facts, "downtime")
    total = totals[0] if totals else None
    if total is not None and total.values["count"] == 0:
        return [[w.phrase("dt.none")]]
    if total is not None and total.values["count"] == 1 and len(stops) == 1:
        return [_stop(w, stops[0], "dt.single", "dt.single_open")]
    slots: list[_Slot] = []
    if total is not None:
        slots.append(
            [w.phrase("dt.total", stops=w.count("stop", total.values["count"]), dur=w.dur(total.values["duration_s"]))]
        )
    causes = _of(facts, "downtime_cause")
    if causes and (total is None or total.values["count"] >= 2):
        slots.append(_causes(w, causes, total))
    # Two stops or more have a `downtime_longest` fact (over every stop; a single stop was said above).
    named = _of(facts, "downtime_longest")
    if named:
        longest = named[0]
        slots.append(_stop(w, longest, "dt.longest", "dt.longest_open"))
        same = (longest.subject, longest.values["start_at"])
        still_open = [f for f in stops if f.values.get("open") and (f.subject, f.values["start_at"]) != same]
        if still_open:
            slots.append(_stop(w, still_open[0], None, "dt.open"))
    return slots


def _stop(w: SectionWriter, fact: Fact, closed: str | None, open_: str) -> _Slot:
    v = fact.values
    kind = open_ if v.get("open") else closed
    assert kind is not None  # only open stops are asked for without a closed wording
    fields = {
        "asset": w.name(fact.subject),
        "span": w.span(v["start_at"], v["end_at"]),
        "start": w.at(v["start_at"]),
        "start_bare": w.bare(v["start_at"]),
        "dur": w.dur(v["duration_s"]),
    }
    return [w.phrase(kind, cause=cause, **fields) for cause in (w.cause(v["reason"]), "")]


def _causes(w: SectionWriter, causes: list[Fact], total: Fact | None) -> _Slot:
    """The cause that cost the most time (rank 1), then the most frequent (ties: the better ranked). Past
    `list_facts_max` causes the unlisted ones may hold more stops: frequency is claimed only when they cannot."""
    top = w.inline(causes[0].values["reason"])
    if top is None:
        return []
    if len(causes) == 1 and (total is None or causes[0].values["count"] == total.values["count"]):
        return [w.phrase("dt.cause_only", reason=top)]
    frequent_fact = max(causes, key=lambda f: (f.values["count"], -f.values["rank"]))
    unlisted = total.values["count"] - sum(f.values["count"] for f in causes) if total is not None else 0
    if frequent_fact.values["count"] <= unlisted:
        return []
    frequent = w.inline(frequent_fact.values["reason"])
    if frequent_fact is causes[0] or frequent is None:
        return [w.phrase("dt.cause_same", reason=top)]
    return [w.phrase("dt.cause_split", reason=top, frequent=frequent)]


# --- alarms -------------------------------------------------------------------------------------------------------


def _alarms(w: SectionWriter) -> list[_Slot]:
    totals = _of(w.section.facts, "alarm_total")
    tops = sorted(_of(w.section.facts, "top_alarm"), key=lambda f: f.values["rank"])
    total = totals[0] if totals else None
    if total is not None and total.values["count"] == 0:
        return [[w.phrase("al.none")]]
    slots: list[_Slot] = []
    top = tops[0] if tops else None
    if total is not None and total.values["count"] == 1 and top is not None:
        slots.append(
            [
                w.phrase("al.single", short=w.short(top, n), first=w.at(top.values["first_at"]))
                for n in w.alarm_names(top)
            ]
        )
    else:
        if total is not None:
            n = total.values["count"]
            assets = w.count("asset", total.values["assets_count"])
            slots.append(
                [w.phrase(f"al.total.{'one' if n == 1 else 'other'}", alarms=w.count("alarm", n), assets=assets)]
            )
        if top is not None:
            slots.append(_top_alarm(w, top))
    tie = _tie(w, tops)
    if tie is not None:
        slots.append(tie)
    return slots


def _top_alarm(w: SectionWriter, top: Fact) -> _Slot:
    v = top.values
    kind = "al.top.one" if v["count"] == 1 else "al.top.other"
    return [
        w.phrase(
            kind,
            alarm=w.alarm(top, name),
            times=w.count("time", v["count"]),
            first=w.at(v["first_at"]),
            span=w.span(v["first_at"], v["last_at"]),
        )
        for name in w.alarm_names(top)
    ]


def _tie(w: SectionWriter, tops: list[Fact]) -> _Slot | None:
    """The first alarm, by rank, followed by a stop on its asset: from its first activation to an hour past its
    last (the earliest such stop)."""
    stops = _of(w.section.related, "downtime")
    for alarm in tops:
        first, last = _seconds(alarm.values["first_at"]), _seconds(alarm.values["last_at"])
        tied = [
            s
            for s in stops
            if s.subject == alarm.subject and first <= _seconds(s.values["start_at"]) <= last + TIE_WINDOW_S
        ]
        if tied:
            stop = min(tied, key=lambda s: _seconds(s.values["start_at"]))
            # The most frequent alarm was named in the sentence before: "the same alarm" refers back to it.
            names = [w.words.same_alarm] if alarm is tops[0] else [w.alarm(alarm, n) for n in w.alarm_names(alarm)]
            return [
                w.phrase(
                    "al.tie",
                    alarm=name,
                    asset=w.name(stop.subject),
                    stop=w.at(stop.values["start_at"]),
                    cause=cause,
                )
                for cause in (w.cause(stop.values["reason"]), "")
                for name in names
            ]
    return None


# --- notes --------------------------------------------------------------------------------------------------------


def _author(w: SectionWriter, note: Fact) -> str:
    """The author's name, or "an operator" when the name holds a digit (an id, not a name) or cannot be shown."""
    name = w.inline(note.values.get("author", ""), 40)
    return name if name and not any(c.isdigit() for c in name) else w.words.an_operator


def _notes(w: SectionWriter) -> list[_Slot]:
    notes = list(w.section.notes)
    slots: list[_Slot] = []
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
    for more in _of(w.section.facts, "operator_notes_not_listed"):
        n = more.values["count"]
        slots.append([w.phrase(f"nt.more.{'one' if n == 1 else 'other'}", notes=w.count("note", n))])
    if not slots:
        slots.append([w.phrase("fallback", topic=w.words.topic["notes"])])
    return slots


def _who(w: SectionWriter, notes: list[Fact]) -> _Slot:
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


def _note_tie(w: SectionWriter, notes: list[Fact]) -> _Slot:
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
    }
    if tie.event.kind == "downtime":
        kind = "nt.tie_after" if left_after(note, tie.event) else "nt.tie_during"
        extra = {"dur": w.dur(v["duration_s"]), "start_bare": w.bare(v["start_at"])}
        return [w.phrase(kind, cause=c, **fields, **extra) for c in (w.cause(v["reason"]), "")]
    return [w.phrase("nt.tie_alarm", alarm=w.alarm(tie.event, n), **fields) for n in w.alarm_names(tie.event)]


# --- production and quality ---------------------------------------------------------------------------------------


def _unit(w: SectionWriter, value: Any) -> str | None:
    text = w.inline(value, 20)
    if text is None:
        return None
    return (
        _UNIT_POWER.sub(lambda m: m.group(1) + _SUPERSCRIPT[m.group(2)], text) if _UNIT_POWER.fullmatch(text) else text
    )


def _production_quality(w: SectionWriter) -> list[_Slot]:
    slots: list[_Slot] = []
    produced = _of(w.section.facts, "production")[:PRODUCTION_MAX]
    if produced:
        items = []
        for f in produced:
            unit = _unit(w, f.values["unit"])
            amount = format_number(f.values["count"]) + (f" {unit}" if unit else "")
            items.append(f"{amount} {w.words.in_} {w.name(f.subject)}")
        slots.append([w.phrase("pq.prod", items=w.listing(items))])
    checks = _of(w.section.facts, "quality_checks")
    # Failures first: they are what the next shift must act on.
    for f in sorted(checks, key=lambda f: f.values["fail_count"] == 0)[: 4 - len(slots)]:
        v = f.values
        n, fails = v["checks_count"], v["fail_count"]
        fields = {
            "asset": w.name(f.subject),
            "checks": w.count("check", n),
            "checks_n": format_number(n),
            "fails": w.count("fail", fails),
            "fails_n": format_number(fails),
        }
        if fails == 0:
            kind = "pq.pass.one" if n == 1 else "pq.pass.other"
        elif n == 1:
            kind = "pq.fail_single"
        else:
            kind = "pq.fail.one" if fails == 1 else "pq.fail.other"
        slots.append([w.phrase(kind, **fields)])
    return slots


# --- process values -----------------------------------------------------------------------------------------------


def _process_values(w: SectionWriter) -> list[_Slot]:
    slots: list[_Slot] = []
    stats = _of(w.section.facts, "tag_stats")  # `split_sections` keeps the top peaks, highest first (`tag_peak`)
    if stats:
        top = stats[0].values
        slots.append(
            [
                w.phrase(
                    "pv.peak",
                    tag=w.name(stats[0].subject),
                    max=format_number(top["max"]),
                    max_at=w.at(top["max_at"]),
                    mean=format_number(top["mean"]),
                )
            ]
        )
    if len(stats) > 1:
        items = [
            w.words.peak_item.format(
                tag=w.name(f.subject),
                max=format_number(f.values["max"]),
                at=w.at(f.values["max_at"]),
                mean=format_number(f.values["mean"]),
            )
            for f in stats[1:]
        ]
        slots.append([w.phrase("pv.peaks", items=w.listing(items))])
    slots.append(_states(w))
    return slots


def _change(w: SectionWriter, f: Fact, with_values: bool) -> str:
    v, tag = f.values, w.name(f.subject)
    from_, to = w.inline(v["from"], 40), w.inline(v["to"], 40)
    values = with_values and from_ is not None and to is not None
    if values:
        return w.words.change.format(tag=tag, from_=from_, to=to, at=w.at(v["at"]))
    return w.words.change_short.format(tag=tag, at=w.at(v["at"]))


def _states(w: SectionWriter) -> _Slot:
    changes = _of(w.section.facts, "state_change")
    more = _of(w.section.facts, "state_changes_not_listed")
    if not changes:
        return []
    if more:
        n = more[0].values["count"]
        return [
            w.phrase(
                "pv.state.more", first=_change(w, changes[0], full), more=format_number(n), more_n=format_number(n)
            )
            for full in (True, False)
        ]
    if len(changes) == 1:
        v = changes[0].values
        from_, to = w.inline(v["from"], 40), w.inline(v["to"], 40)
        if from_ is None or to is None:
            return []
        return [w.phrase("pv.state.one", tag=w.name(changes[0].subject), from_=from_, to=to, at=w.at(v["at"]))]
    return [
        w.phrase("pv.state.many", first=_change(w, changes[0], full), last=_change(w, changes[-1], full))
        for full in (True, False)
    ]


# --- plant KPIs ---------------------------------------------------------------------------------------------------


def _pct(w: SectionWriter, value: float | None) -> str:
    return w.book.label("not_computable") if value is None else format_percent(value)


def _oee(w: SectionWriter) -> list[_Slot]:
    slots: list[_Slot] = []
    lines = _of(w.section.facts, "oee")
    for f in lines[:MAX_SENTENCES]:
        v = f.values
        ratios = {k: _pct(w, v[k]) for k in ("availability", "performance", "quality", "oee")}
        line = w.name(f.subject)
        if v["oee"] is not None:
            slots.append([w.phrase("oee.full", line=line, **ratios)])
        else:
            del ratios["oee"]
            slots.append([w.phrase("oee.partial", line=line, missing=w.inline(v["missing"]) or "-", **ratios)])
    for f in lines[: MAX_SENTENCES - len(slots)]:
        v = f.values
        if v["planned_busy_time_s"] > 0:
            fields = {
                "busy": w.dur(v["planned_busy_time_s"]),
                "lost": w.dur(v["unplanned_downtime_s"]),
                "planned": w.dur(v["planned_downtime_s"]),
            }
            slots.append([w.phrase("oee.time", line=w.name(f.subject), **fields)])
    return slots


def _maintenance(w: SectionWriter) -> list[_Slot]:
    mttr = {f.subject: f for f in _of(w.section.facts, "mttr")}
    failed = [f for f in _of(w.section.facts, "mtbf") if f.values["mtbf_s"] is not None and f.subject in mttr]
    if not failed:
        return [[w.phrase("mt.none")]]
    # Most failures first, then the longest repairs: what a maintenance planner acts on.
    failed.sort(key=lambda f: (-f.values["failure_count"], -(mttr[f.subject].values["mttr_s"] or 0), f.subject))
    return [
        [
            w.phrase(
                "mt.asset",
                asset=w.name(f.subject),
                failures=w.count("failure", f.values["failure_count"]),
                mttr=w.dur(mttr[f.subject].values["mttr_s"]),
                mtbf=w.dur(f.values["mtbf_s"]),
            )
        ]
        for f in failed[:MAX_SENTENCES]
    ]


def _alarm_performance(w: SectionWriter) -> list[_Slot]:
    facts = w.section.facts
    slots: list[_Slot] = []
    rates = _of(facts, "alarm_rate")
    if rates and sum(f.values["count"] for f in rates) == 0:
        return [[w.phrase("ap.none")]]
    for f in rates[:2]:
        v = f.values
        fields = {
            "alarms": w.count("alarm", v["count"]),
            "per_hour": format_number(v["per_hour_mean"]),
            "bench": format_number(v["benchmark_per_hour"]),
            "bench_max": format_number(v["benchmark_per_hour_max"]),
            "peak": format_number(v["per_10min_peak"]),
        }
        if len(rates) == 1:
            slots.append([w.phrase("ap.rate", **fields)])
        else:
            slots.append([w.phrase("ap.rate_console", console=w.name(f.subject), **fields)])
    flood = _of(facts, "alarm_flood")
    if flood:
        v = flood[0].values
        if v["episodes_count"]:
            share = format_percent(v["flood_share"])
            runs = w.count("episode", v["episodes_count"])
            slots.append(
                [w.phrase("ap.flood", share=share, episodes=runs, bench=format_percent(v["benchmark_flood_share"]))]
            )
        else:
            slots.append([w.phrase("ap.flood_none", bench=format_percent(v["benchmark_flood_share"]))])
    episodes = _of(facts, "alarm_flood_episode")
    if episodes:
        e = max(episodes, key=lambda f: f.values["count"])
        v = e.values
        slots.append(
            [
                w.phrase(
                    "ap.episode",
                    span=w.span(v["start_at"], v["end_at"]),
                    count=format_number(v["count"]),
                    top=w.name(v["top_1_asset"]),
                    top_count=format_number(v["top_1_count"]),
                )
            ]
        )
    bad = _of(facts, "alarm_bad_actors")
    actors = sorted(_of(facts, "alarm_bad_actor"), key=lambda f: f.values["rank"])
    if bad and actors and bad[0].values["top10_share"] is not None:
        first = actors[0]
        slots.append(
            [
                w.phrase(
                    "ap.bad",
                    share=format_percent(bad[0].values["top10_share"]),
                    alarm=w.alarm(first, name),
                    times=w.count("time", first.values["count"]),
                )
                for name in w.alarm_names(first)
            ]
        )
    counts = {k: _of(facts, k) for k in ("alarm_chattering", "alarm_standing", "alarm_stale")}
    if all(counts.values()):
        n = {k: v[0].values["count"] for k, v in counts.items()}
        slots.append(
            [
                w.phrase(
                    "ap.health",
                    chattering=w.count("alarm", n["alarm_chattering"]),
                    standing=format_number(n["alarm_standing"]),
                    stale=format_number(n["alarm_stale"]),
                )
            ]
        )
    mix = _of(facts, "alarm_priority_mix")
    if mix and mix[0].values["low_share"] is not None:
        v = mix[0].values
        fields = {band: format_percent(v[f"{band}_share"]) for band in ("low", "medium", "high")}
        bench = {f"b_{band}": format_percent(v[f"benchmark_{band}_share"]) for band in ("low", "medium", "high")}
        slots.append([w.phrase("ap.priority", **fields, **bench)])
    return slots


_BUILDERS: dict[str, Callable[[SectionWriter], list[_Slot]]] = {
    "alarms": _alarms,
    "downtime": _downtime,
    "production_quality": _production_quality,
    "notes": _notes,
    "process_values": _process_values,
    "oee": _oee,
    "maintenance": _maintenance,
    "alarm_performance": _alarm_performance,
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
