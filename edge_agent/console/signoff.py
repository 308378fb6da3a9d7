"""Sign-off in the console: a WebAuthn assertion whose challenge is the SHA-256 of the same statement the CLI signs
(edge_agent/signing/statement.py: report id, the body hash of what the page showed, decision, comment, time, nonce).

The page shows the report and the hash of its body; the options step fixes the statement and hands its hash to the
passkey as the challenge; the verify step checks the assertion (origin, relying party, user verification, sign
count) and then goes the way every sign-off goes: `check_signed` (the approver list, the time window, the passkey
being this person's) and `decide` (the nonce, the body, four-eyes, the audit entry). A refusal is a
`report.signoff_refused` entry, as over MQTT."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import secrets
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from webauthn import generate_authentication_options, options_to_json, verify_authentication_response
from webauthn.helpers import base64url_to_bytes
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import PublicKeyCredentialDescriptor, UserVerificationRequirement

from edge_agent.base.canonical import canonical_json
from edge_agent.console.access import requires
from edge_agent.console.auth.ceremonies import context, read_json
from edge_agent.console.templating import render
from edge_agent.reports.document import check_body, check_signed, decide, record_refusal
from edge_agent.reports.errors import ReportNotFound, SignoffError
from edge_agent.signing import Statement, statement_challenge
from edge_agent.signing.passkey import b64url

log = structlog.get_logger(component="console")
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")


@requires("sign")
async def sign_page(request: Request) -> Response:
    ctx, report_id = context(request), request.path_params["report_id"]
    try:
        document = await asyncio.to_thread(ctx.repo.get, report_id)
    except ReportNotFound:
        return render(request, "sign.html", {"report": None, "report_id": report_id}, status=404)
    try:
        shown = check_body(document)
        problem = None
    except SignoffError as exc:
        shown, problem = "", str(exc)
    text = document.get("renderings", {}).get("markdown") or json.dumps(document.get("body"), indent=2)
    page = {"report": document, "report_id": report_id, "text": text, "body_sha256": shown, "problem": problem}
    return render(request, "sign.html", page)


@requires("sign")
async def sign_options(request: Request) -> Response:
    """The statement to sign and the WebAuthn request whose challenge is its hash, for this person's passkeys."""
    ctx, session = context(request), request.state.session
    form = await request.form()
    decision, comment, shown = form.get("decision"), form.get("comment", ""), form.get("body_sha256")
    if decision not in ("approve", "reject"):
        return JSONResponse({"error": "decision: approve or reject"}, status_code=400)
    if not isinstance(comment, str) or len(comment) > 2000:
        return JSONResponse({"error": "comment: at most 2000 characters"}, status_code=400)
    if not isinstance(shown, str) or not _SHA256_HEX.fullmatch(shown):
        return JSONResponse({"error": "body_sha256: the SHA-256 of the body the page showed"}, status_code=400)
    statement = Statement(
        request.path_params["report_id"][:128],
        shown,
        "approve" if decision == "approve" else "reject",
        session.name,
        ctx.now(),
        secrets.token_urlsafe(24),
        comment,
    )
    credentials = ctx.credentials.of(session.name)
    options = generate_authentication_options(
        rp_id=ctx.config.console.rp_id,
        challenge=statement_challenge(statement),
        allow_credentials=[PublicKeyCredentialDescriptor(id=c.credential_id) for c in credentials],
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    session.pending = statement.as_json()
    options_json = json.loads(options_to_json(options))
    return JSONResponse({"publicKey": options_json, "statement": statement.as_json()})


@requires("sign")
async def sign_verify(request: Request) -> Response:
    ctx, session = context(request), request.state.session
    report_id, name = request.path_params["report_id"], session.name
    pending, session.pending = session.pending, None  # one assertion per statement: a replay finds none
    body = await read_json(request)
    try:
        if pending is None or pending["report_id"] != report_id:
            raise SignoffError("no sign-off of this report is in progress in this session", "replayed")
        if body is None:
            raise SignoffError("the passkey's response is not a JSON object", "invalid")
        approval = _assertion(ctx, name, pending, body)
        verified = check_signed(
            approval,
            dataclasses.replace(ctx.policy, keys=tuple(c.key() for c in ctx.credentials.of(name))),
            now=ctx.now(),
            report_id=report_id,
            claimed=name,
        )
        document = await asyncio.to_thread(
            decide,
            ctx.repo,
            ctx.audit,
            report_id=report_id,
            decision=verified.statement.decision,
            by=name,
            via="console",
            comment=verified.statement.comment,
            four_eyes=ctx.config.reports.four_eyes,
            approval=verified,
            approval_json=approval,
            identities=ctx.identities,
        )
    except SignoffError as exc:
        await asyncio.to_thread(record_refusal, ctx.audit, exc, via="console", user=None, report_id=report_id, by=name)
        log.warning("console_signoff_refused", report_id=report_id, by=name, code=exc.code)
        return JSONResponse({"status": "refused", "code": exc.code, "reason": str(exc)}, status_code=409)
    log.info("report_signed_off", report_id=report_id, status=document["status"], by=name, via="console")
    return JSONResponse(
        {"status": document["status"], "report_id": report_id, "by": name, "audit_seq": document["audit"]["signoff"]}
    )


def _assertion(ctx: Any, name: str, statement: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    """Check the assertion as a live WebAuthn ceremony (origin, relying party, user verification, sign count) and
    return the approval object the audit entry keeps; SignoffError when it does not hold."""
    try:
        credential = ctx.credentials.get(base64url_to_bytes(str(body.get("rawId", ""))))
        if credential is None or credential.identity != name:
            raise SignoffError(f"the passkey is not one of {name!r}'s", "unknown_key")
        console = ctx.config.console
        verified = verify_authentication_response(
            credential=body,
            expected_challenge=statement_challenge_of(statement),
            expected_rp_id=console.rp_id,
            expected_origin=console.effective_origin,
            credential_public_key=credential.public_key,
            credential_current_sign_count=credential.sign_count,
            require_user_verification=True,
        )
        response = body["response"]
        approval = {
            "statement": statement,
            "format": "webauthn",
            "credential_id": b64url(credential.credential_id),
            "public_key": b64url(credential.public_key),
            "rp_id": console.rp_id,
            "authenticator_data": b64url(base64url_to_bytes(response["authenticatorData"])),
            "client_data_json": b64url(base64url_to_bytes(response["clientDataJSON"])),
            "signature": b64url(base64url_to_bytes(response["signature"])),
        }
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        raise SignoffError(f"passkey assertion refused: {exc}", "bad_signature") from exc
    ctx.credentials.bump(credential.credential_id, verified.new_sign_count)
    return approval


def statement_challenge_of(statement: dict[str, str]) -> bytes:
    """The challenge of a statement object (the pending one, as `Statement.as_json` gave it)."""
    return hashlib.sha256(canonical_json(statement)).digest()
