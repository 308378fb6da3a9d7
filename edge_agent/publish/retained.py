"""Read a retained message back from the broker (the agent's last published audit checkpoint, at start)."""

from __future__ import annotations

import asyncio
import contextlib

from edge_agent.config import MqttConfig
from edge_agent.connectors.mqtt import MqttClient

# How long to wait for the broker at all: a start-up check, not a session; a broker that is down is reported.
CONNECT_TIMEOUT_S = 5.0


async def read_retained(config: MqttConfig, topic: str, client_id: str, wait_s: float = 1.0) -> bytes | None:
    """The retained message on `topic`, None if there is none (nothing arrived within `wait_s` of the SUBACK)."""
    async with MqttClient(config, client_id, clean_start=True) as client:
        await client.wait_connected(CONNECT_TIMEOUT_S)
        await client.subscribe(topic, qos=1, timeout=CONNECT_TIMEOUT_S)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(wait_s):
                while True:
                    message = await client.receive()
                    await message.ack()
                    if message.topic == topic and message.retain:
                        return message.payload
    return None
