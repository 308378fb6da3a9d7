"""The console's read pages (Now, Reports, a report and the records behind its facts, Alarms, Audit, Health): each
page's HTML and its JSON contract at `<path>.json`, with exact figures from a store holding one hand-written shift
(harness/shift.py) and a real audit log with a checkpoint, a witness's cosignature and its state; then Hypothesis
over every query parameter (any string: 200, or a 400/404 that names it, never a 500).

The app runs in process (httpx.ASGITransport); a signed-in visitor is a session made by the console's own session
table, as a passkey sign-in makes it (the ceremony itself is tests/test_console_auth.py's)."""

from __future__ import annotations

import asyncio
import io
import json
import re
import ssl
import tarfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from edge_agent.app import AgentContext, build_components
from edge_agent.ask.pipeline import ASK_VERSION, answer_at
from edge_agent.ask.throttle import UserThrottle
from edge_agent.ask.trail import answered, record_answer
from edge_agent.audit import AuditLog
from edge_agent.audit.checkpoint import SignedNote
from edge_agent.audit.rollback import Finding, write_marker
from edge_agent.audit.witness_client import WitnessAnswer
from edge_agent.audit.witness_state import WitnessStatus, keep_cosignature, write_witness_state
from edge_agent.base.broker import free_port
from edge_agent.base.canonical import canonical_json, sha256_hex
from edge_agent.config import AgentConfig, DaemonConfig
from edge_agent.console.app import build_app
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.console.context import ConsoleContext
from edge_agent.console.i18n import MESSAGES
from edge_agent.console.middleware import CSP, ConsoleMiddleware
from edge_agent.console.server import ConsoleServer
from edge_agent.console.views.ask import HISTORY_MAX, records_url
from edge_agent.daemon import AgentStatus, ComponentStatus
from edge_agent.daemon.supervisor import Supervisor
from edge_agent.doctor.assemble import local_checks
from edge_agent.reports.document import ReportRepository, decide, new_document
from edge_agent.reports.facts import compute_facts
from edge_agent.reports.narrative import Draft
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.signing import Cosigner, Signer
from edge_agent.store import RecordWriter, Store
from harness.shift import SHIFT_START, TZ, record, shift_records
from tests.fixtures.browser import needs_chromium
from tests.test_console_auth import self_signed

ORIGIN = "https://localhost:8443"
AUDIT_ORIGIN = "edge-agent/demo"
WITNESS_URL = "https://witness.example/"
# 18:00 UTC = 12:00 in Mexico City: six hours into shift A (06:00-14:00 local).
NOW = SHIFT_START + timedelta(hours=6)
PEOPLE = [{"name": n, "broker_user": f"{n}.mqtt"} for n in ("alice", "bob", "carol", "dave")]
ROLES = {"alice": ["approver"], "bob": ["approver"], "carol": ["viewer"], "dave": ["auditor"]}


@dataclass
class DoctorCheck:  # what doctor's `Check` carries; doctor sits above the console, which reads these four fields
    id: str
    status: str
    detail: str
    fix: str | None = None


def config_for(state_dir: Path) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(state_dir)},
            "mqtt": {"username": "agent", "password": "agent-pw"},
            "reports": {
                "approvers": ["alice", "bob"],
                "shifts": [{"name": "A", "start": "06:00", "end": "14:00"}],
                "kpi": {"lines": [{"line": "L1", "ideal_rate_per_min": 5.0}], "alarm_review_days": 1},
            },
            "identities": PEOPLE,
            "console": {"roles": ROLES},
        }
    )


def plant() -> list[Any]:
    """The hand-written shift, plus what the last hour holds: a stop of L1 still open, two alarms raised on P-102."""
    extra = [
        record(
            "mes_event",
            "P-102",
            {"id": "mes-9", "ts": "x", "type": "downtime_start", "asset": "P-102", "line": "L1",
             "reason": "no_material", "downtime_id": "D-2"},
            330,
        ),
        record("alarm", "P-102", {"event_id": "e9", "message": "Temperatura alta", "severity": 500,
                                  "condition": "HighTemp", "active": True}, 320),
        record("alarm", "P-102", {"event_id": "e10", "message": "Temperatura alta", "severity": 500,
                                  "condition": "HighTemp", "active": True}, 340),
    ]  # fmt: skip
    return shift_records() + extra


@dataclass
class Pages:
    ctx: ConsoleContext
    audit: AuditLog
    store: Store
    state_dir: Path
    draft_id: str
    approved_id: str
    checkpoint_note: bytes

    def client(self, name: str | None = "carol") -> httpx.AsyncClient:
        cookies = {}
        if name is not None:
            session = self.ctx.sessions.new(self.ctx.now(), name)
            cookies["session"] = self.ctx.sessions.cookie(session)
        transport = httpx.ASGITransport(app=build_app(self.ctx))
        return httpx.AsyncClient(transport=transport, base_url=ORIGIN, cookies=cookies)


