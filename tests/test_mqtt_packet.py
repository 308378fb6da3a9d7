"""`edge_agent.connectors.mqtt.packet`: a PUBLISH packet's size, checked against the bytes paho itself builds (the
broker-side
boundary, a packet at and one byte over Mosquitto's `max_packet_size`, is in test_mqtt_outbox.py)."""

from __future__ import annotations

import paho.mqtt.client as paho
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from edge_agent.connectors.mqtt.packet import publish_packet_size, varint_size


class TestPublishPacketSize:
    """`publish_packet_size` against paho's own PUBLISH bytes: what the broker's limit is compared with."""

    @staticmethod
    def paho_bytes(topic: str, payload: bytes, qos: int, properties: Properties | None, v5: bool) -> bytes:
        """The packet paho builds for this message (its private builder, with the queueing step captured)."""
        client = paho.Client(
            CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5 if v5 else MQTTProtocolVersion.MQTTv311
        )
        captured: list[bytes] = []

        def queue(command: int, packet: bytes, mid: int, qos: int, info: object = None) -> MQTTErrorCode:
            captured.append(bytes(packet))
            return MQTTErrorCode.MQTT_ERR_SUCCESS

        client._sock = object()  # type: ignore[assignment]  # "connected", so paho builds the packet
        client._packet_queue = queue  # type: ignore[method-assign]
        try:
            client._send_publish(1, topic.encode(), payload, qos, False, False, None, properties)
        finally:
            client._sock = None  # nothing to close when paho's destructor runs
        return captured[0]

    @given(
        topic=st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=80),
        payload=st.binary(max_size=20000),
        qos=st.integers(0, 2),
        v5=st.booleans(),
        correlation=st.none() | st.binary(max_size=64),
        response_topic=st.none() | st.text(min_size=1, max_size=40),
    )
    @settings(max_examples=200, deadline=None)
    def test_equals_the_packet_paho_sends(
        self,
        topic: str,
        payload: bytes,
        qos: int,
        v5: bool,
        correlation: bytes | None,
        response_topic: str | None,
    ) -> None:
        """Property: for any topic, payload, QoS, protocol and reply properties, the size is paho's packet length."""
        properties = None
        if v5 and (correlation is not None or response_topic):
            properties = Properties(PacketTypes.PUBLISH)
            if correlation is not None:
                properties.CorrelationData = correlation
            if response_topic:
                properties.ResponseTopic = response_topic
        block = (len(properties.pack()) if properties is not None else 1) if v5 else None
        expected = len(self.paho_bytes(topic, payload, qos, properties, v5))
        assert publish_packet_size(topic, len(payload), qos, block) == expected

    def test_variable_byte_integer_sizes(self) -> None:
        assert [varint_size(v) for v in (0, 127, 128, 16383, 16384, 2097151, 2097152, 268435455)] == [
            1, 1, 2, 2, 3, 3, 4, 4
        ]  # fmt: skip
        with pytest.raises(ValueError, match="does not fit"):
            varint_size(268435456)
