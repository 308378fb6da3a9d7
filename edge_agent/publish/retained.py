"""Read a retained message back from the broker (the agent's last published audit checkpoint, at start)."""

from __future__ import annotations

import asyncio
import contextlib

from edge_agent.config import MqttConfig
from edge_agent.connectors.mqtt import MqttClient

# How long to wait for the broker at all: a start-up check, not a session; a broker that is down is reported (the
# audit anchor asks again after a backoff, and signs nothing meanwhile).
CONNECT_TIMEOUT_S = 5.0
# How long to wait for the retained message after the broker granted the subscription: a retained message follows the
# SUBACK at once; a second covers a loaded broker. No message by then: nothing is retained there.
RETAINED_WAIT_S = 1.0


async def read_retained(
    config: MqttConfig, topic: str, client_id: str, wait_s: float = RETAINED_WAIT_S
) -> bytes | None:
    """The retained message on `topic` (any bytes: the caller judges them), None if there is none (nothing arrived
    within `wait_s` of the SUBACK). Raises whatever the connection raised when the broker cannot be reached."""
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
