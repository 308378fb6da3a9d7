"""The ask service's Prometheus metrics."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter(
    "edge_agent_ask_requests_total",
    "Questions and tool calls by outcome: answered, needs_clarification, refused, invalid (malformed, dropped like a"
    " quarantined input), throttled, queue_full, queue_share_full, deadline, unanswerable, internal_error",
    ["outcome"],
)
QUEUE_DEPTH = Gauge("edge_agent_ask_queue_depth", "Questions and tool calls waiting")
ANSWER_SECONDS = Histogram(
    "edge_agent_ask_answer_seconds",
    "Taken from the queue → answer computed",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 20),
)
BROKER_CONNECTED = Gauge("edge_agent_ask_broker_connected", "1 while the ask service's broker connection is up")
