"""`[reports.kpi]`: the inputs of the plant KPIs (docs/kpis.md): OEE per line, MTBF/MTTR per asset, and ISA-18.2 /
EEMUA 191 alarm performance. A KPI whose input is not configured is reported as not computable, naming the input."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from edge_agent.config.base import Section


class KpiLineConfig(Section):
    line: str = Field(min_length=1, description="the line as MES events name it (a production_count's asset)")
    # ISO 22400-2's planned run time per item is 60 / ideal_rate_per_min seconds; in the unit of the line's counts.
    ideal_rate_per_min: float = Field(gt=0)


class ConsoleConfig(Section):
    """One operator position (console): ISA-18.2 alarm rates are per position."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.:@-]+$")
    # The assets whose alarms this position gets; empty: every asset no other position lists.
    assets: list[str] = Field(default_factory=list)


class KpiConfig(Section):
    lines: list[KpiLineConfig] = Field(default_factory=list)
    # A stop's MES reason → planned or unplanned; a reason not listed is unplanned (a stop nobody planned for).
    downtime_classes: dict[str, Literal["planned", "unplanned"]] = Field(default_factory=dict)
    # MTBF/MTTR over the window and this many days before it: a shift holds one or two failures at most, a few days
    # give steadier figures. At most 2: the report loads stops and alarms 2 days back (generate.KPI_HISTORY).
    lookback_days: int = Field(0, ge=0, le=2)
    # Operator positions; none: one position with every asset (ISA-18.2 rates are per position).
    consoles: list[ConsoleConfig] = Field(default_factory=list)
    # OPC UA severity (1..1000) → priority: up to low_max low, up to medium_max medium, above it high. 400 / 800 fold
    # OPC UA Part 5's five severity bands (LOW 1-200 ... HIGH 801-1000) into ISA-18.2's three priorities.
    priority_low_max: int = Field(400, ge=0, le=1000)
    priority_medium_max: int = Field(800, ge=0, le=1000)
    # ISA-18.2 flood: more than 10 alarms in 10 minutes per operator position.
    flood_per_10min: int = Field(10, ge=1)
    # Chattering: this many activations of one alarm within chatter_window_s (ISA-18.2 monitoring: 3 in 60 s).
    chatter_count: int = Field(3, ge=2)
    chatter_window_s: int = Field(60, ge=1)
    # Stale: an alarm active longer than this (24 h, as the ISA-18.2 monitoring metrics count them).
    stale_after_s: int = Field(86_400, ge=60)
    # The window of an alarm_performance request that names none: the last 7 whole local days (a weekly review).
    alarm_review_days: int = Field(7, ge=1, le=31)
    # False: the KPI sections' text is the reference writer's. The shipped narrator was never trained on them and,
    # asked, wrote text that passed every check while saying nothing true ("No se registró ninguna métrica de luis",
    # make demo 2026-12-04). True lets a plant's own model write them, checked like every other section.
    model_writes_sections: bool = False

    @model_validator(mode="after")
    def _bands_in_order(self) -> KpiConfig:
        if self.priority_low_max >= self.priority_medium_max:
            raise ValueError("priority_low_max must be below priority_medium_max")
        lines = [c.line for c in self.lines]
        if len(lines) != len(set(lines)):
            raise ValueError(f"a line is listed twice in reports.kpi.lines: {lines}")
        return self
