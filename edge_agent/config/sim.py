"""The plant simulator (`edge-agent sim`): its OPC UA endpoint, its simulated clock, what it publishes over MQTT."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from edge_agent.config.base import Section

SimSecurity = Literal["None", "Basic256Sha256_Sign", "Basic256Sha256_SignAndEncrypt"]


def _unsecured() -> list[SimSecurity]:
    return ["None"]


class SimConfig(Section):
    # The agent's [[opcua.sources]] endpoint must point here; the simulator listens on host:port of this URL.
    opcua_endpoint: str = Field("opc.tcp://127.0.0.1:4840/edge-agent/sim", pattern=r"^opc\.tcp://")
    namespace_uri: str = "urn:edge-agent:sim:plant"
    security: list[SimSecurity] = Field(default_factory=_unsecured, min_length=1)
    line: str = Field("L1", min_length=1)
    seed: int = 0
    # One plant sample per 5 simulated seconds: smooth trends, few enough writes to replay a shift quickly.
    tick_s: float = Field(5.0, gt=0)
    # Start the simulated clock this far in the past and run it `speed` times faster until it reaches the wall
    # clock, then in real time: a fresh demo has a full shift of data to report on.
    backfill_hours: float = Field(0.0, ge=0)
    speed: float = Field(1.0, ge=1)
    # Server history kept per variable (the agent backfills gaps from it); must cover backfill_hours.
    history_hours: float = Field(12.0, gt=0)
    publish_mqtt: bool = True
    # Extra malformed MQTT messages per good one (bad JSON, bad UTF-8, schema mismatch, oversize), sent after it;
    # the good stream is the same at any share.
    malformed_share: float = Field(0.0, ge=0, le=1)
    # Payload size of the "oversize" malformed kind: above the agent's default 256 KiB limit.
    oversize_bytes: int = Field(300 * 1024, ge=1)
    # Also publish the plant's values as a Sparkplug B edge node (group `sparkplug_group`, node `<line>-edge`, one
    # device per asset): births, aliased DDATA, a device death and rebirth, a reconnect. Off: the demo as it was.
    sparkplug: bool = False
    # What the plant KPIs need (docs/kpis.md, "The demo"): scrap in production counts, a planned changeover of the
    # line, a chattering alarm, an alarm flood and a stale alarm. Off: the plant as before, draw for draw.
    kpi_scenarios: bool = False
    sparkplug_group: str = Field("Plant", min_length=1, pattern=r"^[^/+#]+$")
