"""Prometheus metrics of the MQTT client, labelled by client id."""

from prometheus_client import Counter, Gauge

CONNECTS = Counter("edge_agent_mqtt_connects_total", "Successful MQTT connections (CONNACK accepted)", ["client"])
CONNECT_FAILURES = Counter("edge_agent_mqtt_connect_failures_total", "Failed MQTT connection attempts", ["client"])
DISCONNECTS = Counter("edge_agent_mqtt_disconnects_total", "MQTT connections lost or closed", ["client"])
RECEIVED = Counter("edge_agent_mqtt_messages_received_total", "MQTT messages received", ["client"])
STALE_ACKS = Counter(
    "edge_agent_mqtt_stale_acks_total",
    "Acks skipped because the connection that delivered the message is gone",
    ["client"],
)
QUEUE_DEPTH = Gauge("edge_agent_mqtt_queue_depth", "Messages received and not yet taken by the consumer", ["client"])
QUEUE_BYTES = Gauge(
    "edge_agent_mqtt_queue_bytes", "Payload bytes received and not yet taken by the consumer", ["client"]
)
