"""One OPC UA source: reachable, the security it offers, its certificate against the pin, and a session opened the
way the agent opens one (`edge_agent.connectors.opcua.Session`: the same pin check, identity and monitored items).

Doctor never writes to the agent's PKI directory: a client certificate the agent has not generated yet is reported,
not generated (doctor may run as another user, and a file it created would then belong to that user).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

from asyncua import Client, ua

from edge_agent.config import OpcuaSourceConfig
from edge_agent.connectors.opcua import OpcuaSecurityError, ServerCertificateMismatch, Session
from edge_agent.connectors.opcua.security import (
    Identity,
    check_pin,
    first_certificate,
    load_identity,
    message_security_mode,
    security_policy,
    sha256_thumbprint,
)
from edge_agent.doctor.types import Check

# Each step (TCP connect, GetEndpoints, the session) gets this long: a server on the plant network answers each in
# well under a second; 5 s allows a loaded PLC gateway, yet a dead endpoint is reported before the operator gives up.
OPCUA_TIMEOUT_S = 5.0
# Refusals that mean the server does not trust our application certificate (OPC 10000-4 §5.6.2 / 10000-6 §6.1).
_UNTRUSTED = {
    ua.StatusCodes.BadCertificateUntrusted,
    ua.StatusCodes.BadSecurityChecksFailed,
    ua.StatusCodes.BadCertificateInvalid,
}
# Refusals of the user identity token: the user name or password.
_USER_REJECTED = {
    ua.StatusCodes.BadUserAccessDenied,
    ua.StatusCodes.BadIdentityTokenInvalid,
    ua.StatusCodes.BadIdentityTokenRejected,
}


def client_certificate_path(source: OpcuaSourceConfig, pki_dir: Path) -> tuple[Path, Path]:
    """Where the agent keeps this source's certificate and key (`OpcuaSource` generates them there)."""
    if source.client_cert is not None and source.client_key is not None:
        return source.client_cert, source.client_key
    return pki_dir / f"opcua-{source.name}.der", pki_dir / f"opcua-{source.name}.pem"


def _secured(source: OpcuaSourceConfig) -> bool:
    return source.security_policy != "None" and source.security_mode != "None"


def _offered(endpoints: list[ua.EndpointDescription]) -> list[str]:
    return sorted({f"{e.SecurityPolicyUri.rsplit('#', 1)[-1]}/{e.SecurityMode.name.rstrip('_')}" for e in endpoints})


def _server_certificate(source: OpcuaSourceConfig, endpoints: list[ua.EndpointDescription]) -> bytes | None:
    """The certificate the session would pin against: as `Session._server_certificate` picks it."""
    if _secured(source):
        policy_uri = security_policy(source.security_policy).URI
        mode = message_security_mode(source.security_mode)
        matching = [e for e in endpoints if e.SecurityPolicyUri == policy_uri and e.SecurityMode == mode]
        endpoints = matching or endpoints
    certs = [e.ServerCertificate for e in endpoints if e.ServerCertificate]
    return first_certificate(certs[0]) if certs else None


