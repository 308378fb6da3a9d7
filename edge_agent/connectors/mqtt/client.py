"""Async MQTT client: one facade over paho-mqtt 2, used by ingest, the outbox and report requests.

Bridge to asyncio: paho's socket callbacks (`on_socket_open`, `on_socket_register_write`, ...) hand its socket to
the event loop (`add_reader`/`add_writer`), so every paho call and callback runs on the loop's own thread. No second
thread, no locks crossed, and a received message goes into an asyncio queue without `call_soon_threadsafe` per
message. Only the blocking TCP connect + TLS handshake runs in a worker thread (`asyncio.to_thread`).

Delivery guarantees:
- Persistent session: MQTT 5 `clean_start=False` with a session expiry, MQTT 3.1.1 `clean_session=False`, and a
  stable client id, so the broker keeps QoS 1 messages queued while the agent is away.
- `manual_ack=True`: the PUBACK for a received message goes out only when the caller runs `await msg.ack()`, i.e.
  after its record is committed. A crash in between means the broker redelivers; the store deduplicates.
- Backpressure, two layers: MQTT 5 Receive Maximum (= `queue_max`) stops the broker from sending more unacknowledged
  QoS 1 messages than the queue holds; beyond that (QoS 0, MQTT 3.1.1, and large payloads) the client stops reading
  the socket while the queue is full in messages or in payload bytes (`queue_max_bytes`, `flow.ReadGate`), so TCP
  flow control pushes back to the broker instead of memory growing. Nothing is dropped.
- Reconnects by itself with exponential backoff and jitter; resubscribes every filter on every connect.

One module, over 450 lines, because it is one unit: the facade wraps paho once, and its connect, socket reads,
acknowledgements and reconnect loop all drive that one paho client on the loop's thread and share its state; split
apart, each part would reach into the others' internals.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

import paho.mqtt.client as paho
import structlog
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode, MQTTProtocolVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode
from paho.mqtt.subscribeoptions import SubscribeOptions

from edge_agent.base.backoff import backoff_delay
from edge_agent.base.types import utcnow
from edge_agent.config.mqtt import MqttConfig
from edge_agent.connectors.mqtt.errors import (
    MqttConnectError,
    MqttError,
    MqttPacketTooLarge,
    MqttPublishError,
    MqttSubscribeError,
    MqttTimeoutError,
)
from edge_agent.connectors.mqtt.flow import ReadAction, ReadGate
from edge_agent.connectors.mqtt.message import MqttMessage
from edge_agent.connectors.mqtt.metrics import (
    CONNECT_FAILURES,
    CONNECTS,
    DISCONNECTS,
    QUEUE_BYTES,
    QUEUE_DEPTH,
    RECEIVED,
    STALE_ACKS,
)
from edge_agent.connectors.mqtt.packet import publish_packet_size
from edge_agent.connectors.mqtt.tls import build_tls_context

log = structlog.get_logger(component="mqtt")


@dataclass(frozen=True)
class WillMessage:
    """The Will a broker publishes for us when the connection drops without a DISCONNECT."""

    topic: str
    payload: bytes
    qos: int = 1
    retain: bool = False


T = TypeVar("T")

# A readable socket is drained up to this many packets per event-loop turn: large enough to amortise the selector
# call over many small messages, small enough that other tasks (the store commit, acks) get the loop every ~ms.
READ_BURST = 256
# loop_misc (keepalive pings, ping timeouts) needs calling about once a second; keepalives are >= 5 s.
MISC_INTERVAL_S = 1.0
# A CONNACK normally takes milliseconds; a broker that accepts TCP but never answers is treated as down.
CONNACK_TIMEOUT_S = 10.0
# Graceful DISCONNECT: the packet is tiny; past this the socket is dropped anyway (the session survives either way).
DISCONNECT_TIMEOUT_S = 2.0
# MQTT 5 Receive Maximum is a 16-bit field.
RECEIVE_MAXIMUM_CAP = 65535
# Advertised Maximum Packet Size = mqtt.max_payload_bytes + this: a PUBLISH's own bytes (fixed header 5, topic 2 + its
# length, packet id 2, properties: response topic, correlation data, user properties) fit in 16 KiB many times over
# for a plant topic (< 1 KiB), so the broker drops only messages whose payload we would refuse anyway.
PACKET_HEADROOM_BYTES = 16 * 1024
# The largest packet MQTT can encode (a 4-byte Remaining Length, plus the fixed header).
MQTT_MAX_PACKET_BYTES = 268_435_460


async def _with_timeout(awaitable: Awaitable[T], timeout: float | None, what: str) -> T:
    """The one timeout helper: `None` waits forever; a timeout becomes `MqttTimeoutError` naming the operation.

    `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` swallows a cancellation that lands while the inner
    future completes, which left a cancelled connection task running on after `close()`.
    """
    try:
        async with asyncio.timeout(timeout):
            return await awaitable
    except TimeoutError as exc:
        raise MqttTimeoutError(f"{what} timed out after {timeout}s") from exc


class MqttClient:
    """Async context manager over one paho client. Reconnects by itself; see the module docstring for guarantees.

    async with MqttClient(config) as client:
        await client.subscribe("plant/+/mes/#", qos=1)
        async for msg in client.messages():
            ...
            await msg.ack()
    """

    def __init__(
        self,
        config: MqttConfig,
        client_id: str | None = None,
        *,
        clean_start: bool = False,
        will: Callable[[], WillMessage] | None = None,
    ) -> None:
        self._config = config
        self.client_id = client_id or config.client_id
        self._v5 = config.protocol == "5"
        # A Sparkplug host's session (spec 3.0: Clean Start true, Session Expiry 0) instead of the persistent one;
        # `will` is called before every CONNECT, so each connection's Will may carry that connection's timestamp.
        self._clean_start = clean_start
        self._will = will
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._paho = self._make_paho()
        self._queue: asyncio.Queue[MqttMessage] = asyncio.Queue()
        self._gate = ReadGate(config.queue_max, config.receive_queue_bytes)
        self._queued_bytes = 0  # payload bytes in _queue: the read gate's second bound
        self._subscriptions: dict[str, int] = {}
        self._pending_publishes: dict[int, asyncio.Future[None]] = {}
        self._pending_subscribes: dict[int, asyncio.Future[list[ReasonCode]]] = {}
        self._connected = asyncio.Event()
        self._disconnected = asyncio.Event()
        self._disconnected.set()
        self._connack: asyncio.Future[None] | None = None
        self._generation = 0
        self._fd: int | None = None
        self._sock: Any = None
        self._progress = 0  # bumped by every paho callback; tells the read burst when a read yielded nothing
        self._closing = False
        self._tasks: list[asyncio.Task[None]] = []
        self.last_error: BaseException | None = None
        self.session_present = False
        # The broker's Maximum Packet Size from the last CONNACK (MQTT 5; None: it announced none).
        self.broker_max_packet: int | None = None
        self._metric_labels = {"client": self.client_id}
        # Resolved once: .labels() per message costs ~8 µs.
        self._received = RECEIVED.labels(**self._metric_labels)
        self._depth = QUEUE_DEPTH.labels(**self._metric_labels)
        self._bytes_gauge = QUEUE_BYTES.labels(**self._metric_labels)

    # --- life cycle ------------------------------------------------------------------------------------------

    def _make_paho(self) -> paho.Client:
        protocol = MQTTProtocolVersion.MQTTv5 if self._v5 else MQTTProtocolVersion.MQTTv311
        client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            # MQTT 5 takes clean_start at connect(); MQTT 3.1.1 takes clean_session here.
            clean_session=None if self._v5 else self._clean_start,
            protocol=protocol,
            manual_ack=True,
        )
        if self._config.username is not None:
            password = self._config.password.get_secret_value() if self._config.password is not None else None
            client.username_pw_set(self._config.username, password)
        context = build_tls_context(self._config)
        if context is not None:
            client.tls_set_context(context)
        # Outgoing QoS 1 in flight at once: enough to keep a report burst moving, bounded so a dead link does not
        # hold thousands of unacknowledged messages in paho's memory (the outbox keeps them on disk anyway).
        client.max_inflight_messages_set(100)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        client.on_socket_open = self._on_socket_open
        client.on_socket_close = self._on_socket_close
        client.on_socket_register_write = self._on_socket_register_write
        client.on_socket_unregister_write = self._on_socket_unregister_write
        return client

    async def __aenter__(self) -> Self:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._closing = False
        self._tasks = [
            asyncio.create_task(self._supervise(), name=f"mqtt-connection:{self.client_id}"),
            asyncio.create_task(self._misc_loop(), name=f"mqtt-keepalive:{self.client_id}"),
        ]
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Disconnect cleanly (the broker keeps the session) and stop the background tasks."""
        if self._closing:
            return
        self._closing = True
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            try:
                await task
            except asyncio.CancelledError:
                pass
        self._tasks = []
        if self._connected.is_set():
            self._paho.disconnect()
            try:
                await _with_timeout(self._disconnected.wait(), DISCONNECT_TIMEOUT_S, "DISCONNECT")
            except MqttTimeoutError:
                log.warning("disconnect_timeout", client=self.client_id)
        self._drop_socket()
        closed = MqttError("MQTT client closed")
        for pending in (self._pending_publishes, self._pending_subscribes):
            for future in pending.values():
                if not future.done():
                    future.set_exception(closed)

    async def _supervise(self) -> None:
        """Connect, wait for the connection to drop, reconnect after a jittered backoff; forever."""
        attempt = 0
        while True:
            try:
                await self._connect_once()
            except Exception as exc:  # anything, not only MqttError: this task must outlive every failed attempt
                if not isinstance(exc, MqttError):
                    log.error("connect_crashed", client=self.client_id, error=repr(exc), exc_info=True)
                self.last_error = exc
                CONNECT_FAILURES.labels(**self._metric_labels).inc()
                self._drop_socket()
                delay = backoff_delay(attempt, self._config.reconnect_min_s, self._config.reconnect_max_s)
                attempt += 1
                log.warning("connect_failed", client=self.client_id, error=str(exc), retry_in_s=round(delay, 2))
                await asyncio.sleep(delay)
                continue
            attempt = 0
            await self._disconnected.wait()
            self._drop_socket()
            delay = backoff_delay(0, self._config.reconnect_min_s, self._config.reconnect_max_s)
            await asyncio.sleep(delay)

    async def _connect_once(self) -> None:
        assert self._loop is not None
        self._connack = self._loop.create_future()
        properties = None
        if self._v5:
            properties = Properties(PacketTypes.CONNECT)
            properties.SessionExpiryInterval = 0 if self._clean_start else self._config.session_expiry_s
            properties.ReceiveMaximum = min(self._config.queue_max, RECEIVE_MAXIMUM_CAP)
            # The broker drops (never sends) a larger message: an oversize payload never reaches our memory.
            properties.MaximumPacketSize = min(
                self._config.max_payload_bytes + PACKET_HEADROOM_BYTES, MQTT_MAX_PACKET_BYTES
            )
        if self._will is not None:
            will = self._will()
            self._paho.will_set(will.topic, will.payload, will.qos, will.retain)
        # Cleared before the socket exists: a drop right after CONNACK must not be lost to a later clear().
        self._disconnected.clear()
        try:
            # Blocking TCP connect + TLS handshake: off the loop. paho calls on_socket_open from that thread.
            rc = await asyncio.to_thread(
                self._paho.connect,
                self._config.host,
                self._config.port,
                self._config.keepalive_s,
                clean_start=self._clean_start if self._v5 else paho.MQTT_CLEAN_START_FIRST_ONLY,
                properties=properties,
            )
        except (OSError, ValueError) as exc:  # ssl.SSLError (incl. certificate verification) is an OSError
            self._disconnected.set()
            raise MqttConnectError(f"cannot connect to {self._config.host}:{self._config.port}: {exc}") from exc
        if rc != MQTTErrorCode.MQTT_ERR_SUCCESS:
            self._disconnected.set()
            raise MqttConnectError(
                f"cannot connect to {self._config.host}:{self._config.port}: {paho.error_string(rc)}"
            )
        try:
            await _with_timeout(self._connack, CONNACK_TIMEOUT_S, "CONNACK")
        except MqttError:
            self._disconnected.set()
            raise

    async def _misc_loop(self) -> None:
        while True:
            self._paho.loop_misc()
            await asyncio.sleep(MISC_INTERVAL_S)

    def _drop_socket(self) -> None:
        """Forget the event-loop registration of a socket paho has closed or will not use again."""
        if self._fd is not None and self._loop is not None:
            self._loop.remove_reader(self._fd)
            self._loop.remove_writer(self._fd)
        self._fd = None
        self._sock = None

    # --- socket callbacks (paho → event loop) -----------------------------------------------------------------

    def _in_loop(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run fn on the loop thread: now if we are on it, else via call_soon_threadsafe (paho's connect thread)."""
        assert self._loop is not None
        if threading.get_ident() == self._loop_thread:
            fn(*args)
        else:
            self._loop.call_soon_threadsafe(fn, *args)

    def _on_socket_open(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        _no_delay(sock)
        self._in_loop(self._register_socket, sock)

    def _register_socket(self, sock: Any) -> None:
        assert self._loop is not None
        self._drop_socket()
        self._sock = sock
        self._fd = sock.fileno()
        self._gate.reset()
        self._loop.add_reader(self._fd, self._on_readable)
        if self._closing:
            # A connect that was already under way in its thread when close() ran: let paho finish it politely
            # (DISCONNECT is written by the writer callback, then paho closes the socket and we unregister).
            self._paho.disconnect()

    def _on_socket_close(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        self._in_loop(self._unregister_socket, sock.fileno())

    def _unregister_socket(self, fd: int) -> None:
        if fd == self._fd:
            self._drop_socket()

    def _on_socket_register_write(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        self._in_loop(self._add_writer, sock.fileno())

    def _add_writer(self, fd: int) -> None:
        assert self._loop is not None
        if fd == self._fd:
            self._loop.add_writer(fd, self._on_writable)

    def _on_socket_unregister_write(self, client: paho.Client, userdata: Any, sock: Any) -> None:
        self._in_loop(self._remove_writer, sock.fileno())

    def _remove_writer(self, fd: int) -> None:
        assert self._loop is not None
        if fd == self._fd:
            self._loop.remove_writer(fd)

    def _on_readable(self) -> None:
        for _ in range(READ_BURST):
            before = self._progress
            try:
                rc = self._paho.loop_read()
            except Exception as exc:  # paho raising out of a read means the connection is unusable
                log.warning("read_failed", client=self.client_id, error=repr(exc))
                self._paho.disconnect()
                return
            if rc != MQTTErrorCode.MQTT_ERR_SUCCESS or self._gate.paused or self._fd is None:
                return
            # TLS: bytes already decrypted into the SSL object do not make the socket readable again.
            if self._progress == before and not self._ssl_pending():
                return
        if self._ssl_pending() and self._loop is not None:
            self._loop.call_soon(self._on_readable)

    def _ssl_pending(self) -> bool:
        return isinstance(self._sock, ssl.SSLSocket) and self._sock.pending() > 0

    def _on_writable(self) -> None:
        try:
            self._paho.loop_write()
        except Exception as exc:
            log.warning("write_failed", client=self.client_id, error=repr(exc))
            self._paho.disconnect()

    # --- protocol callbacks ----------------------------------------------------------------------------------

    def _on_connect(
        self, client: paho.Client, userdata: Any, flags: Any, reason: ReasonCode, properties: Properties | None
    ) -> None:
        self._progress += 1
        if reason.is_failure:
            error = MqttConnectError(f"broker refused the connection: {reason}")
            if self._connack is not None and not self._connack.done():
                self._connack.set_exception(error)
            return
        self._generation += 1
        self.session_present = bool(flags.session_present)
        self.broker_max_packet = getattr(properties, "MaximumPacketSize", None) if self._v5 else None
        self._connected.set()
        CONNECTS.labels(**self._metric_labels).inc()
        log.info(
            "connected",
            client=self.client_id,
            host=self._config.host,
            port=self._config.port,
            protocol=self._config.protocol,
            session_present=self.session_present,
        )
        if self._subscriptions:
            self._send_subscribe(dict(self._subscriptions), resubscribe=True)
        if self._connack is not None and not self._connack.done():
            self._connack.set_result(None)

    def _on_disconnect(
        self, client: paho.Client, userdata: Any, flags: Any, reason: ReasonCode, properties: Properties | None
    ) -> None:
        self._progress += 1
        was_connected = self._connected.is_set()
        self._connected.clear()
        self._disconnected.set()
        if was_connected:
            DISCONNECTS.labels(**self._metric_labels).inc()
            log.info("disconnected", client=self.client_id, reason=str(reason))
        if self._connack is not None and not self._connack.done():
            self._connack.set_exception(MqttConnectError(f"connection closed before CONNACK: {reason}"))
        # SUBACKs for this connection will never come; `subscribe()` retries on the next connection.
        for future in self._pending_subscribes.values():
            if not future.done():
                future.cancel()

    def _on_message(self, client: paho.Client, userdata: Any, message: paho.MQTTMessage) -> None:
        self._progress += 1
        try:
            topic = message.topic
        except UnicodeDecodeError:
            # Brokers reject non-UTF-8 topics; if one gets through there is nothing to route it by. Ack and drop.
            log.warning("invalid_topic_dropped", client=self.client_id, mid=message.mid)
            self._paho.ack(message.mid, message.qos)
            return
        props = message.properties if self._v5 else None
        payload = bytes(message.payload)
        self._queued_bytes += len(payload)
        self._queue.put_nowait(
            MqttMessage(
                topic=topic,
                payload=payload,
                qos=message.qos,
                retain=bool(message.retain),
                mid=message.mid,
                received_time=utcnow(),
                response_topic=getattr(props, "ResponseTopic", None),
                correlation_data=getattr(props, "CorrelationData", None),
                user_properties=tuple(getattr(props, "UserProperty", ()) or ()),
                content_type=getattr(props, "ContentType", None),
                generation=self._generation,
                _acker=self._ack,
            )
        )
        self._received.inc()
        self._update_reading()

    def _on_publish(
        self, client: paho.Client, userdata: Any, mid: int, reason: ReasonCode, properties: Properties | None
    ) -> None:
        self._progress += 1
        future = self._pending_publishes.get(mid)
        if future is None or future.done():
            return
        if reason.is_failure:
            future.set_exception(MqttPublishError(f"broker refused message {mid}: {reason}"))
        else:
            future.set_result(None)

    def _on_subscribe(
        self, client: paho.Client, userdata: Any, mid: int, reasons: list[ReasonCode], properties: Properties | None
    ) -> None:
        self._progress += 1
        future = self._pending_subscribes.get(mid)
        if future is not None and not future.done():
            future.set_result(reasons)

    # --- flow control ----------------------------------------------------------------------------------------

    def _update_reading(self) -> None:
        """Apply the read gate's decision (`flow.ReadGate`) to the socket's event-loop registration."""
        depth = self._queue.qsize()
        awaiting = bool(self._pending_subscribes or self._pending_publishes)
        action = self._gate.update(depth, awaiting, self._queued_bytes)
        if action is ReadAction.PAUSE:
            if self._fd is not None and self._loop is not None:
                self._loop.remove_reader(self._fd)
            log.debug("reading_paused", client=self.client_id, queued=depth, queued_bytes=self._queued_bytes)
        elif action is ReadAction.RESUME and self._fd is not None and self._loop is not None:
            self._loop.add_reader(self._fd, self._on_readable)
            self._loop.call_soon(self._on_readable)  # TLS may hold decrypted bytes the selector cannot see

    # --- public API ------------------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    async def wait_connected(self, timeout: float | None = None) -> None:
        """Wait for a live connection. On timeout the error names the last connection failure as its cause."""
        try:
            async with asyncio.timeout(timeout):
                await self._connected.wait()
        except TimeoutError as exc:
            raise MqttTimeoutError(
                f"no connection to {self._config.host}:{self._config.port} after {timeout}s"
                + (f" (last error: {self.last_error})" if self.last_error else "")
            ) from (self.last_error or exc)

    async def wait_disconnected(self) -> None:
        """Return once the current connection is lost (at once when there is none)."""
        await self._disconnected.wait()

    async def mirror_ready(self, ready: asyncio.Event) -> None:
        """Keep a component's ready event equal to "connected" (the supervisor reports it degraded meanwhile)."""
        while True:
            await self._connected.wait()
            ready.set()
            await self._disconnected.wait()
            ready.clear()

    async def subscribe(self, topic_filter: str, qos: int = 1, timeout: float | None = None) -> None:
        """Subscribe now and on every future connection. Returns once the broker granted it (SUBACK)."""
        self._subscriptions[topic_filter] = qos

        async def granted() -> None:
            while True:
                await self._connected.wait()
                try:
                    reasons = await self._send_subscribe({topic_filter: qos}, resubscribe=False)
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    assert task is not None  # a coroutine runs in a task
                    if self._closing or task.cancelling():
                        raise
                    continue  # the connection dropped before the SUBACK; the next connection subscribes again
                failed = [r for r in reasons if r.is_failure]
                if failed:
                    self._subscriptions.pop(topic_filter, None)
                    raise MqttSubscribeError(f"broker refused subscription {topic_filter!r}: {failed[0]}")
                return

        await _with_timeout(granted(), timeout, f"SUBSCRIBE {topic_filter!r}")

    def _send_subscribe(self, filters: dict[str, int], resubscribe: bool) -> asyncio.Future[list[ReasonCode]]:
        assert self._loop is not None
        future: asyncio.Future[list[ReasonCode]] = self._loop.create_future()
        topics: list[tuple[str, SubscribeOptions]] | list[tuple[str, int]]
        if self._v5:
            topics = [(f, SubscribeOptions(qos=q)) for f, q in filters.items()]
        else:
            topics = list(filters.items())
        rc, mid = self._paho.subscribe(topics)
        if rc != MQTTErrorCode.MQTT_ERR_SUCCESS or mid is None:
            future.cancel()
            return future
        self._pending_subscribes[mid] = future
        future.add_done_callback(lambda f: self._forget(self._pending_subscribes, mid))
        self._update_reading()
        if resubscribe:
            future.add_done_callback(lambda f: self._log_resubscribe(f, list(filters)))
        return future

    def _log_resubscribe(self, future: asyncio.Future[list[ReasonCode]], filters: list[str]) -> None:
        if future.cancelled():
            return
        # Not strict: a broker's SUBACK is peer data, and a short one must not raise in this callback.
        failed = [(f, str(r)) for f, r in zip(filters, future.result(), strict=False) if r.is_failure]
        if failed:
            self.last_error = MqttSubscribeError(f"broker refused resubscription: {failed}")
            log.error("resubscribe_refused", client=self.client_id, refused=failed)
        else:
            log.debug("resubscribed", client=self.client_id, filters=filters)

    async def publish(
        self,
        topic: str,
        payload: bytes | str,
        qos: int = 1,
        retain: bool = False,
        response_topic: str | None = None,
        correlation_data: bytes | None = None,
        content_type: str | None = None,
        user_properties: list[tuple[str, str]] | None = None,
        timeout: float | None = None,
    ) -> None:
        """Publish; for QoS 1/2 return after the broker acknowledged it. While disconnected, a QoS 1/2 message waits
        in paho and goes out (again) on reconnect; QoS 0 while disconnected raises."""
        properties = None
        if self._v5 and (response_topic or correlation_data is not None or content_type or user_properties):
            properties = Properties(PacketTypes.PUBLISH)
            if response_topic:
                properties.ResponseTopic = response_topic
            if correlation_data is not None:
                properties.CorrelationData = correlation_data
            if content_type:
                properties.ContentType = content_type
            if user_properties:
                properties.UserProperty = list(user_properties)
        self._check_packet_size(topic, payload, qos, properties)
        try:
            info = self._paho.publish(topic, payload, qos=qos, retain=retain, properties=properties)
        except ValueError as exc:
            raise MqttPublishError(f"cannot publish to {topic!r}: {exc}") from exc
        queued_offline = info.rc == MQTTErrorCode.MQTT_ERR_NO_CONN and qos > 0
        if info.rc != MQTTErrorCode.MQTT_ERR_SUCCESS and not queued_offline:
            raise MqttPublishError(f"cannot publish to {topic!r}: {paho.error_string(info.rc)}")
        if qos == 0 or (not queued_offline and info.is_published()):
            return
        assert self._loop is not None
        future: asyncio.Future[None] = self._loop.create_future()
        self._pending_publishes[info.mid] = future
        self._update_reading()
        try:
            await _with_timeout(future, timeout, f"PUBLISH {topic!r}")
        finally:
            self._forget(self._pending_publishes, info.mid)

    @property
    def max_packet_bytes(self) -> int | None:
        """The largest packet this client sends: the broker's announced Maximum Packet Size or `mqtt.max_packet_bytes`
        (for a 3.1.1 broker, which cannot announce one), whichever is smaller; None when neither is known."""
        limits = [x for x in (self.broker_max_packet, self._config.max_packet_bytes) if x is not None]
        return min(limits) if limits else None

    def _check_packet_size(self, topic: str, payload: bytes | str, qos: int, properties: Properties | None) -> None:
        limit = self.max_packet_bytes
        if limit is None:
            return
        size = publish_packet_size(
            topic,
            len(payload.encode() if isinstance(payload, str) else payload),
            qos,
            (len(properties.pack()) if properties is not None else 1) if self._v5 else None,
        )
        if size > limit:
            raise MqttPacketTooLarge(f"PUBLISH to {topic!r} is {size} bytes, over the broker's {limit}-byte maximum")

    def _forget(self, pending: dict[int, Any], mid: int) -> None:
        pending.pop(mid, None)
        self._update_reading()

    async def messages(self) -> AsyncIterator[MqttMessage]:
        """Received messages, in arrival order, until the client is closed."""
        while True:
            yield await self.receive()

    async def receive(self) -> MqttMessage:
        message = await self._queue.get()
        self._queued_bytes -= len(message.payload)
        self._after_take()
        return message

    async def receive_batch(self, max_messages: int) -> list[MqttMessage]:
        """Wait for at least one message, then take whatever else is already queued, up to max_messages."""
        batch = [await self._queue.get()]
        while len(batch) < max_messages and not self._queue.empty():
            batch.append(self._queue.get_nowait())
        self._queued_bytes -= sum(len(m.payload) for m in batch)
        self._after_take()
        return batch

    def _after_take(self) -> None:
        self._depth.set(self._queue.qsize())
        self._bytes_gauge.set(self._queued_bytes)
        self._update_reading()

    def _ack(self, message: MqttMessage) -> None:
        if message.qos == 0:
            return
        if message.generation != self._generation or not self._connected.is_set():
            # The packet id belongs to a connection that is gone; the broker redelivers on the new one.
            STALE_ACKS.labels(**self._metric_labels).inc()
            return
        self._paho.ack(message.mid, message.qos)


def _no_delay(sock: Any) -> None:
    """Small packets leave at once (TCP_NODELAY): with Nagle's algorithm a PUBLISH written while the last one is
    unacknowledged waits for the peer's delayed ACK (~40 ms): one person asking over MQTT got an answer every 88 ms
    with Nagle on in client and broker, every 17 ms with it off in both."""
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (AttributeError, OSError):  # not a TCP socket (a Unix socket, a websocket wrapper)
        pass


__all__ = ["MqttClient", "WillMessage"]
