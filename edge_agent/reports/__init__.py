"""Reports on request over MQTT: facts computed from the store, a grounded narrative, human sign-off.

    service = ReportService(config, store, engine, audit, outbox_wake=outbox.wake, mqtt_client=MqttClient)
    result = replay_report(config, report_id)                                       # edge-agent audit replay

Four wings, each with a public face, each using only the faces of those below it:
    facts      records → numbered, traceable facts and KPIs (pure)
    narrative  sections, prompts and phrasebook, reference writer, grounding, the draft
    document   the report document, renderings, repository, sign-off decisions, replay, evidence
    service    requests and sign-offs over MQTT: dispatch, intake queue, throttle, topics
Below them all: `request` (what a report is asked for), `errors`, `untrusted` (text from the plant).
See docs/reports.md for topics, payloads and the broker ACL that makes sign-off identities trustworthy.
"""

from edge_agent.reports.document import ReplayResult, replay_report
from edge_agent.reports.errors import ReportError, ReportNotFound, RequestError, SignoffError, TemplateError
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
