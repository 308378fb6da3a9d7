"""A hostile broker user: a seeded stream of garbage mixed with numbered good messages, and the check of what the
agent made of it.

It feeds a running agent (`edge-agent run`) through the broker, as anyone with publish rights could: on every ingest
route, on the report request topic and on the sign-off topic. Then it reads the agent's store and the replies it got,
and says per class of input what happened: good messages stored exactly once, bad ones quarantined or answered with an
error, nothing published outside the requester's reply namespace. `bench.hostile` and tests/test_agent_hostile.py
both run it.

The garbage itself, class by class, is made in `garbage`. Like the simulator's publisher it is a plain paho client,
not the agent's `edge_agent.connectors.mqtt`: the attacker must not share the code under test.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from pydantic import BaseModel

from edge_agent.connectors.mqtt.client import PACKET_HEADROOM_BYTES
from edge_agent.sim.garbage import bad_json_payloads, bad_requests, bad_signoffs, bad_text_payloads
from edge_agent.store import Store

Channel = Literal["mes", "log", "request", "signoff"]
# What the agent must do with one input: store it once, quarantine it, answer it on its reply topic, or publish
# nothing at all (a reply topic outside the requester's namespace). `dropped`: larger than the Maximum Packet Size
# the agent's clients advertise (mqtt.max_payload_bytes + PACKET_HEADROOM_BYTES), so the broker drops it before it
# reaches the agent, and nothing may come back.
Expect = Literal["stored", "quarantined", "answered", "silent", "dropped"]

# Replies the report service sends to a request or sign-off it will not act on.
REFUSALS = frozenset({"error", "refused", "failed"})
# A local broker and store answer in milliseconds; this is how long the agent gets to settle a whole stream.
SETTLE_TIMEOUT_S = 120.0
PUBACK_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class HostileMessage:
    cls: str
    channel: Channel
    topic: str
    payload: bytes
    expect: Expect
    response_topic: str | None = None
    correlation: bytes | None = None


@dataclass(frozen=True)
class Topics:
    """Where the stream goes, for one site and one run (the run id keeps repeated runs on one store apart)."""

    site: str
    run: str
    user: str = "hostile"

    @property
    def mes_good(self) -> str:
        return f"plant/{self.site}/mes/hostile-{self.run}-good"

    @property
    def mes_bad(self) -> str:
        return f"plant/{self.site}/mes/hostile-{self.run}-bad"

    @property
    def log_good(self) -> str:
        return f"plant/{self.site}/log/hostile-{self.run}-good"

    @property
    def log_bad(self) -> str:
        return f"plant/{self.site}/log/hostile-{self.run}-bad"

    @property
    def request(self) -> str:
        return f"edge/{self.site}/reports/request/{self.user}"

    @property
    def signoff(self) -> str:
        return f"edge/{self.site}/reports/signoff/{self.user}"

    def reply(self, n: int) -> str:
        """Inside the requester's own reply namespace (docs/reports.md)."""
        return f"edge/{self.site}/reports/reply/{self.user}/{self.run}/{n}"

    @property
    def elsewhere(self) -> str:
        """Outside every reply namespace: the agent must never publish here."""
        return f"hostile/{self.run}/elsewhere"


