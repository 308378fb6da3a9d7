"""The production and quality section's slots: the amounts produced, then the quality checks, failures first."""

from __future__ import annotations

import re
from typing import Any

from edge_agent.reports.narrative.phrasebook.writer import SectionWriter
from edge_agent.reports.narrative.prompts import format_number
from edge_agent.reports.narrative.slots.slot import Slot, of

PRODUCTION_MAX = 4

# Units written with an exponent (m3, m2): as m³ and m², which is how they are printed, and not a token the grounding
# check would take for an id.
_UNIT_POWER = re.compile(r"([A-Za-z]+)([23])")
_SUPERSCRIPT = {"2": "²", "3": "³"}


def _unit(w: SectionWriter, value: Any) -> str | None:
    text = w.inline(value, 20)
    if text is None:
        return None
    return (
        _UNIT_POWER.sub(lambda m: m.group(1) + _SUPERSCRIPT[m.group(2)], text) if _UNIT_POWER.fullmatch(text) else text
    )


def production_quality_slots(w: SectionWriter) -> list[Slot]:
    slots: list[Slot] = []
    produced = of(w.section.facts, "production")[:PRODUCTION_MAX]
    if produced:
        items = []
        for f in produced:
            unit = _unit(w, f.values["unit"])
            amount = format_number(f.values["count"]) + (f" {unit}" if unit else "")
            items.append(f"{amount} {w.words.in_} {w.name(f.subject)}")
        slots.append([w.phrase("pq.prod", items=w.listing(items))])
    checks = of(w.section.facts, "quality_checks")
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
