"""The document wing: the report document and its renderings, the repository, sign-off decisions, replay and the
evidence an export carries. Code outside the wing uses these names only."""

from edge_agent.reports.document.evidence import StoreEvidence, recompute
from edge_agent.reports.document.replay import ReplayResult, replay_report, replay_with_engine
from edge_agent.reports.document.report import new_document, renderings, report_id_for
from edge_agent.reports.document.repository import PendingRequest, ReportRepository
from edge_agent.reports.document.signoff import (
    UNSIGNED_REFUSAL,
    SignoffPolicy,
    authorise,
    check_body,
    check_signed,
    decide,
    hold_approved,
    mqtt_signoff_refusal,
    parse_signoff,
    record_refusal,
)

__all__ = [
    "authorise",
    "check_body",
    "check_signed",
    "decide",
    "hold_approved",
    "mqtt_signoff_refusal",
    "new_document",
    "parse_signoff",
    "PendingRequest",
    "recompute",
    "record_refusal",
    "renderings",
    "replay_report",
    "replay_with_engine",
    "ReplayResult",
    "report_id_for",
    "ReportRepository",
    "SignoffPolicy",
    "StoreEvidence",
    "UNSIGNED_REFUSAL",
]
