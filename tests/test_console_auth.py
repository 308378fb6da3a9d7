"""The console's people and sign-off: enrolment links, passkey registration and sign-in (WebAuthn), sessions in
Secure/HttpOnly/SameSite=Strict cookies, CSRF on every POST, lock-out after failed sign-ins, roles, and sign-off as a
WebAuthn assertion over the statement the CLI signs, decided and audited as every other sign-off is and re-checked
offline by `verify-bundle`'s approval check.

Layers: the ASGI app in process (httpx) with a software authenticator (a P-256 key making real WebAuthn
registrations and assertions), named cases then Hypothesis over form fields and Accept-Language; the component over
TLS; the command line; and one real browser (Playwright, Chromium's virtual authenticator) through the ceremonies.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import shutil
import ssl
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webauthn.helpers import encode_cbor

from edge_agent.audit import AuditLog
from edge_agent.audit.approvals import check_approvals
from edge_agent.audit.export import export_bundle
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.verify import VerifyResult, verify_bundle
from edge_agent.base.broker import free_port
from edge_agent.config import AgentConfig
from edge_agent.console.app import build_app
from edge_agent.console.auth import sessions as sessions_module
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.console.auth.sessions import Sessions
from edge_agent.console.context import ConsoleContext
from edge_agent.console.i18n import LANGUAGES, from_accept_language
from edge_agent.console.middleware import CSP
from edge_agent.console.server import ConsoleServer
from edge_agent.reports.document import ReportRepository
from edge_agent.signing import ApprovalError, PasskeyKey, Statement, statement_challenge, verify_approval
from edge_agent.signing.passkey import PASSKEY_MEMBERS, b64url, from_b64url
from harness.reports_service import seed_report
from tests.fixtures.browser import needs_chromium

SITE = {"id": "demo", "timezone": "UTC"}
ORIGIN = "https://localhost:8443"
PEOPLE = [
    {"name": "alice", "broker_user": "alice.mqtt"},
    {"name": "bob", "broker_user": "bob.mqtt"},
    {"name": "carol", "broker_user": "carol.mqtt"},
]
ROLES = {"alice": ["approver"], "bob": ["approver", "admin"], "carol": ["viewer"]}


def config_for(state_dir: Path, **console: Any) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": SITE,
            "paths": {"state_dir": str(state_dir)},
            "mqtt": {"username": "agent", "password": "agent-pw"},
            "reports": {"approvers": ["alice", "bob"]},
            "identities": PEOPLE,
            "console": {"roles": ROLES, **console},
        }
    )


@dataclass
class Authenticator:
    """A passkey in software: what a platform authenticator or security key does, with a P-256 key."""

    rp_id: str = "localhost"
    origin: str = ORIGIN
    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    count: int = 0

    def cose(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return encode_cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})

    def _client_data(self, kind: str, challenge: str) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin, "crossOrigin": False}).encode()

    def register(self, options: dict[str, Any]) -> dict[str, Any]:
        rp_hash = hashlib.sha256(self.rp_id.encode()).digest()
        attested = bytes(16) + len(self.credential_id).to_bytes(2, "big") + self.credential_id + self.cose()
        auth_data = rp_hash + bytes([0x45]) + (0).to_bytes(4, "big") + attested
        attestation = encode_cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client = self._client_data("webauthn.create", options["challenge"])
        cid = b64url(self.credential_id)
        return {
            "id": cid,
            "rawId": cid,
            "type": "public-key",
            "response": {"attestationObject": b64url(attestation), "clientDataJSON": b64url(client)},
            "clientExtensionResults": {},
        }

    def assert_(self, challenge: str, flags: int = 0x05) -> dict[str, Any]:
        self.count += 1
        auth_data = hashlib.sha256(self.rp_id.encode()).digest() + bytes([flags]) + self.count.to_bytes(4, "big")
        client = self._client_data("webauthn.get", challenge)
        signature = self.key.sign(auth_data + hashlib.sha256(client).digest(), ec.ECDSA(hashes.SHA256()))
        cid = b64url(self.credential_id)
        return {
            "id": cid,
            "rawId": cid,
            "type": "public-key",
            "response": {
                "authenticatorData": b64url(auth_data),
                "clientDataJSON": b64url(client),
                "signature": b64url(signature),
                "userHandle": None,
            },
            "clientExtensionResults": {},
        }


class Clock:
    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.at


@dataclass
class Console:
    ctx: ConsoleContext
    audit: AuditLog
    state_dir: Path
    clock: Clock

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(self.ctx)), base_url=ORIGIN)

    def events(self, event: str) -> list[dict[str, Any]]:
        lines = (self.state_dir / "audit" / "entries.jsonl").read_text().splitlines()
        return [e for e in map(json.loads, lines) if e["event"] == event]

    def entry_lines(self) -> list[bytes]:
        return (self.state_dir / "audit" / "entries.jsonl").read_bytes().splitlines()


@pytest.fixture
async def console(tmp_path: Path) -> AsyncIterator[Console]:
    config = config_for(tmp_path)
    audit = AuditLog.open(config.paths.audit_dir, origin="edge-agent/demo")
    repo = ReportRepository.for_state_dir(tmp_path)
    credentials = CredentialStore.for_state_dir(tmp_path)
    clock = Clock()
    ctx = ConsoleContext(config, None, audit, repo, credentials, now=clock)
    try:
        yield Console(ctx, audit, tmp_path, clock)
    finally:
        credentials.close()
        repo.close()
        audit.close()


async def csrf_of(client: httpx.AsyncClient, path: str = "/signin") -> str:
    page = await client.get(path)
    found = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


async def enrol(console: Console, client: httpx.AsyncClient, name: str) -> Authenticator:
    token = console.ctx.credentials.issue(name, ROLES[name][0], console.clock(), timedelta(hours=1))
    csrf = await csrf_of(client, f"/enrol/{token}")
    options = await client.post(f"/enrol/{token}/options", content=b"{}", headers={"X-CSRF-Token": csrf})
    assert options.status_code == 200, options.text
    authenticator = Authenticator()
    done = await client.post(
        f"/enrol/{token}/verify", json=authenticator.register(options.json()), headers={"X-CSRF-Token": csrf}
    )
    assert done.json() == {"status": "registered", "name": name}
    return authenticator


async def sign_in(client: httpx.AsyncClient, authenticator: Authenticator, **tamper: Any) -> httpx.Response:
    csrf = await csrf_of(client)
    options = await client.post("/signin/options", content=b"{}", headers={"X-CSRF-Token": csrf})
    if options.status_code != 200:
        return options
    assertion = authenticator.assert_(tamper.get("challenge", options.json()["challenge"]), tamper.get("flags", 5))
    return await client.post("/signin/verify", json=assertion, headers={"X-CSRF-Token": csrf})


async def person(console: Console, name: str) -> tuple[httpx.AsyncClient, Authenticator]:
    client = console.client()
    authenticator = await enrol(console, client, name)
    assert (await sign_in(client, authenticator)).json() == {"status": "signed_in", "name": name}
    return client, authenticator


async def sign_off(
    client: httpx.AsyncClient,
    authenticator: Authenticator,
    report_id: str,
    decision: str = "approve",
    shown: str | None = None,
) -> tuple[httpx.Response, dict[str, Any]]:
    page = await client.get(f"/reports/{report_id}/sign")
    assert page.status_code == 200, page.text[:300]
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    body_sha256 = shown or re.search(r'id="body-sha256">([0-9a-f]{64})<', page.text).group(1)  # type: ignore[union-attr]
    form = {"csrf_token": csrf, "decision": decision, "comment": "checked on the floor", "body_sha256": body_sha256}
    options = await client.post(f"/reports/{report_id}/sign/options", data=form)
    assert options.status_code == 200, options.text
    assertion = authenticator.assert_(options.json()["publicKey"]["challenge"])
    verdict = await client.post(f"/reports/{report_id}/sign/verify", json=assertion, headers={"X-CSRF-Token": csrf})
    return verdict, assertion


class TestHeadersAndCookies:
    async def test_every_page_has_the_csp_without_inline_script_and_a_strict_session_cookie(
        self, console: Console
    ) -> None:
        async with console.client() as client:
            page = await client.get("/signin")
        assert page.status_code == 200
        assert page.headers["content-security-policy"] == CSP
        assert "unsafe-inline" not in CSP and "script-src 'self'" in CSP
        cookie = page.headers["set-cookie"]
        assert cookie.startswith("session=")
        assert {"Secure", "HttpOnly", "SameSite=Strict"} <= {p.strip() for p in cookie.split(";")}
        assert "<script>" not in page.text and " on" not in re.sub(r"<script src=[^>]+>", "", page.text).lower()

    async def test_the_vendored_scripts_are_served_from_the_wheel(self, console: Console) -> None:
        async with console.client() as client:
            for name in ("htmx.min.js", "console.js", "console.css"):
                assert (await client.get(f"/static/{name}")).status_code == 200
        page = (Path(__file__).parents[1] / "edge_agent/console/templates/base.html").read_text()
        assert "http://" not in page and "https://" not in page  # no CDN


class TestCsrf:
    async def test_a_post_without_its_token_is_refused_and_changes_nothing(self, console: Console) -> None:
        client, _ = await person(console, "bob")
        async with aclosing(client):
            for path in ("/signout", "/signin/options", f"/reports/{seed(console)}/sign/options"):
                refused = await client.post(path, data={"decision": "approve"})
                assert (refused.status_code, refused.text) == (403, "CSRF token missing or wrong")
            assert "bob" in (await client.get("/signin")).text  # still signed in: the sign-out never ran

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        fields=st.dictionaries(st.text(min_size=1, max_size=20), st.text(max_size=60), max_size=6),
        token=st.one_of(st.none(), st.text(max_size=60)),
    )
    async def test_any_form_without_the_sessions_token_is_refused(
        self, console: Console, fields: dict[str, str], token: str | None
    ) -> None:
        async with console.client() as client:
            real = await csrf_of(client)
            form = {k: v for k, v in fields.items() if k != "csrf_token"}
            if token is not None and token != real:
                form["csrf_token"] = token
            refused = await client.post("/signin/options", data=form)
            assert refused.status_code == 403
            accepted = await client.post("/signin/options", data={**form, "csrf_token": real})
            assert accepted.status_code == 200


class TestEnrolAndSignIn:
    async def test_an_enrolment_link_registers_one_passkey_once_and_is_audited(self, console: Console) -> None:
        token = console.ctx.credentials.issue("alice", "approver", console.clock(), timedelta(hours=1))
        async with console.client() as client:
            csrf = await csrf_of(client, f"/enrol/{token}")
            options = (
                await client.post(f"/enrol/{token}/options", content=b"{}", headers={"X-CSRF-Token": csrf})
            ).json()
            assert options["authenticatorSelection"]["residentKey"] == "required"
            assert options["authenticatorSelection"]["userVerification"] == "required"
            authenticator = Authenticator()
            done = await client.post(
                f"/enrol/{token}/verify", json=authenticator.register(options), headers={"X-CSRF-Token": csrf}
            )
            assert done.json() == {"status": "registered", "name": "alice"}
            assert (await client.get(f"/enrol/{token}")).status_code == 404
        [enrolled] = console.events("console.enrolled")
        assert enrolled["actor"] == "operator:alice"
        assert from_b64url(enrolled["payload"]["public_key"]) == authenticator.cose()
        assert from_b64url(enrolled["payload"]["credential_id"]) == authenticator.credential_id

    async def test_an_expired_link_is_refused(self, console: Console) -> None:
        token = console.ctx.credentials.issue("alice", "approver", console.clock(), timedelta(minutes=5))
        console.clock.at += timedelta(minutes=6)
        async with console.client() as client:
            assert (await client.get(f"/enrol/{token}")).status_code == 404

    async def test_an_admin_issues_a_link_from_the_console_and_it_is_audited(self, console: Console) -> None:
        bob, _ = await person(console, "bob")
        async with aclosing(bob):
            csrf = await csrf_of(bob, "/admin/enrol")
            page = await bob.post("/admin/enrol", data={"csrf_token": csrf, "name": "alice", "role": "approver"})
        link = re.search(r'<code id="link">([^<]+)</code>', page.text)
        assert link is not None and link.group(1).startswith(f"{ORIGIN}/enrol/")
        async with console.client() as alice:
            assert (await alice.get(link.group(1).removeprefix(ORIGIN))).status_code == 200
        [issued] = console.events("console.enrolment_issued")
        assert (issued["actor"], issued["payload"]["name"], issued["payload"]["role"]) == (
            "operator:bob",
            "alice",
            "approver",
        )

    async def test_only_an_admin_may_enrol(self, console: Console) -> None:
        alice, _ = await person(console, "alice")
        async with aclosing(alice):
            assert (await alice.get("/admin/enrol")).status_code == 403
            csrf = await csrf_of(alice)
            refused = await alice.post("/admin/enrol", data={"csrf_token": csrf, "name": "alice", "role": "admin"})
            assert refused.status_code == 403
        assert console.events("console.enrolment_issued") == []

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        name=st.one_of(st.sampled_from(sorted(ROLES)), st.text(max_size=40)),
        role=st.one_of(st.sampled_from(["viewer", "approver", "auditor", "admin"]), st.text(max_size=20)),
    )
    async def test_a_link_is_issued_only_for_a_role_the_config_gives(
        self, console: Console, name: str, role: str
    ) -> None:
        if not hasattr(console, "_bob"):
            console._bob = await person(console, "bob")  # type: ignore[attr-defined]
        bob, _ = console._bob  # type: ignore[attr-defined]
        csrf = await csrf_of(bob)
        page = await bob.post("/admin/enrol", data={"csrf_token": csrf, "name": name, "role": role})
        if role in ROLES.get(name, []):
            assert page.status_code == 200 and '<code id="link">' in page.text
        else:
            assert page.status_code == 400 and "[console] roles gives" in page.text

    async def test_sign_in_gives_a_new_session_and_is_audited(self, console: Console) -> None:
        async with console.client() as client:
            authenticator = await enrol(console, client, "alice")
            before = client.cookies["session"]
            signed_in = await sign_in(client, authenticator)
            assert signed_in.json() == {"status": "signed_in", "name": "alice"}
            assert client.cookies["session"] != before
            assert "alice" in (await client.get("/signin")).text
        assert [e["actor"] for e in console.events("console.signed_in")] == ["operator:alice"]

    async def test_failed_sign_ins_lock_the_address_out_even_for_a_good_passkey(self, console: Console) -> None:
        async with console.client() as client:
            authenticator = await enrol(console, client, "alice")
            for _ in range(5):
                failed = await sign_in(client, authenticator, challenge=b64url(b"not the challenge"))
                assert failed.status_code == 401
            locked = await sign_in(client, authenticator)
            assert locked.status_code == 429
            console.clock.at += timedelta(seconds=901)
            assert (await sign_in(client, authenticator)).json()["status"] == "signed_in"
        failures = console.events("console.signin_failed")
        assert [e["payload"]["locked_out"] for e in failures] == [False] * 4 + [True]

    async def test_an_assertion_without_user_verification_is_refused(self, console: Console) -> None:
        async with console.client() as client:
            authenticator = await enrol(console, client, "alice")
            assert (await sign_in(client, authenticator, flags=0x01)).status_code == 401

    async def test_a_replayed_sign_in_assertion_is_refused(self, console: Console) -> None:
        async with console.client() as client:
            authenticator = await enrol(console, client, "alice")
            csrf = await csrf_of(client)
            options = await client.post("/signin/options", content=b"{}", headers={"X-CSRF-Token": csrf})
            assertion = authenticator.assert_(options.json()["challenge"])
            assert (
                await client.post("/signin/verify", json=assertion, headers={"X-CSRF-Token": csrf})
            ).status_code == 200
        async with console.client() as other:
            csrf = await csrf_of(other)
            await other.post("/signin/options", content=b"{}", headers={"X-CSRF-Token": csrf})
            replayed = await other.post("/signin/verify", json=assertion, headers={"X-CSRF-Token": csrf})
            assert replayed.status_code == 401


class TestSessionsAndRoles:
    async def test_a_forged_or_ended_session_cookie_is_nobody(self, console: Console) -> None:
        alice, _ = await person(console, "alice")
        async with aclosing(alice):
            stolen = alice.cookies["session"]
            sid, _, signature = stolen.partition(".")
            async with console.client() as mallory:
                for cookie in (stolen[:-2] + "AA", "x" + stolen, f"{sid}.{b64url(b'forged')}"):
                    mallory.cookies.set("session", cookie)
                    page = await mallory.get(f"/reports/{seed(console)}/sign")
                    assert (page.status_code, page.headers["location"]) == (303, "/signin")
            csrf = await csrf_of(alice)
            await alice.post("/signout", data={"csrf_token": csrf})
        async with console.client() as mallory:
            mallory.cookies.set("session", stolen)
            assert (await mallory.get(f"/reports/{seed(console)}/sign")).status_code == 303
        assert len(console.events("console.signed_out")) == 1

    def test_a_flood_of_anonymous_sessions_drops_the_oldest_and_keeps_the_signed_in(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setattr(sessions_module, "MAX_ANONYMOUS", 3)
        sessions, now = Sessions(b"k" * 32, timedelta(hours=8)), datetime.now(UTC)
        alice = sessions.new(now, "alice")
        first = sessions.new(now)
        for _ in range(5):
            sessions.new(now)
        assert sessions.from_cookie(sessions.cookie(alice), now) is alice
        assert sessions.from_cookie(sessions.cookie(first), now) is None

    async def test_a_viewer_may_not_sign_and_an_anonymous_visitor_is_sent_to_sign_in(self, console: Console) -> None:
        report_id = seed(console)
        carol, _ = await person(console, "carol")
        async with aclosing(carol):
            assert (await carol.get(f"/reports/{report_id}/sign")).status_code == 403
            csrf = await csrf_of(carol)
            refused = await carol.post(f"/reports/{report_id}/sign/options", data={"csrf_token": csrf})
            assert refused.status_code == 403
        async with console.client() as anonymous:
            assert (await anonymous.get(f"/reports/{report_id}/sign")).headers["location"] == "/signin"

    async def test_someone_with_no_console_role_cannot_sign_in(self, tmp_path: Path) -> None:
        config = config_for(tmp_path, roles={"alice": []})
        with AuditLog.open(config.paths.audit_dir, origin="o") as audit:
            repo, credentials = ReportRepository.for_state_dir(tmp_path), CredentialStore.for_state_dir(tmp_path)
            console = Console(ConsoleContext(config, None, audit, repo, credentials), audit, tmp_path, Clock())
            async with console.client() as client:
                authenticator = await enrol(console, client, "alice")
                assert (await sign_in(client, authenticator)).status_code == 401
            credentials.close()
            repo.close()


def seed(console: Console, requested_by: str | None = "operator") -> str:
    return seed_report(console.state_dir, "demo", secrets.token_hex(6), requested_by=requested_by)


class TestSignOff:
    async def test_a_passkey_sign_off_is_decided_audited_and_verifies_offline(self, console: Console) -> None:
        report_id = seed(console)
        alice, authenticator = await person(console, "alice")
        async with aclosing(alice):
            verdict, _ = await sign_off(alice, authenticator, report_id)
        assert verdict.status_code == 200, verdict.text
        assert verdict.json()["status"] == "approved"
        [entry] = console.events("report.signed_off")
        approval = entry["payload"]["approval"]
        assert entry["actor"] == "operator:alice" and entry["payload"]["via"] == "console"
        assert approval["format"] == "webauthn" and approval["statement"]["report_id"] == report_id
        assert from_b64url(approval["public_key"]) == authenticator.cose()
        assert {"authenticator_data", "client_data_json", "signature"} <= set(approval)
        checked = check_approvals(console.entry_lines())
        assert (checked.signed, checked.problem) == (1, None)

    async def test_an_entry_whose_recorded_assertion_was_altered_fails_the_offline_check(
        self, console: Console
    ) -> None:
        report_id = seed(console)
        alice, authenticator = await person(console, "alice")
        async with aclosing(alice):
            await sign_off(alice, authenticator, report_id)
        lines = console.entry_lines()
        altered = []
        for line in lines:
            entry = json.loads(line)
            if entry["event"] == "report.signed_off":
                entry["payload"]["comment"] = "changed"
                entry["payload"]["approval"]["statement"]["comment"] = "changed"
            altered.append(json.dumps(entry).encode())
        problem = check_approvals(altered).problem
        assert problem is not None and problem.code == "mismatch"

    async def test_a_replayed_sign_off_assertion_is_refused_and_audited(self, console: Console) -> None:
        report_id = seed(console)
        alice, authenticator = await person(console, "alice")
        async with aclosing(alice):
            verdict, assertion = await sign_off(alice, authenticator, report_id, decision="reject")
            assert verdict.json()["status"] == "rejected"
            csrf = await csrf_of(alice)
            replayed = await alice.post(
                f"/reports/{report_id}/sign/verify", json=assertion, headers={"X-CSRF-Token": csrf}
            )
        assert (replayed.status_code, replayed.json()["code"]) == (409, "replayed")
        assert [e["payload"]["code"] for e in console.events("report.signoff_refused")] == ["replayed"]

    async def test_the_requester_may_not_approve_their_own_report(self, console: Console) -> None:
        report_id = seed(console, requested_by="alice.mqtt")
        alice, authenticator = await person(console, "alice")
        async with aclosing(alice):
            verdict, _ = await sign_off(alice, authenticator, report_id)
        assert (verdict.status_code, verdict.json()["code"]) == (409, "four_eyes")
        assert console.events("report.signed_off") == []

    async def test_an_approval_for_a_body_that_changed_after_it_was_shown_is_refused(self, console: Console) -> None:
        report_id = seed(console)
        alice, authenticator = await person(console, "alice")
        async with aclosing(alice):
            shown = re.search(  # type: ignore[union-attr]
                r'id="body-sha256">([0-9a-f]{64})<', (await alice.get(f"/reports/{report_id}/sign")).text
            ).group(1)
            document = console.ctx.repo.get(report_id)
            document["body"]["facts"] = [{"id": "F1", "value": 1}]
            document["body_sha256"] = hashlib.sha256(
                json.dumps(document["body"], sort_keys=True, separators=(",", ":")).encode()
            ).hexdigest()
            console.ctx.repo.update(document)
            verdict, _ = await sign_off(alice, authenticator, report_id, shown=shown)
        assert (verdict.status_code, verdict.json()["code"]) == (409, "other_body")
        assert console.ctx.repo.get(report_id)["status"] == "draft"

    async def test_another_persons_passkey_cannot_sign_in_my_session(self, console: Console) -> None:
        report_id = seed(console)
        _, bobs = await person(console, "bob")
        alice, _ = await person(console, "alice")
        async with aclosing(alice):
            verdict, _ = await sign_off(alice, bobs, report_id)
        assert (verdict.status_code, verdict.json()["code"]) == (409, "unknown_key")

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        decision=st.text(max_size=12),
        comment=st.text(max_size=2100),
        shown=st.one_of(st.text(max_size=70), st.from_regex(r"[0-9a-f]{64}", fullmatch=True)),
    )
    async def test_any_sign_off_form_is_answered_never_a_crash(
        self, console: Console, decision: str, comment: str, shown: str
    ) -> None:
        """Bad fields: 400 naming the field; good ones: a statement to sign whose fields are the form's."""
        if not hasattr(console, "_bob"):
            console._bob = await person(console, "bob")  # type: ignore[attr-defined]
        bob, _ = console._bob  # type: ignore[attr-defined]
        csrf = await csrf_of(bob)
        form = {"csrf_token": csrf, "decision": decision, "comment": comment, "body_sha256": shown}
        answer = await bob.post("/reports/rpt-x/sign/options", data=form)
        valid = decision in ("approve", "reject") and len(comment) <= 2000 and re.fullmatch(r"[0-9a-f]{64}", shown)
        if valid:
            statement = answer.json()["statement"]
            assert (statement["decision"], statement["comment"], statement["body_sha256"]) == (decision, comment, shown)
        else:
            assert answer.status_code == 400 and "error" in answer.json()


