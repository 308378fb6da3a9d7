"""The simulated plant: line L1 with pumps P-101 and P-102, compressor C-201 and tank T-301.

A pure model, no I/O: `Plant.step()` advances one tick of simulated time and returns what happened in it (tag
values, alarm transitions, MES events, operator log lines). One `random.Random(seed)` drives everything, so the same
seed and start time give the same run, tick for tick.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from edge_agent.base.types import to_utc

# ISO 10816-3 zone boundaries for medium pumps (mm/s RMS): above C/D damage is likely, so we alarm, then trip.
VIBRATION_ALARM_MM_S = 7.1
VIBRATION_TRIP_MM_S = 9.0
# Mean simulated hours between faults per asset: P-101 (the worn seal of the demo story) fails most often.
MEAN_HOURS_BETWEEN_FAULTS = {"P-101": 3.0, "P-102": 10.0, "C-201": 7.0}
# Vibration growth while a fault develops, mm/s per simulated minute: a trip about 40 minutes after onset.
FAULT_RAMP_MM_S_PER_MIN = 0.15
PRODUCTION_COUNT_EVERY_S = 15 * 60
QUALITY_CHECK_EVERY_S = 30 * 60
# A routine operator note about this often (simulated), besides the notes every fault produces.
ROUTINE_NOTE_EVERY_S = 40 * 60
WORK_ORDER_HOURS = (2.0, 4.0)
TANK_AREA_M2 = 40.0
TANK_HEIGHT_M = 6.0
TANK_OUTFLOW_M3H = 190.0


@dataclass(frozen=True)
class AssetSpec:
    name: str
    kind: Literal["pump", "compressor"]
    nominal_flow_m3h: float
    base_vibration_mm_s: float
    base_bearing_temp_c: float


ASSETS: tuple[AssetSpec, ...] = (
    AssetSpec("P-101", "pump", 120.0, 2.2, 48.0),
    AssetSpec("P-102", "pump", 95.0, 1.8, 46.0),
    AssetSpec("C-201", "compressor", 850.0, 3.0, 62.0),
)
TANK = "T-301"


def tag_names() -> list[str]:
    """Every tag the plant publishes, in address-space order; each is also its OPC UA string node id."""
    tags = []
    for asset in ASSETS:
        tags += [f"{asset.name}.{v}" for v in ("vibration_mm_s", "bearing_temp_c", "flow_m3h", "running")]
    return tags + [f"{TANK}.level_pct"]


@dataclass(frozen=True)
class AlarmEvent:
    """An alarm transition (raised or cleared) for one asset, fired as an OPC UA AlarmConditionType event."""

    time: datetime
    asset: str
    condition: str
    message: str
    severity: int
    active: bool


@dataclass(frozen=True)
class LogLine:
    time: datetime
    area: str
    author: str
    text: str

    def render(self) -> str:
        """The wire form from docs/records.md: ISO time, `author:`, free text."""
        return f"{iso(self.time)} {self.author}: {self.text}"


@dataclass
class Tick:
    time: datetime
    values: dict[str, float | bool]
    alarms: list[AlarmEvent] = field(default_factory=list)
    mes: list[dict[str, Any]] = field(default_factory=list)
    logs: list[LogLine] = field(default_factory=list)


def iso(value: datetime) -> str:
    """UTC ISO-8601 with a Z; milliseconds only when the time has them (sub-second ticks in tests)."""
    value = to_utc(value)
    spec = "milliseconds" if value.microsecond else "seconds"
    return value.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


@dataclass
class _AssetState:
    spec: AssetSpec
    running: bool = True
    fault_since: datetime | None = None
    fault_reason: str = ""
    alarm_active: bool = False
    down_since: datetime | None = None
    down_until: datetime | None = None
    downtime_id: str = ""
    bearing_temp_c: float = 0.0
    next_fault_at: datetime | None = None


# Fault reasons per asset kind: (reason code, Spanish text for the MES event).
FAULT_REASONS = {
    "pump": [
        ("mechanical_seal_leak", "Fuga en sello mecánico"),
        ("bearing_wear", "Desgaste de rodamiento"),
        ("cavitation", "Cavitación en succión"),
    ],
    "compressor": [("valve_failure", "Falla de válvula de descarga"), ("bearing_wear", "Desgaste de rodamiento")],
}
OPERATORS = ["juan.perez", "maria.gonzalez", "ana.silva", "john.smith", "luis.ramirez"]
# (language, template) for notes; {asset} and {reason} are filled in. Spanish most, English some, Portuguese few.
NOTES_FAULT_START = [
    ("es", "Alarma de vibración en {asset}, se detiene el equipo para revisión."),
    ("en", "High vibration on {asset}, stopping it for inspection."),
    ("pt", "Vibração alta na {asset}, equipamento parado para inspeção."),
]
NOTES_FAULT_END = [
    ("es", "Se cambió el sello mecánico de {asset}, vibración normal."),
    ("es", "Reparación terminada en {asset} ({reason}), arranque sin novedad."),
    ("en", "Repair finished on {asset} ({reason}), restarted, vibration back to normal."),
    ("pt", "Reparo concluído na {asset}, vibração normal."),
]
NOTES_ROUTINE = [
    ("es", "Ronda de inspección sin novedades en la línea {line}."),
    ("es", "Nivel del tanque {tank} revisado, sin fugas."),
    ("en", "Shift walk-down done on line {line}, no issues."),
    ("en", "Greased bearings on {asset} per PM schedule."),
    ("pt", "Inspeção de rotina na linha {line}, tudo normal."),
]
QUALITY_MEASURES = [("turbidity", "NTU", 0.2, 1.0), ("pressure", "bar", 5.5, 7.0), ("ph", "pH", 6.5, 8.5)]

# The KPI scenarios (`Plant(kpi_scenarios=True)`, `[sim] kpi_scenarios`; docs/kpis.md, "The demo"): what OEE, MTBF/MTTR
# and the ISA-18.2 figures need, drawn from their own random stream so the plant's other outputs stay as they were.
# L1's ideal rate, m³/min: 300 m³/h, above the pumps' 215 m³/h together, so performance stays under 100 % even while
# one pump is down and the line counts as stopped.
LINE_IDEAL_RATE_PER_MIN = 5.0
# Scrap: 1-4 % of each production count (off-spec water sent to drain).
SCRAP_SHARE = (0.01, 0.04)
# A planned changeover of the line (reason `changeover`) every 6 simulated hours, 20 minutes long, the first 2 h in.
CHANGEOVER_EVERY_S = 6 * 3600
CHANGEOVER_S = 20 * 60
CHANGEOVER_FIRST_S = 2 * 3600
# T-301's level switch chatters: 4 activations 15 s apart every 4 simulated hours, the first 1 h in.
CHATTER_EVERY_S = 4 * 3600
CHATTER_FIRST_S = 3600
CHATTER_ACTIVATIONS = 4
CHATTER_GAP_S = 15
# One alarm flood, 3 h in: 24 distinct alarms of four assets, each raised once, about 10 s apart, so that however a
# report's 10-minute intervals fall one of them holds at least 12 (more than 10 in 10 minutes: ISA-18.2's flood).
FLOOD_AT_S = 3 * 3600
FLOOD_ALARMS = tuple(
    (asset, condition, severity)
    for asset in ("C-201", "P-102", "T-301", "P-101")
    for condition, severity in (
        ("PressureHigh", 700),
        ("PressureHighHigh", 900),
        ("TemperatureHigh", 300),
        ("FlowLow", 300),
        ("LevelDeviation", 300),
        ("CommunicationFault", 700),
    )
)
FLOOD_GAP_S = 10
# A level-transmitter fault raised 26 h before the simulated history starts and never cleared: a stale alarm (> 24 h)
# in any report of that history (a server's ConditionRefresh reports an active alarm with its original time).
STALE_BEFORE_S = 26 * 3600


class Plant:
    """Line L1 of the demo plant; `step()` returns one tick of simulated time."""

    def __init__(
        self, seed: int, start: datetime, tick_s: float, site: str, line: str = "L1", kpi_scenarios: bool = False
    ) -> None:
        self.rng = random.Random(seed)
        # Its own stream: the scenarios never move a draw of the plant's (the same seed gives the same plant).
        self.kpi = random.Random(f"kpi-{seed}") if kpi_scenarios else None
        self.site = site
        self.line = line
        self.tick = timedelta(seconds=tick_s)
        self.now = to_utc(start)
        self._assets = {spec.name: _AssetState(spec, bearing_temp_c=spec.base_bearing_temp_c) for spec in ASSETS}
        for state in self._assets.values():
            state.next_fault_at = self._draw_next_fault(state.spec.name)
        self._tank_level_pct = 55.0
        self._mes_seq = 0
        self._downtime_seq = 0
        self._work_order = 4711
        self._work_order_end: datetime | None = None
        self._produced_since_count = 0.0
        self._next_count = self.now + timedelta(seconds=PRODUCTION_COUNT_EVERY_S)
        self._next_quality = self.now + timedelta(seconds=QUALITY_CHECK_EVERY_S)
        self._next_note = self.now + timedelta(seconds=self.rng.expovariate(1 / ROUTINE_NOTE_EVERY_S))
        self._first = True
        self._origin = self.now
        self._changeover_until: datetime | None = None
        self._changeover_seq = 0
        self._next_changeover = self.now + timedelta(seconds=CHANGEOVER_FIRST_S)
        self._next_chatter = self.now + timedelta(seconds=CHATTER_FIRST_S)
        self._scheduled: list[AlarmEvent] = []  # alarm transitions at a set time (chatter, flood), oldest first

    # --- the one public step ------------------------------------------------------------------------------

    def step(self) -> Tick:
        """Advance one tick; the returned values are sampled at the new time."""
        if not self._first:
            self.now += self.tick
        tick = Tick(time=self.now, values={})
        if self._first:
            self._start_work_order(tick)
            if self.kpi is not None:
                self._schedule_scenarios(tick)
            self._first = False
        dt_s = self.tick.total_seconds()
        for state in self._assets.values():
            self._advance_asset(state, tick)
            self._sample_asset(state, tick, dt_s)
        self._advance_tank(tick, dt_s)
        self._advance_mes(tick)
        if self.kpi is not None:
            self._advance_scenarios(tick)
        return tick

    # --- assets -------------------------------------------------------------------------------------------

    def _draw_next_fault(self, asset: str) -> datetime:
        hours = self.rng.expovariate(1 / MEAN_HOURS_BETWEEN_FAULTS[asset])
        return self.now + timedelta(hours=max(hours, 0.25))

    def _vibration_excess(self, state: _AssetState) -> float:
        if state.fault_since is None:
            return 0.0
        return FAULT_RAMP_MM_S_PER_MIN * (self.now - state.fault_since).total_seconds() / 60

    def _advance_asset(self, state: _AssetState, tick: Tick) -> None:
        spec = state.spec
        if state.down_until is not None:
            if self.now >= state.down_until:
                self._end_downtime(state, tick)
            return
        if state.fault_since is None and state.next_fault_at is not None and self.now >= state.next_fault_at:
            state.fault_since = self.now
            state.fault_reason = self.rng.choice(FAULT_REASONS[spec.kind])[0]
        vibration = spec.base_vibration_mm_s + self._vibration_excess(state)
        if not state.alarm_active and vibration > VIBRATION_ALARM_MM_S:
            state.alarm_active = True
            tick.alarms.append(self._alarm(spec.name, True, vibration))
        if vibration > VIBRATION_TRIP_MM_S:
            self._start_downtime(state, tick)

    def _start_downtime(self, state: _AssetState, tick: Tick) -> None:
        self._downtime_seq += 1
        state.downtime_id = f"DT-{self.now:%Y%m%d}-{self._downtime_seq:03d}"
        state.running = False
        state.down_since = self.now
        state.down_until = self.now + timedelta(minutes=self.rng.uniform(15, 45))
        reason_text = dict(FAULT_REASONS[state.spec.kind])[state.fault_reason]
        tick.mes.append(
            self._mes(
                "downtime_start",
                state.spec.name,
                downtime_id=state.downtime_id,
                reason=state.fault_reason,
                text=reason_text,
            )
        )
        tick.logs.append(self._note("operations", NOTES_FAULT_START, asset=state.spec.name, reason=state.fault_reason))

    def _end_downtime(self, state: _AssetState, tick: Tick) -> None:
        assert state.down_since is not None
        minutes = round((self.now - state.down_since).total_seconds() / 60, 1)
        tick.mes.append(
            self._mes(
                "downtime_end",
                state.spec.name,
                downtime_id=state.downtime_id,
                reason=state.fault_reason,
                duration_min=minutes,
                text="Equipo en servicio",
            )
        )
        # The seal-change note only fits a seal leak.
        notes = NOTES_FAULT_END if state.fault_reason == "mechanical_seal_leak" else NOTES_FAULT_END[1:]
        tick.logs.append(self._note("maintenance", notes, asset=state.spec.name, reason=state.fault_reason))
        if state.alarm_active:
            state.alarm_active = False
            tick.alarms.append(self._alarm(state.spec.name, False, state.spec.base_vibration_mm_s))
        state.running = True
        state.fault_since = None
        state.down_since = None
        state.down_until = None
        state.next_fault_at = self._draw_next_fault(state.spec.name)

    def _sample_asset(self, state: _AssetState, tick: Tick, dt_s: float) -> None:
        spec = state.spec
        noise = self.rng.gauss(0, 0.08)
        if state.running:
            vibration = spec.base_vibration_mm_s + self._vibration_excess(state) + noise
            flow = spec.nominal_flow_m3h * (1 + self.rng.gauss(0, 0.015))
            target_temp = spec.base_bearing_temp_c + 1.8 * self._vibration_excess(state)
        else:
            vibration = abs(noise) * 0.2
            flow = 0.0
            target_temp = 30.0
        # Bearing temperature lags vibration: first-order with a 10-minute time constant.
        state.bearing_temp_c += (target_temp - state.bearing_temp_c) * min(1.0, dt_s / 600)
        if spec.kind == "pump" and self._changeover_until is None:  # a changeover sends nothing to the tank
            self._produced_since_count += flow * dt_s / 3600
        tick.values[f"{spec.name}.vibration_mm_s"] = round(max(vibration, 0.0), 3)
        tick.values[f"{spec.name}.bearing_temp_c"] = round(state.bearing_temp_c + self.rng.gauss(0, 0.05), 2)
        tick.values[f"{spec.name}.flow_m3h"] = round(flow, 2)
        tick.values[f"{spec.name}.running"] = state.running

    def _advance_tank(self, tick: Tick, dt_s: float) -> None:
        inflow = sum(tick.values[f"{a.name}.flow_m3h"] for a in ASSETS if a.kind == "pump")
        # The level controller throttles the outflow around 55 %, so the tank neither empties nor overflows.
        outflow = TANK_OUTFLOW_M3H + 4.0 * (self._tank_level_pct - 55.0)
        delta_m3 = (inflow - max(outflow, 0.0)) * dt_s / 3600
        self._tank_level_pct += 100 * delta_m3 / (TANK_AREA_M2 * TANK_HEIGHT_M)
        self._tank_level_pct = min(max(self._tank_level_pct, 2.0), 98.0)
        tick.values[f"{TANK}.level_pct"] = round(self._tank_level_pct, 2)

    def _alarm(self, asset: str, active: bool, vibration: float) -> AlarmEvent:
        if active:
            message = f"Vibración alta en {asset}: {vibration:.2f} mm/s (límite {VIBRATION_ALARM_MM_S} mm/s)"
        else:
            message = f"Vibración normal en {asset}"
        return AlarmEvent(self.now, asset, "HighVibration", message, 700 if active else 100, active)

    # --- MES and notes ------------------------------------------------------------------------------------

    def _mes(self, kind: str, asset: str, event_id: str | None = None, **fields: Any) -> dict[str, Any]:
        if event_id is None:  # the KPI scenarios' events have their own ids: the plant's keep their numbers
            self._mes_seq += 1
            event_id = f"mes-{self._mes_seq:06d}"
        event: dict[str, Any] = {
            "id": event_id,
            "ts": iso(self.now),
            "type": kind,
            "asset": asset,
            "line": self.line,
            "work_order": f"WO-{self._work_order}",
        }
        event.update(fields)
        return event

    def _note(self, area: str, templates: list[tuple[str, str]], **fields: str) -> LogLine:
        _lang, template = self.rng.choice(templates)
        text = template.format(line=self.line, tank=TANK, **{"asset": "P-101", "reason": "", **fields})
        return LogLine(self.now, area, self.rng.choice(OPERATORS), text)

    def _start_work_order(self, tick: Tick) -> None:
        self._work_order_end = self.now + timedelta(hours=self.rng.uniform(*WORK_ORDER_HOURS))
        tick.mes.append(
            self._mes(
                "work_order_start", self.line, product="agua_de_proceso", text=f"Inicio de orden WO-{self._work_order}"
            )
        )

    def _advance_mes(self, tick: Tick) -> None:
        if self._work_order_end is not None and self.now >= self._work_order_end:
            tick.mes.append(self._mes("work_order_end", self.line, text=f"Fin de orden WO-{self._work_order}"))
            self._work_order += 1
            self._start_work_order(tick)
        if self.now >= self._next_count:
            count = int(round(self._produced_since_count))
            self._produced_since_count = 0.0
            fields: dict[str, Any] = {"count": count, "unit": "m3"}
            if self.kpi is not None:
                fields["scrap"] = int(round(count * self.kpi.uniform(*SCRAP_SHARE)))
            tick.mes.append(self._mes("production_count", self.line, **fields))
            self._next_count += timedelta(seconds=PRODUCTION_COUNT_EVERY_S)
        if self.now >= self._next_quality:
            measure, unit, low, high = self.rng.choice(QUALITY_MEASURES)
            # About one check in twelve falls outside its limits.
            value = round(self.rng.uniform(low - (high - low) * 0.1, high + (high - low) * 0.1), 2)
            result = "pass" if low <= value <= high else "fail"
            tick.mes.append(
                self._mes(
                    "quality_check",
                    self.line,
                    measure=measure,
                    value=value,
                    unit=unit,
                    result=result,
                    low=low,
                    high=high,
                )
            )
            self._next_quality += timedelta(seconds=QUALITY_CHECK_EVERY_S)
        if self.now >= self._next_note:
            asset = self.rng.choice(ASSETS).name
            tick.logs.append(self._note(self.rng.choice(["operations", "maintenance"]), NOTES_ROUTINE, asset=asset))
            self._next_note += timedelta(seconds=self.rng.expovariate(1 / ROUTINE_NOTE_EVERY_S))

    # --- KPI scenarios (kpi_scenarios=True) ---------------------------------------------------------------------

    def _schedule_scenarios(self, tick: Tick) -> None:
        """The stale alarm (fired now with its old time) and the flood, scheduled once."""
        assert self.kpi is not None
        old = self.now - timedelta(seconds=STALE_BEFORE_S)
        message = "Falla del transmisor de nivel de T-301"
        tick.alarms.append(AlarmEvent(old, TANK, "LevelTransmitterFault", message, 500, True))
        flood_at = self.now + timedelta(seconds=FLOOD_AT_S)
        for i, (asset, condition, severity) in enumerate(FLOOD_ALARMS):
            at = flood_at + timedelta(seconds=i * FLOOD_GAP_S + self.kpi.randint(0, FLOOD_GAP_S // 2))
            self._scheduled.append(AlarmEvent(at, asset, condition, f"{condition} en {asset}", severity, True))
        clear_at = flood_at + timedelta(seconds=len(FLOOD_ALARMS) * FLOOD_GAP_S + 60)
        for asset, condition, _ in FLOOD_ALARMS:  # all back to normal a minute after the last
            self._scheduled.append(AlarmEvent(clear_at, asset, condition, f"{condition} normal en {asset}", 100, False))
        self._scheduled.sort(key=lambda a: a.time)

    def _advance_scenarios(self, tick: Tick) -> None:
        if self.now >= self._next_chatter:
            for i in range(CHATTER_ACTIVATIONS):
                at = self.now + timedelta(seconds=i * CHATTER_GAP_S)
                self._scheduled.append(AlarmEvent(at, TANK, "LevelSwitchHigh", "Nivel alto en T-301", 300, True))
                clear = at + timedelta(seconds=CHATTER_GAP_S // 2)
                self._scheduled.append(AlarmEvent(clear, TANK, "LevelSwitchHigh", "Nivel normal en T-301", 100, False))
            self._scheduled.sort(key=lambda a: a.time)
            self._next_chatter += timedelta(seconds=CHATTER_EVERY_S)
        # Transitions due by now, each with its own time (a server stamps an event when it happens).
        while self._scheduled and self._scheduled[0].time <= self.now:
            tick.alarms.append(self._scheduled.pop(0))
        if self._changeover_until is not None and self.now >= self._changeover_until:
            fields = {"downtime_id": self._changeover_id(), "reason": "changeover"}
            tick.mes.append(self._mes("downtime_end", self.line, event_id=f"{self._changeover_id()}-end", **fields))
            self._changeover_until = None
        if self._changeover_until is None and self.now >= self._next_changeover:
            self._changeover_seq += 1
            self._changeover_until = self.now + timedelta(seconds=CHANGEOVER_S)
            text = "Cambio de producto planificado"
            fields = {"downtime_id": self._changeover_id(), "reason": "changeover", "text": text}
            tick.mes.append(self._mes("downtime_start", self.line, event_id=f"{self._changeover_id()}-start", **fields))
            self._next_changeover += timedelta(seconds=CHANGEOVER_EVERY_S)

    def _changeover_id(self) -> str:
        return f"CO-{self._origin:%Y%m%d}-{self._changeover_seq:03d}"
