"""Sign-off messages: check the signed statement (or, where allowed, the broker user), decide, audit, reply.

A sign-off without a reply topic is still decided: the decision matters, the reply is a courtesy. Every refused
attempt is counted, logged, audited (`report.signoff_refused`) and struck against the sender's throttle window.
"""

from __future__ import annotations

import asyncio
from typing import Any

import structlog

from edge_agent.base.canonical import sha256_hex
from edge_agent.base.types import utcnow
from edge_agent.reports.document import (
    UNSIGNED_REFUSAL,
    authorise,
    check_signed,
    decide,
    parse_signoff,
    record_refusal,
)
from edge_agent.reports.errors import RequestError, SignoffError
from edge_agent.reports.service.metrics import SIGNOFFS
from edge_agent.reports.service.replies import Replies, ReplyTarget
from edge_agent.reports.service.throttling import Throttling

log = structlog.get_logger(component="reports")


class Signoffs(Replies, Throttling):
    async def _on_signoff(self, message: Any, user: str | None, targets: list[ReplyTarget]) -> None:
        rules = self.config.reports
        report_id: str | None = None
        claimed: str | None = None
        try:
            request = parse_signoff(message.payload)
            report_id, claimed = request.report_id, request.by
            approval = None
            if request.approval is not None:
                approval = check_signed(
                    request.approval,
                    self.signoff_policy,
                    now=utcnow(),
                    report_id=request.report_id,
                    decision=request.decision,
                    comment=request.comment,
                    claimed=request.by,
                )
                by = approval.statement.by
            elif not rules.allow_unsigned_signoff:
                raise SignoffError(UNSIGNED_REFUSAL, "unsigned")
            elif self.signoff_refusal is not None:
                raise SignoffError(self.signoff_refusal, "anonymous_broker")
            else:
                by = authorise(user or None, request.by, rules.approvers, self.signoff_policy.identities)
            document = await asyncio.to_thread(
                decide,
                self.repo,
                self.audit,
                report_id=request.report_id,
                decision=request.decision,
                by=by,
                via="mqtt",
                comment=request.comment,
                four_eyes=rules.four_eyes,
                approval=approval,
                approval_json=request.approval,
                identities=self.signoff_policy.identities,
            )
        except RequestError as exc:
            await self._refuse_signoff(SignoffError(f"{exc.field}: {exc.reason}", "invalid"), message, user, None, None)
            await self._reply(targets, {"status": "error", "field": exc.field, "reason": exc.reason})
            return
        except SignoffError as exc:
            await self._refuse_signoff(exc, message, user, report_id, claimed)
            await self._reply(targets, {"status": "refused", "reason": str(exc)})
            return
        SIGNOFFS.labels(document["status"]).inc()
        log.info("report_signed_off", report_id=document["report_id"], status=document["status"], by=by)
        await self._reply(
            targets,
            {
                "status": document["status"],
                "report_id": document["report_id"],
                "by": by,
                "audit_seq": document["audit"]["signoff"],
            },
        )

    @staticmethod
    def _attempted(payload: bytes) -> tuple[str | None, str | None]:
        """(report_id, by) of a sign-off refused before it is decided, where the payload parses; else (None, None)."""
        try:
            request = parse_signoff(payload)
        except RequestError:
            return None, None
        return request.report_id, request.by

    async def _refuse_signoff(
        self, error: SignoffError, message: Any, user: str | None, report_id: str | None, claimed: str | None
    ) -> None:
        """Count, log and audit (`report.signoff_refused`) one refused sign-off attempt; a strike for the throttle."""
        SIGNOFFS.labels(f"refused_{error.code}").inc()
        self._strike(user)
        log.warning("signoff_refused", user=user, code=error.code, error=str(error))
        await asyncio.to_thread(
            record_refusal,
            self.audit,
            error,
            via="mqtt",
            user=user,
            report_id=report_id,
            by=claimed,
            payload_sha256=sha256_hex(message.payload),
        )
