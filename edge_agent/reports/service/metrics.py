"""The report service's Prometheus metrics, shared by its parts (dispatch, intake, generation, sign-offs)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter("edge_agent_report_requests_total", "Report requests by outcome", ["outcome"])
GENERATION_SECONDS = Histogram(
    "edge_agent_report_generation_seconds", "Request dequeued → report stored", buckets=(1, 2, 5, 10, 20, 40, 80, 160)
)
BROKER_CONNECTED = Gauge(
    "edge_agent_reports_broker_connected", "1 while the report service's own broker connection is up, else 0"
)
QUEUE_DEPTH = Gauge("edge_agent_report_queue_depth", "Report requests waiting")
NARRATIVES = Counter("edge_agent_report_narratives_total", "Generated reports by narrative status", ["status"])
SIGNOFFS = Counter(
    "edge_agent_report_signoffs_total", "Sign-off messages by outcome (a refusal by its code)", ["outcome"]
)
THROTTLED = Counter(
    "edge_agent_report_throttled_total",
    "Requests and sign-offs dropped unread from a user over reports.throttle_invalid_max",
    ["kind"],
)
THROTTLE_EPISODES = Counter(
    "edge_agent_report_throttle_episodes_total", "Windows in which a user was throttled (one audit entry each)"
)
