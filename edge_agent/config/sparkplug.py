"""The Sparkplug B 3.0 host application (`edge_agent.connectors.sparkplug`): which groups it hears, its host role, its
rules.

It connects to the `[mqtt]` broker with its own session; `[sparkplug] enabled = true` is all a plant needs to add.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from edge_agent.config.base import Section

# Characters a Sparkplug topic element (group id, edge node id, device id, host id) may not hold (spec 3.0 §4.1.1).
_TOPIC_FORBIDDEN = re.compile(r"[/+#]")


def _topic_element(value: str) -> str:
    if not value:
        raise ValueError("must not be empty")
    if _TOPIC_FORBIDDEN.search(value):
        raise ValueError(f"{value!r} holds '/', '+' or '#', which a Sparkplug topic element may not")
    return value


def _host_id(value: str) -> str:
    return _topic_element(value) if value else value


def _pattern(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from exc
    unknown = sorted(set(compiled.groupindex) - {"asset", "measurement"})
    if unknown:
        raise ValueError(f"named groups {unknown} are not 'asset' or 'measurement'")
    if not compiled.groupindex:
        raise ValueError("needs a named group (?P<measurement>...) and/or (?P<asset>...)")
    return value


TopicElement = Annotated[str, AfterValidator(_topic_element)]


class SparkplugNamingConfig(Section):
    """How a metric becomes a tag `ASSET.measurement` (docs/connect.md, "Sparkplug B").

    Default: the measurement is the metric name's last `/` element ("Line1/P-101/Vibration" → "Vibration"); the
    asset is the device id on a device's metrics, else the element before the last ("P-101"), else the edge node id.
    """

    # device: device id, else the path element before the last, else the node id; path: that element first, then
    # device, then node; node: always the edge node id.
    asset_from: Literal["device", "path", "node"] = "device"
    # A regular expression matched (fullmatch) against the metric name; its named groups `asset` and `measurement`
    # win where they match. A name it does not match falls back to the rule above.
    pattern: Annotated[str | None, AfterValidator(_pattern)] = None


class SparkplugConfig(Section):
    enabled: bool = False
    # Groups to hear: spBv1.0/<group>/#. Empty: every group (spBv1.0/#).
    group_ids: list[TopicElement] = Field(default_factory=list)
    # Sparkplug Host ID for the Primary Host role (retained STATE birth, Will death on spBv1.0/STATE/<id>). Empty:
    # not a primary host; edge nodes that wait for a primary host then wait for another one.
    primary_host_id: Annotated[str, AfterValidator(_host_id)] = ""
    # The host's own MQTT client id; default: [mqtt] client_id + "-sparkplug" (never the ingest's persistent session).
    client_id: str | None = None
    # Ask an edge node to rebirth (NCMD Node Control/Rebirth) after an unrecoverable seq gap, an unknown alias or
    # DATA before BIRTH.
    request_rebirth: bool = True
    # At most one rebirth request per edge node per this many seconds: a broken node cannot cause a rebirth storm.
    # 10 s: a healthy node rebirths in well under a second, so a second request within 10 s only repeats the first.
    rebirth_min_interval_s: float = Field(10.0, ge=0)
    # How long a missing seq may take to arrive before the gap is unrecoverable (TCK reordering-param). 2 s: longer
    # than a broker's redelivery on a healthy LAN, short enough that a real loss asks for a rebirth promptly.
    reorder_timeout_ms: int = Field(2000, ge=0)
    naming: SparkplugNamingConfig = Field(default_factory=SparkplugNamingConfig)
