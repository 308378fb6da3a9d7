"""Reports on request over MQTT: facts computed from the store, a grounded narrative, human sign-off.

    service = ReportService(config, store, engine, audit, outbox_wake=outbox.wake, mqtt_client=MqttClient)
    result = replay_report(config, report_id)                                       # edge-agent audit replay

Pure parts: `facts.compute_facts`, `grounding.check_narrative`, `prompts.build_prompt`, `render`.
See docs/reports.md for topics, payloads and the broker ACL that makes sign-off identities trustworthy.
"""

from edge_agent.reports.errors import ReportError, ReportNotFound, RequestError, SignoffError, TemplateError
from edge_agent.reports.replay import ReplayResult, replay_report
from edge_agent.reports.service import ReportService

__all__ = [
    "ReplayResult",
    "ReportError",
    "ReportNotFound",
    "ReportService",
    "RequestError",
    "SignoffError",
    "TemplateError",
    "replay_report",
]
