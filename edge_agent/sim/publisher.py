"""The simulator's MQTT side: a plain paho client that publishes MES JSON and log lines at QoS 1.

Deliberately not the agent's `edge_agent.connectors.mqtt` facade: the simulator stands in for the plant's MES, a
separate
system, and must not share the code under test.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import Sequence
from types import TracebackType

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from edge_agent.config import MqttConfig
from edge_agent.sim.messages import Message

# A local broker answers in milliseconds; ten seconds means it is gone, and the simulator says so.
CONNECT_TIMEOUT_S = 10.0
PUBACK_TIMEOUT_S = 30.0


class SimPublisherError(Exception):
    pass


class MqttPublisher:
    def __init__(self, config: MqttConfig, client_id: str) -> None:
        self._config = config
        protocol = paho.MQTTv5 if config.protocol == "5" else paho.MQTTv311
        self._client = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=protocol)
        if config.username is not None:
            password = config.password.get_secret_value() if config.password is not None else None
            self._client.username_pw_set(config.username, password)
        if config.tls is not None:
            tls = config.tls
            self._client.tls_set(
                ca_certs=str(tls.ca_file) if tls.ca_file else None,
                certfile=str(tls.cert_file) if tls.cert_file else None,
                keyfile=str(tls.key_file) if tls.key_file else None,
                cert_reqs=ssl.CERT_REQUIRED,
            )
            self._client.tls_insecure_set(not tls.check_hostname)
        self._connected = threading.Event()
        self._client.on_connect = self._on_connect

    def _on_connect(self, client: paho.Client, userdata: object, flags: object, reason: object, props: object) -> None:
        if not getattr(reason, "is_failure", False):
            self._connected.set()

    async def __aenter__(self) -> MqttPublisher:
        try:
            self._client.connect_async(self._config.host, self._config.port, keepalive=self._config.keepalive_s)
            self._client.loop_start()
            if not await asyncio.to_thread(self._connected.wait, CONNECT_TIMEOUT_S):
                raise SimPublisherError(f"no MQTT connection to {self._config.host}:{self._config.port}")
        except BaseException:
            self._client.loop_stop()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    async def publish_many(self, messages: Sequence[Message]) -> None:
        """Publish all at QoS 1 and return once the broker acknowledged every one."""
        if not messages:
            return
        infos = [self._client.publish(m.topic, m.payload, qos=1) for m in messages]

        def wait_all() -> None:
            for info in infos:
                info.wait_for_publish(PUBACK_TIMEOUT_S)

        try:
            await asyncio.to_thread(wait_all)
        except (RuntimeError, ValueError) as exc:
            raise SimPublisherError(f"publish failed: {exc}") from exc
