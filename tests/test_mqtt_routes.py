"""Topic filters, route tables and payload parsers (no broker needed)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from edge_agent.base.backoff import backoff_delay
from edge_agent.base.topic_filter import topic_matches
from edge_agent.base.types import idempotency_key
from edge_agent.config.mqtt import RouteConfig
from edge_agent.connectors.mqtt.parsers import JsonParser, ParseError, QuarantineReason, TextParser
from edge_agent.connectors.mqtt.routes import RouteError, RouteTable, validate_filter

RECEIVED = datetime(2026, 11, 29, 7, 0, tzinfo=UTC)
MES = {
    "id": "mes-000123",
    "ts": "2026-11-29T06:15:00Z",
    "type": "downtime_start",
    "asset": "P-101",
    "line": "L1",
    "reason": "mechanical_seal_leak",
    "work_order": "WO-4711",
    "text": "Fuga en sello mecánico",
}


class TestTopicMatching:
    @pytest.mark.parametrize(
        ("topic_filter", "topic", "expected"),
        [
            ("plant/+/mes/#", "plant/s1/mes/downtime", True),
            ("plant/+/mes/#", "plant/s1/mes", True),  # '#' also matches the parent level
            ("plant/+/mes/#", "plant/s1/log/a", False),
            ("plant/+/mes/#", "plant/mes", False),
            ("plant/+", "plant/s1/x", False),
            ("plant/+", "plant/", True),  # an empty level is a level
            ("a/b", "a/b", True),
            ("a/b", "a/b/c", False),
            ("#", "anything/at/all", True),
            ("#", "$SYS/broker/uptime", False),
            ("+/broker/uptime", "$SYS/broker/uptime", False),
            ("$SYS/#", "$SYS/broker/uptime", True),
        ],
    )
    def test_matches_like_mqtt(self, topic_filter: str, topic: str, expected: bool) -> None:
        """'+' matches one level, '#' the rest, and wildcards never match '$' topics at the first level."""
        assert topic_matches(topic_filter, topic) is expected

    @pytest.mark.parametrize("bad", ["a/#/b", "a/b#", "a/+b", "", "a/\x00"])
    def test_invalid_filters_are_refused(self, bad: str) -> None:
        """A filter MQTT would reject is a RouteError at start, not a silent non-match."""
        with pytest.raises(RouteError):
            validate_filter(bad)


class TestRouteTable:
    def table(self, max_payload_bytes: int = 1024) -> RouteTable:
        return RouteTable.from_config(
            [
                RouteConfig(topic="plant/+/mes/#", parser="json", kind="mes_event", required=["ts", "type"]),
                RouteConfig(topic="plant/+/log/#", parser="text", kind="log_line"),
                RouteConfig(topic="plant/#", parser="text", kind="catch_all"),
            ],
            max_payload_bytes,
        )

    def test_first_matching_route_wins(self) -> None:
        """A topic matching two routes is parsed by the one listed first."""
        record = self.table().parse("plant/s1/log/a", b"hello", RECEIVED)
        assert record.kind == "log_line"

    def test_unknown_route(self) -> None:
        """A topic no route matches is refused as unknown_route."""
        with pytest.raises(ParseError) as err:
            self.table().parse("other/topic", b"{}", RECEIVED)
        assert err.value.reason is QuarantineReason.UNKNOWN_ROUTE

    def test_payload_over_limit(self) -> None:
        """A payload one byte over max_payload_bytes is refused before parsing."""
        with pytest.raises(ParseError) as err:
            self.table(max_payload_bytes=10).parse("plant/s1/log/a", b"x" * 11, RECEIVED)
        assert err.value.reason is QuarantineReason.PAYLOAD_TOO_LARGE

    def test_payload_at_limit_is_accepted(self) -> None:
        """A payload of exactly max_payload_bytes is parsed."""
        assert self.table(max_payload_bytes=10).parse("plant/s1/log/a", b"x" * 10, RECEIVED).value["text"] == "x" * 10

    def test_qos2_route_is_subscribed_at_qos1(self) -> None:
        """QoS 2 routes subscribe at QoS 1: paho's PUBREC would release the message before it is stored."""
        table = RouteTable.from_config([RouteConfig(topic="a/#", qos=2)], 1024)
        assert table.subscriptions() == {"a/#": 1}

    def test_unknown_mapping_field_is_a_config_error(self) -> None:
        """A mapping naming a record field the parser does not know fails config validation."""
        with pytest.raises(ValueError, match="unknown record field"):
            RouteConfig(topic="a/#", mapping={"asset": "asset"})


