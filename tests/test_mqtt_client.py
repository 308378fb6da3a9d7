"""MqttClient against a real Mosquitto: delivery, manual ack, persistent sessions, reconnect, TLS, auth,
backpressure."""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from edge_agent.config.mqtt import MqttConfig, TlsConfig
from edge_agent.connectors.mqtt import MqttClient, MqttConnectError, MqttMessage, MqttTimeoutError
from edge_agent.connectors.mqtt.client import PACKET_HEADROOM_BYTES
from tests.fixtures.broker import Broker
from tests.fixtures.tls import make_pki, tls_broker

pytestmark = pytest.mark.broker


def config(broker: Broker, **overrides: object) -> MqttConfig:
    # Fast reconnects: the tests restart brokers and should not wait out production backoffs.
    base: dict[str, object] = {
        "host": broker.host,
        "port": broker.port,
        "reconnect_min_s": 0.05,
        "reconnect_max_s": 0.5,
    }
    return MqttConfig(**{**base, **overrides})


async def receive(client: MqttClient, n: int, timeout: float = 10.0, ack: bool = True) -> list[MqttMessage]:
    out = []
    async with asyncio.timeout(timeout):
        while len(out) < n:
            message = await client.receive()
            if ack:
                await message.ack()
            out.append(message)
    return out


async def nothing_arrives(client: MqttClient, within: float = 0.5) -> bool:
    try:
        await asyncio.wait_for(client.receive(), within)
    except TimeoutError:
        return True
    return False


def disconnects(client_id: str) -> float:
    return REGISTRY.get_sample_value("edge_agent_mqtt_disconnects_total", {"client": client_id}) or 0.0


class TestDelivery:
    async def test_round_trip_keeps_mqtt5_properties(self, broker: Broker) -> None:
        """A QoS 1 publish arrives with payload, response topic, correlation data, content type and user properties."""
        async with (
            MqttClient(config(broker, client_id="sub")) as sub,
            MqttClient(config(broker, client_id="pub")) as pub,
        ):
            await sub.subscribe("edge/s1/#", qos=1, timeout=5)
            await pub.publish(
                "edge/s1/reports/r1",
                b"\x00report",
                qos=1,
                response_topic="edge/s1/replies",
                correlation_data=b"\x01\x02",
                content_type="application/json",
                user_properties=[("lang", "es")],
                timeout=5,
            )
            [message] = await receive(sub, 1)
        assert (message.topic, message.payload, message.qos) == ("edge/s1/reports/r1", b"\x00report", 1)
        assert (message.response_topic, message.correlation_data, message.content_type) == (
            "edge/s1/replies",
            b"\x01\x02",
            "application/json",
        )
        assert message.user_properties == (("lang", "es"),)

    async def test_unacked_message_is_redelivered_on_next_session(self, broker: Broker) -> None:
        """Without `ack()` no PUBACK leaves: the broker delivers the message again to the same client id."""
        async with (
            MqttClient(config(broker, client_id="sub")) as sub,
            MqttClient(config(broker, client_id="pub")) as pub,
        ):
            await sub.subscribe("t/#", timeout=5)
            await pub.publish("t/a", b"m1", timeout=5)
            [first] = await receive(sub, 1, ack=False)
        async with MqttClient(config(broker, client_id="sub")) as sub:
            [again] = await receive(sub, 1)
        async with MqttClient(config(broker, client_id="sub")) as sub:
            assert await nothing_arrives(sub)
        assert (first.payload, again.payload) == (b"m1", b"m1")

    async def test_messages_published_while_away_arrive_on_return(self, broker: Broker) -> None:
        """The persistent session (clean_start off + session expiry) queues QoS 1 messages while the client is gone."""
        async with MqttClient(config(broker, client_id="sub")) as sub:
            await sub.subscribe("t/#", timeout=5)
        async with MqttClient(config(broker, client_id="pub")) as pub:
            for i in range(5):
                await pub.publish("t/a", f"m{i}".encode(), timeout=5)
        async with MqttClient(config(broker, client_id="sub")) as sub:
            await sub.wait_connected(5)
            assert sub.session_present is True
            messages = await receive(sub, 5)
        assert [m.payload for m in messages] == [b"m0", b"m1", b"m2", b"m3", b"m4"]

    async def test_mqtt_311_mode_keeps_its_session(self, broker: Broker) -> None:
        """protocol = "3.1.1" connects with clean_session off: messages sent while away are delivered on return."""
        async with MqttClient(config(broker, client_id="sub", protocol="3.1.1")) as sub:
            await sub.subscribe("t/#", timeout=5)
        async with MqttClient(config(broker, client_id="pub", protocol="3.1.1")) as pub:
            await pub.publish("t/a", b"while-away", timeout=5)
        async with MqttClient(config(broker, client_id="sub", protocol="3.1.1")) as sub:
            [message] = await receive(sub, 1)
            await pub_and_receive(broker, sub)
        assert message.payload == b"while-away"


