"""The size of the PUBLISH packet a message makes (pure): what a broker's Maximum Packet Size is compared with.

MQTT 5 section 3.1.2.11.4: a client must not send a packet larger than the Maximum Packet Size the server gave in
CONNACK; a broker that receives one drops the connection (Mosquitto's `max_packet_size`, for 3.1.1 clients too).
The size counts the whole packet: fixed header, variable header (topic, packet id, properties) and payload.
"""

from __future__ import annotations

# MQTT's variable byte integer (remaining length, property length) holds at most 4 bytes of 7 bits each.
_VARINT_MAX = 268_435_455


def varint_size(value: int) -> int:
    """Bytes of `value` as an MQTT variable byte integer (1 to 4); ValueError beyond what 4 bytes hold."""
    if not 0 <= value <= _VARINT_MAX:
        raise ValueError(f"{value} does not fit an MQTT variable byte integer")
    size = 1
    while value >= 128:
        value //= 128
        size += 1
    return size


def publish_packet_size(topic: str, payload_bytes: int, qos: int, properties_bytes: int | None) -> int:
    """Bytes of the PUBLISH packet: `properties_bytes` is the packed property block of an MQTT 5 packet (its length
    prefix included; 1 for no properties), None for MQTT 3.1.1, which has none."""
    remaining = 2 + len(topic.encode("utf-8", "surrogatepass")) + (2 if qos > 0 else 0) + payload_bytes
    remaining += properties_bytes or 0
    return 1 + varint_size(min(remaining, _VARINT_MAX)) + remaining


__all__ = ["publish_packet_size", "varint_size"]
