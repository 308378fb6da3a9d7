"""The MQTT connector's exceptions: one root, one subclass per way an operation fails."""

from __future__ import annotations


class MqttError(Exception):
    """Root of every MQTT failure raised by this package."""


class MqttConnectError(MqttError):
    """The broker could not be reached, refused the connection, or failed TLS verification."""


class MqttTimeoutError(MqttError):
    """An operation did not complete in time."""


class MqttPublishError(MqttError):
    """paho refused to queue a message, or the broker answered its PUBACK with a failure reason code."""


class MqttPacketTooLarge(MqttPublishError):
    """The PUBLISH packet is larger than the broker's Maximum Packet Size: never sent, since the broker would drop the
    connection and paho would resend it on every reconnect; retrying cannot help."""


class MqttSubscribeError(MqttError):
    """The broker refused a subscription (SUBACK failure reason code)."""


__all__ = [
    "MqttConnectError",
    "MqttError",
    "MqttPacketTooLarge",
    "MqttPublishError",
    "MqttSubscribeError",
    "MqttTimeoutError",
]
