"""Ingest routes: MQTT topic filter → parser. The first route (in config order) whose filter matches a topic wins."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import structlog

from edge_agent.base.topic_filter import topic_matches
from edge_agent.base.types import Record
from edge_agent.config.mqtt import RouteConfig
from edge_agent.connectors.mqtt import MqttError
from edge_agent.connectors.mqtt.authorship import attribute
from edge_agent.connectors.mqtt.mes_mapping import MesEventMapping
from edge_agent.connectors.mqtt.parsers import (
    DEFAULT_LIMITS,
    InputLimits,
    JsonParser,
    ParseError,
    Parser,
    QuarantineReason,
    TextParser,
)

log = structlog.get_logger(component="mqtt")

# paho's manual ack does not cover QoS 2: it sends PUBREC (after which the broker forgets the message) before the
# application sees it, so a crash before the commit loses the message. QoS 1 + manual ack + idempotent store is the
# exactly-once-stored path; QoS 2 routes are subscribed at QoS 1.
MAX_INGEST_QOS = 1


class RouteError(MqttError, ValueError):
    """A route in the config that cannot work (bad topic filter, bad mapping)."""


def validate_filter(topic_filter: str) -> None:
    """MQTT filter syntax: `+` fills a whole level, `#` only as the whole last level."""
    if not topic_filter or "\x00" in topic_filter:
        raise RouteError(f"topic filter {topic_filter!r} is empty or contains NUL")
    levels = topic_filter.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            raise RouteError(f"topic filter {topic_filter!r}: '#' must be the whole last level")
        if "+" in level and level != "+":
            raise RouteError(f"topic filter {topic_filter!r}: '+' must fill a whole level")


@dataclass(frozen=True)
class Route:
    topic_filter: str
    qos: int
    parser: Parser
    # The topic level the broker ACL ties to the publishing user (authorship.py); None: notes have no vouched author.
    author_level: int | None = None


def _build_parser(route: RouteConfig, source: str, limits: InputLimits) -> Parser:
    if route.parser == "json":
        translate = None if route.events is None else MesEventMapping.from_config(route.events).translate
        try:
            return JsonParser(
                route.kind, route.mapping, route.required, source=source, limits=limits, translate=translate
            )
        except ValueError as exc:
            raise RouteError(f"route {route.topic!r}: {exc}") from exc
    return TextParser(route.kind, source=source, limits=limits)


class RouteTable:
    """The configured routes, plus the size limit every payload is checked against before parsing."""

    def __init__(self, routes: Sequence[Route], max_payload_bytes: int) -> None:
        self.routes = list(routes)
        self.max_payload_bytes = max_payload_bytes

    @classmethod
    def from_config(
        cls,
        routes: Sequence[RouteConfig],
        max_payload_bytes: int,
        source: str = "mqtt",
        limits: InputLimits = DEFAULT_LIMITS,
    ) -> RouteTable:
        built = []
        for route in routes:
            validate_filter(route.topic)
            if route.qos > MAX_INGEST_QOS:
                log.warning("route_qos_downgraded", topic=route.topic, configured=route.qos, used=MAX_INGEST_QOS)
            parser = _build_parser(route, source, limits)
            built.append(Route(route.topic, min(route.qos, MAX_INGEST_QOS), parser, route.author_from_topic_level))
        return cls(built, max_payload_bytes)

    def subscriptions(self) -> dict[str, int]:
        """Topic filter → QoS to subscribe with (a filter listed twice keeps its highest QoS)."""
        filters: dict[str, int] = {}
        for route in self.routes:
            filters[route.topic_filter] = max(route.qos, filters.get(route.topic_filter, 0))
        return filters

    def match(self, topic: str) -> Route | None:
        for route in self.routes:
            if topic_matches(route.topic_filter, topic):
                return route
        return None

    def parse(self, topic: str, payload: bytes, received_time: datetime) -> Record:
        """One message → one record, or ParseError (size limit, no route, or the parser's own refusal)."""
        if len(payload) > self.max_payload_bytes:
            raise ParseError(
                QuarantineReason.PAYLOAD_TOO_LARGE, f"{len(payload)} bytes > max_payload_bytes {self.max_payload_bytes}"
            )
        route = self.match(topic)
        if route is None:
            # Reaches us when the broker session still holds a subscription a former config had.
            raise ParseError(QuarantineReason.UNKNOWN_ROUTE, f"no route matches topic {topic!r}")
        # A note's author is what the broker vouches for, never what the line claims (authorship.py).
        return attribute(route.parser.parse(topic, payload, received_time), topic, route.author_level)


__all__ = ["MAX_INGEST_QOS", "Route", "RouteError", "RouteTable", "validate_filter"]
