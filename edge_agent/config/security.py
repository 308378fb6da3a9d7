"""Start-up security warnings: settings that work but leave the plant network or the audit trail weaker than it
could be. They never stop the agent (a plant may have reasons, e.g. a broker on the same host); they are logged at
every start, recorded once in the audit log (`config.security`) and printed by `edge-agent config check`, so an
assessor sees what was accepted, and when.

`security_warnings` is pure: it reads only the config and the environment mapping it is given.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from edge_agent.config import ENV_PREFIX, AgentConfig
from edge_agent.config.mqtt import MqttConfig
from edge_agent.config.opcua import OpcuaSourceConfig

WarningCode = Literal[
    "mqtt_plaintext_credentials",
    "mqtt_password_in_file",
    "mqtt_hostname_unchecked",
    "mqtt_anonymous",
    "opcua_server_unpinned",
    "opcua_unsecured_remote",
    "reports_unsigned_signoff",
]

_MQTT_PASSWORD_ENV = f"{ENV_PREFIX}MQTT__PASSWORD"


class SecurityWarning(BaseModel):
    """One weakness: a stable code to filter on, and a message saying what it exposes and what to set instead."""

    model_config = ConfigDict(frozen=True)

    code: WarningCode
    message: str


def security_warnings(config: AgentConfig, environ: Mapping[str, str] | None = None) -> list[SecurityWarning]:
    """Every warning for `config`, MQTT first, then OPC UA sources in config order, then the reports'.

    `environ` is the environment the config was loaded with (None: an empty one); it tells a password given as
    EDGE_AGENT__MQTT__PASSWORD from one written in the file (as does `config.secret_files`, for `password_file`).
    """
    in_file = "mqtt.password" not in config.secret_files and not _from_environment(environ or {}, _MQTT_PASSWORD_ENV)
    warnings = _mqtt_warnings(config.mqtt, password_in_file=in_file) if config.mqtt.enabled else []
    for source in config.opcua.sources:
        warnings += _opcua_warnings(source)
    if config.reports.allow_unsigned_signoff:
        warnings.append(
            SecurityWarning(
                code="reports_unsigned_signoff",
                message="reports.allow_unsigned_signoff = true: a sign-off without an approver's signature is"
                " accepted, so anyone holding the agent's broker credentials (or the ACL's readwrite on edge/#)"
                " can approve as anyone; register approver keys in reports.approver_keys and remove it",
            )
        )
    return warnings


def _mqtt_warnings(mqtt: MqttConfig, *, password_in_file: bool) -> list[SecurityWarning]:
    warnings: list[SecurityWarning] = []
    broker = f"{mqtt.host}:{mqtt.port}"
    if mqtt.password is not None and mqtt.tls is None:
        warnings.append(
            SecurityWarning(
                code="mqtt_plaintext_credentials",
                message=f"mqtt.password is set but [mqtt.tls] is not: the password crosses the network to {broker}"
                " in plain text; configure [mqtt.tls]",
            )
        )
    if mqtt.password is not None and password_in_file:
        warnings.append(
            SecurityWarning(
                code="mqtt_password_in_file",
                message=f"mqtt.password is written in the config file; set {_MQTT_PASSWORD_ENV} from an"
                " EnvironmentFile only root can read instead (docs/deployment.md)",
            )
        )
    if mqtt.tls is not None and not mqtt.tls.check_hostname:
        warnings.append(
            SecurityWarning(
                code="mqtt_hostname_unchecked",
                message=f"mqtt.tls.check_hostname = false: any certificate the CA signed is accepted for {broker},"
                " so another host holding one can pose as the broker",
            )
        )
    if mqtt.username is None and (mqtt.tls is None or mqtt.tls.cert_file is None):
        warnings.append(
            SecurityWarning(
                code="mqtt_anonymous",
                message=f"the connection to {broker} is anonymous (no mqtt.username, no mqtt.tls.cert_file):"
                " the broker cannot tell who anyone is, so report sign-off over MQTT is disabled",
            )
        )
    return warnings


def _opcua_warnings(source: OpcuaSourceConfig) -> list[SecurityWarning]:
    warnings: list[SecurityWarning] = []
    if source.security_policy != "None" and source.server_cert_sha256 is None:
        warnings.append(
            SecurityWarning(
                code="opcua_server_unpinned",
                message=f"opcua source {source.name}: security_policy {source.security_policy} without"
                f" server_cert_sha256: whatever certificate {source.endpoint} presents is trusted, so an impostor"
                " is encrypted to as well; pin the SHA-256 the agent logs as opcua_server_certificate",
            )
        )
    if source.security_mode == "None" and not _is_loopback(source.endpoint):
        warnings.append(
            SecurityWarning(
                code="opcua_unsecured_remote",
                message=f"opcua source {source.name}: security_mode None to {source.endpoint}: values"
                + (", the user name and password" if source.username is not None else "")
                + " travel unsigned and unencrypted across the network; use Sign or SignAndEncrypt",
            )
        )
    return warnings


def _from_environment(environ: Mapping[str, str], name: str) -> bool:
    # The loader lower-cases the keys after the prefix, so EDGE_AGENT__mqtt__password overrides as well.
    return any(key.startswith(ENV_PREFIX) and key.lower() == name.lower() for key in environ)


def _is_loopback(endpoint: str) -> bool:
    """True only for an endpoint this host answers itself (localhost, 127.0.0.0/8, ::1)."""
    try:
        host = urlsplit(endpoint).hostname
    except ValueError:  # e.g. an unclosed "[" IPv6 bracket: not something to call loopback
        return False
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a DNS name: it may resolve anywhere
        return False
