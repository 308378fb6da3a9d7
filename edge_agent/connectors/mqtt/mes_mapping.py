"""A route's MES event mapping: a plant's event JSON, in its own names, → our `mes_event` vocabulary.

`[mqtt.routes.events]` (edge_agent.config.mqtt.MesEventsConfig) says where the plant's event type is, which of its
values are which of our types (edge_agent.base.mes_vocabulary), and where each of our fields is. The rewrite keeps only
what the mapping names; the record's raw bytes stay the plant's payload, as evidence of what was translated.

Refusals, as ParseError (docs/records.md, "Value domains"):
- no value at `type_path`, or one that is neither a string nor an integer: `schema_mismatch`;
- a value `types` does not list: `unmapped_event_type`, the detail quoting it; matched exactly, never guessed
  (`"paro"` is not `"PARO"`);
- a field our type requires (REQUIRED_FIELDS) missing, null or "" at its path: `schema_mismatch` naming field and path.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from edge_agent.base.mes_vocabulary import MES_FIELDS, REQUIRED_FIELDS
from edge_agent.config.mqtt import MesEventsConfig
from edge_agent.connectors.mqtt.parsers import MISSING, ParseError, QuarantineReason, lookup


@dataclass(frozen=True)
class MesEventMapping:
    """Translate one decoded plant event (`translate`) with the tables of one route's `events` section."""

    type_path: str
    types: Mapping[str, str]
    fields: Mapping[str, str]

    @classmethod
    def from_config(cls, config: MesEventsConfig) -> MesEventMapping:
        # Our fields in vocabulary order, so every record of a route lists them alike whatever the TOML's order.
        fields = {name: config.fields[name] for name in MES_FIELDS if name in config.fields}
        return cls(config.type_path, dict(config.types), fields)

    def translate(self, document: dict[str, Any]) -> dict[str, Any]:
        """The plant's object → `{"type": ours, <our field>: <the plant's value>, ...}`, or ParseError."""
        event_type = self._event_type(document)
        translated: dict[str, Any] = {"type": event_type}
        for name, path in self.fields.items():
            found = lookup(document, path)
            if found is not MISSING:
                translated[name] = found
        for name in REQUIRED_FIELDS.get(event_type, ()):
            if translated.get(name) in (None, ""):
                path = self.fields.get(name, "no path")
                raise ParseError(
                    QuarantineReason.SCHEMA_MISMATCH,
                    f"{name} (from {path}): required for {event_type}, missing, null or empty",
                )
        return translated

    def _event_type(self, document: dict[str, Any]) -> str:
        plant_type = lookup(document, self.type_path)
        if plant_type is MISSING:
            raise ParseError(QuarantineReason.SCHEMA_MISMATCH, f"{self.type_path}: no event type")
        # bool is an int subclass, but `true` is no event code.
        if isinstance(plant_type, bool) or not isinstance(plant_type, (str, int)):
            raise ParseError(
                QuarantineReason.SCHEMA_MISMATCH,
                f"{self.type_path}: event type must be a string or integer, got {type(plant_type).__name__}",
            )
        ours = self.types.get(str(plant_type))
        if ours is None:
            raise ParseError(
                QuarantineReason.UNMAPPED_EVENT_TYPE, f"{self.type_path}: {plant_type!r} is not in events.types"
            )
        return ours


__all__ = ["MesEventMapping"]
