"""Messages a connector has taken from its MQTT client and not yet acknowledged, bounded in count and payload bytes.

The count bound is the client's queue_max (and the broker's Receive Maximum); the byte bound is mqtt.queue_max_bytes,
like the client's own queue: with the count alone, 10 000 messages at max_payload_bytes could wait for their commit
(bench.hostile's memory flood found 1.1 GiB in the MQTT ingest).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from edge_agent.connectors.mqtt.message import MqttMessage


class Unsettled:
    """Taken messages awaiting their commit and ack: `room()` waits while either bound is reached."""

    def __init__(self, max_messages: int, max_bytes: int) -> None:
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self.messages = 0
        self.bytes = 0
        self._room = asyncio.Event()

    def clear(self) -> None:
        """A new run: nothing of the last run's pipeline is still in flight."""
        self.messages = self.bytes = 0

    async def room(self) -> None:
        while self.messages >= self._max_messages or self.bytes >= self._max_bytes:
            self._room.clear()
            await self._room.wait()

    def take(self, messages: Iterable[MqttMessage]) -> None:
        for message in messages:
            self.messages += 1
            self.bytes += len(message.payload)

    def settle(self, messages: Iterable[object]) -> None:
        """Acknowledged messages leave; anything else a connector settles with them counts as one message."""
        for message in messages:
            self.messages -= 1
            if isinstance(message, MqttMessage):
                self.bytes -= len(message.payload)
        self._room.set()
