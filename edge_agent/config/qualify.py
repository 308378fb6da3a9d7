"""`[qualify]`: the plant's acceptance criteria for `edge-agent qualify`'s performance checks (PQ), and how much of
the workload it measures them on.

Each default is a BENCHMARKS.md figure from the 2-core VM the agent is built on, at the default settings (compiled,
int8, the shipped EAGLE 3.1 head at k = 4), with a margin: half the rate for speeds (absolute tokens/s on that VM
moved by tens of percent between runs with the load of other jobs), twice the time for latencies, three quarters of
τ (which depends on the text, not the hardware). A plant sets its own from its first qualification run, and must
when it runs another precision (float32 decodes at less than half of int8's rate).
"""

from __future__ import annotations

from pydantic import Field

from edge_agent.config.base import Section


class QualifyConfig(Section):
    # "Report workload speed", int8: 53.5 tok/s without the draft, 116.5 tok/s with it, τ 4.62 (36 reports).
    plain_tokens_per_s_min: float = Field(26.7, gt=0, description="the engine without the draft, report sections")
    draft_tokens_per_s_min: float = Field(58.2, gt=0, description="the configured engine with its draft head")
    tau_min: float = Field(3.5, ge=1, description="tokens per target forward pass with the draft (1 + accepted)")
    # Same run: the shift report, the slowest type, has a median of 3.92 s with the draft; p95 twice p50.
    report_p50_max_s: float = Field(8.0, gt=0, description="median request-to-report time, per report type")
    report_p95_max_s: float = Field(16.0, gt=0, description="95th percentile request-to-report time, per type")
    # "MQTT ingest, stored durably": 5,165 messages/s.
    ingest_min_per_s: float = Field(2580.0, gt=0, description="MES messages stored durably per second")
    # The workload: reports requested per type (at least 2: the determinism check compares them; p95 of 3 is their
    # maximum), and MES messages for the ingest rate.
    reports_per_type: int = Field(3, ge=2, le=50)
    ingest_messages: int = Field(5000, ge=100)