def recorded_approval(authenticator: Authenticator, name: str = "alice") -> dict[str, Any]:
    statement = Statement("rpt-1", "ab" * 32, "approve", name, datetime.now(UTC), "n" * 24, "ok")
    assertion = authenticator.assert_(b64url(statement_challenge(statement)))
    response = assertion["response"]
    return {
        "statement": statement.as_json(),
        "format": "webauthn",
        "credential_id": b64url(authenticator.credential_id),
        "public_key": b64url(authenticator.cose()),
        "rp_id": authenticator.rp_id,
        "authenticator_data": response["authenticatorData"],
        "client_data_json": response["clientDataJSON"],
        "signature": response["signature"],
    }


class TestOfflineCheck:
    """`verify_approval` on a passkey approval: what `audit verify-bundle` runs on each recorded one."""

    def test_a_recorded_assertion_verifies_with_the_registered_passkey_only(self) -> None:
        authenticator = Authenticator()
        approval = recorded_approval(authenticator)
        key = PasskeyKey("alice", authenticator.credential_id, authenticator.cose())
        assert verify_approval(approval, [key]).key == key
        with pytest.raises(ApprovalError) as stranger:
            verify_approval(approval, [PasskeyKey("alice", authenticator.credential_id, Authenticator().cose())])
        assert stranger.value.code == "unknown_key"
        with pytest.raises(ApprovalError) as nobody:
            verify_approval(approval, [PasskeyKey("bob", authenticator.credential_id, authenticator.cose())])
        assert nobody.value.code == "unknown_key"

    @given(
        member=st.sampled_from(sorted(PASSKEY_MEMBERS)),
        value=st.one_of(st.none(), st.integers(), st.text(max_size=80), st.binary(max_size=80).map(b64url)),
    )
    def test_any_altered_member_is_an_approval_error(self, member: str, value: Any) -> None:
        authenticator = Authenticator()
        approval = recorded_approval(authenticator)
        key = PasskeyKey("alice", authenticator.credential_id, authenticator.cose())
        approval[member] = value
        with pytest.raises(ApprovalError):
            verify_approval(approval, [key])


