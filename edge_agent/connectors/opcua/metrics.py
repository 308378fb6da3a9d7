"""Prometheus metrics of the OPC UA connector, labelled by source name."""

from prometheus_client import Counter, Gauge

VALUES_RECEIVED = Counter("edge_agent_opcua_values_received_total", "OPC UA data changes received live", ["source"])
VALUES_BACKFILLED = Counter(
    "edge_agent_opcua_values_backfilled_total", "OPC UA values read back with HistoryRead after a gap", ["source"]
)
ALARMS_RECEIVED = Counter("edge_agent_opcua_alarms_received_total", "OPC UA alarm/condition events", ["source"])
RECORDS_STORED = Counter(
    "edge_agent_opcua_records_stored_total", "OPC UA records newly stored (duplicates excluded)", ["source"]
)
RECONNECTS = Counter("edge_agent_opcua_reconnects_total", "sessions re-established after a loss", ["source"])
CONNECT_FAILURES = Counter("edge_agent_opcua_connect_failures_total", "failed connect attempts", ["source"])
NODE_FAILURES = Counter("edge_agent_opcua_node_failures_total", "monitored items the server refused", ["source"])
OVERFLOW_SUSPECTED = Counter(
    "edge_agent_opcua_overflow_suspected_total",
    "bursts where a server-side item queue may have overflowed",
    ["source"],
)
QUARANTINED = Counter(
    "edge_agent_opcua_quarantined_total", "OPC UA values and events refused into quarantine", ["source", "reason"]
)
GAPS = Counter(
    "edge_agent_opcua_gaps_total", "data_gap records stored: intervals no data could fill", ["source", "reason"]
)
CONNECTED = Gauge("edge_agent_opcua_connected", "1 while a session with live subscriptions is up", ["source"])
SERVICE_LEVEL = Gauge("edge_agent_opcua_service_level", "the server's ServiceLevel (0-255)", ["source"])
