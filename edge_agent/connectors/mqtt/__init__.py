"""Async MQTT client: one facade over paho-mqtt 2, used by ingest, the outbox and the report service.

    async with MqttClient(config) as client:
        await client.subscribe("plant/+/mes/#", qos=1)
        async for msg in client.messages():
            ...
            await msg.ack()

Modules: `client` (the facade: connection, reconnects, the paho-to-asyncio bridge, delivery guarantees), `flow`
(when to stop and resume reading the socket), `message` (a received message), `packet` (a PUBLISH packet's size),
`tls` (the SSL context), `errors`, `metrics`. The names below are the public ones.
"""

from edge_agent.connectors.mqtt.client import MqttClient
from edge_agent.connectors.mqtt.errors import (
    MqttConnectError,
    MqttError,
    MqttPacketTooLarge,
    MqttPublishError,
    MqttSubscribeError,
    MqttTimeoutError,
)
from edge_agent.connectors.mqtt.message import MqttMessage
from edge_agent.connectors.mqtt.tls import build_tls_context

__all__ = [
    "MqttClient",
    "MqttConnectError",
    "MqttError",
    "MqttMessage",
    "MqttPacketTooLarge",
    "MqttPublishError",
    "MqttSubscribeError",
    "MqttTimeoutError",
    "build_tls_context",
]
