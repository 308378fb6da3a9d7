"""A report request the service accepted: what it asked, who asked, where the replies go."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from edge_agent.reports.document import PendingRequest
from edge_agent.reports.request import ReportRequest, ResolvedRequest, iso
from edge_agent.reports.service.replies import ReplyTarget
from edge_agent.store import from_us


@dataclass
class Job:
    request: ReportRequest
    resolved: ResolvedRequest
    request_sha256: str
    requested_by: str | None
    accepted_time_us: int
    targets: list[ReplyTarget]
    audit_requested: int | None = None
    enqueued: float = field(default_factory=time.monotonic)

    @property
    def key(self) -> tuple[str, str]:
        """(requester, request_id): request ids are scoped per requester ('' when the broker names no user)."""
        return self.requested_by or "", self.request.request_id

    @property
    def requested_at(self) -> str:
        return iso(from_us(self.accepted_time_us))

    def pending(self) -> PendingRequest:
        return PendingRequest(
            request=self.request.model_dump(mode="json"),
            request_sha256=self.request_sha256,
            requested_by=self.requested_by,
            accepted_time_us=self.accepted_time_us,
            targets=[t.as_json() for t in self.targets],
            audit_requested=self.audit_requested,
        )
