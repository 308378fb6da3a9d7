"""The broker: one connection with the configured credentials and TLS, through the agent's own client, under a
client id of its own (`<client_id>-doctor`) so the agent's persistent session is neither taken over nor kept."""

from __future__ import annotations

import asyncio
import ssl

from edge_agent.config.mqtt import MqttConfig
from edge_agent.connectors.mqtt import MqttClient, MqttError
from edge_agent.doctor.types import Check

# A broker on the plant network answers CONNACK in milliseconds and a TLS handshake in tens of them; 5 s allows a
# loaded broker, yet a firewall that silently drops the packets is reported before the operator gives up waiting.
MQTT_TIMEOUT_S = 5.0
# How often the probe looks whether the first attempt ended; short against any real round trip.
POLL_S = 0.02
# CONNACK reason strings (MQTT 5 §3.2.2.2; paho names 3.1.1's return codes the same way) that mean the credentials.
_CREDENTIAL_REASONS = ("Not authorized", "Bad user name or password")


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__
    return chain


def diagnose(error: BaseException, mqtt: MqttConfig) -> tuple[str, str]:
    """What a failed connection means, and its fix, from the client's error and its causes."""
    broker = f"{mqtt.host}:{mqtt.port}"
    chain = _causes(error)
    verify = next((e for e in chain if isinstance(e, ssl.SSLCertVerificationError)), None)
    if verify is not None:
        return (
            f"TLS failure with {broker}: the broker's certificate was not accepted ({verify.verify_message})",
            "the broker's certificate must be signed by mqtt.tls.ca_file and name mqtt.host; or use the name it holds",
        )
    tls = next((e for e in chain if isinstance(e, ssl.SSLError)), None)
    if tls is not None:
        return (
            f"TLS failure with {broker}: {tls}",
            "check [mqtt.tls] against the broker's listener: its CA, and the client certificate it requires",
        )
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return (
            f"connection refused: nothing listens on {broker}",
            "start the broker, or correct mqtt.host / mqtt.port (a TLS listener is usually 8883)",
        )
    message = str(error)
    if any(reason in message for reason in _CREDENTIAL_REASONS):
        user = mqtt.username or "(anonymous)"
        return (
            f"the broker refused user {user}: {message}",
            "check mqtt.username and the password (EDGE_AGENT__MQTT__PASSWORD or mqtt.password) against the"
            " broker's password file",
        )
    if "refused the connection" in message:
        return (f"{broker} {message}", "see the broker's log for why it refused this client")
    return (f"cannot connect to {broker}: {message}", "check mqtt.host resolves and this host may reach it")


async def first_attempt(client: MqttClient, timeout_s: float) -> BaseException | None:
    """None once the client is connected; the first connection error; or a TimeoutError after `timeout_s`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not client.connected:
        if client.last_error is not None:
            return client.last_error
        if loop.time() >= deadline:
            return TimeoutError(f"no CONNACK within {timeout_s:g} s")
        await asyncio.sleep(POLL_S)
    return None


async def check_mqtt(mqtt: MqttConfig, timeout_s: float = MQTT_TIMEOUT_S) -> Check:
    if not mqtt.enabled:
        return Check.ok("mqtt", "disabled (mqtt.enabled = false)")
    broker = f"{mqtt.host}:{mqtt.port}"
    client_id = f"{mqtt.client_id}-doctor"
    # Session expiry 0: the broker forgets this session at disconnect. No retry inside the window: one attempt.
    probe = mqtt.model_copy(update={"session_expiry_s": 0, "reconnect_min_s": timeout_s, "reconnect_max_s": timeout_s})
    try:
        client = MqttClient(probe, client_id=client_id)
    except MqttError as exc:  # the TLS files cannot be loaded
        return Check.fail("mqtt", str(exc), "check the paths and permissions of [mqtt.tls]'s files")
    async with client:
        error = await first_attempt(client, timeout_s)
    if isinstance(error, TimeoutError):
        return Check.fail(
            "mqtt",
            f"no answer from {broker} within {timeout_s:g} s",
            "a firewall drops the packets, or something other than a broker listens there: check host and port",
        )
    if error is not None:
        return Check.fail("mqtt", *diagnose(error, mqtt))
    how = "TLS" if mqtt.tls is not None else "plain TCP"
    who = f"user {mqtt.username}" if mqtt.username else "anonymous"
    return Check.ok("mqtt", f"connected to {broker} ({how}, MQTT {mqtt.protocol}) as {who}, client id {client_id}")