def hostile_stream(topics: Topics, *, seed: int, rounds: int, max_payload_bytes: int) -> list[HostileMessage]:
    """`rounds` rounds, each: one bad input of every class on every channel, and one good MES event and log line.

    Good messages are numbered (MES `n`, log text `hostile-good-<run>-<n>`), so the check can name any one lost.
    """
    rng = random.Random(seed)
    stream: list[HostileMessage] = []
    replies = 0

    def answered(cls: str, channel: Channel, topic: str, payload: bytes) -> HostileMessage:
        nonlocal replies
        replies += 1
        return HostileMessage(cls, channel, topic, payload, "answered", topics.reply(replies), str(replies).encode())

    for n in range(rounds):
        round_: list[HostileMessage] = []
        round_ += [
            HostileMessage(c, "mes", topics.mes_bad, p, "quarantined")
            for c, p in bad_json_payloads(rng, max_payload_bytes)
        ]
        round_ += [
            HostileMessage(c, "log", topics.log_bad, p, "quarantined")
            for c, p in bad_text_payloads(rng, max_payload_bytes)
        ]
        round_ += [answered(c, "request", topics.request, p) for c, p in bad_requests(rng)]
        round_ += [answered(c, "signoff", topics.signoff, p) for c, p in bad_signoffs(rng)]
        # A well-formed request whose reply topic points outside the namespace: the agent must publish nothing.
        misdirected = {
            "request_id": f"m-{topics.run}-{n}",
            "type": "alarm_summary",
            "progress": False,
            "window": {"start": "2026-11-29T06:00:00Z", "end": "2026-11-29T14:00:00Z"},
        }
        round_.append(
            HostileMessage(
                "reply_topic_outside_namespace",
                "request",
                topics.request,
                json.dumps(misdirected).encode(),
                "silent",
                f"{topics.elsewhere}/{n}",
                b"m",
            )
        )
        good = {
            "id": f"hostile-{topics.run}-{n}",
            "asset": "P-101",
            "type": "hostile_check",
            "n": n,
            "ts": datetime.now(UTC).isoformat(),
        }
        round_.append(HostileMessage("good", "mes", topics.mes_good, json.dumps(good).encode(), "stored"))
        round_.append(
            HostileMessage("good", "log", topics.log_good, f"hostile-good-{topics.run}-{n}".encode(), "stored")
        )
        rng.shuffle(round_)
        stream += round_
    limit = max_payload_bytes + PACKET_HEADROOM_BYTES
    return [replace(m, expect="dropped") if len(m.payload) > limit else m for m in stream]


class ClassOutcome(BaseModel):
    """What became of one class of input on one channel."""

    channel: Channel
    cls: str
    tried: int
    handled: int  # stored once / quarantined / answered with a refusal / nothing published, as expected
    lost: int  # good messages not stored (or stored more than once)
    unanswered: int  # requests and sign-offs with no reply, or a reply that was not a refusal


class HostileOutcome(BaseModel):
    classes: list[ClassOutcome]
    stray_publishes: int  # messages the agent published outside the requester's reply namespace
    seconds: float  # from the first publish until everything was settled (or the timeout)

    @property
    def lost(self) -> int:
        return sum(c.lost for c in self.classes)

    @property
    def unanswered(self) -> int:
        return sum(c.unanswered for c in self.classes)

    @property
    def unhandled(self) -> int:
        return sum(c.tried - c.handled for c in self.classes) + self.stray_publishes