def shift_report(repo: ReportRepository, store: Store, request_id: str) -> str:
    """A report of the whole shift made from the store's records through the facts wing, with one section."""
    window = ResolvedWindow(start=SHIFT_START, end=SHIFT_START + timedelta(hours=8), shift="A", timezone=TZ)
    request = ResolvedRequest(type="shift_summary", language="en", window=window, scope=Scope())
    facts = compute_facts(store.records(window.start, window.end), request)
    cited = [f.id for f in facts if f.kind in ("tag_stats", "downtime")]
    body = {
        "schema": "edge-agent.report.body/2",
        "site": "demo",
        "request": request.as_json(),
        "facts": [f.model_dump(mode="json") for f in facts],
        "narrative": "P-101 vibró y paró 85 minutos.",
        "narrative_status": "complete",
        "sections": [{"name": "summary", "status": "reference", "text": "P-101 vibró y paró 85 minutos.",
                      "fact_ids": cited, "attempts": []}],
    }  # fmt: skip
    data = canonical_json(body)
    document = new_document(
        report_id=f"rpt-{request_id}",
        request_id=request_id,
        requested_by="operator",
        requested_at="2026-11-29T20:00:00Z",
        formats=["json"],
        draft=Draft(body=body, body_bytes=data, body_sha256=sha256_hex(data)),
        audit_requested=None,
        audit_generated=None,
    )
    repo.insert(document, "0" * 64)
    return str(document["report_id"])


@pytest.fixture
async def pages(tmp_path: Path) -> AsyncIterator[Pages]:
    config = config_for(tmp_path)
    store = Store(config.paths.store_path)
    store.insert_records(plant())
    audit = AuditLog.open(config.paths.audit_dir, origin=AUDIT_ORIGIN)
    repo = ReportRepository.for_state_dir(tmp_path)
    draft_id = shift_report(repo, store, "shift-a-draft")
    approved_id = shift_report(repo, store, "shift-a-approved")
    decide(repo, audit, report_id=approved_id, decision="approve", by="alice", via="console", four_eyes=False)
    note = audit.checkpoint()
    witness = Cosigner(Signer.generate("witness.example"))
    text = SignedNote.parse(note).text
    signature = witness.cosign(text, 1_780_000_000)
    keep_cosignature(config.paths.audit_dir, note, WitnessAnswer("cosigned", audit.size, "cosigned", signature))
    write_witness_state(
        config.paths.audit_dir,
        {WITNESS_URL: WitnessStatus(size=audit.size, state="cosigned", detail=f"cosigned size {audit.size}",
                                    at="2026-11-29T17:59:00Z")},
    )  # fmt: skip
    credentials = CredentialStore.for_state_dir(tmp_path)
    ctx = ConsoleContext(config, store, audit, repo, credentials, now=lambda: NOW)
    try:
        yield Pages(ctx, audit, store, tmp_path, draft_id, approved_id, note)
    finally:
        credentials.close()
        repo.close()
        audit.close()
        store.close()


async def get_json(pages: Pages, path: str, name: str = "carol") -> Any:
    async with pages.client(name) as client:
        response = await client.get(path)
    assert response.status_code == 200, response.text[:500]
    assert response.headers["content-type"] == "application/json"
    return response.json()


class TestAccess:
    @pytest.mark.parametrize("path", ["/now", "/reports", "/alarms", "/health", "/audit", "/records?ids=1"])
    async def test_a_visitor_not_signed_in_is_sent_to_sign_in_and_the_json_is_refused(
        self, pages: Pages, path: str
    ) -> None:
        async with pages.client(None) as client:
            page = await client.get(path)
            data = await client.get(path.replace("?", ".json?") if "?" in path else path + ".json")
        assert (page.status_code, page.headers["location"]) == (303, "/signin")
        assert (data.status_code, data.json()) == (401, {"error": "sign in first"})

    async def test_the_audit_page_is_for_auditors_only(self, pages: Pages) -> None:
        async with pages.client("carol") as viewer, pages.client("dave") as auditor:
            assert (await viewer.get("/audit.json")).status_code == 403
            assert (await viewer.post("/audit/bundle", data={})).status_code == 403  # no CSRF token either
            assert (await auditor.get("/audit.json")).status_code == 200

    @pytest.mark.parametrize("path", ["/now", "/reports", "/alarms", "/health", "/records?ids=1,2"])
    async def test_every_page_is_html_under_the_csp_with_no_inline_script(self, pages: Pages, path: str) -> None:
        async with pages.client() as client:
            page = await client.get(path)
        assert page.status_code == 200, page.text[:500]
        assert page.headers["content-security-policy"] == CSP
        assert "<script>" not in page.text and not re.search(r"<script(?![^>]*\bsrc=)", page.text)
        assert re.search(r"\son[a-z]+=", page.text) is None  # no inline event handlers
        assert 'href="/now"' in page.text and "<h1>" in page.text


