"""`[console]`: the shift's console, a web page the agent serves over TLS to read reports and sign them with a
passkey (docs/console.md). Off until a certificate and key are set."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Self

from pydantic import Field, model_validator

from edge_agent.config.base import Section

Role = Literal["viewer", "approver", "auditor", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "approver", "auditor", "admin")


class ConsoleConfig(Section):
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(8443, ge=1, le=65535)
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # The WebAuthn relying party: the host name people type (a passkey is bound to it); origin defaults to
    # https://<rp_id>:<port>.
    rp_id: str = Field("localhost", min_length=1, max_length=253)
    origin: str | None = Field(None, pattern=r"^https?://[^/]+$")
    # Identity name ([[identities]] name) → roles: viewer reads, approver also signs, auditor reads the audit, admin
    # enrols.
    roles: dict[str, list[Role]] = Field(default_factory=dict)
    session_max_age_s: int = Field(8 * 3600, ge=60)
    enrol_link_max_age_s: int = Field(24 * 3600, ge=60)
    # Failed sign-ins per client address in any window before it is locked out for lockout_s.
    max_failed_signins: int = Field(5, ge=1)
    failed_signin_window_s: float = Field(300.0, gt=0)
    lockout_s: float = Field(900.0, gt=0)

    @model_validator(mode="after")
    def _tls_when_enabled(self) -> Self:
        if self.enabled and (self.tls_cert_file is None or self.tls_key_file is None):
            raise ValueError("console.enabled needs tls_cert_file and tls_key_file (docs/console.md)")
        return self

    @property
    def effective_origin(self) -> str:
        return self.origin or f"https://{self.rp_id}:{self.port}"

    def roles_of(self, name: str) -> frozenset[Role]:
        return frozenset(self.roles.get(name, ()))
