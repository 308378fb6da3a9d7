"""Metric names → tags `ASSET.measurement`, the form OPC UA tags have and reports split on their first ".".

Rule (`[sparkplug.naming]`): a `pattern` match names asset and/or measurement; otherwise the measurement is the
metric name's last `/` element and the asset comes from `asset_from` (device id, the path element before the last,
or the edge node id). A "." in an asset would move the split, so it is replaced by "_" ("10.0.0.5" → "10_0_0_5"):
sanitised rather than refused, since a device id is the plant's to choose and refusing it would lose all its data;
the BIRTH's audit entry records every metric name with the tag it became.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from edge_agent.config.sparkplug import SparkplugNamingConfig


@dataclass(frozen=True)
class MetricName:
    """Where a metric sits: its name in the BIRTH, and the device (None for the edge node's own metrics)."""

    node: str
    device: str | None
    name: str


def _asset_part(text: str) -> str:
    return text.replace(".", "_")


class TagNamer:
    def __init__(self, config: SparkplugNamingConfig) -> None:
        self._asset_from = config.asset_from
        self._pattern = re.compile(config.pattern) if config.pattern else None

    def split(self, metric: MetricName) -> tuple[str, str]:
        """(asset, measurement) of one metric; neither empty, the asset without "."."""
        parts = [p for p in metric.name.split("/") if p]
        measurement = parts[-1] if parts else metric.name
        before = parts[-2] if len(parts) >= 2 else None
        if self._asset_from == "device":
            asset = metric.device or before or metric.node
        elif self._asset_from == "path":
            asset = before or metric.device or metric.node
        else:
            asset = metric.node
        if self._pattern is not None and (match := self._pattern.fullmatch(metric.name)):
            groups = match.groupdict()
            asset = groups.get("asset") or asset
            measurement = groups.get("measurement") or measurement
        return _asset_part(asset) or "_", measurement or "_"

    def tags(self, metrics: list[MetricName]) -> dict[MetricName, str]:
        """Tags for the metrics of one BIRTH. Two metrics the rule gives one tag ("In/Temp", "Out/Temp" of one
        device) would mix their values: those take their whole name as the measurement ("In/Temp") instead."""
        split = {m: self.split(m) for m in metrics}
        counts = Counter(f"{a}.{s}" for a, s in split.values())
        tags = {}
        for m, (asset, measurement) in split.items():
            tag = f"{asset}.{measurement}"
            tags[m] = f"{asset}.{m.name}" if counts[tag] > 1 and m.name else tag
        return tags


__all__ = ["MetricName", "TagNamer"]