class TestNow:
    async def test_the_lines_state_oee_so_far_open_stops_and_last_hours_alarms(self, pages: Pages) -> None:
        data = await get_json(pages, "/now.json")
        assert data["at"] == "2026-11-29T18:00:00Z"
        assert data["window"] == {
            "start": "2026-11-29T12:00:00Z", "end": "2026-11-29T18:00:00Z", "shift": "A", "timezone": TZ,
        }  # fmt: skip
        # 6 h = 21 600 s; unplanned stops D-1 12:20-13:45 (5 100 s) and D-2 17:30-now (1 800 s): 14 700 s running.
        # Availability 14 700 / 21 600 = 0.6806; performance 1 200 counted / (14 700 s × 5 per min = 1 225) = 0.9796.
        [line] = data["lines"]
        assert line["line"] == "L1" and line["state"] == "stopped"
        assert (line["availability"], line["performance"], line["quality"]) == (0.6806, 0.9796, None)
        assert (line["oee"], line["unplanned_downtime_s"]) == (None, 6900)
        [stop] = data["open_stops"]
        assert {k: stop[k] for k in ("asset", "reason", "since", "duration_s", "line")} == {
            "asset": "P-102", "reason": "no_material", "since": "2026-11-29T17:30:00Z", "duration_s": 1800,
            "line": "L1",
        }  # fmt: skip
        recent = data["alarms_last_hour"]
        assert recent["count"] == 2
        assert [(a["asset"], a["condition"], a["count"], a["last_at"]) for a in recent["top"]] == [
            ("P-102", "HighTemp", 2, "2026-11-29T17:40:00Z")
        ]

    async def test_a_stop_begun_before_the_shift_and_still_open_is_listed(self, pages: Pages) -> None:
        """C-201 stopped an hour before shift A began and has not restarted: the Now page lists it with its start."""
        pages.store.insert_records(
            [
                record(
                    "mes_event",
                    "C-201",
                    {"id": "mes-0", "ts": "x", "type": "downtime_start", "asset": "C-201", "line": "L1",
                     "reason": "maintenance", "downtime_id": "D-0", "planned": True},
                    -60,
                )
            ]
        )  # fmt: skip
        data = await get_json(pages, "/now.json")
        assert sorted((s["asset"], s["since"], s["duration_s"]) for s in data["open_stops"]) == [
            ("C-201", "2026-11-29T11:00:00Z", 7 * 3600),
            ("P-102", "2026-11-29T17:30:00Z", 1800),
        ]

    async def test_the_page_shows_the_same_figures(self, pages: Pages) -> None:
        async with pages.client() as client:
            page = (await client.get("/now")).text
        assert "<td>68.1 %</td><td>98.0 %</td>" in page and "no_material" in page
        assert '<span id="alarm-count">2</span>' in page

    async def test_the_labels_follow_the_language(self, pages: Pages) -> None:
        async with pages.client() as client:
            es = (await client.get("/now", headers={"accept-language": "es-MX,es;q=0.9"})).text
            pt = (await client.get("/now", headers={"accept-language": "pt-BR"})).text
        assert "Paros abiertos" in es and "Paragens abertas" in pt

    def test_every_language_has_every_word_and_none_hides_behind_a_dict_method(self) -> None:
        assert set(MESSAGES["es"]) == set(MESSAGES["en"]) == set(MESSAGES["pt"])
        # Templates read `t.<key>`, and Jinja looks up attributes first: `t.values` would be dict.values.
        assert [k for k in MESSAGES["en"] if hasattr(dict, k)] == []


