"""What a service needs from an MQTT client, as Protocols: the report service and the ask service are handed a client
factory by the composition root (`edge_agent.app` passes `edge_agent.connectors.mqtt.MqttClient`), so nothing under
`edge_agent` below the root imports the connectors: data flows connectors → store → reports, and the services do not
reach back up for their transport.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from edge_agent.config.mqtt import MqttConfig


class ServiceMessage(Protocol):
    """A received request, sign-off, question or tool call: acknowledged with `await ack()` once handled."""

    @property
    def topic(self) -> str: ...
    @property
    def payload(self) -> bytes: ...
    @property
    def retain(self) -> bool: ...
    @property
    def response_topic(self) -> str | None: ...
    @property
    def correlation_data(self) -> bytes | None: ...

    async def ack(self) -> None: ...


class ServiceClient(Protocol):
    """A connected client: waits for its connection, subscribes, yields messages in arrival order."""

    async def wait_connected(self, timeout: float | None = None) -> None: ...

    async def wait_disconnected(self) -> None: ...

    async def subscribe(self, topic_filter: str, qos: int = 1, timeout: float | None = None) -> None: ...

    def messages(self) -> AsyncIterator[ServiceMessage]: ...


class ServiceClientFactory(Protocol):
    """`factory(config, client_id=...)` → an async context manager that connects on enter and closes on exit."""

    def __call__(
        self, config: MqttConfig, client_id: str | None = None
    ) -> AbstractAsyncContextManager[ServiceClient]: ...
