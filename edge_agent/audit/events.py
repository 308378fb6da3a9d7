"""The names of audit entries' events: the ones the agent writes, and the form any event name must have."""

from __future__ import annotations

import re

# The events the agent writes (contract 2). Others are allowed if well-formed; this list is for docs and the HTML.
EVENTS = (
    "agent.start",
    "agent.stop",
    "config.loaded",
    "config.security",
    "model.loaded",
    "draft.loaded",
    "ingest.batch",
    "quarantine",
    "report.requested",
    "report.generated",
    "report.signed_off",
    "report.rejected",
    "report.signoff_refused",
    "report.requester_throttled",
    "ask.answered",
    "ask.tool_called",
    "console.enrolment_issued",
    "console.enrolled",
    "console.signed_in",
    "console.signin_failed",
    "console.signed_out",
    "audit.export",
    "audit.archived",
    "key.rotated",
    "error",
)
EVENT_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
