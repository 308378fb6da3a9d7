"""One received MQTT message, as the client hands it to its consumer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class MqttMessage:
    """One received message. QoS 1/2 messages must be acknowledged with `await msg.ack()` once handled."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    mid: int
    received_time: datetime
    response_topic: str | None = None
    correlation_data: bytes | None = None
    user_properties: tuple[tuple[str, str], ...] = ()
    content_type: str | None = None
    # Which connection delivered it: an ack is only valid on that connection (see `MqttClient._ack`).
    generation: int = 0
    _acker: Callable[[MqttMessage], None] | None = field(default=None, repr=False, compare=False)

    async def ack(self) -> None:
        """Send the PUBACK now. A no-op for QoS 0, and for a message whose connection has since dropped (the broker
        redelivers it on the new connection, where the redelivery is acknowledged)."""
        if self._acker is not None:
            self._acker(self)


__all__ = ["MqttMessage"]
