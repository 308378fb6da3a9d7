"""What the ask service needs from an MQTT client, as Protocols: `edge_agent.app` hands it a client factory
(`edge_agent.connectors.mqtt.MqttClient`), as it does the report service, so the service does not import the
connectors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from edge_agent.config.mqtt import MqttConfig


class AskMessage(Protocol):
    """A received question or tool call: acknowledged with `await ack()` once handled."""

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


class AskClient(Protocol):
    async def wait_connected(self, timeout: float | None = None) -> None: ...

    async def wait_disconnected(self) -> None: ...

    async def subscribe(self, topic_filter: str, qos: int = 1, timeout: float | None = None) -> None: ...

    def messages(self) -> AsyncIterator[AskMessage]: ...


class AskClientFactory(Protocol):
    """`factory(config, client_id=...)` → an async context manager that connects on enter and closes on exit."""

    def __call__(self, config: MqttConfig, client_id: str | None = None) -> AbstractAsyncContextManager[AskClient]: ...
