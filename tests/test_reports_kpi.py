"""Plant KPIs (edge_agent.reports.facts.kpi): OEE, MTBF/MTTR and alarm performance, each figure worked out by hand in
the
comments beside it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from edge_agent.base.types import Record
from edge_agent.config.kpi import ConsoleConfig, KpiConfig, KpiLineConfig
from edge_agent.reports.facts import Fact, compute_facts
from edge_agent.reports.facts.kpi.alarms import bucket_counts, max_burst, rates
from edge_agent.reports.facts.kpi.intervals import minus, union
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.sim.records import plant_records
from harness.shift import SHIFT_START, TZ, record, stored


def _request(report_type: str = "shift_summary", hours: float = 8) -> ResolvedRequest:
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=hours), shift="A", timezone=TZ)
    return ResolvedRequest(type=report_type, language="en", window=window, scope=Scope())


def _stop(asset: str, reason: str, start: float, end: float | None, n: int, line: str = "L1") -> list[Record]:
    fields = {"type": "downtime_start", "line": line, "reason": reason, "downtime_id": f"D-{n}", "id": f"s{n}"}
    out = [record("mes_event", asset, fields, start)]
    if end is not None:
        out.append(record("mes_event", asset, {"type": "downtime_end", "downtime_id": f"D-{n}", "id": f"e{n}"}, end))
    return out


def _shift() -> list[Record]:
    """The issue's shift: 480 min, 50 min of unplanned stops (P-101 30 min, C-201 twice 10 min), 30 min planned
    (a changeover of L1), 900 parts of which 27 scrap (two counts: 500 with 15 scrap, 400 with 12)."""
    rs = _stop("P-101", "bearing_wear", 60, 90, 1)
    rs += _stop("C-201", "valve_failure", 200, 210, 2) + _stop("C-201", "valve_failure", 240, 250, 3)
    rs += _stop("L1", "changeover", 300, 330, 4)
    for minutes, count, scrap in ((240, 500, 15), (479, 400, 12)):
        fields = {"type": "production_count", "count": count, "scrap": scrap, "unit": "parts", "id": f"p{minutes}"}
        rs.append(record("mes_event", "L1", fields, minutes))
    return rs


KPI = KpiConfig(downtime_classes={"changeover": "planned"}, lines=[KpiLineConfig(line="L1", ideal_rate_per_min=2.0)])


def _one(facts: list[Fact], kind: str, subject: str = "") -> dict[str, Any]:
    (fact,) = [f for f in facts if f.kind == kind and f.subject == subject]
    return fact.values


class TestOee:
    def test_the_issue_shift_at_2_parts_a_minute(self) -> None:
        """Ideal 2 parts/min is slower than the line ran: performance and OEE are not computable, and say why."""
        values = _one(compute_facts(stored(_shift()), _request(), kpi=KPI), "oee", "L1")
        # planned busy time = 480 − 30 planned = 450 min = 27 000 s; actual production time = 450 − 50 = 400 min
        assert values["planned_busy_time_s"] == 27_000
        assert values["planned_downtime_s"] == 1_800
        assert values["unplanned_downtime_s"] == 3_000
        assert values["actual_production_time_s"] == 24_000
        # availability = 400 / 450 = 0.8888… → 0.8889
        assert values["availability"] == 0.8889
        # performance = 0.5 min/part × 900 parts / 400 min = 450 / 400 = 1.125 > 1: the ideal rate is wrong
        assert values["performance"] is None
        assert values["oee"] is None
        assert values["missing"] == "ideal_rate_below_achieved"
        # quality = (900 − 27) / 900 = 873 / 900 = 0.97
        assert values["quality"] == 0.97
        assert (values["produced_count"], values["scrap_count"], values["good_count"]) == (900, 27, 873)

    def test_the_issue_shift_at_2_5_parts_a_minute(self) -> None:
        """At an ideal 2.5 parts/min every figure is computable and OEE is their product."""
        kpi = KPI.model_copy(update={"lines": [KpiLineConfig(line="L1", ideal_rate_per_min=2.5)]})
        values = _one(compute_facts(stored(_shift()), _request(), kpi=kpi), "oee", "L1")
        # performance = 0.4 min/part × 900 / 400 min = 360 / 400 = 0.9
        assert values["performance"] == 0.9
        # OEE = 8/9 × 0.9 × 0.97 = 0.8 × 0.97 = 0.776
        assert values["oee"] == 0.776
        assert values["missing"] == ""

    def test_without_an_ideal_rate_or_scrap_the_inputs_are_named(self) -> None:
        """No ideal rate configured and counts without scrap: not computable, naming both inputs."""
        rs = [r for r in _shift() if not (isinstance(r.value, dict) and r.value.get("type") == "production_count")]
        rs.append(record("mes_event", "L1", {"type": "production_count", "count": 900, "unit": "parts"}, 400))
        values = _one(compute_facts(stored(rs), _request(), kpi=KpiConfig()), "oee", "L1")
        # with no planned class configured the changeover is unplanned: 480 − (30 + 10 + 10 + 30) = 400 of 480 min
        assert values["availability"] == round(400 / 480, 4)
        assert (values["performance"], values["quality"], values["oee"]) == (None, None, None)
        assert values["missing"] == "ideal_rate_per_min, scrap"

    def test_overlapping_stops_count_once_and_planned_wins(self) -> None:
        """A 20-min stop inside a planned 30-min one adds no unplanned time."""
        rs = _stop("L1", "changeover", 300, 330, 1) + _stop("P-101", "leak", 305, 325, 2)
        values = _one(compute_facts(stored(rs), _request(), kpi=KPI), "oee", "L1")
        assert (values["planned_downtime_s"], values["unplanned_downtime_s"]) == (1_800, 0)
        assert values["availability"] == 1.0

    def test_no_kpi_config_no_kpi_facts(self) -> None:
        """Callers that pass no KPI settings (the narrator corpus) get the facts as before."""
        kinds = {f.kind for f in compute_facts(stored(_shift()), _request())}
        assert not kinds & {"oee", "mtbf", "mttr"}


class TestReliability:
    def test_mtbf_and_mttr_per_asset(self) -> None:
        facts = compute_facts(stored(_shift()), _request(), kpi=KPI)
        # P-101: 1 failure of 30 min; operating 480 − 30 = 450 min = 27 000 s; MTBF 27 000 s, MTTR 1 800 s
        assert _one(facts, "mtbf", "P-101") == {
            "mtbf_s": 27_000,
            "failure_count": 1,
            "operating_time_s": 27_000,
            "period_s": 28_800,
        }
        assert _one(facts, "mttr", "P-101")["mttr_s"] == 1_800
        # C-201: 2 failures of 10 min; operating 480 − 20 = 460 min = 27 600 s; MTBF 13 800 s; MTTR 1 200 / 2 = 600 s
        assert _one(facts, "mtbf", "C-201")["mtbf_s"] == 13_800
        assert _one(facts, "mttr", "C-201") == {
            "mttr_s": 600,
            "failure_count": 2,
            "unplanned_downtime_s": 1_200,
            "period_s": 28_800,
        }
        # L1: only its planned changeover: no failure, so neither figure is computable
        assert _one(facts, "mtbf", "L1")["mtbf_s"] is None
        assert _one(facts, "mttr", "L1")["mttr_s"] is None

    def test_lookback_days_widens_the_period(self) -> None:
        """A failure the day before counts with lookback_days = 1: 2 failures of P-101 over 32 h."""
        rs = _shift() + _stop("P-101", "leak", -600, -580, 9)
        facts = compute_facts(stored(rs), _request(), kpi=KPI.model_copy(update={"lookback_days": 1}))
        values = _one(facts, "mttr", "P-101")
        # 30 min + 20 min = 3 000 s over 2 failures: MTTR 1 500 s; the period is 24 h + 8 h = 115 200 s
        assert (values["failure_count"], values["mttr_s"], values["period_s"]) == (2, 1_500, 115_200)
        # operating = 115 200 − 3 000 = 112 200 s; MTBF = 56 100 s
        assert _one(facts, "mtbf", "P-101")["mtbf_s"] == 56_100


def _alarm(asset: str, condition: str, minutes: float, severity: int = 700, active: bool = True) -> Record:
    return record(
        "alarm", asset, {"condition": condition, "message": condition, "severity": severity, "active": active}, minutes
    )


def _alarms() -> list[Record]:
    """15 alarms in 8 h: P-101 chatters (3 in 40 s, low), a flood 12:20-12:30Z (C-201 8, T-301 3: 11 > 10), P-102
    raised and never cleared; T-301 LowLevel raised 30 h before the window and never cleared (stale)."""
    rs = [_alarm("T-301", "LowLevel", -30 * 60, 900)]
    rs += [_alarm("P-101", "HighVibration", 5 + s / 60, 300) for s in (0, 20, 40)]
    rs.append(_alarm("P-101", "HighVibration", 6, 100, active=False))
    rs += [_alarm("C-201", "HighPressure", 20.5 + k * 70 / 60, 700) for k in range(8)]
    rs += [_alarm("T-301", "HighLevel", m, 900) for m in (25 + 5 / 60, 26.75, 28 + 25 / 60)]
    rs += [_alarm("C-201", "HighPressure", 35, 100, False), _alarm("T-301", "HighLevel", 35, 100, False)]
    rs.append(_alarm("P-102", "Standing", 100, 500))
    return rs


class TestAlarmPerformance:
    def facts(self, kpi: KpiConfig | None = None) -> list[Fact]:
        return compute_facts(stored(_alarms()), _request("alarm_performance"), kpi=kpi)

    def test_rates(self) -> None:
        values = _one(self.facts(), "alarm_rate", "all")
        # 15 alarms / 8 h = 1.875 → 1.88 per hour; 15 / 48 ten-minute intervals = 0.3125 → 0.31
        assert (values["count"], values["per_hour_mean"], values["per_10min_mean"]) == (15, 1.88, 0.31)
        # the first hour holds 3 + 11 = 14; the 12:20 interval 11
        assert (values["per_hour_peak"], values["per_10min_peak"]) == (14, 11)
        assert values["peak_10min_at"] == "2026-11-29T12:20:00Z"
        assert values["rating"] == "acceptable"  # 1.88 ≤ 6 an hour

    def test_hours_are_counted_from_the_windows_start(self) -> None:
        """A window from 06:30 to 09:00 has hours 06:30, 07:30 and a short 08:30 (docs/kpis.md): alarms at 06:50 and
        07:10 are one hour's two, where clock hours would count one each."""
        at = [h * 3600 + m * 60 for h, m in [(6, 50), (7, 10), (8, 40)]]
        assert bucket_counts(at, 6.5 * 3600, 9 * 3600, 3600) == [2, 0, 1]
        assert rates(at, 6.5 * 3600, 9 * 3600).per_hour_peak == 2

    def test_flood(self) -> None:
        facts = self.facts()
        values = _one(facts, "alarm_flood", "all")
        # 1 of 48 intervals in flood: 1/48 = 0.02083 → 0.0208, 600 s, against < 1 %
        assert (values["flood_intervals_count"], values["intervals_count"]) == (1, 48)
        assert (values["flood_share"], values["flood_time_s"], values["episodes_count"]) == (0.0208, 600, 1)
        episode = _one(facts, "alarm_flood_episode", "all")
        assert (episode["start_at"], episode["end_at"], episode["count"]) == (
            "2026-11-29T12:20:00Z",
            "2026-11-29T12:30:00Z",
            11,
        )
        assert (episode["top_1_asset"], episode["top_1_condition"], episode["top_1_count"]) == (
            "C-201",
            "HighPressure",
            8,
        )
        assert (episode["top_2_asset"], episode["top_2_count"]) == ("T-301", 3)

    def test_chattering_standing_stale(self) -> None:
        facts = self.facts()
        # P-101 3 activations in 40 s ≥ 3 in 60 s; C-201's come 70 s apart, T-301's 100 s: not chattering
        assert _one(facts, "alarm_chattering")["count"] == 1
        assert _one(facts, "alarm_chattering_alarm", "P-101")["burst_count"] == 3
        # standing at the end: T-301 LowLevel and P-102 Standing (cleared ones are not)
        assert _one(facts, "alarm_standing")["count"] == 2
        # stale: T-301 LowLevel, active 30 h + 8 h = 136 800 s > 86 400 s
        assert _one(facts, "alarm_stale")["count"] == 1
        assert _one(facts, "alarm_stale_alarm", "T-301")["active_s"] == 136_800

    def test_bad_actors_and_priorities(self) -> None:
        facts = self.facts()
        # four alarms make the whole load: C-201 8, P-101 3, T-301 HighLevel 3, P-102 1 → 15 / 15 = 100 %
        assert _one(facts, "alarm_bad_actors")["top10_share"] == 1.0
        assert _one(facts, "alarm_bad_actor", "C-201")["load_share"] == round(8 / 15, 4)
        # severities 300 ×3 low (≤ 400), 700 ×8 and 500 medium (≤ 800), 900 ×3 high: 20 / 60 / 20 %
        mix = _one(facts, "alarm_priority_mix")
        assert (mix["low_share"], mix["medium_share"], mix["high_share"]) == (0.2, 0.6, 0.2)

    def test_consoles(self) -> None:
        """Two operator positions split the rates; an asset no position lists goes to the one listing none."""
        kpi = KpiConfig(consoles=[ConsoleConfig(name="utilities", assets=["T-301"]), ConsoleConfig(name="pumps")])
        facts = self.facts(kpi)
        assert _one(facts, "alarm_rate", "utilities")["count"] == 3
        assert _one(facts, "alarm_rate", "pumps")["count"] == 12
        # pumps' 12:20 interval holds C-201's 8 alarms only: no flood there
        assert _one(facts, "alarm_flood", "pumps")["flood_intervals_count"] == 0