async def windowed_sign_off(console: Console) -> Path:
    """Alice enrols and signs in; then the window starts and she signs a draft off in the console; the export of
    that window holds her sign-off but not her enrolment."""
    report_id = seed(console)
    alice, authenticator = await person(console, "alice")
    async with aclosing(alice):
        await asyncio.sleep(0.01)
        start = datetime.now(UTC)
        verdict, _ = await sign_off(alice, authenticator, report_id)
    assert verdict.json()["status"] == "approved", verdict.text
    bundle = console.state_dir / "bundle"
    export_bundle(
        console.state_dir / "audit", bundle, reports_dir=console.state_dir / "reports", log=console.audit, start=start
    )
    return bundle


def verify(console: Console, bundle: Path) -> VerifyResult:
    return verify_bundle(bundle, read_verifiers(console.state_dir / "audit")[-1])


def edit_carried_entry(bundle: Path, edit: Callable[[bytearray], None]) -> int:
    """The first carried enrolment's stored line passed through `edit`, written back; its seq."""
    path = bundle / "enrolments_in_force.json"
    records = json.loads(path.read_bytes())
    line = bytearray(records[0]["entry"].encode())
    edit(line)
    records[0]["entry"] = line.decode()
    path.write_text(json.dumps(records))
    return int(records[0]["seq"])


