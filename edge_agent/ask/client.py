"""Asking the running agent: one MQTT 5 request/response on `edge/<site>/ask/request/<user>`, as `edge-agent ask` and
the MCP server do. The answer comes back on `edge/<site>/ask/reply/<user>/<client id>` (the user's own reply
namespace, which the broker ACL `pattern readwrite edge/+/ask/reply/%u/#` lets it read), matched by Correlation
Data."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from edge_agent.ask.topics import reply_namespace, request_topic
from edge_agent.config import AgentConfig


class AskClientError(Exception):
    """No answer: the broker could not be reached, or the reply was not JSON."""


async def ask_agent(
    config: AgentConfig, payload: dict[str, Any], *, user: str | None = None, timeout_s: float = 30.0
) -> dict[str, Any]:
    """Publish `payload` (a question or a tool call) as `user` (default: `mqtt.username`, the level the broker ACL
    ties to the connection's user) and return the agent's reply. TimeoutError when none comes within `timeout_s`."""
    # The one MQTT client of the agent; imported here so that the service and pipeline modules, which app hands a
    # client factory, never load the connectors.
    from edge_agent.connectors.mqtt import MqttClient

    user = user if user is not None else config.mqtt.username
    client_id = f"edge-agent-ask-{uuid.uuid4().hex[:8]}"
    # A throwaway session: nothing should wait at the broker for a one-shot question.
    mqtt = config.mqtt.model_copy(update={"session_expiry_s": 0, "protocol": "5"})
    topic = request_topic(config) + (f"/{user}" if user else "")
    reply = f"{reply_namespace(config, user)}/{client_id}"
    correlation = uuid.uuid4().bytes
    async with asyncio.timeout(timeout_s), MqttClient(mqtt, client_id=client_id) as client:
        await client.wait_connected()
        await client.subscribe(reply, qos=1)
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        await client.publish(topic, data, qos=1, response_topic=reply, correlation_data=correlation)
        async for message in client.messages():
            await message.ack()
            if message.correlation_data != correlation:
                continue
            try:
                answer = json.loads(message.payload)
            except ValueError as exc:
                raise AskClientError(f"the agent's reply is not JSON: {exc}") from exc
            if not isinstance(answer, dict):
                raise AskClientError("the agent's reply is not a JSON object")
            return answer
    raise AskClientError("the broker connection closed before the agent replied")
