"""Flow control for received messages: when the client stops reading its socket, and when it reads again.

Pure: it sees only the queue depth and whether an acknowledgement is awaited, and answers what to do with the
socket; `MqttClient` does it. Reading stops while the queue is full, so TCP flow control pushes back to the broker
instead of memory growing (QoS 0, MQTT 3.1.1; MQTT 5's Receive Maximum already bounds QoS 1).
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
    """Pause reading while the queue holds `queue_max` messages; resume at half full.

    Never paused while a SUBACK or PUBACK is awaited: it queues behind the messages on the same socket, and a caller
    that consumes only after `await subscribe()` (or `await publish()`) would otherwise wait for ever (e.g. a restart
    into a session holding more than queue_max messages). The overshoot meanwhile is bounded by the broker: Receive
    Maximum (MQTT 5) or its in-flight limit (3.1.1) for QoS 1, one round trip for QoS 0.
    """

    queue_max: int
    paused: bool = False

    def update(self, depth: int, awaiting: bool) -> ReadAction:
        """The action after anything that changes `depth` (messages queued or taken) or `awaiting` (an
        acknowledgement now awaited or no longer)."""
        if not self.paused:
            if depth >= self.queue_max and not awaiting:
                self.paused = True
                return ReadAction.PAUSE
            return ReadAction.KEEP
        # Resume at half full, not at max-1, so the socket is not toggled on every message.
        if awaiting or depth <= self.queue_max // 2:
            self.paused = False
            return ReadAction.RESUME
        return ReadAction.KEEP

    def reset(self) -> None:
        """A new socket is read from the start, whatever the last one's state was."""
        self.paused = False


__all__ = ["ReadAction", "ReadGate"]
