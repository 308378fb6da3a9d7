"""The simulated plant's OPC UA server (asyncua): one variable per tag, history kept, alarms as A&C events.

Address space: Objects/Plant/<line>/<asset>/<variable>, each variable with the string node id `ns=<idx>;s=<tag>`
(e.g. `ns=2;s=P-101.vibration_mm_s`). Every written value is also stored in a `RetainedHistory` that outlives one
server instance, the way a historian outlives its OPC UA endpoint: a test restarts the endpoint and the agent
backfills the gap from it. Alarm transitions are AlarmConditionType events emitted by the Server object, with the
asset as SourceName; they are kept in the same history (the Server object's EventNotifier says HistoryRead), also
while the endpoint is down, so a client can read back the alarms raised during its outage. `event_history=False`
serves a plant whose server keeps no event history.
"""

from __future__ import annotations

import copy
import socket
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlparse

from asyncua import Node, Server, ua
from asyncua.crypto.permission_rules import User, UserRole
from asyncua.server.history import HistoryDict
from asyncua.server.user_managers import UserManager

from edge_agent.connectors.opcua.ids import node_id
from edge_agent.connectors.opcua.security import Identity, ensure_certificate
from edge_agent.sim.plant import ASSETS, TANK, AlarmEvent, tag_names

_POLICIES = {
    "None": ua.SecurityPolicyType.NoSecurity,
    "Basic256Sha256_Sign": ua.SecurityPolicyType.Basic256Sha256_Sign,
    "Basic256Sha256_SignAndEncrypt": ua.SecurityPolicyType.Basic256Sha256_SignAndEncrypt,
}
# Values a HistoryRead returns per call before a continuation point: asyncua's default, a few MB per reply.
HISTORY_PAGE = 10000


class RetainedHistory(HistoryDict):
    """asyncua's in-memory history, kept across server instances (re-registering a node keeps its values)."""

    def __init__(self) -> None:
        super().__init__(max_history_data_response_size=HISTORY_PAGE)

    async def new_historized_node(self, node_id: ua.NodeId, period: timedelta | None, count: int = 0) -> None:
        if node_id in self._datachanges:
            self._datachanges_period[node_id] = period, count
            return
        await super().new_historized_node(node_id, period, count)

    # HistoryDict's own signature (list[NodeId]) already differs from its interface's (list[Node]): we follow it.
    async def new_historized_event(  # type: ignore[override]
        self, source_id: ua.NodeId, evtypes: list[ua.NodeId], period: timedelta | None, count: int = 0
    ) -> None:
        if source_id in self._events:
            self._events_periods[source_id] = period, count
            return
        await super().new_historized_event(source_id, evtypes, period, count)

    async def stop(self) -> None:
        """Kept on purpose: the server stops, its history does not."""

    def values(self, node_id: ua.NodeId) -> list[ua.DataValue]:
        return list(self._datachanges.get(node_id, []))


class _UserTable(UserManager):
    """Username/password check for the simulator."""

    def __init__(self, users: Mapping[str, str]) -> None:
        self._users = dict(users)

    def get_user(
        self, iserver: Any, username: str | None = None, password: str | None = None, certificate: Any = None
    ) -> User | None:
        if username is not None and self._users.get(username) == password:
            return User(role=UserRole.User)
        return None


