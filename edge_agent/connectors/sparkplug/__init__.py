"""Sparkplug B 3.0 host application: edge nodes' protobuf payloads under spBv1.0/ → records (docs/connect.md).

Modules: `host` (the component: its MQTT session, the Primary Host STATE, commits before acks, rebirth requests),
`host_state` (what each BIRTH, DATA and DEATH means: pure, no I/O), `payload` (the Tahu protobuf and metric values),
`naming` (metric names → `ASSET.measurement` tags), `topics`, `reasons` (quarantine reasons). The names below are
the public ones.
"""

from edge_agent.connectors.sparkplug.host import SparkplugError, SparkplugHost
from edge_agent.connectors.sparkplug.host_state import HostState, Inbound, Outcome, Refusal
from edge_agent.connectors.sparkplug.naming import MetricName, TagNamer
from edge_agent.connectors.sparkplug.payload import MetricRefused, Payload, decode_payload, rebirth_request
from edge_agent.connectors.sparkplug.reasons import SparkplugReason

__all__ = [
    "HostState",
    "Inbound",
    "MetricName",
    "MetricRefused",
    "Outcome",
    "Payload",
    "Refusal",
    "SparkplugError",
    "SparkplugHost",
    "SparkplugReason",
    "TagNamer",
    "decode_payload",
    "rebirth_request",
]
