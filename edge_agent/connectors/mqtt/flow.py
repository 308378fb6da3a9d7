"""Flow control for received messages: when the client stops reading its socket, and when it reads again.

Pure: it sees only the queue's depth and payload bytes and whether an acknowledgement is awaited, and answers what
to do with the socket; `MqttClient` does it. Reading stops while the queue is full, in messages or in bytes, so TCP
flow control pushes back to the broker instead of memory growing (QoS 0, MQTT 3.1.1; MQTT 5's Receive Maximum
bounds QoS 1 in messages, not in bytes: 10 000 messages of 256 KiB would be 2.5 GiB).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class ReadAction(enum.Enum):
    """What the client does with its socket after a `ReadGate.update`."""

    KEEP = "keep"  # as it was: reading, or paused
    PAUSE = "pause"  # stop reading the socket
    RESUME = "resume"  # read the socket again (and drain what TLS may already have decrypted)


@dataclass
class ReadGate:
    """Pause reading while the queue holds `queue_max` messages or `bytes_max` payload bytes; resume once both are
    at half or less.

    Never paused while a SUBACK or PUBACK is awaited: it queues behind the messages on the same socket, and a caller
    that consumes only after `await subscribe()` (or `await publish()`) would otherwise wait for ever (e.g. a restart
    into a session holding more than queue_max messages). The overshoot meanwhile is bounded by the broker: Receive
    Maximum (MQTT 5) or its in-flight limit (3.1.1) for QoS 1, one round trip for QoS 0.
    """

    queue_max: int
    bytes_max: int | None = None
    paused: bool = False

    def update(self, depth: int, awaiting: bool, queued_bytes: int = 0) -> ReadAction:
        """The action after anything that changes `depth` (messages queued or taken), `queued_bytes` (their
        payloads) or `awaiting` (an acknowledgement now awaited or no longer)."""
        bytes_max = self.bytes_max
        if not self.paused:
            full = depth >= self.queue_max or (bytes_max is not None and queued_bytes >= bytes_max)
            if full and not awaiting:
                self.paused = True
                return ReadAction.PAUSE
            return ReadAction.KEEP
        # Resume at half full, not at max-1, so the socket is not toggled on every message.
        half = depth <= self.queue_max // 2 and (bytes_max is None or queued_bytes <= bytes_max // 2)
        if awaiting or half:
            self.paused = False
            return ReadAction.RESUME
        return ReadAction.KEEP

    def reset(self) -> None:
        """A new socket is read from the start, whatever the last one's state was."""
        self.paused = False


__all__ = ["ReadAction", "ReadGate"]