class TestReports:
    async def test_the_list_has_each_report_with_its_status(self, pages: Pages) -> None:
        data = await get_json(pages, "/reports.json")
        statuses = {r["report_id"]: r["status"] for r in data["reports"]}
        assert statuses == {pages.draft_id: "draft", pages.approved_id: "approved"}
        only = await get_json(pages, "/reports.json?status=approved")
        assert [r["report_id"] for r in only["reports"]] == [pages.approved_id]

    async def test_a_report_has_its_sections_facts_linked_to_records_and_who_signed(self, pages: Pages) -> None:
        data = await get_json(pages, f"/reports/{pages.approved_id}.json")
        assert data["status"] == "approved"
        assert {k: data["signoff"][k] for k in ("by", "decision", "via")} == {
            "by": "alice", "decision": "approve", "via": "console",
        }  # fmt: skip
        [section] = data["sections"]
        facts = {f["id"]: f for f in data["facts"]}
        assert section["fact_ids"] and all(i in facts for i in section["fact_ids"])
        vibration = next(f for f in data["facts"] if f["subject"] == "P-101.vibration_mm_s")
        # The five samples 3.1, 4.5, 7.86, 5.2, 4.0 are records 1-5 (harness/shift.py's order).
        assert sorted(vibration["record_ids"]) == [1, 2, 3, 4, 5]
        assert vibration["records_url"] == "/records?ids=" + ",".join(map(str, vibration["record_ids"]))
        draft = await get_json(pages, f"/reports/{pages.draft_id}.json")
        assert (draft["status"], draft["signoff"]) == ("draft", None)

    async def test_the_trend_holds_the_cited_tags_samples(self, pages: Pages) -> None:
        data = await get_json(pages, f"/reports/{pages.approved_id}.json")
        trends = {t["tag"]: t for t in data["trends"]}
        vibration = trends["P-101.vibration_mm_s"]
        start = SHIFT_START.timestamp()
        assert vibration["t"] == [start + 600 * i for i in range(5)]
        assert vibration["v"] == [3.1, 4.5, 7.86, 5.2, 4.0]
        assert trends["P-101.running"]["v"] == [1.0, 0.0, 1.0]
        thin = await get_json(pages, f"/reports/{pages.approved_id}.json?points=10")
        assert thin["trends"][0]["v"] == vibration["v"]  # 5 samples: under the limit, all kept

    async def test_the_report_page_draws_its_charts_from_data_attributes(self, pages: Pages) -> None:
        async with pages.client() as client:
            page = (await client.get(f"/reports/{pages.approved_id}")).text
            script = await client.get("/static/charts.js")
            uplot = await client.get("/static/vendor/uPlot.iife.min.js")
        assert 'data-chart="trend"' in page and "data-v='[3.1, 4.5, 7.86, 5.2, 4.0]'" in page
        assert '<script src="/static/vendor/uPlot.iife.min.js" defer></script>' in page
        assert script.status_code == 200 and uplot.status_code == 200 and "uPlot" in uplot.text
        assert 'id="signed-by">alice (approve' in page

    async def test_the_records_behind_a_fact(self, pages: Pages) -> None:
        data = await get_json(pages, "/records.json?ids=3,1,999999")
        assert [(r["id"], r["key"], r["value"]) for r in data["records"]] == [
            (1, "P-101.vibration_mm_s", 3.1),
            (3, "P-101.vibration_mm_s", 7.86),
        ]
        assert data["records"][0]["source_time"] == "2026-11-29T12:00:00Z"
        assert (data["ids"], data["missing"]) == ([3, 1, 999999], [999999])

    async def test_an_unknown_report_is_a_404(self, pages: Pages) -> None:
        async with pages.client() as client:
            page = await client.get("/reports/rpt-nothing")
            data = await client.get("/reports/rpt-nothing.json")
        assert page.status_code == 404 and "rpt-nothing" in page.text
        assert (data.status_code, data.json()["field"]) == (404, "report_id")


class TestStoreReads:
    """The two store reads the pages added: records by id, and a tag's series thinned for a chart."""

    def test_records_by_id_returns_those_stored_by_id_and_skips_the_rest(self, pages: Pages) -> None:
        found = pages.store.records_by_id([5, 1, 5, 10**12])
        assert [(r.id, r.key) for r in found] == [(1, "P-101.vibration_mm_s"), (5, "P-101.vibration_mm_s")]

    def test_a_series_keeps_every_nth_sample_so_that_at_most_points_remain(self, tmp_path: Path) -> None:
        with Store(tmp_path / "s.db") as store:
            store.insert_records([record("tag_value", "T.x", float(i), i) for i in range(25)])
            store.insert_records([record("tag_value", "T.y", 1.0, i) for i in range(25)])  # another tag: not read
            start, end = SHIFT_START, SHIFT_START + timedelta(minutes=24)  # the sample at minute 24 is at the end
            thinned = store.series("T.x", start, end, 10)
            full = store.series("T.x", start, end, 100)
        # 24 samples in the window, at most 10 points: every 3rd (ceil(24 / 10)), from the first.
        assert [v for _, v in thinned] == [0.0, 3.0, 6.0, 9.0, 12.0, 15.0, 18.0, 21.0]
        assert [v for _, v in full] == [float(i) for i in range(24)]
        assert thinned[1][0] == SHIFT_START + timedelta(minutes=3)


class TestAlarms:
    async def test_the_review_rate_floods_and_bad_actors(self, pages: Pages) -> None:
        # alarm_review_days = 1: the local day before now's (29 Nov 00:00-24:00 in Mexico City = 06:00-06:00 UTC)
        # ends after NOW, so the review covers 28 Nov, which holds nothing; 2 days reach back over the shift.
        data = await get_json(pages, "/alarms.json?days=2")
        assert data["window"]["start"] == "2026-11-27T06:00:00Z" and data["window"]["end"] == "2026-11-29T06:00:00Z"
        empty = all(c == 0 for c in data["series"]["counts"])
        assert empty and len(data["series"]["counts"]) == 288  # 2 days of 10 minutes
        assert data["series"]["benchmark_per_10min"] == 1 and data["series"]["benchmark_per_10min_max"] == 2

    async def test_the_review_of_the_shifts_day(self, pages: Pages) -> None:
        pages.ctx.now = lambda: NOW + timedelta(days=1)  # the 29th has ended: it is the day reviewed
        data = await get_json(pages, "/alarms.json")
        assert data["window"] == {
            "start": "2026-11-29T06:00:00Z", "end": "2026-11-30T06:00:00Z", "shift": None, "timezone": TZ,
        }  # fmt: skip
        [rate] = data["rate"]
        assert (rate["subject"], rate["count"], rate["per_10min_peak"], rate["rating"]) == ("all", 3, 1, "acceptable")
        counts = data["series"]["counts"]
        # Raised at 12:15 (P-101), 17:20 and 17:40 (P-102): intervals 37, 68 and 70 from 06:00.
        assert len(counts) == 144 and sum(counts) == 3
        assert [i for i, c in enumerate(counts) if c] == [37, 68, 70]
        assert [(b["rank"], b["subject"], b["condition"], b["count"]) for b in data["bad_actors"]] == [
            (1, "P-102", "HighTemp", 2),
            (2, "P-101", "HighVibration", 1),
        ]
        assert data["flood_episodes"] == [] and data["flood"][0]["episodes_count"] == 0

    async def test_the_page_charts_the_rate_against_the_benchmark(self, pages: Pages) -> None:
        async with pages.client() as client:
            page = (await client.get("/alarms")).text
        assert 'data-chart="rate"' in page and 'data-benchmark="1"' in page and 'data-chart="bars"' not in page