async def pub_and_receive(broker: Broker, sub: MqttClient) -> None:
    async with MqttClient(config(broker, client_id="pub2", protocol="3.1.1")) as pub:
        await pub.publish("t/live", b"live", timeout=5)
    [live] = await receive(sub, 1)
    assert live.payload == b"live"


class TestNoDelay:
    async def test_packets_leave_without_waiting_for_the_peers_ack(self, broker: Broker) -> None:
        """TCP_NODELAY on our socket (and `set_tcp_nodelay` on the broker we start): with Nagle's algorithm a reply
        written while the last packet was unacknowledged waited out the peer's delayed ACK (~40 ms a question)."""
        async with MqttClient(config(broker, client_id="nodelay")) as client:
            await client.wait_connected(timeout=5)
            assert client._sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert "set_tcp_nodelay true" in (broker.workdir / "mosquitto.conf").read_text()


class TestMaximumPacketSize:
    async def test_the_broker_drops_an_oversize_message_and_our_connection_stays_up(self, broker: Broker) -> None:
        """max_payload_bytes 1024 advertised as Maximum Packet Size 1024 + headroom: a publish beyond it from
        another client never arrives, one within it does, and the subscriber was never disconnected."""
        async with MqttClient(config(broker, client_id="sub-max", max_payload_bytes=1024)) as sub:
            await sub.subscribe("t/#", timeout=5)
            drops = disconnects("sub-max")
            async with MqttClient(config(broker, client_id="pub")) as pub:
                await pub.publish("t/big", b"x" * (1024 + PACKET_HEADROOM_BYTES + 1), timeout=10)
                await pub.publish("t/small", b"y" * 1024, timeout=10)
            (message,) = await receive(sub, 1)
            assert (message.topic, len(message.payload)) == ("t/small", 1024)
            assert await nothing_arrives(sub)
            assert sub.connected
            assert disconnects("sub-max") == drops


class TestReconnect:
    async def test_reconnects_and_resubscribes_after_broker_lost_its_state(
        self, broker: Broker, tmp_path: Path
    ) -> None:
        """A broker restarted without its session store gets the subscriptions again on the new connection."""
        fresh_dir = tmp_path / "fresh"
        fresh_dir.mkdir()
        fresh = Broker(fresh_dir, port=broker.port)  # same address, empty persistence: every session is gone
        async with MqttClient(config(broker, client_id="sub")) as sub:
            await sub.subscribe("t/#", timeout=5)
            broker.stop()
            fresh.start()
            await asyncio.sleep(0.1)
            await sub.wait_connected(10)
            assert sub.session_present is False
            async with MqttClient(config(broker, client_id="pub")) as pub:
                for _ in range(50):  # the resubscribe races our first publish: publish until one lands
                    await pub.publish("t/a", b"after-restart", timeout=5)
                    try:
                        [message] = await receive(sub, 1, timeout=0.2)
                        break
                    except TimeoutError:
                        continue
        fresh.stop()
        assert message.payload == b"after-restart"

    async def test_publish_made_while_broker_down_completes_after_it_returns(self, broker: Broker) -> None:
        """A QoS 1 publish issued during an outage waits in paho and returns once the broker acknowledges it."""
        async with (
            MqttClient(config(broker, client_id="sub")) as sub,
            MqttClient(config(broker, client_id="pub")) as pub,
        ):
            await sub.subscribe("t/#", timeout=5)
            await pub.wait_connected(5)
            broker.stop()
            await asyncio.sleep(0.2)
            publish = asyncio.create_task(pub.publish("t/a", b"during-outage"))
            await asyncio.sleep(0.3)
            assert not publish.done()
            broker.start()
            await asyncio.wait_for(publish, 15)
            [message] = await receive(sub, 1, timeout=15)
        assert message.payload == b"during-outage"

    async def test_ack_of_a_message_from_a_dropped_connection_is_skipped(self, broker: Broker) -> None:
        """After a reconnect the old packet id is meaningless: the stale ack is dropped and the redelivery acked."""
        async with (
            MqttClient(config(broker, client_id="sub")) as sub,
            MqttClient(config(broker, client_id="pub")) as pub,
        ):
            await sub.subscribe("t/#", timeout=5)
            await pub.publish("t/a", b"m", timeout=5)
            [old] = await receive(sub, 1, ack=False)
            broker.restart()
            await asyncio.sleep(0.1)
            [redelivered] = await receive(sub, 1, ack=False, timeout=15)
            assert redelivered.generation == old.generation + 1
            await old.ack()  # stale: skipped
            await redelivered.ack()
        async with MqttClient(config(broker, client_id="sub")) as sub:
            assert await nothing_arrives(sub)