def _status_error(exc: BaseException) -> ua.UaStatusCodeError | None:
    """The server's status code error in `exc`'s causes: what it answered, e.g. BadCertificateUntrusted."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, ua.UaStatusCodeError):
            return current
        current = current.__cause__
    return None


def _status_code(exc: BaseException) -> int | None:
    error = _status_error(exc)
    return error.code if error is not None else None


class SourceCheck:
    """The checks of one source, in order; the first failure ends them."""

    def __init__(self, source: OpcuaSourceConfig, pki_dir: Path, timeout_s: float = OPCUA_TIMEOUT_S) -> None:
        self.source = source
        self.pki_dir = pki_dir
        self.timeout_s = timeout_s
        self.id = f"opcua.{source.name}"

    async def run(self) -> Check:
        src = self.source
        unreachable = await self._reach()
        if unreachable is not None:
            return Check.fail(
                self.id,
                f"{src.endpoint} is unreachable: {unreachable}",
                "check the server runs, the endpoint's host and port, and that a firewall lets this host through",
            )
        try:
            async with asyncio.timeout(self.timeout_s):
                endpoints = await Client(src.endpoint, timeout=self.timeout_s).connect_and_get_server_endpoints()
        except (OSError, TimeoutError, ua.UaError) as exc:
            return Check.fail(
                self.id,
                f"{src.endpoint} accepts TCP but GetEndpoints failed: {exc!r}",
                "check the endpoint URL (port and path) names an OPC UA server",
            )
        offered = _offered(endpoints)
        server_der = _server_certificate(src, endpoints)
        thumbprint = sha256_thumbprint(server_der) if server_der else None
        found = f"{src.endpoint} offers {', '.join(offered)}"
        if thumbprint is not None:
            found += f"; server certificate sha256 {thumbprint}"
        if src.server_cert_sha256 is not None:
            try:
                check_pin(src.endpoint, server_der, src.server_cert_sha256)
            except ServerCertificateMismatch as exc:
                return self._pin_mismatch(exc)
            except OpcuaSecurityError as exc:  # a malformed pin
                return Check.fail(self.id, str(exc), "write server_cert_sha256 as 64 hex digits")
            found += " (pinned)"
        elif thumbprint is not None:
            found += " (not pinned)"
        identity = self._identity()
        if isinstance(identity, Check):
            return identity
        return await self._session(identity, found, offered)

    async def _reach(self) -> str | None:
        parts = urlsplit(self.source.endpoint)
        try:
            async with asyncio.timeout(self.timeout_s):
                _, writer = await asyncio.open_connection(parts.hostname, parts.port or 4840)
            writer.close()
            await writer.wait_closed()
        except TimeoutError:
            return f"no answer within {self.timeout_s:g} s"
        except (OSError, ValueError) as exc:
            return str(exc)
        return None

    def _pin_mismatch(self, exc: ServerCertificateMismatch) -> Check:
        return Check.fail(
            self.id,
            f"pin mismatch: {self.source.endpoint} presents a certificate with SHA-256 {exc.actual}, but"
            f" server_cert_sha256 pins {exc.expected}",
            "if the server's certificate was replaced on purpose, pin the new one:"
            f' server_cert_sha256 = "{exc.actual}"; if not, find out what answers at {self.source.endpoint}'
            " before trusting it",
        )

    def _identity(self) -> Identity | None | Check:
        """Our application certificate when the source is secured (None when not), or the Check saying why not."""
        src = self.source
        if src.security_policy == "None":
            return None
        cert, key = client_certificate_path(src, self.pki_dir)
        if (src.client_cert is None) != (src.client_key is None):
            return Check.fail(self.id, "client_cert and client_key must be set together", "set both, or neither")
        if src.client_cert is None and not (cert.is_file() and key.is_file()):
            return Check.warn(
                self.id,
                f"no client certificate yet at {cert}: the agent generates it at its first start",
                f"start the agent once, then trust {cert} on the server and run doctor again",
            )
        try:
            return load_identity(cert, key)
        except OpcuaSecurityError as exc:
            return Check.fail(self.id, str(exc), "point client_cert / client_key at a readable certificate and key")

    async def _session(self, identity: Identity | None, found: str, offered: list[str]) -> Check:
        src = self.source
        pair = f"{src.security_policy}/{src.security_mode}"
        config = src.model_copy(update={"connect_timeout_s": min(src.connect_timeout_s, self.timeout_s)})
        try:
            # Connect is bounded inside Session; creating the monitored items is bounded here.
            async with asyncio.timeout(2 * self.timeout_s), Session(config, identity) as session:
                monitored = set(session.tags_by_handle.values())
        except ServerCertificateMismatch as exc:  # the certificate changed between GetEndpoints and the session
            return self._pin_mismatch(exc)
        except OpcuaSecurityError as exc:
            return self._refused(exc, identity, offered)
        except (OSError, TimeoutError, ua.UaError) as exc:
            code = _status_code(exc)
            if code in _UNTRUSTED:
                return self._refused(exc, identity, offered)
            return Check.fail(
                self.id,
                f"{found}; a {pair} session did not open: {exc!r}",
                "see the server's log for why it dropped the session",
            )
        found += f"; a {pair} session opened"
        if identity is not None:
            found += f" with client certificate {identity.cert_path} (trusted)"
        refused = [n.node_id for n in src.nodes if n.tag not in monitored]
        if refused:
            return Check.warn(
                self.id,
                f"{found}; {len(refused)} of {len(src.nodes)} nodes refused: {', '.join(refused)}",
                "correct those node_id values against the server's address space",
            )
        return Check.ok(self.id, f"{found}; {len(src.nodes)} nodes monitored")

    def _refused(self, exc: BaseException, identity: Identity | None, offered: list[str]) -> Check:
        code = _status_code(exc)
        answer = _status_error(exc) or exc
        src = self.source
        if code in _UNTRUSTED and identity is not None:
            return Check.fail(
                self.id,
                f"{src.endpoint} does not trust our client certificate {identity.cert_path}"
                f" (sha256 {identity.thumbprint_sha256}): {answer}",
                f"trust {identity.cert_path} on the server (copy it into its trusted certificates, or accept it in"
                " its certificate manager), then run doctor again",
            )
        if code in _USER_REJECTED:
            return Check.fail(
                self.id,
                f"{src.endpoint} refused user {src.username or '(anonymous)'}: {answer}",
                "check username and password against the server's user list",
            )
        return Check.fail(
            self.id,
            str(exc),
            f"set security_policy / security_mode to a pair the server offers ({', '.join(offered)})",
        )


async def check_opcua_source(source: OpcuaSourceConfig, pki_dir: Path, timeout_s: float = OPCUA_TIMEOUT_S) -> Check:
    return await SourceCheck(source, pki_dir, timeout_s).run()
