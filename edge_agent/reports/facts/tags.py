"""Facts from tag values: statistics per measured tag, and the changes of state tags (booleans and strings)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import pairwise
from typing import Any

from edge_agent.base.types import StoredRecord
from edge_agent.reports.facts.builder import (
    Builder,
    FactRecord,
    is_number,
    measure_problem,
    round_value,
    rounded_mean,
)
from edge_agent.reports.request import iso


def tag_facts(b: Builder, by_kind: Mapping[str, Sequence[FactRecord]], end: datetime, list_max: int) -> None:
    per_tag: dict[str, list[FactRecord]] = defaultdict(list)
    for r in by_kind.get("tag_value", []):
        if isinstance(r.value, (bool, str)):
            continue  # a state: `state_facts` reads it
        problem = "not_a_scalar" if not is_number(r.value) else measure_problem(r.value)
        if problem is None and r.quality == "bad":
            problem = "bad_quality"  # the server says the value is not valid: left out of the statistics
        if problem is not None:
            b.skip(r, problem)
        else:
            per_tag[r.key].append(r)
    for tag in sorted(per_tag):
        samples = per_tag[tag]
        lo = min(samples, key=lambda r: (r.value, r.source_time, r.id))
        hi = max(samples, key=lambda r: (r.value, -r.source_time.timestamp(), -r.id))
        values = {
            "samples_count": len(samples),
            "min": round_value(lo.value),
            "min_at": iso(lo.source_time),
            "max": round_value(hi.value),
            "max_at": iso(hi.source_time),
            "mean": rounded_mean([float(r.value) for r in samples]),
            "first": round_value(samples[0].value),
            "last": round_value(samples[-1].value),
        }
        asset = tag.split(".", 1)[0]
        b.add("tag_stats", values, samples, subject=tag, ids=[asset], key_records=[lo, hi, samples[0], samples[-1]])


def state_facts(b: Builder, by_kind: dict[str, list[StoredRecord]], end: datetime, list_max: int) -> None:
    per_tag: dict[str, list[StoredRecord]] = defaultdict(list)
    for r in by_kind.get("tag_value", []):
        if isinstance(r.value, (bool, str)):
            per_tag[r.key].append(r)
        elif not is_number(r.value):
            b.skip(r, "not_a_scalar")
    changes: list[tuple[StoredRecord, StoredRecord]] = []
    for tag in sorted(per_tag):
        samples = per_tag[tag]
        changes.extend((prev, cur) for prev, cur in pairwise(samples) if prev.value != cur.value)
    changes.sort(key=lambda pc: (pc[1].source_time, pc[1].id))
    for prev, cur in changes[:list_max]:
        asset = cur.key.split(".", 1)[0]
        values = {"from": _state(prev.value), "to": _state(cur.value), "at": iso(cur.source_time)}
        b.add("state_change", values, [prev, cur], subject=cur.key, ids=[asset])
    if len(changes) > list_max:
        b.add("state_changes_not_listed", {"count": len(changes) - list_max}, [c for _, c in changes[list_max:]])


def _state(value: Any) -> str:
    return ("on" if value else "off") if isinstance(value, bool) else str(value)
