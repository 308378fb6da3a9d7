"""A shift's whole journey through the console in one browser, against an agent-like set-up in process: a store with
the simulated shift (harness/shift.py), a draft report of it, the audit log, the console on a local port.

Alice is enrolled (a one-time link), registers a passkey with Chromium's virtual authenticator, signs in, reads the
draft, follows a fact to its records, signs the draft off (the clicks from the report list to the recorded decision
are counted: at most 3), asks a question and sees the answer swapped in, downloads the auditor's bundle and
`edge-agent audit verify-bundle` accepts it. Each page is saved as docs/img/console-<page>.png (1280x800), which
docs/console.md shows.

Served over http://localhost, a secure context: Chromium refuses WebAuthn on a page with a certificate error (the TLS
path is tests/test_console_auth.py's test_the_component_serves_the_console_over_tls)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import timedelta
from functools import partial
from pathlib import Path

import pytest

from edge_agent.audit import AuditLog
from edge_agent.audit.files import read_verifiers
from edge_agent.base.broker import free_port
from edge_agent.config import AgentConfig
from edge_agent.console.app import build_app
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.console.context import ConsoleContext
from edge_agent.doctor.assemble import local_checks
from edge_agent.reports.document import ReportRepository
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, shift_records
from tests.fixtures.browser import needs_chromium
from tests.test_console_pages import shift_report

DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
# Six hours into shift A: the Now page shows a shift running.
NOW = SHIFT_START + timedelta(hours=6)
AUTHENTICATOR = {
    "protocol": "ctap2",
    "transport": "internal",
    "hasResidentKey": True,
    "hasUserVerification": True,
    "isUserVerified": True,
}


def config_for(state_dir: Path, port: int) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": {"id": "demo", "timezone": TZ},
            "paths": {"state_dir": str(state_dir)},
            "mqtt": {"username": "agent", "password": "agent-pw"},
            "reports": {
                "approvers": ["alice"],
                "shifts": [{"name": "A", "start": "06:00", "end": "14:00"}],
                "kpi": {"lines": [{"line": "L1", "ideal_rate_per_min": 5.0}], "alarm_review_days": 1},
            },
            "identities": [{"name": "alice", "broker_user": "alice.mqtt"}],
            "console": {
                "rp_id": "localhost",
                "origin": f"http://localhost:{port}",
                "port": port,
                "roles": {"alice": ["approver", "auditor"]},
            },
        }
    )


@pytest.mark.slow
@needs_chromium
async def test_enrol_sign_in_read_sign_off_ask_and_verify_the_bundle(tmp_path: Path, chromium: str) -> None:
    import uvicorn
    from playwright.async_api import async_playwright, expect

    port = free_port()
    base = f"http://localhost:{port}"
    config = config_for(tmp_path, port)
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    with (
        Store(config.paths.store_path) as store,
        AuditLog.open(config.paths.audit_dir, origin="edge-agent/demo") as audit,
    ):
        store.insert_records(shift_records())
        repo, credentials = ReportRepository.for_state_dir(tmp_path), CredentialStore.for_state_dir(tmp_path)
        report_id = shift_report(repo, store, "shift-a")
        config_path = tmp_path / "agent.toml"
        config_path.write_text("")
        ctx = ConsoleContext(config, store, audit, repo, credentials, now=lambda: NOW)
        ctx.doctor_checks = partial(local_checks, config_path, config)  # as `edge-agent run` hands them in
        token = credentials.issue("alice", "approver", NOW, timedelta(hours=1))
        server = uvicorn.Server(uvicorn.Config(build_app(ctx), host="127.0.0.1", port=port, log_config=None))
        serving = asyncio.create_task(server.serve())
        try:
            while not server.started:
                await asyncio.sleep(0.05)
            async with async_playwright() as p:
                browser = await p.chromium.connect_over_cdp(chromium)
                context = await browser.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
                page = await context.new_page()
                cdp = await context.new_cdp_session(page)
                await cdp.send("WebAuthn.enable")
                await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})

                async def shot(name: str) -> None:
                    await page.screenshot(path=str(DOCS_IMG / f"console-{name}.png"))

                # Enrol: the one-time link, the passkey registered by the virtual authenticator.
                await page.goto(f"{base}/enrol/{token}")
                await shot("enrol")
                await page.click("#enrol")
                await expect(page.locator("#result")).to_have_text("Passkey registered. You can sign in now.")
                await page.goto(f"{base}/signin")
                await shot("signin")
                await page.click("#signin")
                await page.wait_for_url(f"{base}/now")

                # Read: the report list, then the draft (click 1 of the sign-off).
                clicks = 0
                await page.goto(f"{base}/reports")
                await shot("reports")
                await page.click(f'a[href="/reports/{report_id}"]')
                clicks += 1
                await expect(page.locator("#status")).to_have_text("draft")
                await shot("report")
                # A fact's records, in a tab of their own: a look aside, not a step of the sign-off.
                records_href = await page.locator('a[href^="/records?ids="]').first.get_attribute("href")
                assert records_href is not None
                aside = await context.new_page()
                await aside.goto(base + records_href)
                ids = [int(i) for i in records_href.split("=", 1)[1].split(",")]
                await expect(aside.locator("#records tbody tr")).to_have_count(len(ids))
                await aside.screenshot(path=str(DOCS_IMG / "console-records.png"))
                await aside.close()

                # Sign off: the draft's Sign off link (click 2), then Sign off with the passkey (click 3).
                await page.click("#sign-link")
                clicks += 1
                await page.fill("textarea[name=comment]", "seen on the floor")
                await shot("sign")
                await page.click("#sign button[type=submit]")
                clicks += 1
                await expect(page.locator("#status")).to_have_text("approved")
                assert clicks <= 3

                # Ask: the answer is swapped in by htmx, its facts link to their records.
                await page.goto(f"{base}/ask")
                await page.fill("#question", "How many stops did P-101 have in shift A?")
                async with page.expect_response(f"{base}/ask") as answered:
                    await page.click("#ask button[type=submit]")
                swap = await answered.value
                assert await swap.request.header_value("hx-request") == "true"  # htmx's request, not a page load
                await expect(page.locator("#answer-text")).to_contain_text("Pump P-101 had 1 stop in shift A")
                await expect(page.locator('#answer-facts a[href^="/records?ids="]')).to_have_count(1)
                await shot("ask")

                for name in ("now", "alarms", "health"):
                    await page.goto(f"{base}/{name}")
                    await shot(name)

                # The auditor's bundle, downloaded.
                await page.goto(f"{base}/audit")
                await shot("audit")
                async with page.expect_download() as download_info:
                    await page.click('form[action="/audit/bundle"] button[type=submit]')
                download = await download_info.value
                bundle = tmp_path / "audit-bundle.tar.gz"
                await download.save_as(bundle)
                await context.close()
                await browser.close()
        finally:
            server.should_exit = True
            await serving
            credentials.close()
            repo.close()
    assert download.suggested_filename == "audit-bundle.tar.gz"
    key_file = tmp_path / "trusted.pub"
    key_file.write_text(read_verifiers(config.paths.audit_dir)[-1].key_string() + "\n")
    verify = [sys.executable, "-m", "edge_agent", "audit", "verify-bundle", str(bundle), "--pubkey", str(key_file)]
    run = subprocess.run(verify, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    events = [json.loads(line) for line in (tmp_path / "audit" / "entries.jsonl").read_bytes().split(b"\n")[:-1]]
    decided = [e for e in events if e["event"] == "report.signed_off"]
    asked = [e for e in events if e["event"] == "ask.answered"]
    assert [(e["payload"]["report_id"], e["payload"]["approval"]["format"]) for e in decided] == [
        (report_id, "webauthn")
    ]
    assert [(e["payload"]["user"], e["payload"]["status"]) for e in asked] == [("alice", "answered")]
    for name in ("enrol", "signin", "reports", "report", "records", "sign", "ask", "now", "alarms", "health", "audit"):
        assert (DOCS_IMG / f"console-{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
