"""The plant's namespace: its lines, assets and tags as the recent records and the config name them, each tag with
its quantity, unit and the names people use for it, so a question's words can be resolved to ids."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timedelta

from edge_agent.ask.tools.context import Budget, ToolContext
from edge_agent.ask.tools.errors import ToolError
from edge_agent.ask.tools.event_memo import EVENTS, EventMemo
from edge_agent.ask.tools.facts import record_ids
from edge_agent.ask.tools.models import AssetInfo, LineInfo, Namespace, NamespaceInput, TagInfo
from edge_agent.ask.tools.records import KEYS_MAX
from edge_agent.base.quantities import quantity_of
from edge_agent.config import AgentConfig
from edge_agent.reports.facts import DATA_GAP
from edge_agent.store import Store

# 7 days: a week covers every asset of a plant that runs in shifts, even one stopped over a weekend, while a tag
# retired last month no longer shows; one index look-up per key, whatever the records' rate.
RECENT = timedelta(days=7)
_ASSET_KINDS = ("alarm", "mes_event")


def build_namespace(
    store: Store,
    config: AgentConfig,
    now: datetime,
    *,
    aliases: dict[str, str] | None = None,
    budget: Budget | None = None,
    memo: EventMemo | None = None,
) -> Namespace:
    """The keys with a record in the last seven days before `now`: tags (`asset.quantity_unit`), assets (the keys
    of alarms and MES events, and the assets of tags) and lines (those MES events name, those production is counted
    for and those `[reports.kpi]` lists). An asset's line is the one its MES events name most; its names are the
    aliases (`[ask] aliases`, alias → id) that point at it. Raises ToolError("outside_budget") when the week's MES
    events are more than the budget's rows. `memo`: where the events' summaries are remembered (None: the process's
    own, `event_memo.EVENTS`)."""
    budget = budget or Budget()
    newest = store.recent_keys(now - RECENT, KEYS_MAX)
    tag_keys = sorted(r.key for r in newest if r.kind in ("tag_value", DATA_GAP) and "." in r.key)
    event_keys = sorted(r.key for r in newest if r.kind in _ASSET_KINDS)
    # Each event's key and value text alone, summarized through the memo (by the text: exact): a StoredRecord built
    # and parsed for each was most of the 4.6 ms this took; 1.0 ms now (383 events, bench.ask's store).
    events = store.value_texts(now - RECENT, now, keys=event_keys, kinds=["mes_event"], limit=budget.max_rows + 1)
    if len(events) > budget.max_rows:
        raise ToolError("outside_budget", f"more than {budget.max_rows} MES events in the last {RECENT.days} days")
    lines_of: dict[str, Counter[str]] = defaultdict(Counter)
    counted: set[str] = set()
    summaries = EVENTS if memo is None else memo
    for key, text in events:
        summary = summaries.summary(text)
        if summary.line is not None:
            lines_of[key][summary.line] += 1
        if summary.production:
            counted.add(key)  # production is counted per line (`reports.kpi.lines`)
    lines = {c.line for c in config.reports.kpi.lines} | counted | {line for c in lines_of.values() for line in c}
    quantities = {tag: quantity_of(tag) for tag in tag_keys}
    assets = ({q.asset for q in quantities.values()} | set(event_keys)) - lines
    names: dict[str, list[str]] = defaultdict(list)
    for alias, target in sorted((aliases or {}).items()):
        names[target].append(alias)
    return Namespace(
        record_ids=record_ids(r.id for r in newest if r.key in assets or r.key in quantities),
        record_count=len(newest),
        truncated=len(newest) >= KEYS_MAX,
        site=config.site.id,
        timezone=config.site.timezone,
        lines=[LineInfo(line=line) for line in sorted(lines)],
        assets=[AssetInfo(asset=a, line=_most(lines_of.get(a)), names=names.get(a, [])) for a in sorted(assets)],
        tags=[
            TagInfo(tag=tag, asset=q.asset, quantity=q.quantity, unit=q.unit, names=q.names)
            for tag, q in sorted(quantities.items())
        ],
    )


def _most(counts: Counter[str] | None) -> str | None:
    """The line named most often; ties by name."""
    if not counts:
        return None
    return min(counts, key=lambda line: (-counts[line], line))


def namespace(ctx: ToolContext, args: NamespaceInput) -> Namespace:
    """The site, its timezone, and its lines, assets and tags (each tag with its quantity, unit and the names people
    use for it in es/en/pt), from the last seven days of records and the config."""
    return build_namespace(ctx.store, ctx.config, ctx.now, aliases=ctx.aliases, budget=ctx.budget)
