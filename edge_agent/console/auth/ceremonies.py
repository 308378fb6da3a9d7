"""The passkey ceremonies (WebAuthn, the `webauthn` package): registering one with a one-time enrolment link, and
signing in with it. Every registration, sign-in and failed sign-in is an audit entry; a failed sign-in is a strike
against the client address (lockout.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from edge_agent.console.auth.credentials import Credential, token_hash
from edge_agent.console.context import ConsoleContext
from edge_agent.console.templating import render
from edge_agent.signing import PasskeyKey

log = structlog.get_logger(component="console")
RP_NAME = "edge-agent console"


def context(request: Request) -> ConsoleContext:
    ctx: ConsoleContext = request.app.state.ctx
    return ctx


def address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def audit(ctx: ConsoleContext, event: str, actor: str, payload: dict[str, Any]) -> None:
    await asyncio.to_thread(ctx.audit.append, event, actor, payload)


async def read_json(request: Request) -> dict[str, Any] | None:
    try:
        data = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


# --- enrolment -----------------------------------------------------------------------------------------------------


async def enrol_page(request: Request) -> Response:
    ctx = context(request)
    enrolment = ctx.credentials.enrolment(request.path_params["token"], ctx.now())
    if enrolment is None:
        return render(request, "enrol.html", {"name": None}, status=404)
    return render(request, "enrol.html", {"name": enrolment.identity, "role": enrolment.role})


async def enrol_options(request: Request) -> Response:
    ctx = context(request)
    enrolment = ctx.credentials.enrolment(request.path_params["token"], ctx.now())
    if enrolment is None:
        return JSONResponse({"error": "enrolment link used, expired or unknown"}, status_code=404)
    options = generate_registration_options(
        rp_id=ctx.config.console.rp_id,
        rp_name=RP_NAME,
        user_name=enrolment.identity,
        user_id=enrolment.identity.encode(),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.REQUIRED
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=c.credential_id) for c in ctx.credentials.of(enrolment.identity)
        ],
    )
    request.state.session.challenge = options.challenge
    return Response(options_to_json(options), media_type="application/json")


async def enrol_verify(request: Request) -> Response:
    ctx, session = context(request), request.state.session
    token = request.path_params["token"]
    enrolment = ctx.credentials.enrolment(token, ctx.now())
    challenge, session.challenge = session.challenge, None
    body = await read_json(request)
    if enrolment is None or challenge is None or body is None:
        return JSONResponse({"error": "enrolment link used, expired or unknown, or no ceremony"}, status_code=400)
    console = ctx.config.console
    try:
        verified = verify_registration_response(
            credential=body,
            expected_challenge=challenge,
            expected_rp_id=console.rp_id,
            expected_origin=console.effective_origin,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        return JSONResponse({"error": f"registration refused: {exc}"}, status_code=400)
    credential = Credential(
        enrolment.identity, verified.credential_id, verified.credential_public_key, verified.sign_count
    )
    if not ctx.credentials.register(token, credential, ctx.now()):
        return JSONResponse({"error": "enrolment link used, expired or unknown"}, status_code=404)
    key = PasskeyKey(enrolment.identity, verified.credential_id, verified.credential_public_key)
    # The passkey `audit verify-bundle` trusts for this person's sign-offs (edge_agent/audit/approvals.py).
    await audit(
        ctx,
        "console.enrolled",
        f"operator:{enrolment.identity}",
        {
            "name": enrolment.identity,
            "role": enrolment.role,
            "credential_id": bytes_to_base64url(verified.credential_id),
            "public_key": bytes_to_base64url(verified.credential_public_key),
            "fingerprint": key.fingerprint,
            "enrolment_sha256": token_hash(token),
            "address": address(request),
        },
    )
    log.info("console_enrolled", name=enrolment.identity, fingerprint=key.fingerprint)
    return JSONResponse({"status": "registered", "name": enrolment.identity})


# --- sign-in -------------------------------------------------------------------------------------------------------


async def signin_page(request: Request) -> Response:
    return render(request, "signin.html")


def _locked(request: Request) -> Response | None:
    ctx = context(request)
    until = ctx.lockout.locked_until(address(request), ctx.now())
    if until is None:
        return None
    return JSONResponse({"error": "locked out after failed sign-ins", "until": until.isoformat()}, status_code=429)


async def signin_options(request: Request) -> Response:
    locked = _locked(request)
    if locked is not None:
        return locked
    ctx = context(request)
    options = generate_authentication_options(
        rp_id=ctx.config.console.rp_id, user_verification=UserVerificationRequirement.REQUIRED
    )
    request.state.session.challenge = options.challenge
    return Response(options_to_json(options), media_type="application/json")


async def signin_verify(request: Request) -> Response:
    locked = _locked(request)
    if locked is not None:
        return locked
    ctx, session = context(request), request.state.session
    challenge, session.challenge = session.challenge, None
    body = await read_json(request)
    credential = None
    try:
        if challenge is None or body is None:
            raise ValueError("no sign-in ceremony in progress")
        credential = ctx.credentials.get(base64url_to_bytes(str(body.get("rawId", ""))))
        if credential is None:
            raise ValueError("unknown passkey")
        console = ctx.config.console
        verified = verify_authentication_response(
            credential=body,
            expected_challenge=challenge,
            expected_rp_id=console.rp_id,
            expected_origin=console.effective_origin,
            credential_public_key=credential.public_key,
            credential_current_sign_count=credential.sign_count,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        return await _failed(request, str(exc), credential)
    if not ctx.config.console.roles_of(credential.identity):
        return await _failed(request, f"{credential.identity} has no role in [console] roles", credential)
    ctx.credentials.bump(credential.credential_id, verified.new_sign_count)
    ctx.lockout.clear(address(request))
    ctx.sessions.end(session)  # a new session id on sign-in: one fixed before it is worth nothing after
    request.state.session = ctx.sessions.new(ctx.now(), credential.identity)
    await audit(
        ctx,
        "console.signed_in",
        f"operator:{credential.identity}",
        {"credential_id": bytes_to_base64url(credential.credential_id), "address": address(request)},
    )
    return JSONResponse({"status": "signed_in", "name": credential.identity})


async def _failed(request: Request, reason: str, credential: Credential | None) -> Response:
    ctx = context(request)
    locked = ctx.lockout.strike(address(request), ctx.now())
    await audit(
        ctx,
        "console.signin_failed",
        "console",
        {
            "reason": reason[:500],
            "claimed_by": credential.identity if credential else None,
            "address": address(request),
            "locked_out": locked,
        },
    )
    log.warning("console_signin_failed", reason=reason[:200], address=address(request), locked_out=locked)
    return JSONResponse({"error": "sign-in refused"}, status_code=401)


async def signout(request: Request) -> Response:
    ctx, session = context(request), request.state.session
    if session.name is not None:
        await audit(ctx, "console.signed_out", f"operator:{session.name}", {"address": address(request)})
    ctx.sessions.end(session)
    request.state.session = ctx.sessions.new(ctx.now())
    return Response(status_code=303, headers={"location": "/signin"})
