"""What a tag measures, read from its key: `P-101.vibration_mm_s` is P-101's vibration in mm/s. The unit is the key's
suffix, the quantity the words before it, and people's names for the quantity come from a small table in es/en/pt.

It sits in base, below both of its readers: the ask's tools and resolver (a tag asked about by the names people
use) and the reports' narrative (a tag written as people say it, and read back so by the grounding check)."""

from __future__ import annotations

from typing import NamedTuple

from edge_agent.base.types import Language

# Key suffix → unit, longest first where one ends another (`_mm_s` before `_s`).
UNITS: tuple[tuple[str, str], ...] = (
    ("_mm_s", "mm/s"),
    ("_m3h", "m³/h"),
    ("_m3", "m³"),
    ("_lpm", "L/min"),
    ("_pct", "%"),
    ("_bar", "bar"),
    ("_kpa", "kPa"),
    ("_psi", "psi"),
    ("_rpm", "rpm"),
    ("_kw", "kW"),
    ("_kwh", "kWh"),
    ("_hz", "Hz"),
    ("_ppm", "ppm"),
    ("_kg", "kg"),
    ("_c", "°C"),
    ("_f", "°F"),
    ("_a", "A"),
    ("_v", "V"),
    ("_m", "m"),
    ("_s", "s"),
)

# Quantity (the key's words, unit removed) → what people call it per language, the most usual name first.
NAMES: dict[str, dict[Language, list[str]]] = {
    "vibration": {"es": ["vibración"], "en": ["vibration"], "pt": ["vibração"]},
    "temp": {"es": ["temperatura"], "en": ["temperature"], "pt": ["temperatura"]},
    "temperature": {"es": ["temperatura"], "en": ["temperature"], "pt": ["temperatura"]},
    "bearing_temp": {
        "es": ["temperatura del rodamiento", "temperatura del cojinete", "temperatura"],
        "en": ["bearing temperature", "temperature"],
        "pt": ["temperatura do rolamento", "temperatura do mancal", "temperatura"],
    },
    "flow": {"es": ["caudal", "flujo"], "en": ["flow", "flow rate"], "pt": ["vazão", "fluxo"]},
    "level": {"es": ["nivel"], "en": ["level"], "pt": ["nível"]},
    "pressure": {"es": ["presión"], "en": ["pressure"], "pt": ["pressão"]},
    "speed": {"es": ["velocidad"], "en": ["speed"], "pt": ["velocidade"]},
    "power": {"es": ["potencia"], "en": ["power"], "pt": ["potência"]},
    "current": {"es": ["corriente"], "en": ["current"], "pt": ["corrente"]},
    "voltage": {"es": ["tensión", "voltaje"], "en": ["voltage"], "pt": ["tensão", "voltagem"]},
    "frequency": {"es": ["frecuencia"], "en": ["frequency"], "pt": ["frequência"]},
    "running": {"es": ["marcha", "en marcha", "funcionando"], "en": ["running", "run state"], "pt": ["funcionamento"]},
    "humidity": {"es": ["humedad"], "en": ["humidity"], "pt": ["umidade"]},
    "energy": {"es": ["energía", "consumo"], "en": ["energy", "consumption"], "pt": ["energia", "consumo"]},
    "conductivity": {"es": ["conductividad"], "en": ["conductivity"], "pt": ["condutividade"]},
    "turbidity": {"es": ["turbidez", "turbiedad"], "en": ["turbidity"], "pt": ["turbidez"]},
}
# The quantity's own name where the key shortens it.
CANONICAL = {"temp": "temperature", "bearing_temp": "bearing_temperature"}


class Quantity(NamedTuple):
    asset: str
    quantity: str
    unit: str | None
    names: dict[Language, list[str]]


def quantity_of(tag: str) -> Quantity:
    """`P-101.vibration_mm_s` → (P-101, vibration, mm/s, its names); a key without a known unit suffix is all
    quantity (`P-101.running`); one without a table entry is called as its last word (`discharge_pressure` as a
    pressure), or by its words in every language."""
    asset, _, measure = tag.partition(".")
    measure = measure.lower()
    unit = None
    for suffix, name in UNITS:
        if measure.endswith(suffix) and len(measure) > len(suffix):
            measure, unit = measure[: -len(suffix)], name
            break
    words = measure.replace("_", " ").strip() or tag
    # `discharge_pressure`: a pressure, called as one when the table lacks the whole
    names = NAMES.get(measure) or NAMES.get(measure.rsplit("_", 1)[-1]) or {"es": [words], "en": [words], "pt": [words]}
    return Quantity(asset, CANONICAL.get(measure, measure or tag), unit, names)