class TestBackpressure:
    async def test_subscribe_completes_behind_a_backlog_larger_than_the_queue(self, broker: Broker) -> None:
        """Reconnecting into a session holding 5x queue_max messages, `await subscribe()` still gets its SUBACK (reading
        is not paused while it waits) and then every queued message arrives."""
        async with MqttClient(config(broker, client_id="sub")) as sub:
            await sub.subscribe("t/#", timeout=5)
        async with MqttClient(config(broker, client_id="pub")) as pub:
            await asyncio.gather(*(pub.publish("t/a", str(i).encode(), timeout=10) for i in range(50)))
        async with MqttClient(config(broker, client_id="sub", queue_max=10)) as sub:
            await sub.subscribe("t/#", timeout=5)
            messages = await receive(sub, 50)
        assert sorted(int(m.payload) for m in messages) == list(range(50))

    async def test_queue_never_exceeds_queue_max_and_nothing_is_lost(self, broker: Broker) -> None:
        """With a slow consumer the client holds at most queue_max messages; the broker keeps the rest for later."""
        async with MqttClient(config(broker, client_id="sub", queue_max=10)) as sub:
            await sub.subscribe("t/#", timeout=5)
            async with MqttClient(config(broker, client_id="pub")) as pub:
                await asyncio.gather(*(pub.publish("t/a", str(i).encode(), timeout=10) for i in range(100)))
            await asyncio.sleep(0.3)
            depths, payloads = [], []
            async with asyncio.timeout(20):
                while len(payloads) < 100:
                    depths.append(sub._queue.qsize())
                    message = await sub.receive()
                    payloads.append(message.payload)
                    await message.ack()
                    await asyncio.sleep(0)
        assert max(depths) <= 10
        assert sorted(int(p) for p in payloads) == list(range(100))

    async def test_queue_is_bounded_in_bytes_and_nothing_is_lost(self, broker: Broker) -> None:
        """60 messages of 100 KiB (6 MB) to a consumer that waits: the client stops reading at queue_max_bytes
        (1 MiB), overshooting by at most one message, though the count bound (10 000) is far; then all 60 arrive."""
        size, bound = 100 * 1024, 1024 * 1024
        async with MqttClient(config(broker, client_id="sub", queue_max_bytes=bound)) as sub:
            await sub.subscribe("t/#", timeout=5)
            async with MqttClient(config(broker, client_id="pub")) as pub:
                publishes = [pub.publish("t/a", i.to_bytes(2, "big") * (size // 2), timeout=30) for i in range(60)]
                sent = asyncio.gather(*publishes)
                peak = 0
                for _ in range(30):  # 1.5 s without taking anything
                    peak = max(peak, sub._queued_bytes)
                    await asyncio.sleep(0.05)
                assert sub._gate.paused
                assert bound <= peak <= bound + size and sub._queue.qsize() < 60
                received = await receive(sub, 60, timeout=30)
                await sent
            assert [int.from_bytes(m.payload[:2], "big") for m in received] == list(range(60))
            assert sub._queued_bytes == 0 and not sub._gate.paused
            labels = {"client": "sub"}
            assert REGISTRY.get_sample_value("edge_agent_mqtt_queue_bytes", labels) == 0.0

    def test_queue_max_bytes_defaults_from_max_payload_bytes_and_must_hold_one(self, broker: Broker) -> None:
        assert config(broker).receive_queue_bytes == 16 * 1024 * 1024
        assert config(broker, max_payload_bytes=8 * 1024 * 1024).receive_queue_bytes == 32 * 1024 * 1024
        assert config(broker, queue_max_bytes=300_000).receive_queue_bytes == 300_000
        with pytest.raises(ValueError, match="queue_max_bytes .* is below mqtt.max_payload_bytes"):
            config(broker, queue_max_bytes=1000)


# --- TLS and authentication ------------------------------------------------------------------------------------


def tls_config(broker: Broker, pki: dict[str, Path], **overrides: object) -> MqttConfig:
    tls = TlsConfig(ca_file=pki["ca"], cert_file=pki["client_crt"], key_file=pki["client_key"])
    return config(broker, tls=tls, **overrides)


class TestTls:
    async def test_mutual_tls_with_test_ca(self, tmp_path: Path) -> None:
        """A broker with a server certificate from a test CA and required client certificates carries messages."""
        broker, pki = tls_broker(tmp_path, ["127.0.0.1", "localhost"])
        try:
            async with MqttClient(tls_config(broker, pki, client_id="sub")) as sub:
                await sub.subscribe("t/#", timeout=10)
                await sub.publish("t/a", b"over-tls", timeout=5)
                [message] = await receive(sub, 1)
            assert message.payload == b"over-tls"
        finally:
            broker.stop()

    async def test_burst_over_tls_with_paused_reading_arrives_complete(self, tmp_path: Path) -> None:
        """500 QoS 0 messages (no Receive Maximum holds the broker back) through TLS into a 20-message queue: reading
        pauses and resumes many times over the TLS socket and every message arrives."""
        broker, pki = tls_broker(tmp_path, ["127.0.0.1"])
        try:
            async with MqttClient(tls_config(broker, pki, client_id="sub", queue_max=20)) as sub:
                await sub.subscribe("t/#", qos=0, timeout=10)
                async with MqttClient(tls_config(broker, pki, client_id="pub")) as pub:
                    await pub.wait_connected(5)
                    for i in range(500):
                        await pub.publish("t/a", str(i).encode() * 50, qos=0)
                await asyncio.sleep(0.5)  # the whole burst is now in our socket buffer or the SSL object
                messages = await receive(sub, 500, timeout=10)
            assert sorted(int(m.payload[: len(m.payload) // 50]) for m in messages) == list(range(500))
        finally:
            broker.stop()

    async def test_hostname_mismatch_is_refused(self, tmp_path: Path) -> None:
        """A certificate from the trusted CA but for another host name fails the hostname check: no connection."""
        broker, pki = tls_broker(tmp_path, ["broker.plant.example"])
        try:
            async with MqttClient(tls_config(broker, pki, client_id="c")) as client:
                with pytest.raises(MqttTimeoutError) as err:
                    await client.wait_connected(2)
            assert isinstance(err.value.__cause__, MqttConnectError)
            assert isinstance(err.value.__cause__.__cause__, ssl.SSLCertVerificationError)
            assert "IP address mismatch, certificate is not valid for '127.0.0.1'" in str(err.value.__cause__.__cause__)
        finally:
            broker.stop()

    async def test_hostname_check_can_be_switched_off_but_chain_still_verified(self, tmp_path: Path) -> None:
        """check_hostname = false accepts the mismatched name; a CA that did not sign the server is still refused."""
        broker, pki = tls_broker(tmp_path, ["broker.plant.example"])
        (tmp_path / "other").mkdir()
        other = make_pki(tmp_path / "other", ["broker.plant.example"])  # same names, a CA the broker never used
        try:
            lenient = tls_config(broker, pki, client_id="a")
            lenient.tls.check_hostname = False  # type: ignore[union-attr]
            async with MqttClient(lenient) as client:
                await client.wait_connected(5)
            wrong_ca = tls_config(broker, pki, client_id="b")
            wrong_ca.tls.check_hostname = False  # type: ignore[union-attr]
            wrong_ca.tls.ca_file = other["ca"]  # type: ignore[union-attr]
            async with MqttClient(wrong_ca) as client:
                with pytest.raises(MqttTimeoutError) as err:
                    await client.wait_connected(2)
            assert isinstance(err.value.__cause__.__cause__, ssl.SSLCertVerificationError)  # type: ignore[union-attr]
        finally:
            broker.stop()


class TestAuthentication:
    def auth_broker(self, tmp_path: Path) -> Broker:
        broker = Broker(tmp_path, allow_anonymous=False, users={"edge": "s3cret"})
        broker.start()
        return broker

    async def test_username_and_password_from_config(self, tmp_path: Path) -> None:
        """The configured credentials are sent: the broker accepts the connection and the subscription."""
        broker = self.auth_broker(tmp_path)
        try:
            async with MqttClient(config(broker, client_id="c", username="edge", password="s3cret")) as client:
                await client.subscribe("t/#", timeout=5)
                await client.publish("t/a", b"authed", timeout=5)
                [message] = await receive(client, 1)
            assert message.payload == b"authed"
        finally:
            broker.stop()

    async def test_wrong_password_is_reported_as_refused(self, tmp_path: Path) -> None:
        """A CONNACK refusal surfaces as MqttConnectError naming the broker's reason."""
        broker = self.auth_broker(tmp_path)
        try:
            async with MqttClient(config(broker, client_id="c", username="edge", password="wrong")) as client:
                with pytest.raises(MqttTimeoutError) as err:
                    await client.wait_connected(2)
            assert isinstance(err.value.__cause__, MqttConnectError)
            assert "Not authorized" in str(err.value.__cause__)
        finally:
            broker.stop()