def test_interval_helpers() -> None:
    assert union([(5, 7), (0, 2), (1, 3)]) == [(0, 3), (5, 7)]
    assert minus([(0, 10)], [(2, 3), (5, 12)]) == [(0, 2), (3, 5)]
    assert max_burst([0, 20, 40, 61, 100], 60) == 3  # 0, 20, 40 (61 is 61 s after 0)


class TestSimulator:
    """`Plant(kpi_scenarios=True)` (`make demo`) gives every KPI a value; without it the plant is as it was."""

    START = datetime(2026, 11, 29, 12, tzinfo=UTC)

    def test_scenarios_give_every_kpi_a_value(self) -> None:
        records = plant_records(42, self.START, 4, tick_s=60, tag_every=10, kpi_scenarios=True)
        kpi = KpiConfig(
            downtime_classes={"changeover": "planned"}, lines=[KpiLineConfig(line="L1", ideal_rate_per_min=5.0)]
        )
        window = ResolvedWindow(start=self.START, end=self.START + timedelta(hours=4), timezone=TZ)
        shift = compute_facts(
            records, ResolvedRequest(type="shift_summary", language="en", window=window, scope=Scope()), kpi=kpi
        )
        oee = _one(shift, "oee", "L1")
        assert oee["missing"] == "" and 0 < oee["oee"] < 1 and oee["planned_downtime_s"] == 1_200
        review = ResolvedRequest(type="alarm_performance", language="en", window=window, scope=Scope())
        facts = compute_facts(records, review, kpi=kpi)
        assert _one(facts, "alarm_flood", "all")["episodes_count"] == 1
        assert _one(facts, "alarm_chattering")["count"] == 1  # T-301's level switch
        assert _one(facts, "alarm_stale")["count"] == 1  # T-301's transmitter fault, raised 26 h before
        assert _one(facts, "alarm_priority_mix")["high_share"] > 0

    def test_without_scenarios_the_plant_is_unchanged(self) -> None:
        """The scenarios draw from their own stream and number their own events: every record of the plant is still
        there, the same, but for the production counts (which gain `scrap` and count nothing during a changeover)."""
        plain = plant_records(7, self.START, 4, tick_s=60)
        with_kpi = {
            (r.kind, r.key, r.source_time, repr(r.value))
            for r in plant_records(7, self.START, 4, tick_s=60, kpi_scenarios=True)
        }
        changed = [r for r in plain if (r.kind, r.key, r.source_time, repr(r.value)) not in with_kpi]
        assert changed and all(r.kind == "mes_event" and r.value["type"] == "production_count" for r in changed)