class TestJsonParser:
    parser = JsonParser("mes_event", {}, ["ts", "type"])

    def test_mes_event_shape(self) -> None:
        """The docs/records.md MES example becomes a mes_event keyed by asset, timed by ts, valued by the object."""
        payload = json.dumps(MES, ensure_ascii=False).encode()
        record = self.parser.parse("plant/s1/mes/downtime", payload, RECEIVED)
        assert (record.kind, record.key, record.source, record.quality) == ("mes_event", "P-101", "mqtt", "good")
        assert record.source_time == datetime(2026, 11, 29, 6, 15, tzinfo=UTC)
        assert record.value == MES
        assert record.raw == payload
        assert record.idempotency_key == idempotency_key("mes_event", "plant/s1/mes/downtime", "mes-000123")

    def test_id_makes_republished_event_one_record(self) -> None:
        """The same id with a different payload (a resend with reordered keys) gives the same idempotency key."""
        a = self.parser.parse("plant/s1/mes/x", json.dumps(MES).encode(), RECEIVED)
        b = self.parser.parse("plant/s1/mes/x", json.dumps(dict(reversed(MES.items()))).encode(), RECEIVED)
        assert a.idempotency_key == b.idempotency_key

    def test_same_id_on_another_topic_is_another_record(self) -> None:
        """A publisher on another topic reusing an id gets its own key, so it cannot pre-empt the first one's event."""
        payload = json.dumps(MES).encode()
        ours = self.parser.parse("plant/s1/mes/x", payload, RECEIVED)
        theirs = self.parser.parse("plant/s2/mes/x", payload, RECEIVED)
        assert ours.idempotency_key != theirs.idempotency_key

    def test_without_id_key_hashes_topic_payload_and_ts(self) -> None:
        """Without an id the key is SHA-256 of topic, payload and ts, independent of the receive time."""
        doc = {k: v for k, v in MES.items() if k != "id"}
        payload = json.dumps(doc).encode()
        first = self.parser.parse("plant/s1/mes/x", payload, RECEIVED)
        redelivered = self.parser.parse("plant/s1/mes/x", payload, datetime(2026, 11, 30, tzinfo=UTC))
        assert (
            first.idempotency_key
            == redelivered.idempotency_key
            == idempotency_key("plant/s1/mes/x", payload, "2026-11-29T06:15:00Z")
        )

    def test_missing_asset_keys_by_topic_and_missing_ts_uses_received_time(self) -> None:
        """Optional mapped fields fall back: key → topic, source_time → receive time."""
        record = JsonParser("mes_event", {}, []).parse("plant/s1/mes/x", b'{"type": "quality_check"}', RECEIVED)
        assert (record.key, record.source_time) == ("plant/s1/mes/x", RECEIVED)

    def test_custom_mapping_with_dotted_paths(self) -> None:
        """A route mapping reads nested fields and can select a sub-object as the value."""
        parser = JsonParser(
            "mes_event",
            {"key": "machine.tag", "source_time": "meta.time", "message_id": "meta.uid", "value": "data"},
            [],
        )
        payload = (
            b'{"machine": {"tag": "C-201"}, "meta": {"time": "2026-11-29T06:00:00+01:00", "uid": 7}, "data": {"n": 1}}'
        )
        record = parser.parse("t", payload, RECEIVED)
        assert (record.key, record.value) == ("C-201", {"n": 1})
        assert record.source_time == datetime(2026, 11, 29, 5, 0, tzinfo=UTC)
        assert record.idempotency_key == idempotency_key("mes_event", "t", "7")

    @pytest.mark.parametrize(
        ("payload", "reason"),
        [
            (b"\xff\xfe{}", QuarantineReason.INVALID_UTF8),
            (b'{"id": "a", "ts": ', QuarantineReason.INVALID_JSON),
            (b'{"ts": NaN, "type": "x"}', QuarantineReason.INVALID_JSON),
            (b"[1, 2]", QuarantineReason.SCHEMA_MISMATCH),
            (b'{"type": "downtime_start"}', QuarantineReason.SCHEMA_MISMATCH),  # required ts missing
            (b'{"ts": "yesterday", "type": "x"}', QuarantineReason.SCHEMA_MISMATCH),
            (b'{"ts": 1764396900, "type": "x"}', QuarantineReason.SCHEMA_MISMATCH),
            (b'{"ts": "2026-11-29T06:15:00Z", "type": "x", "asset": {"a": 1}}', QuarantineReason.SCHEMA_MISMATCH),
            (b'{"ts": "2026-11-29T06:15:00Z", "type": "x", "id": true}', QuarantineReason.SCHEMA_MISMATCH),
        ],
    )
    def test_bad_payloads_name_their_reason(self, payload: bytes, reason: QuarantineReason) -> None:
        """Each kind of bad JSON input is refused with its own quarantine reason."""
        with pytest.raises(ParseError) as err:
            self.parser.parse("plant/s1/mes/x", payload, RECEIVED)
        assert err.value.reason is reason


