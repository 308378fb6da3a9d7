"""What the simulator puts on the wire over MQTT: MES JSON and operator log lines, plus deliberately bad messages."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Literal

from edge_agent.sim.plant import LogLine

MalformedKind = Literal["bad_json", "bad_utf8", "schema_mismatch", "oversize"]
MALFORMED_KINDS: tuple[MalformedKind, ...] = ("bad_json", "bad_utf8", "schema_mismatch", "oversize")


@dataclass(frozen=True)
class Message:
    topic: str
    payload: bytes
    malformed: MalformedKind | None = None


def mes_topic(site: str, event_type: str) -> str:
    return f"plant/{site}/mes/{event_type}"


def log_topic(site: str, area: str) -> str:
    return f"plant/{site}/log/{area}"


def encode_mes(site: str, event: dict[str, Any]) -> Message:
    """One MES event as docs/records.md shows it: compact UTF-8 JSON on plant/<site>/mes/<type>."""
    payload = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode()
    return Message(mes_topic(site, event["type"]), payload)


def encode_log(site: str, line: LogLine) -> Message:
    return Message(log_topic(site, line.area), line.render().encode())


class Malformer:
    """Decides, with its own seeded generator, which good messages get a malformed sibling and of which kind.

    Malformed messages are sent in addition to the good stream, never instead of it: the good records of a run are
    the same whatever the share, so a test can check that bad input around good input loses nothing.
    """

    def __init__(self, seed: int, share: float, oversize_bytes: int) -> None:
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"malformed share must be within 0..1, got {share}")
        # Offset seed: a separate stream, so the plant's draws do not depend on the share.
        self._rng = random.Random(seed + 0x5EED)
        self._share = share
        self._oversize_bytes = oversize_bytes

    def sibling(self, good: Message) -> Message | None:
        """A malformed message to send after `good`, or None."""
        if self._share == 0.0 or self._rng.random() >= self._share:
            return None
        is_json = "/mes/" in good.topic
        kinds = MALFORMED_KINDS if is_json else ("bad_utf8", "oversize")
        kind = self._rng.choice(kinds)
        return Message(good.topic, self._payload(kind, good.payload), kind)

    def _payload(self, kind: MalformedKind, good: bytes) -> bytes:
        if kind == "bad_json":
            return good[: max(1, len(good) // 2)]  # cut mid-object: unterminated JSON
        if kind == "bad_utf8":
            return b"\xff\xfe" + good[:40] + b"\xc3\x28"  # 0xFF never occurs in UTF-8; C3 28 is a broken pair
        if kind == "schema_mismatch":
            return json.dumps([json.loads(good)]).encode()  # valid JSON, but an array, not an event object
        return b"x" * self._oversize_bytes