class TestAudit:
    async def test_log_size_checkpoint_witness_and_its_cosignature(self, pages: Pages) -> None:
        data = await get_json(pages, "/audit.json", "dave")
        size = pages.audit.size
        assert size == 2  # the log key's first entry and the approval
        assert data["size"] == size and data["origin"] == AUDIT_ORIGIN
        checkpoint = SignedNote.parse(pages.checkpoint_note).text.decode().splitlines()
        assert data["checkpoint"] == {"size": size, "root": checkpoint[2]}
        assert data["witnesses"] == [
            {"url": WITNESS_URL, "state": "cosigned", "size": size, "detail": f"cosigned size {size}",
             "at": "2026-11-29T17:59:00Z", "failures": 0, "cosigned_size": size}
        ]  # fmt: skip
        assert list(data["cosignatures"]) == ["witness.example"] and data["cosigned_size"] == size
        assert data["findings"] == [] and data["blocked"] is None

    async def test_rollback_findings_are_listed(self, pages: Pages) -> None:
        write_marker(pages.ctx.config.paths.audit_dir, [Finding("witness:w", "the witness holds size 9, the log 1")])
        data = await get_json(pages, "/audit.json", "dave")
        assert data["findings"] == [{"key": "witness:w", "message": "the witness holds size 9, the log 1"}]

    async def test_an_auditor_builds_and_downloads_the_bundle(self, pages: Pages) -> None:
        async with pages.client("dave") as client:
            page = await client.get("/audit")
            csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
            bundle = await client.post("/audit/bundle", data={"csrf_token": csrf, "start": "", "end": ""})
            bad = await client.post("/audit/bundle", data={"csrf_token": csrf, "start": "yesterday"})
        assert bundle.status_code == 200, bundle.text[:300]
        assert bundle.headers["content-disposition"] == 'attachment; filename="audit-bundle.tar.gz"'
        with tarfile.open(fileobj=io.BytesIO(bundle.content), mode="r:gz") as tar:
            names = tar.getnames()
        assert any(n.endswith("entries.jsonl") for n in names)
        assert any(n.endswith(f"{pages.approved_id}.json") for n in names)
        lines = (pages.ctx.config.paths.audit_dir / "entries.jsonl").read_text().splitlines()
        export = json.loads(lines[-1])
        assert (export["event"], export["actor"]) == ("audit.export", "operator:dave")
        assert bad.status_code == 400 and "start: an ISO-8601 time with an offset" in bad.text

    async def test_a_streamed_answer_to_a_post_is_sent_whole(self, pages: Pages) -> None:
        """The middleware replays the POST body it read for the CSRF check, then hands `receive` back to the server:
        a StreamingResponse (as the bundle's FileResponse) waits for the client's real disconnect, so every chunk
        arrives (200 chunks of 64 KiB: 12.5 MiB)."""
        chunk = b"x" * 65536

        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(200):
                await asyncio.sleep(0)
                yield chunk

        async def stream(request: Request) -> Response:
            await request.body()
            return StreamingResponse(chunks(), media_type="application/octet-stream")

        app = Starlette(routes=[Route("/stream", stream, methods=["POST"])],
                        middleware=[Middleware(ConsoleMiddleware, ctx=pages.ctx)])  # fmt: skip
        session = pages.ctx.sessions.new(pages.ctx.now(), "dave")
        cookies = {"session": pages.ctx.sessions.cookie(session)}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN, cookies=cookies) as client:
            response = await client.post("/stream", data={"csrf_token": session.csrf, "q": "1"})
        assert response.status_code == 200 and len(response.content) == 200 * len(chunk)