@dataclass
class _Inbox:
    """Replies by topic, filled from paho's network thread."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    by_topic: dict[str, list[bytes]] = field(default_factory=dict)

    def add(self, topic: str, payload: bytes) -> None:
        with self.lock:
            self.by_topic.setdefault(topic, []).append(payload)

    def get(self, topic: str) -> list[bytes]:
        with self.lock:
            return list(self.by_topic.get(topic, []))

    def under(self, prefix: str) -> int:
        with self.lock:
            return sum(len(v) for t, v in self.by_topic.items() if t.startswith(prefix))


class HostileClient:
    """A paho MQTT 5 client that publishes the stream at QoS 1 and listens on its reply namespace and `elsewhere`."""

    def __init__(self, host: str, port: int, topics: Topics, client_id: str | None = None) -> None:
        self.topics = topics
        self.inbox = _Inbox()
        self._client = paho.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id or f"hostile-{topics.run}", protocol=paho.MQTTv5
        )
        self._client.on_message = lambda c, u, m: self.inbox.add(m.topic, bytes(m.payload))
        self._host, self._port = host, port

    def __enter__(self) -> HostileClient:
        self._client.connect(self._host, self._port, keepalive=30)
        self._client.loop_start()
        subscribed = [
            self._client.subscribe(f, qos=1)[1]
            for f in (
                f"edge/{self.topics.site}/reports/reply/{self.topics.user}/{self.topics.run}/#",
                f"{self.topics.elsewhere}/#",
            )
        ]
        del subscribed  # the SUBACKs precede any reply on this connection: the broker handles packets in order
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def publish(self, messages: Sequence[HostileMessage]) -> None:
        infos = []
        for m in messages:
            props = None
            if m.response_topic is not None:
                props = Properties(PacketTypes.PUBLISH)
                props.ResponseTopic = m.response_topic
                if m.correlation is not None:
                    props.CorrelationData = m.correlation
            infos.append(self._client.publish(m.topic, m.payload, qos=1, properties=props))
        for info in infos:
            info.wait_for_publish(PUBACK_TIMEOUT_S)


def _stored_good(store: Store, topics: Topics) -> tuple[Counter[int], Counter[int]]:
    """How often each numbered good MES event and log line is in the store."""
    mes: Counter[int] = Counter()
    logs: Counter[int] = Counter()
    prefix = f"hostile-good-{topics.run}-"
    for record in store.records(kinds=["mes_event"], keys=["P-101"]):
        value = record.value
        if isinstance(value, dict) and value.get("id", "").startswith(f"hostile-{topics.run}-"):
            mes[int(value["n"])] += 1
    for record in store.records(kinds=["log_line"], keys=[topics.log_good]):
        text = record.value.get("text", "") if isinstance(record.value, dict) else ""
        if text.startswith(prefix):
            logs[int(text[len(prefix) :])] += 1
    return mes, logs


def _quarantined(store: Store, topic: str) -> int:
    return sum(1 for item in store.quarantined(limit=1_000_000) if item.topic == topic)


def settle(
    client: HostileClient,
    store_path: Path,
    stream: Sequence[HostileMessage],
    *,
    timeout_s: float = SETTLE_TIMEOUT_S,
    tick: Callable[[], None] | None = None,
) -> HostileOutcome:
    """Wait until the agent has dealt with every input of `stream` (or the timeout), then count per class."""
    topics = client.topics
    started = time.monotonic()
    want_good = sum(1 for m in stream if m.expect == "stored") // 2
    want_q = {
        t: sum(1 for m in stream if m.topic == t and m.expect == "quarantined")
        for t in (topics.mes_bad, topics.log_bad)
    }
    want_replies = [m.response_topic for m in stream if m.expect == "answered"]
    with Store(store_path) as store:
        while True:
            mes, logs = _stored_good(store, topics)
            done = (
                len(mes) >= want_good
                and len(logs) >= want_good
                and all(_quarantined(store, t) >= n for t, n in want_q.items())
                and all(client.inbox.get(t) for t in want_replies if t is not None)
            )
            if done or time.monotonic() - started > timeout_s:
                break
            if tick is not None:
                tick()
            time.sleep(0.25)
        seconds = time.monotonic() - started
        # The silent ones: give a misdirected reply as long as a real one took, so a late one would still show.
        time.sleep(1.0)
        mes, logs = _stored_good(store, topics)
        quarantined = {t: _quarantined(store, t) for t in want_q}

    outcomes: dict[tuple[Channel, str], ClassOutcome] = {}
    for m in stream:
        key = (m.channel, m.cls)
        o = outcomes.setdefault(
            key, ClassOutcome(channel=m.channel, cls=m.cls, tried=0, handled=0, lost=0, unanswered=0)
        )
        o.tried += 1
        if m.expect == "answered":
            replies = client.inbox.get(m.response_topic or "")
            refused = len(replies) == 1 and json.loads(replies[0]).get("status") in REFUSALS
            o.handled += int(refused)
            o.unanswered += int(not refused)
        elif m.expect in ("silent", "dropped"):
            o.handled += int(not client.inbox.get(m.response_topic or ""))
    stored: tuple[tuple[Channel, Counter[int]], ...] = (("mes", mes), ("log", logs))
    for channel, counts in stored:
        o = outcomes[(channel, "good")]
        once = sum(1 for n in range(want_good) if counts.get(n) == 1)
        o.handled, o.lost = once, want_good - once
    for channel, topic in (("mes", topics.mes_bad), ("log", topics.log_bad)):
        # Quarantine rows carry the topic, not the class: the count per topic must match exactly.
        ok = quarantined[topic] == want_q[topic]
        for (ch, _), o in outcomes.items():
            if ch == channel and o.cls != "good":
                o.handled = o.tried if ok else 0
    return HostileOutcome(
        classes=sorted(outcomes.values(), key=lambda o: (o.channel, o.cls)),
        stray_publishes=client.inbox.under(topics.elsewhere),
        seconds=round(seconds, 2),
    )


__all__ = [
    "ClassOutcome",
    "HostileClient",
    "HostileMessage",
    "HostileOutcome",
    "Topics",
    "bad_json_payloads",
    "bad_requests",
    "bad_signoffs",
    "bad_text_payloads",
    "hostile_stream",
    "settle",
]
