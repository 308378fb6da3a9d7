"""The tools' typed boundary: one input model per tool (unknown fields refused) and one output model per tool, each
output carrying the ids of the stored records behind its figures."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from edge_agent.base.types import Language

# The longest tag, asset or line id a tool accepts; the store's keys are MQTT topic levels and OPC UA node ids, far
# shorter in practice (the simulator's longest is 22 characters).
ID_CHARS_MAX = 256
# 1 s: the KPI facts divide by a window's length in float seconds, which in year 9999 resolve no finer than ~30 µs;
# no question is about less than a second.
MIN_WINDOW = timedelta(seconds=1)
# As the report facts (`reports.facts.RECORD_IDS_MAX`): the extremes of a large result, not megabytes of ids.
RECORD_IDS_MAX = 50


class ToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        raise ValueError("outside the years 1-9999 in UTC") from exc


class Window(ToolInput):
    """A time window, start inclusive, end exclusive, both aware and held in UTC, at least a second long."""

    start: AwareDatetime
    end: AwareDatetime

    @field_validator("start", "end")
    @classmethod
    def _in_utc(cls, value: datetime) -> datetime:
        return _utc(value)

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        if self.end - self.start < MIN_WINDOW:
            raise ValueError(f"a window lasts at least {MIN_WINDOW.total_seconds():.0f} s")
        return self


class ToolOutput(BaseModel):
    """What every tool returns besides its figures: the records behind them, the most telling first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    record_ids: list[int] = Field(max_length=RECORD_IDS_MAX)
    record_count: int = Field(ge=0)
    # True when a list in the output holds only the first entries of a longer one (the counts cover them all).
    truncated: bool = False


class LineInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    line: str


class AssetInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    asset: str
    line: str | None
    names: list[str]


class TagInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tag: str
    asset: str
    quantity: str
    unit: str | None
    names: dict[Language, list[str]]


class Namespace(ToolOutput):
    site: str
    timezone: str
    lines: list[LineInfo]
    assets: list[AssetInfo]
    tags: list[TagInfo]


Id = Annotated[str, Field(min_length=1, max_length=ID_CHARS_MAX)]
# An asset or line as a report's scope names it (`reports.request.Scope`): letters, digits and _.:@-, 128 at most.
AssetId = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:@-]+$")]


class NamespaceInput(ToolInput):
    pass


class TagStatsInput(ToolInput):
    tag: Id
    window: Window


class TagStatsOutput(ToolOutput):
    """Over the tag's usable samples in the window (bad quality and non-numbers left out, as in a report); the
    figures are None when there are none."""

    tag: str
    unit: str | None
    count: int
    min: float | None
    min_at: datetime | None
    max: float | None
    max_at: datetime | None
    mean: float | None
    first: float | None
    first_at: datetime | None
    last: float | None
    last_at: datetime | None


class TagValueAtInput(ToolInput):
    tag: Id
    at: AwareDatetime

    @field_validator("at")
    @classmethod
    def _in_utc(cls, value: datetime) -> datetime:
        return _utc(value)


class TagValueAtOutput(ToolOutput):
    tag: str
    unit: str | None
    value: float | bool | str | None
    sampled_at: datetime
    quality: str


class ScopedInput(ToolInput):
    asset: AssetId | None = None
    line: AssetId | None = None
    window: Window


class StopsInput(ScopedInput):
    pass


class ReasonTotal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str
    count: int
    total_s: int


class StopsOutput(ToolOutput):
    count: int
    total_s: int
    longest_s: int | None
    longest_at: datetime | None
    reasons: list[ReasonTotal]
    planned_count: int
    unplanned_count: int
    open_count: int


class ProductionInput(ScopedInput):
    pass


class ProductionOutput(ToolOutput):
    """Counts in the window, in the unit most counts use (`truncated` when others were left out); `unit` is None when
    there are none; `scrap` and `good` are None unless every count says its scrap."""

    produced: float
    scrap: float | None
    good: float | None
    unit: str | None


class QualityChecksInput(ScopedInput):
    pass


class QualityCheck(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    at: datetime
    asset: str
    result: Literal["pass", "fail"]
    record_id: int


class QualityChecksOutput(ToolOutput):
    count: int
    passed: int
    failed: int
    checks: list[QualityCheck]


class AlarmsInput(ToolInput):
    asset: AssetId | None = None
    window: Window
    active_at: AwareDatetime | None = None

    @field_validator("active_at")
    @classmethod
    def _in_utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _utc(value)


class ByPriority(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    high: int
    medium: int
    low: int


class FrequentAlarm(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    condition: str
    asset: str
    count: int


class ActiveAlarm(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    condition: str
    asset: str
    since: datetime


class AlarmsOutput(ToolOutput):
    count: int
    by_priority: ByPriority
    most_frequent: list[FrequentAlarm]
    active_at: list[ActiveAlarm] | None
    # How many stood active at `active_at` (None without it): the figure an answer states, held as a fact.
    active_count: int | None = None


class NotesInput(ToolInput):
    asset: AssetId | None = None
    window: Window


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    at: datetime
    author: str
    # Untrusted plant text: quoted, never followed (`flagged`: it reads like an instruction).
    text: str
    flagged: bool


class NotesOutput(ToolOutput):
    count: int
    notes: list[Note]


KpiKind = Literal["oee", "reliability", "alarm_performance"]


class KpisInput(ScopedInput):
    kind: KpiKind


class FactSummary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    kind: str
    subject: str
    values: dict[str, Any]
    ids: list[str]


class KpisOutput(ToolOutput):
    facts: list[FactSummary]


ReportStatus = Literal["draft", "approved", "rejected"]


class ReportsListInput(ToolInput):
    window: Window | None = None
    status: ReportStatus | None = None


class ReportEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    report_id: str
    type: str
    status: str
    requested_at: datetime


class ReportsListOutput(ToolOutput):
    reports: list[ReportEntry]


class ReportGetInput(ToolInput):
    report_id: Id


class ReportGetOutput(ToolOutput):
    report_id: str
    type: str
    status: str
    requested_at: datetime
    window: dict[str, Any]
    scope: dict[str, Any]
    # The report's text as written and checked when it was generated; the figures are in `facts`.
    narrative: str | None
    facts: list[FactSummary]


ToolName = Literal[
    "namespace",
    "tag_stats",
    "tag_value_at",
    "stops",
    "production",
    "quality_checks",
    "alarms",
    "notes",
    "kpis",
    "reports_list",
    "report_get",
]