class TestWindowedBundle:
    """A bundle whose window starts after a person enrolled carries the console.enrolled entries before it, each
    proved included in the signed tree, so their console sign-offs verify offline without extra flags."""

    async def test_a_console_sign_off_verifies_in_a_window_that_starts_after_the_enrolment(
        self, console: Console
    ) -> None:
        bundle = await windowed_sign_off(console)
        [enrolled] = console.events("console.enrolled")
        assert b'"event":"console.enrolled"' not in (bundle / "entries.jsonl").read_bytes()
        assert json.loads((bundle / "manifest.json").read_bytes())["enrolments_in_force"] == [enrolled["seq"]]
        [carried] = json.loads((bundle / "enrolments_in_force.json").read_bytes())
        assert json.loads(carried["entry"]) == enrolled
        alone = check_approvals((bundle / "entries.jsonl").read_bytes().splitlines()).problem
        assert alone is not None and alone.code == "unknown_key"  # what the window's entries alone come to
        result = verify(console, bundle)
        assert result.ok, result.problem
        assert any(n.startswith("1 signed approval(s) re-checked") for n in result.notes), result.notes

    async def test_an_edited_carried_enrolment_fails(self, console: Console) -> None:
        """A stranger's passkey put into the carried entry: it is no longer the entry the checkpoint includes."""
        bundle = await windowed_sign_off(console)
        stranger = b64url(Authenticator().cose()).encode()

        def swap_key(line: bytearray) -> None:
            entry = json.loads(line)
            line[:] = line.replace(entry["payload"]["public_key"].encode(), stranger)

        seq = edit_carried_entry(bundle, swap_key)
        assert str(verify(console, bundle).problem).startswith(
            f"entry {seq}: enrolments_in_force.json (entry {seq}): not included in the signed tree (edited after"
            " export?)"
        )

    async def test_a_removed_carried_enrolment_fails_naming_it(self, console: Console) -> None:
        bundle = await windowed_sign_off(console)
        (bundle / "enrolments_in_force.json").unlink()
        [enrolled] = console.events("console.enrolled")
        seq = enrolled["seq"]
        assert str(verify(console, bundle).problem) == (
            f"entry {seq}: manifest.json names the console.enrolled entries [{seq}], but enrolments_in_force.json"
            " is missing"
        )

    async def test_no_byte_of_the_carried_file_can_change(self, console: Console) -> None:
        """Any one byte of enrolments_in_force.json changed: the bundle fails (never a crash, never a pass)."""
        windowed = await windowed_sign_off(console)
        original = (windowed / "enrolments_in_force.json").read_bytes()

        @settings(max_examples=60, deadline=None)
        @given(st.data())
        def flip(data: st.DataObject) -> None:
            changed = bytearray(original)
            at = data.draw(st.integers(0, len(changed) - 1))
            changed[at] = data.draw(st.integers(0x20, 0x7E).filter(lambda b: b != changed[at]))
            with tempfile.TemporaryDirectory() as tmp:
                bundle = Path(shutil.copytree(windowed, Path(tmp) / "bundle"))
                (bundle / "enrolments_in_force.json").write_bytes(changed)
                assert verify(console, bundle).problem is not None

        flip()