class TestHealth:
    async def test_outside_the_agent_the_page_says_so(self, pages: Pages) -> None:
        assert await get_json(pages, "/health.json") == {"readiness": None, "doctor": None}

    async def test_readiness_per_component_and_doctors_checks(self, pages: Pages) -> None:
        status = AgentStatus(
            phase="running",
            ready=False,
            flapping=[],
            components=[
                ComponentStatus(name="mqtt", state="ready", ready=True, restarts=0, restarts_in_window=0,
                                flapping=False),
                ComponentStatus(name="engine", state="starting", ready=False, restarts=1, restarts_in_window=1,
                                flapping=False, last_error="model loading"),
            ],
        )  # fmt: skip
        checks = [DoctorCheck("disk", "ok", "12 GiB free"), DoctorCheck("ntp", "warn", "not synced", "enable NTP")]
        pages.ctx.readiness = lambda: status
        pages.ctx.doctor_checks = lambda: checks
        data = await get_json(pages, "/health.json")
        assert data["readiness"]["ready"] is False
        assert [(c["name"], c["state"], c["last_error"]) for c in data["readiness"]["components"]] == [
            ("mqtt", "ready", None),
            ("engine", "starting", "model loading"),
        ]
        assert data["doctor"] == [
            {"id": "disk", "status": "ok", "detail": "12 GiB free", "fix": None},
            {"id": "ntp", "status": "warn", "detail": "not synced", "fix": "enable NTP"},
        ]

    async def test_a_running_agent_shows_each_components_state_and_doctors_local_checks(self, tmp_path: Path) -> None:
        """The agent's own composition (app.build_components) under a running Supervisor, the console among its
        components over TLS: /health.json lists every component as the supervisor reports it, and doctor's cheap
        checks as `edge-agent run` hands them in."""
        cert_file, key_file = self_signed(tmp_path)
        base = config_for(tmp_path).model_dump(mode="json", exclude_unset=True)
        config = AgentConfig.model_validate(
            base
            | {
                "mqtt": {"enabled": False},
                "llm": {"enabled": False},
                "health": {"enabled": False},
                "console": {"enabled": True, "port": free_port(), "tls_cert_file": str(cert_file),
                            "tls_key_file": str(key_file), "roles": ROLES},
            }
        )  # fmt: skip
        config_path = tmp_path / "agent.toml"
        config_path.write_text("")
        with Store(config.paths.store_path) as store, AuditLog.open(config.paths.audit_dir, origin="o") as audit:
            writer = RecordWriter(store)
            supervisor = Supervisor(DaemonConfig(ready_timeout_s=10.0), handle_signals=False)
            agent = AgentContext(config, store, writer, audit, supervisor.status,
                                 doctor_checks=partial(local_checks, config_path, config))  # fmt: skip
            components = build_components(agent)
            for component in components:
                supervisor.add(component)
            running = asyncio.create_task(supervisor.run())
            try:
                [console] = [c for c in components if isinstance(c, ConsoleServer)]
                while not supervisor.ready:
                    assert not running.done(), running.result()
                    await asyncio.sleep(0.05)
                assert console.context is not None
                cookie = console.context.sessions.cookie(console.context.sessions.new(console.context.now(), "carol"))
                trust = ssl.create_default_context(cafile=str(cert_file))
                url = f"https://localhost:{console.port}"
                async with httpx.AsyncClient(verify=trust, base_url=url, cookies={"session": cookie}) as client:
                    data = (await client.get("/health.json")).json()
                    page = (await client.get("/health")).text
            finally:
                supervisor.request_stop("test")
                await running
        assert data["readiness"]["ready"] is True and data["readiness"]["phase"] == "running"
        assert [(c["name"], c["state"], c["restarts"]) for c in data["readiness"]["components"]] == [
            (c.name, "ready", 0) for c in components
        ]
        assert "console" in [c.name for c in components]
        assert [c["id"] for c in data["doctor"]] == [
            "config", "security", "state_dir", "audit_key", "audit_rollback", "disk", "clock"
        ]  # fmt: skip
        for c in components:
            assert f'<tr><th scope="row">{c.name}</th><td>ready</td>' in page


# Every query parameter of every page, each with what it accepts.
PARAMS = [
    ("/reports", "limit"),
    ("/reports", "status"),
    ("/records", "ids"),
    ("/alarms", "days"),
    ("/now", "any"),
    ("/health", "any"),
]


