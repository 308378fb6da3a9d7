"""The TLS context of a broker connection, from `[mqtt.tls]`."""

from __future__ import annotations

import ssl

from edge_agent.config.mqtt import MqttConfig
from edge_agent.connectors.mqtt.errors import MqttConnectError


def build_tls_context(config: MqttConfig) -> ssl.SSLContext | None:
    """SSLContext from `[mqtt.tls]`: CA (else the system store), optional client certificate, hostname check."""
    tls = config.tls
    if tls is None:
        return None
    try:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(tls.ca_file) if tls.ca_file else None)
        if tls.cert_file is not None and tls.key_file is not None:
            context.load_cert_chain(str(tls.cert_file), str(tls.key_file))
    except (OSError, ssl.SSLError) as exc:
        raise MqttConnectError(f"cannot load TLS files from [mqtt.tls]: {exc}") from exc
    # The certificate chain is always verified; only the name match can be switched off (brokers addressed by IP).
    context.check_hostname = tls.check_hostname
    context.verify_mode = ssl.CERT_REQUIRED
    return context


__all__ = ["build_tls_context"]
