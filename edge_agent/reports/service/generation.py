"""Generating the report of one accepted request: window check, facts and narrative, audit entry, `done` reply.

A generation that raises anything answers `failed`; the request stays pending (`report_queue`) until its final reply
is in the outbox, so one cancelled part-way is generated again when the service next starts.
"""

from __future__ import annotations

import asyncio
import time

import structlog

from edge_agent.llm.types import EngineError
from edge_agent.reports.document import new_document, report_id_for
from edge_agent.reports.errors import ReportError, WindowTooLarge
from edge_agent.reports.narrative import build_draft, report_records
from edge_agent.reports.service.job import Job
from edge_agent.reports.service.metrics import GENERATION_SECONDS, NARRATIVES
from edge_agent.reports.service.replies import Replies

log = structlog.get_logger(component="reports")


class Generation(Replies):
    async def _answer(self, job: Job) -> None:
        """Reply `done` with the report (generated now, or stored by a run that stopped before this point) or
        `failed`; then the request is no longer pending. Cancelled part-way, it stays pending for the next start."""
        request_id = job.request.request_id
        try:
            stored = await asyncio.to_thread(self.repo.by_request_id, request_id, job.requested_by)
            if stored is not None:
                await self._reply_done(job.targets, stored.document)
            else:
                await self._generate(job)
        except (ReportError, EngineError, OSError) as exc:
            await self._reply_failed(job.targets, request_id, str(exc))
        except Exception as exc:
            log.exception("report_generation_failed", user=job.requested_by)
            await self._reply_failed(job.targets, request_id, f"internal_error: {type(exc).__name__}")
        await asyncio.to_thread(self.repo.queue_remove, request_id, job.requested_by)

    async def _check_window(self, job: Job) -> None:
        """Refuse a window too large to load on this box (WindowTooLarge), measured off the event loop."""
        rules, window = self.config.reports, job.resolved.window
        rows, size = await asyncio.to_thread(self.repo.window_size, window.start, window.end)
        if rows > rules.max_window_rows or size > rules.max_window_bytes:
            raise WindowTooLarge(rows, size, rules.max_window_rows, rules.max_window_bytes)

    async def _generate(self, job: Job) -> None:
        started = time.monotonic()
        request_id = job.request.request_id
        await self._check_window(job)
        if job.request.progress:
            await self._reply(job.targets, {"status": "generating", "request_id": request_id})
        window = job.resolved.window
        records = await asyncio.to_thread(report_records, self.store, window)
        # build_draft computes the facts and the prompt in a thread: a large window never stalls the event loop.
        draft = await build_draft(
            job.resolved,
            records,
            self.engine,
            site_id=self.config.site.id,
            config=self.config.reports,
            seed=self.config.llm.seed,
        )
        report_id = report_id_for(self.config.site.id, request_id, job.requested_by)
        # Built before its entry, so the entry logs the renderings' hashes (audit bundles bind them to the log).
        document = new_document(
            report_id=report_id,
            request_id=request_id,
            requested_by=job.requested_by,
            requested_at=job.requested_at,
            formats=list(job.request.formats),
            draft=draft,
            audit_requested=job.audit_requested,
            audit_generated=None,
        )
        if self.audit is not None:
            entry = await asyncio.to_thread(
                self.audit.append,
                "report.generated",
                "reports",
                {
                    "report_id": report_id,
                    "request_id": request_id,
                    "body_sha256": draft.body_sha256,
                    "narrative_status": draft.narrative_status,
                    **draft.provenance.model_dump(mode="json"),
                    "renderings_sha256": document["renderings_sha256"],
                },
            )
            document["audit"]["generated"] = entry.seq
        await asyncio.to_thread(self.repo.insert, document, job.request_sha256)
        NARRATIVES.labels(draft.narrative_status).inc()
        GENERATION_SECONDS.observe(time.monotonic() - started)
        log.info("report_generated", report_id=report_id, narrative_status=draft.narrative_status)
        await self._reply_done(job.targets, document)