class TestLanguage:
    async def test_the_browser_language_then_the_switch_choose_the_words(self, console: Console) -> None:
        async with console.client() as client:
            page = await client.get("/signin", headers={"Accept-Language": "pt-BR,pt;q=0.9,en;q=0.5"})
            assert '<html lang="pt">' in page.text and "Entrar" in page.text
            switched = await client.get("/lang/es?next=/signin")
            assert (switched.status_code, switched.headers["location"]) == (303, "/signin")
            assert '<html lang="es">' in (await client.get("/signin")).text

    @given(st.text(max_size=200))
    def test_any_accept_language_header_picks_one_of_the_three(self, header: str) -> None:
        assert from_accept_language(header) in LANGUAGES

    def test_q_values_rank_the_languages(self) -> None:
        assert from_accept_language("en;q=0.4, es-MX;q=0.8, de") == "es"
        assert from_accept_language("de, fr") == "en"


def self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "console.crt", directory / "console.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


class TestServerAndCommandLine:
    def test_enabled_without_a_certificate_is_a_config_error(self, tmp_path: Path) -> None:
        with pytest.raises(ValueError, match="console.enabled needs tls_cert_file and tls_key_file"):
            config_for(tmp_path, enabled=True)

    async def test_the_component_serves_the_console_over_tls(self, tmp_path: Path) -> None:
        cert_file, key_file = self_signed(tmp_path)
        config = config_for(tmp_path, enabled=True, port=free_port(), tls_cert_file=cert_file, tls_key_file=key_file)
        with AuditLog.open(config.paths.audit_dir, origin="o") as audit:
            server = ConsoleServer(config, None, audit)
            ready = asyncio.Event()
            task = asyncio.create_task(server.run(ready))
            await asyncio.wait_for(ready.wait(), 10)
            trust = ssl.create_default_context(cafile=str(cert_file))
            async with httpx.AsyncClient(verify=trust) as client:
                page = await client.get(f"https://localhost:{server.port}/signin")
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert page.status_code == 200 and page.headers["content-security-policy"] == CSP

    def test_enrol_prints_a_one_time_link_for_a_role_the_config_gives(self, tmp_path: Path) -> None:
        path = tmp_path / "agent.toml"
        path.write_text(
            f'[site]\nid = "demo"\n[paths]\nstate_dir = "{tmp_path}"\n'
            '[console]\nrp_id = "console.plant.example"\nport = 9443\nroles = { alice = ["approver"] }\n'
        )
        run = [sys.executable, "-m", "edge_agent", "console", "enrol", "alice", "--config", str(path)]
        printed = subprocess.run([*run, "--role", "approver"], capture_output=True, text=True, check=True)
        link = printed.stdout.strip()
        assert re.fullmatch(r"https://console\.plant\.example:9443/enrol/[A-Za-z0-9_-]{43}", link), link
        with CredentialStore.for_state_dir(tmp_path) as credentials:
            enrolment = credentials.enrolment(link.rsplit("/", 1)[1], datetime.now(UTC))
        assert enrolment is not None and (enrolment.identity, enrolment.role) == ("alice", "approver")
        refused = subprocess.run([*run, "--role", "admin"], capture_output=True, text=True)
        assert refused.returncode == 1 and "gives 'alice' ['approver'], not 'admin'" in refused.stderr