class TestQueryParameters:
    @pytest.mark.parametrize(
        ("path", "expected"),
        [
            ("/reports.json?limit=0", (400, "limit")),
            ("/reports.json?limit=abc", (400, "limit")),
            ("/reports.json?status=signed", (400, "status")),
            ("/records.json", (400, "ids")),
            ("/records.json?ids=1,,2", (400, "ids")),
            ("/records.json?ids=0", (400, "ids")),
            ("/records.json?ids=" + ",".join(["1"] * 201), (400, "ids")),
            ("/alarms.json?days=32", (400, "days")),
            ("/alarms.json?days=%EF%BC%91", (400, "days")),  # a fullwidth digit is no ASCII number
        ],
    )
    async def test_a_bad_value_is_a_400_naming_the_parameter(
        self, pages: Pages, path: str, expected: tuple[int, str]
    ) -> None:
        async with pages.client() as client:
            response = await client.get(path)
            page = await client.get(path.replace(".json", "", 1))
        assert (response.status_code, response.json()["field"]) == expected
        assert page.status_code == expected[0] and expected[1] in page.text

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(which=st.sampled_from(PARAMS), value=st.text(max_size=80), as_json=st.booleans())
    async def test_any_string_is_a_200_or_a_clear_400_never_a_500(
        self, pages: Pages, which: tuple[str, str], value: str, as_json: bool
    ) -> None:
        path, name = which
        url = f"{path}{'.json' if as_json else ''}?{quote(name)}={quote(value, safe='')}"
        async with pages.client() as client:
            response = await client.get(url)
        assert response.status_code in (200, 400), (url, response.status_code, response.text[:300])
        if response.status_code == 400 and as_json:
            assert response.json()["field"] == name

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(report_id=st.text(min_size=1, max_size=80), points=st.text(max_size=20))
    async def test_any_report_id_and_points_is_a_page_a_400_or_a_404(
        self, pages: Pages, report_id: str, points: str
    ) -> None:
        url = f"/reports/{quote(report_id, safe='')}.json?points={quote(points, safe='')}"
        async with pages.client() as client:
            response = await client.get(url)
        assert response.status_code in (200, 400, 404), (url, response.status_code, response.text[:300])


class TestBundleForm:
    @settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
    @given(start=st.text(max_size=40), end=st.text(max_size=40))
    async def test_any_start_and_end_is_a_bundle_or_a_400_naming_the_field(
        self, pages: Pages, start: str, end: str
    ) -> None:
        async with pages.client("dave") as client:
            page = await client.get("/audit")
            csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
            response = await client.post("/audit/bundle", data={"csrf_token": csrf, "start": start, "end": end})
        assert response.status_code in (200, 400), response.text[:300]
        if response.status_code == 400:
            assert re.search(r"(start|end|bundle): ", response.text)


AXE = Path(__file__).parent / "data" / "axe-core" / "axe.min.js"


@pytest.mark.slow
@needs_chromium
async def test_axe_finds_no_serious_or_critical_violation_on_any_page(pages: Pages, chromium: str) -> None:
    """axe-core 4.14 (tests/data/axe-core) in Chromium over every page, in English and Spanish, signed in as an
    auditor (who reads them all). Served over http://localhost, a secure context, so the Secure cookie is sent; the
    context bypasses the CSP only so that the test can inject axe."""
    import uvicorn
    from playwright.async_api import async_playwright

    port = free_port()
    base = f"http://localhost:{port}"
    session = pages.ctx.sessions.new(pages.ctx.now(), "dave")
    paths = [
        "/now", "/reports", f"/reports/{pages.approved_id}", "/records?ids=1,2,3", "/alarms?days=2", "/audit",
        "/health", "/reports?limit=0",
    ]  # fmt: skip
    server = uvicorn.Server(uvicorn.Config(build_app(pages.ctx), host="127.0.0.1", port=port, log_config=None))
    serving = asyncio.create_task(server.serve())
    found: dict[str, list[str]] = {}
    try:
        while not server.started:
            await asyncio.sleep(0.05)
        async with async_playwright() as p:
            browser = await p.chromium.connect_over_cdp(chromium)
            context = await browser.new_context(bypass_csp=True)
            cookie = pages.ctx.sessions.cookie(session)
            await context.add_cookies([{"name": "session", "value": cookie, "url": base}])
            page = await context.new_page()
            for lang in ("en", "es"):
                await context.add_cookies([{"name": "lang", "value": lang, "url": base}])
                for path in paths:
                    await page.goto(base + path)
                    assert page.url == base + path  # signed in: not sent to /signin
                    await page.add_script_tag(path=str(AXE))
                    result = await page.evaluate("axe.run(document, {resultTypes: ['violations']})")
                    bad = [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")]
                    if bad:
                        found[f"{lang} {path}"] = bad
            await browser.close()
    finally:
        server.should_exit = True
        await serving
    assert found == {}


async def ask_as(pages: Pages, name: str, question: str, **headers: str) -> httpx.Response:
    session = pages.ctx.sessions.new(pages.ctx.now(), name)
    transport = httpx.ASGITransport(app=build_app(pages.ctx))
    cookies = {"session": pages.ctx.sessions.cookie(session)}
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN, cookies=cookies) as client:
        path = "/ask" if headers else "/ask.json"
        return await client.post(path, data={"question": question}, headers={"x-csrf-token": session.csrf, **headers})


def ask_entries(pages: Pages) -> list[dict[str, Any]]:
    lines = (pages.ctx.config.paths.audit_dir / "entries.jsonl").read_bytes().split(b"\n")[:-1]
    return [e for e in map(json.loads, lines) if e["event"] == "ask.answered"]


