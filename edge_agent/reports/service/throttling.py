"""The report service's side of the per-user throttle (edge_agent/reports/service/throttle.py): strikes and drops."""

from __future__ import annotations

import asyncio

import structlog

from edge_agent.base.canonical import sha256_hex
from edge_agent.reports.document import record_refusal
from edge_agent.reports.errors import SignoffError
from edge_agent.reports.service.metrics import SIGNOFFS, THROTTLE_EPISODES, THROTTLED
from edge_agent.reports.service.state import ServiceState
from edge_agent.reports.service.throttle import Verdict
from edge_agent.reports.service.topics import ANONYMOUS

log = structlog.get_logger(component="reports")


class Throttling(ServiceState):
    def _strike(self, user: str | None) -> None:
        self.throttle.strike(user or ANONYMOUS)

    async def _throttled(self, user: str | None, kind: str, payload: bytes) -> bool:
        """True when `user` is over its invalid-message limit: the message is dropped unread, counted, and the first
        such drop of the user's window is logged and audited (`report.requester_throttled`); so is the window's first
        dropped sign-off (`report.signoff_refused`, code `throttled`), which stands for all of them."""
        who = user or ANONYMOUS
        verdict = self.throttle.check(who, kind)
        if verdict is Verdict.HANDLE:
            return False
        THROTTLED.labels(kind).inc()
        if kind == "signoff" and self.throttle.dropped(who, kind) == 1:
            await self._summarise_dropped_signoffs(user, payload)
        if verdict is Verdict.FIRST_DROP:
            THROTTLE_EPISODES.inc()
            rules = self.config.reports
            until_s = round(self.throttle.until(who) or 0.0, 1)
            log.warning(
                "requester_throttled",
                user=who,
                limit=rules.throttle_invalid_max,
                window_s=rules.throttle_window_s,
                dropped_for_s=until_s,
            )
            if self.audit is not None:
                await asyncio.to_thread(
                    self.audit.append,
                    "report.requester_throttled",
                    "reports",
                    {
                        "broker_user": user,
                        "limit": rules.throttle_invalid_max,
                        "window_s": rules.throttle_window_s,
                        "dropped_for_s": until_s,
                    },
                )
        return True

    async def _summarise_dropped_signoffs(self, user: str | None, payload: bytes) -> None:
        """One `report.signoff_refused` (code `throttled`) for every sign-off dropped in `user`'s window: this one's
        hash, and how long the rest are dropped for (their number is edge_agent_report_throttled_total)."""
        who = user or ANONYMOUS
        rules = self.config.reports
        until_s = round(self.throttle.until(who) or 0.0, 1)
        error = SignoffError(
            f"throttled: {who} had {rules.throttle_invalid_max} invalid requests or refused sign-offs within"
            f" {rules.throttle_window_s:g} s (reports.throttle_invalid_max); this and every further sign-off from"
            f" {who} for the next {until_s:g} s is dropped unread",
            "throttled",
        )
        SIGNOFFS.labels("refused_throttled").inc()
        await asyncio.to_thread(
            record_refusal,
            self.audit,
            error,
            via="mqtt",
            user=user,
            report_id=None,
            by=None,
            payload_sha256=sha256_hex(payload),
        )