@pytest.mark.slow
@needs_chromium
async def test_a_browser_enrols_a_passkey_signs_in_and_signs_a_draft_off(tmp_path: Path, chromium: str) -> None:
    """Chromium's virtual authenticator (CDP WebAuthn, ctap2, internal, resident key, user verified) through the
    page's own script: enrol, sign in, approve; the audit entry verifies offline. Served over http://localhost, a
    secure context, because Chromium refuses WebAuthn on a page with a certificate error (the TLS path is covered by
    test_the_component_serves_the_console_over_tls)."""
    import uvicorn
    from playwright.async_api import async_playwright, expect

    port = free_port()
    config = config_for(tmp_path, rp_id="localhost", origin=f"http://localhost:{port}", port=port)
    report_id = seed_report(tmp_path, "demo", "req-browser", requested_by="operator")
    with AuditLog.open(config.paths.audit_dir, origin="edge-agent/demo") as audit:
        repo, credentials = ReportRepository.for_state_dir(tmp_path), CredentialStore.for_state_dir(tmp_path)
        ctx = ConsoleContext(config, None, audit, repo, credentials)
        token = credentials.issue("alice", "approver", datetime.now(UTC), timedelta(hours=1))
        server = uvicorn.Server(uvicorn.Config(build_app(ctx), host="127.0.0.1", port=port, log_config=None))
        serving = asyncio.create_task(server.serve())
        try:
            while not server.started:
                await asyncio.sleep(0.05)
            async with async_playwright() as p:
                browser = await p.chromium.connect_over_cdp(chromium)
                page = await (await browser.new_context()).new_page()
                cdp = await page.context.new_cdp_session(page)
                await cdp.send("WebAuthn.enable")
                await cdp.send(
                    "WebAuthn.addVirtualAuthenticator",
                    {
                        "options": {
                            "protocol": "ctap2",
                            "transport": "internal",
                            "hasResidentKey": True,
                            "hasUserVerification": True,
                            "isUserVerified": True,
                        }
                    },
                )
                base = f"http://localhost:{port}"
                await page.goto(f"{base}/enrol/{token}")
                await page.click("#enrol")
                # Locators, not wait_for_function: the page's CSP forbids the eval that one needs.
                await expect(page.locator("#result")).to_have_text("Passkey registered. You can sign in now.")
                await page.goto(f"{base}/signin")
                await page.click("#signin")
                await page.wait_for_url(f"{base}/now")
                await page.goto(f"{base}/reports/{report_id}/sign")
                await expect(page.locator("#who")).to_have_text("Signed in as alice")
                await page.fill("textarea[name=comment]", "seen on the floor")
                await page.click("#sign button[type=submit]")
                await expect(page.locator("#status")).to_have_text("approved")
                await browser.close()
        finally:
            server.should_exit = True
            await serving
            credentials.close()
            repo.close()
    lines = (tmp_path / "audit" / "entries.jsonl").read_bytes().splitlines()
    events = [json.loads(line) for line in lines]
    [decision] = [e for e in events if e["event"] == "report.signed_off"]
    assert decision["payload"]["approval"]["format"] == "webauthn"
    assert decision["payload"]["comment"] == "seen on the floor"
    assert [e["event"] for e in events if e["event"].startswith("console.")] == [
        "console.enrolled",
        "console.signed_in",
    ]
    checked = check_approvals(lines)
    assert (checked.signed, checked.problem) == (1, None)
