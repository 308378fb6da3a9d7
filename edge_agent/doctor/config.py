"""The config file: valid (an invalid one never gets this far: the command exits 2, as every command does) and the
security warnings it earns (`edge_agent.config.security`), each a warn."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from edge_agent.config import AgentConfig
from edge_agent.config.security import security_warnings
from edge_agent.doctor.types import Check

# What to change for each warning; the warning's own message says what it exposes.
_FIXES = {
    "mqtt_plaintext_credentials": "configure [mqtt.tls] (the broker's TLS listener and its CA)",
    "mqtt_password_in_file": "move the password to EDGE_AGENT__MQTT__PASSWORD in an EnvironmentFile only root reads",
    "mqtt_hostname_unchecked": "set mqtt.tls.check_hostname = true and connect by a name the certificate holds",
    "mqtt_anonymous": "give the agent its own broker user (mqtt.username) or client certificate (mqtt.tls.cert_file)",
    "opcua_server_unpinned": "pin the server: server_cert_sha256 = the SHA-256 the opcua check prints",
    "opcua_unsecured_remote": "set security_policy = Basic256Sha256 and security_mode = SignAndEncrypt",
}

_SEE_DOCS = "see docs/deployment.md, Security warnings"


def check_config(path: Path, config: AgentConfig) -> Check:
    return Check.ok("config", f"{path}: valid; effective config sha256 {config.fingerprint()}")


def check_security(config: AgentConfig, environ: Mapping[str, str]) -> list[Check]:
    """One warn per security warning, ids `security.<code>` (a code earned again by a later OPC UA source gets
    `.2`, `.3`, ...); one ok `security` when there are none."""
    warnings = security_warnings(config, environ)
    if not warnings:
        return [Check.ok("security", "no security warnings")]
    checks: list[Check] = []
    seen: dict[str, int] = {}
    for warning in warnings:
        seen[warning.code] = seen.get(warning.code, 0) + 1
        suffix = f".{seen[warning.code]}" if seen[warning.code] > 1 else ""
        checks.append(
            Check.warn(f"security.{warning.code}{suffix}", warning.message, _FIXES.get(warning.code, _SEE_DOCS))
        )
    return checks