class TestTextParser:
    parser = TextParser("log_line")

    def test_time_author_and_text(self) -> None:
        """The docs/records.md log line yields its leading time, the author and the text."""
        line = "2026-11-29T06:20:00Z juan.perez: Se cambió el sello mecánico de P-101, vibración normal."
        record = self.parser.parse("plant/s1/log/maint", line.encode(), RECEIVED)
        assert record.value == {
            "text": "Se cambió el sello mecánico de P-101, vibración normal.",
            "author": "juan.perez",
        }
        assert (record.key, record.kind) == ("plant/s1/log/maint", "log_line")
        assert record.source_time == datetime(2026, 11, 29, 6, 20, tzinfo=UTC)
        assert record.idempotency_key == idempotency_key("plant/s1/log/maint", line.encode(), "2026-11-29T06:20:00Z")

    def test_plain_text_uses_received_time(self) -> None:
        """A line without time or author is all text, timed on receipt."""
        record = self.parser.parse("plant/s1/log/a", b"Pump restarted after seal change", RECEIVED)
        assert record.value == {"text": "Pump restarted after seal change"}
        assert record.source_time == RECEIVED

    def test_prefix_with_spaces_is_not_an_author(self) -> None:
        """'Nota bene: ...' has a space before the colon, so it stays part of the text."""
        record = self.parser.parse("t", b"Nota bene: revisar P-102", RECEIVED)
        assert record.value == {"text": "Nota bene: revisar P-102"}

    def test_impossible_time_stays_in_the_text(self) -> None:
        """A leading token shaped like a time but not one (month 13) is kept as text, not dropped."""
        record = self.parser.parse("t", b"2026-13-01T00:00:00Z check", RECEIVED)
        assert record.value == {"text": "2026-13-01T00:00:00Z check"}
        assert record.source_time == RECEIVED

    @pytest.mark.parametrize(
        ("payload", "reason"),
        [
            (b"caf\xc3", QuarantineReason.INVALID_UTF8),
            (b"   \n", QuarantineReason.SCHEMA_MISMATCH),
            (b"2026-11-29T06:20:00Z ana:   ", QuarantineReason.SCHEMA_MISMATCH),
        ],
    )
    def test_bad_lines_name_their_reason(self, payload: bytes, reason: QuarantineReason) -> None:
        """Undecodable or empty lines are refused with their reason."""
        with pytest.raises(ParseError) as err:
            self.parser.parse("t", payload, RECEIVED)
        assert err.value.reason is reason


class TestBackoff:
    def test_delays_grow_then_cap_with_jitter(self) -> None:
        """Attempt n waits between half and all of min(max, min * 2**n)."""
        for attempt, ceiling in [(0, 0.5), (1, 1.0), (3, 4.0), (10, 30.0), (200, 30.0)]:
            delays = [backoff_delay(attempt, 0.5, 30.0) for _ in range(200)]
            assert all(ceiling / 2 <= d <= ceiling for d in delays)
            assert max(delays) - min(delays) > ceiling / 10  # jittered, not constant
