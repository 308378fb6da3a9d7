"""The service wing: report requests and sign-offs over MQTT — dispatch, intake queue, throttle, topics. Code
outside the wing uses these names only."""

from edge_agent.reports.service.dispatch import ReportService
from edge_agent.reports.service.topics import reply_namespace, request_topic, signoff_topic

__all__ = ["reply_namespace", "ReportService", "request_topic", "signoff_topic"]