class PlantServer:
    """`async with PlantServer(...) as server:` serves the plant; `write()` and `fire_alarm()` feed it."""

    def __init__(
        self,
        endpoint: str,
        namespace_uri: str = "urn:edge-agent:sim:plant",
        *,
        line: str = "L1",
        security: Iterable[str] = ("None",),
        pki_dir: Path | None = None,
        history: RetainedHistory | None = None,
        history_period: timedelta = timedelta(hours=12),
        users: Mapping[str, str] | None = None,
        event_history: bool = True,
    ) -> None:
        self.endpoint = endpoint
        self.namespace_uri = namespace_uri
        self.line = line
        self.security = [s for s in security]
        unknown = [s for s in self.security if s not in _POLICIES]
        if unknown:
            raise ValueError(f"unknown simulator security {unknown}; known: {sorted(_POLICIES)}")
        self.pki_dir = pki_dir
        self.history = history if history is not None else RetainedHistory()
        self.history_period = history_period
        self.users = users
        self.event_history = event_history
        self.identity: Identity | None = None
        self.namespace_index = 0
        self._server: Server | None = None
        self._nodes: dict[str, Node] = {}
        self._alarm_gen: Any = None

    @property
    def port(self) -> int:
        return int(urlparse(self.endpoint).port or 4840)

    @property
    def certificate_der(self) -> bytes | None:
        return self.identity.cert_path.read_bytes() if self.identity else None

    def node_id(self, tag: str) -> str:
        return f"ns={self.namespace_index};s={tag}"

    async def __aenter__(self) -> PlantServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        server = Server(user_manager=_UserTable(self.users) if self.users else None)
        await server.init()
        server.set_endpoint(self.endpoint)
        server.set_server_name("edge-agent plant simulator")
        server.set_security_policy([_POLICIES[s] for s in self.security])
        if self.users:
            server.set_identity_tokens([ua.UserNameIdentityToken])
        if any(s != "None" for s in self.security):
            if self.pki_dir is None:
                raise ValueError("a secured simulator endpoint needs pki_dir for its certificate")
            uri = f"urn:{socket.gethostname()}:edge-agent:sim"
            self.identity = ensure_certificate(self.pki_dir, "sim-server", uri, server=True)
            await server.set_application_uri(self.identity.application_uri)
            await server.load_certificate(str(self.identity.cert_path))
            await server.load_private_key(str(self.identity.key_path))
        server.iserver.history_manager.set_storage(self.history)
        self.namespace_index = await server.register_namespace(self.namespace_uri)
        await self._build_address_space(server)
        await server.start()
        self._server = server

    async def stop(self) -> None:
        if self._server is not None:
            server, self._server = self._server, None
            await server.stop()

    async def _build_address_space(self, server: Server) -> None:
        idx = self.namespace_index
        plant = await server.nodes.objects.add_object(node_id("Plant", idx), ua.QualifiedName("Plant", idx))
        line = await plant.add_object(node_id(self.line, idx), ua.QualifiedName(self.line, idx))
        assets = {a.name: await line.add_object(node_id(a.name, idx), ua.QualifiedName(a.name, idx)) for a in ASSETS}
        assets[TANK] = await line.add_object(node_id(TANK, idx), ua.QualifiedName(TANK, idx))
        for tag in tag_names():
            asset, variable = tag.split(".", 1)
            is_bool = variable == "running"
            node = await assets[asset].add_variable(
                node_id(tag, idx),
                ua.QualifiedName(variable, idx),
                False if is_bool else 0.0,
                ua.VariantType.Boolean if is_bool else ua.VariantType.Double,
            )
            await node.write_attribute(ua.AttributeIds.Historizing, ua.DataValue(ua.Variant(True)))
            await node.write_attribute(
                ua.AttributeIds.AccessLevel,
                ua.DataValue(
                    ua.Variant(ua.AccessLevel.CurrentRead.mask | ua.AccessLevel.HistoryRead.mask, ua.VariantType.Byte)
                ),
            )
            await self.history.new_historized_node(node.nodeid, self.history_period)
            self._nodes[tag] = node
        # asyncua annotates the emitting node as a NodeId or int; EventGenerator.init takes a Node as well.
        self._alarm_gen = await server.get_event_generator(ua.ObjectIds.AlarmConditionType, server.nodes.server)  # type: ignore[arg-type]
        if self.event_history:
            # Events go straight into history (see fire_alarm), so asyncua's historize_node_event, which subscribes
            # to them, is not used: only the HistoryRead bit it would set, and the storage's registration.
            notifier = await server.nodes.server.read_event_notifier()
            notifier.add(ua.EventNotifier.HistoryRead)
            await server.nodes.server.set_event_notifier(notifier)
            await self.history.new_historized_event(server.nodes.server.nodeid, [], self.history_period)
        self._asset_nodes = assets

    async def write(
        self, values: Mapping[str, float | bool], source_time: datetime, status: ua.StatusCode | None = None
    ) -> None:
        """Write one sample per tag, stamped with the (simulated) source time, and record it in history.

        `status` (default Good) lets a test present what a gateway in front of a PLC may: e.g. the Overflow bit.
        """
        for tag, value in values.items():
            node = self._nodes[tag]
            variant = ua.Variant(value, ua.VariantType.Boolean if isinstance(value, bool) else ua.VariantType.Double)
            dv = ua.DataValue(
                variant,
                StatusCode=status or ua.StatusCode(),  # Good, asyncua's default
                # asyncua annotates its DateTime marker subclass; it encodes any datetime.
                SourceTimestamp=source_time,  # type: ignore[arg-type]
                ServerTimestamp=source_time,  # type: ignore[arg-type]
            )
            if self._server is not None:
                await self._server.write_attribute_value(node.nodeid, dv)
            # Straight into history rather than through asyncua's historizing subscription, whose 10 ms
            # publishing cycle keeps only the last of several fast writes: a replayed shift would lose samples.
            await self.history.save_node_value(node.nodeid, dv)

    async def fire_alarm(self, alarm: AlarmEvent) -> None:
        """Emit one alarm transition; it also goes into the event history, whether or not the endpoint is up."""
        if self._alarm_gen is None:
            return  # never served: no address space to raise it in
        event = self._alarm_gen.event
        event.SourceNode = self._asset_nodes[alarm.asset].nodeid
        event.SourceName = alarm.asset
        event.Severity = alarm.severity
        event.ConditionName = alarm.condition
        event.ActiveState = ua.LocalizedText("Active" if alarm.active else "Inactive")
        setattr(event, "ActiveState/Id", alarm.active)
        event.Retain = alarm.active
        if self._server is not None:
            await self._alarm_gen.trigger(time_attr=alarm.time, message=alarm.message)
        else:
            # The endpoint is down, the plant and its historian are not: the fields trigger() would have set.
            event.EventId = ua.Variant(uuid.uuid4().hex.encode("utf-8"), ua.VariantType.ByteString)
            event.Time = alarm.time
            event.ReceiveTime = datetime.now(UTC)
            event.Message = ua.LocalizedText(alarm.message)
        if self.event_history:
            # A copy: the generator reuses its one event object for the next alarm.
            await self.history.save_event(copy.deepcopy(event))
