"""Accepted report requests are kept in the store until answered (`report_queue`), so a restart loses none."""

from __future__ import annotations

from pathlib import Path

from edge_agent.base.types import utcnow
from edge_agent.reports.document import PendingRequest, ReportRepository
from edge_agent.reports.request import ReportRequest
from edge_agent.reports.service.job import Job
from edge_agent.reports.service.replies import ReplyTarget
from edge_agent.store import to_us


def pending(request_id: str, accepted_us: int, *topics: str) -> PendingRequest:
    request = {"request_id": request_id, "type": "shift_summary", "window": {"shift": "A", "date": "2026-11-29"}}
    return PendingRequest(
        request=request,
        request_sha256="ab" * 32,
        requested_by="operator",
        accepted_time_us=accepted_us,
        targets=[{"topic": t, "correlation": None, "correlation_id": None} for t in topics],
    )


def test_pending_requests_survive_a_reopen_in_acceptance_order(tmp_path: Path) -> None:
    repo = ReportRepository.for_state_dir(tmp_path)
    repo.queue_put(pending("late", 2_000, "r/1"))
    repo.queue_put(pending("early", 1_000, "r/2"))
    repo.close()
    reopened = ReportRepository.for_state_dir(tmp_path)
    assert [p.request_id for p in reopened.queue_all()] == ["early", "late"]
    assert reopened.queue_all()[0] == pending("early", 1_000, "r/2")


def test_a_repeat_replaces_the_targets_and_remove_forgets_the_request(tmp_path: Path) -> None:
    repo = ReportRepository.for_state_dir(tmp_path)
    repo.queue_put(pending("r-1", 1_000, "r/a"))
    repo.queue_put(pending("r-1", 1_000, "r/a", "r/b"))
    assert [t["topic"] for t in repo.queue_all()[0].targets] == ["r/a", "r/b"]
    repo.queue_remove("r-1", "operator")
    # Removing twice (a resumed request answered from its stored report) is harmless.
    repo.queue_remove("r-1", "operator")
    assert repo.queue_all() == []


def test_two_requesters_may_use_the_same_request_id(tmp_path: Path) -> None:
    """Request ids are scoped per requester: each keeps its own entry, and removing one leaves the other."""
    repo = ReportRepository.for_state_dir(tmp_path)
    repo.queue_put(pending("r-1", 1_000, "r/a"))
    repo.queue_put(pending("r-1", 2_000, "r/b").model_copy(update={"requested_by": "supervisor"}))
    entries = [(p.requested_by, p.targets[0]["topic"]) for p in repo.queue_all()]
    assert entries == [("operator", "r/a"), ("supervisor", "r/b")]
    repo.queue_remove("r-1", "supervisor")
    assert [p.requested_by for p in repo.queue_all()] == ["operator"]


def test_a_job_round_trips_through_its_pending_entry() -> None:
    """Request, both kinds of correlation, requester, acceptance time to the microsecond, audit seq."""
    request = ReportRequest.model_validate(
        {
            "request_id": "r-2",
            "type": "downtime_analysis",
            "language": "pt",
            "window": {"start": "2026-11-29T06:00:00-06:00", "end": "2026-11-29T14:00:00-06:00"},
            "formats": ["json", "html"],
            "progress": False,
        }
    )
    targets = [ReplyTarget("reply/5", b"\x00\xffid"), ReplyTarget("reply/311", b"c-9", "c-9")]
    accepted_us = to_us(utcnow())
    job = Job(request, None, "cd" * 32, "operator", accepted_us, targets, audit_requested=17)  # type: ignore[arg-type]
    entry = PendingRequest.model_validate_json(job.pending().model_dump_json())
    assert ReportRequest.model_validate(entry.request) == request
    assert [ReplyTarget.from_json(t) for t in entry.targets] == targets
    assert (entry.requested_by, entry.accepted_time_us, entry.audit_requested) == ("operator", accepted_us, 17)
    assert job.requested_at.endswith("Z") and len(job.requested_at) == 20
