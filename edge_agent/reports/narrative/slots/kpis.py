"""The plant KPIs' sections' slots: OEE per line, MTBF/MTTR per asset, and the ISA-18.2 alarm performance review."""

from __future__ import annotations

from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.prompts import format_number, format_percent
from edge_agent.reports.narrative.slots.slot import MAX_SENTENCES, Slot, of


def _pct(w: SectionWriter, value: float | None) -> str:
    return w.book.label("not_computable") if value is None else format_percent(value)


def oee_slots(w: SectionWriter) -> list[Slot]:
    slots: list[Slot] = []
    lines = of(w.section.facts, "oee")
    for f in lines[:MAX_SENTENCES]:
        v = f.values
        ratios = {k: _pct(w, v[k]) for k in ("availability", "performance", "quality", "oee")}
        line = w.name(f.subject)
        if v["oee"] is not None:
            slots.append([w.phrase("oee.full", line=line, **ratios)])
        else:
            del ratios["oee"]
            missing = [w.words.missing.get(code, code.replace("_", " ")) for code in v["missing"].split(", ") if code]
            slots.append([w.phrase("oee.partial", line=line, missing="; ".join(missing) or "-", **ratios)])
    for f in lines[: MAX_SENTENCES - len(slots)]:
        v = f.values
        if v["planned_busy_time_s"] > 0:
            fields = {
                "busy": w.dur(v["planned_busy_time_s"]),
                "lost": w.dur(v["unplanned_downtime_s"]),
                "planned": w.dur(v["planned_downtime_s"]),
            }
            # No planned stop: said so, not "and planned stops a further 0 s".
            key = "oee.time" if v["planned_downtime_s"] else "oee.time_unplanned"
            slots.append([w.phrase(key, line=w.name(f.subject), **fields)])
    return slots


def maintenance_slots(w: SectionWriter) -> list[Slot]:
    mttr = {f.subject: f for f in of(w.section.facts, "mttr")}
    failed = [f for f in of(w.section.facts, "mtbf") if f.values["mtbf_s"] is not None and f.subject in mttr]
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


def alarm_performance_slots(w: SectionWriter) -> list[Slot]:
    facts = w.section.facts
    slots: list[Slot] = []
    rates = of(facts, "alarm_rate")
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
    flood = of(facts, "alarm_flood")
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
    episodes = of(facts, "alarm_flood_episode")
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
    bad = of(facts, "alarm_bad_actors")
    actors = sorted(of(facts, "alarm_bad_actor"), key=lambda f: f.values["rank"])
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
    counts = {k: of(facts, k) for k in ("alarm_chattering", "alarm_standing", "alarm_stale")}
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
    mix = of(facts, "alarm_priority_mix")
    if mix and mix[0].values["low_share"] is not None:
        v = mix[0].values
        fields = {band: format_percent(v[f"{band}_share"]) for band in ("low", "medium", "high")}
        bench = {f"b_{band}": format_percent(v[f"benchmark_{band}_share"]) for band in ("low", "medium", "high")}
        slots.append([w.phrase("ap.priority", **fields, **bench)])
    return slots