class TestAsk:
    async def test_an_answer_is_audited_as_over_mqtt_with_the_identity_and_its_facts_link_their_records(
        self, pages: Pages
    ) -> None:
        question = "How many stops did P-101 have in shift A?"
        response = await ask_as(pages, "carol", question)
        assert response.status_code == 200, response.text[:500]
        data = response.json()
        assert data["status"] == "answered" and data["answer"].startswith("Pump P-101 had 1 stop in shift A")
        [entry] = ask_entries(pages)
        assert (entry["actor"], entry["seq"], data["audit_seq"]) == ("ask", pages.audit.size - 1, entry["seq"])
        # What the AskService records for the same question, user and accepted time, member for member.
        same = answer_at(pages.ctx.config, pages.store, question, user="carol", lang=None, now=NOW)
        assert entry["payload"] == {
            "question_id": same.question_id, "question": question, "user": "carol",
            "asked_at": NOW.isoformat(), "lang": "en", "ask_version": ASK_VERSION, "planner": "reference",
            "engine": None, **answered(same),
        }  # fmt: skip
        assert data["facts"] and all(f["records_url"] == records_url(f["ids"]) for f in data["facts"])
        [stops] = [f for f in data["facts"] if f["ids"]]
        async with pages.client() as client:
            records = (await client.get(stops["records_url"].replace("/records", "/records.json"))).json()
        assert [r["id"] for r in records["records"]] == stops["ids"]

    async def test_htmx_gets_the_answer_fragment_and_a_plain_form_the_whole_page(self, pages: Pages) -> None:
        fragment = await ask_as(pages, "carol", "How many stops did P-101 have in shift A?", **{"hx-request": "true"})
        assert fragment.status_code == 200 and fragment.text.startswith('<section id="the-answer"')
        assert '<a href="/records?ids=' in fragment.text and "<html" not in fragment.text
        page = await ask_as(pages, "carol", "¿Cuántas paradas tuvo la P-101 en el turno A?", accept="text/html")
        assert "<html" in page.text and "La bomba P-101 tuvo 1 parada" in page.text

    async def test_the_history_is_the_persons_own_newest_first_over_console_and_mqtt(self, pages: Pages) -> None:
        await ask_as(pages, "carol", "How many stops did P-101 have in shift A?")
        await ask_as(pages, "alice", "What was the highest vibration of P-101 in shift A?")
        # carol's broker user asked over MQTT: the AskService's entry, through the same trail.
        mqtt = answer_at(pages.ctx.config, pages.store, "Qual foi a vibração máxima da P-101 no turno A?",
                         user="carol.mqtt", lang=None, now=NOW)  # fmt: skip
        record_answer(pages.audit, mqtt, "Qual foi a vibração máxima da P-101 no turno A?", "carol.mqtt")
        history = (await get_json(pages, "/ask.json", "carol"))["history"]
        assert [h["question"] for h in history] == [
            "Qual foi a vibração máxima da P-101 no turno A?",
            "How many stops did P-101 have in shift A?",
        ]
        assert [h["question"] for h in (await get_json(pages, "/ask.json", "bob"))["history"]] == []

    async def test_the_history_keeps_the_newest_fifty(self, pages: Pages) -> None:
        answer = answer_at(pages.ctx.config, pages.store, "How many stops did P-101 have in shift A?", user="carol",
                           lang=None, now=NOW)  # fmt: skip
        for i in range(HISTORY_MAX + 5):
            record_answer(pages.audit, answer, f"question {i}", "carol")
        history = (await get_json(pages, "/ask.json", "carol"))["history"]
        assert [h["question"] for h in history] == [f"question {i}" for i in range(HISTORY_MAX + 4, 4, -1)]

    async def test_a_question_without_the_token_too_long_or_too_often_is_refused(self, pages: Pages) -> None:
        session = pages.ctx.sessions.new(pages.ctx.now(), "carol")
        transport = httpx.ASGITransport(app=build_app(pages.ctx))
        cookies = {"session": pages.ctx.sessions.cookie(session)}
        async with httpx.AsyncClient(transport=transport, base_url=ORIGIN, cookies=cookies) as client:
            forged = await client.post("/ask.json", data={"question": "How many stops?"})
        assert forged.status_code == 403 and ask_entries(pages) == []
        long = await ask_as(pages, "carol", "x" * 1001)
        assert long.status_code == 400 and long.json()["field"] == "question"
        pages.ctx.ask_throttle = UserThrottle(1)
        assert (await ask_as(pages, "carol", "How many stops did P-101 have in shift A?")).status_code == 200
        throttled = await ask_as(pages, "carol", "How many stops did P-101 have in shift A?")
        assert throttled.status_code == 429 and "ask.throttle" in throttled.json()["error"]
        assert len(ask_entries(pages)) == 1

    @settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(question=st.text(max_size=1100))
    async def test_any_question_is_an_audited_answer_or_a_400_naming_it(self, pages: Pages, question: str) -> None:
        pages.ctx.ask_throttle = UserThrottle(10**9)
        before = len(ask_entries(pages))
        response = await ask_as(pages, "carol", question)
        if response.status_code == 400:
            assert response.json()["field"] == "question" and not 1 <= len(question) <= 1000
            assert len(ask_entries(pages)) == before
            return
        assert response.status_code == 200, response.text[:300]
        assert response.json()["status"] in ("answered", "needs_clarification", "refused")
        assert ask_entries(pages)[-1]["payload"]["question"] == question
