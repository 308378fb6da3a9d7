"""Tag tools: a tag's statistics over a window (the report's `tag_stats` fact), and its value at a moment."""

from __future__ import annotations

from datetime import timedelta

from edge_agent.ask.tools.context import ToolContext
from edge_agent.ask.tools.errors import ToolError
from edge_agent.ask.tools.facts import tag_stats_facts
from edge_agent.ask.tools.models import TagStatsInput, TagStatsOutput, TagValueAtInput, TagValueAtOutput
from edge_agent.ask.tools.records import Reader, check_window, require_tag
from edge_agent.base.quantities import quantity_of
from edge_agent.reports.request import from_iso


def tag_stats(ctx: ToolContext, args: TagStatsInput) -> TagStatsOutput:
    """Minimum, maximum (each with its time), mean, first and last of a tag's usable samples in the window, as a
    report over that window states them (bad-quality samples and non-numbers left out)."""
    require_tag(ctx, args.tag)
    check_window(ctx, args.window)
    rows = Reader(ctx).rows(args.window.start, args.window.end, keys=[args.tag], kinds=["tag_value"])
    stats = tag_stats_facts(rows, args.window)
    unit = quantity_of(args.tag).unit
    if not stats:
        return TagStatsOutput(
            record_ids=[], record_count=0, tag=args.tag, unit=unit, count=0, min=None, min_at=None, max=None,
            max_at=None, mean=None, first=None, first_at=None, last=None, last_at=None,
        )  # fmt: skip
    traced = stats[0]
    v = traced.fact.values
    samples = [r for r in rows if r.id in traced.sources]  # oldest first, as read
    return TagStatsOutput(
        record_ids=traced.fact.record_ids,
        record_count=traced.fact.record_count,
        tag=args.tag,
        unit=unit,
        count=v["samples_count"],
        min=v["min"],
        min_at=from_iso(v["min_at"]),
        max=v["max"],
        max_at=from_iso(v["max_at"]),
        mean=v["mean"],
        first=v["first"],
        first_at=samples[0].source_time,
        last=v["last"],
        last_at=samples[-1].source_time,
    )


# 1 µs: a store time's resolution; the newest sample *at or before* `at` is the newest before `at` + 1 µs.
_TICK = timedelta(microseconds=1)


def tag_value_at(ctx: ToolContext, args: TagValueAtInput) -> TagValueAtOutput:
    """The tag's newest sample at or before `at` (one index look-up), with its time and quality."""
    require_tag(ctx, args.tag)
    try:
        end = args.at + _TICK
    except OverflowError:  # 9999-12-31T23:59:59.999999Z: every sample is at or before it
        end = None
    found = ctx.store.records(None, end, keys=[args.tag], kinds=["tag_value"], limit=1, newest_first=True)
    if not found:
        raise ToolError("outside_data", f"no sample of {args.tag!r} at or before {args.at.isoformat()}")
    r = found[0]
    value = r.value if isinstance(r.value, (bool, int, float, str)) else None
    return TagValueAtOutput(
        record_ids=[r.id],
        record_count=1,
        tag=args.tag,
        unit=quantity_of(args.tag).unit,
        value=value,
        sampled_at=r.source_time,
        quality=r.quality,
    )
