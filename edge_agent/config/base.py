"""Shared base for every config section: unknown keys are errors, values are validated on assignment."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, PlainSerializer

from edge_agent.base.types import to_utc


def _as_utc(value: datetime) -> datetime:
    try:
        return to_utc(value)
    except OverflowError as exc:  # year 1 with a positive offset has no UTC equivalent
        raise ValueError(f"{value.isoformat()} is outside the representable time range") from exc


# A time in the TOML, held in UTC; printed and fingerprinted as ISO-8601 text (the effective config is JSON).
UtcTime = Annotated[datetime, AfterValidator(_as_utc), PlainSerializer(datetime.isoformat, return_type=str)]
# The earliest plausible source time of a plant record, MQTT or OPC UA: no plant log predates 2000.
PLAUSIBLE_TIME_MIN = datetime(2000, 1, 1, tzinfo=UTC)


class Section(BaseModel):
    """A config section. `extra="forbid"` turns a typo in a plant's TOML into an error instead of a silent default."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, frozen=False)
