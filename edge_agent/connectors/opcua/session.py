"""One disposable OPC UA session: a NEW asyncua Client, its subscription and monitored items, its health watch.

A session is used once. After any loss it is closed and dropped, and the source builds another (`Backoff` spaces the
attempts): reconnecting the same asyncua `Client` can hang forever (opcua-asyncio #1660).
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType

import structlog
from asyncua import Client, ua
from asyncua.common.events import get_filter_from_event_type
from asyncua.common.subscription import OverflowPolicy, Subscription

from edge_agent.base.backoff import backoff_delay
from edge_agent.base.types import utcnow
from edge_agent.config import NodeConfig, OpcuaSourceConfig
from edge_agent.connectors.opcua.history import HISTORY_PROBE_START, AsyncEventHistoryPages, AsyncHistoryPages
from edge_agent.connectors.opcua.ids import node_id
from edge_agent.connectors.opcua.metrics import NODE_FAILURES, SERVICE_LEVEL
from edge_agent.connectors.opcua.security import (
    Identity,
    OpcuaError,
    OpcuaSecurityError,
    check_pin,
    first_certificate,
    message_security_mode,
    security_policy,
    sha256_thumbprint,
)

log = structlog.get_logger(component="opcua")

# Notifications buffered between the asyncua publish loop and our store writes. On overflow asyncua's DISCONNECT
# policy tears the session down: we reconnect and backfill from history instead of silently dropping values.
NOTIFICATION_QUEUE_MAX = 10000
# Closing a dead session must not stall the reconnect: the server may never answer CloseSession.
DISCONNECT_TIMEOUT_S = 2.0
# Server-wide ids (OPC 10000-5): Server_ServerStatus_CurrentTime and Server_ServiceLevel.
CURRENT_TIME = node_id(ua.ObjectIds.Server_ServerStatus_CurrentTime)
SERVICE_LEVEL_NODE = node_id(ua.ObjectIds.Server_ServiceLevel)
# User-token rejections: retrying with the same credentials cannot succeed, so they are security errors.
_AUTH_REJECTED = {
    ua.StatusCodes.BadUserAccessDenied,
    ua.StatusCodes.BadIdentityTokenInvalid,
    ua.StatusCodes.BadIdentityTokenRejected,
    ua.StatusCodes.BadCertificateUntrusted,
    ua.StatusCodes.BadSecurityChecksFailed,
}


class ConnectionLost(OpcuaError):
    """The health watch found the session dead (server time unreadable, transport closed, subscription gone)."""


@dataclass
class Backoff:
    """Full-jitter `backoff_delay` with its attempt counter: many agents restarting together do not hammer the server
    in step."""

    minimum_s: float
    maximum_s: float
    attempt: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        delay = backoff_delay(self.attempt, self.minimum_s, self.maximum_s, jitter="full", rng=self.rng)
        self.attempt += 1
        return delay

    def reset(self) -> None:
        self.attempt = 0


def item_request(handle: int, node: NodeConfig) -> ua.MonitoredItemCreateRequest:
    """The monitored-item request for one configured node: sampling, queue, and its deadband filter if any.

    Deadbands are filtered by the server; a percent deadband needs the node's EURange there (OPC UA Part 8).
    """
    item = ua.ReadValueId()
    item.NodeId = ua.NodeId.from_string(node.node_id)
    item.AttributeId = ua.AttributeIds.Value
    mparams = ua.MonitoringParameters()
    mparams.ClientHandle = handle
    mparams.SamplingInterval = node.sampling_interval_ms
    mparams.QueueSize = node.queue_size
    mparams.DiscardOldest = True
    if node.deadband_type != "none":
        flt = ua.DataChangeFilter()
        flt.Trigger = ua.DataChangeTrigger.StatusValue
        flt.DeadbandType = ua.DeadbandType.Absolute if node.deadband_type == "absolute" else ua.DeadbandType.Percent
        flt.DeadbandValue = node.deadband_value
        mparams.Filter = flt
    return _reporting(item, mparams)


def _reporting(item: ua.ReadValueId, params: ua.MonitoringParameters) -> ua.MonitoredItemCreateRequest:
    request = ua.MonitoredItemCreateRequest()
    request.ItemToMonitor = item
    request.MonitoringMode = ua.MonitoringMode.Reporting
    request.RequestedParameters = params
    return request


class Session:
    """One connection to the server: a NEW asyncua Client, one subscription, every monitored item.

    Used once. After any loss it is closed and dropped; the next attempt builds another.
    """

    def __init__(self, config: OpcuaSourceConfig, identity: Identity | None) -> None:
        self.config = config
        self.identity = identity
        self.client = self._build_client()
        self.subscription: Subscription | None = None
        self.tags_by_handle: dict[int, str] = {}
        self.event_handle: int | None = None
        # The live subscription's event filter: an event HistoryRead selects the same fields, so the keys agree.
        self.event_filter: ua.EventFilter | None = None
        # Source time of the value last delivered per tag in this session: what a value flagged Overflow follows.
        self.latest: dict[str, datetime] = {}
        # Until when this session is known to have delivered everything (subscribed, then every good health read).
        self.healthy_at = utcnow()
        self.lost = asyncio.Event()
        self.lost_reason = ""

    def _build_client(self) -> Client:
        cfg = self.config
        # Request timeout: a live server answers a read in milliseconds; this bounds a hung request.
        client = Client(
            cfg.endpoint, timeout=max(4.0, cfg.connect_timeout_s), watchdog_intervall=cfg.watchdog_interval_s
        )
        client.name = client.description = f"edge-agent {cfg.name}"
        if self.identity is not None:
            client.application_uri = self.identity.application_uri
        if cfg.username is not None:
            client.set_user(cfg.username)
        if cfg.password is not None:
            client.set_password(cfg.password.get_secret_value())
            if cfg.security_policy == "None":
                log.warning(
                    "opcua_password_without_encryption",
                    source=cfg.name,
                    hint="use security_policy Basic256Sha256 so the password is encrypted on the wire",
                )
        client.connection_lost_callback = self._on_connection_lost
        return client

    async def _on_connection_lost(self, exc: Exception) -> None:
        self.lost_reason = repr(exc)
        self.lost.set()

    async def __aenter__(self) -> Session:
        try:
            async with asyncio.timeout(self.config.connect_timeout_s):
                await self._connect()
            await self._subscribe()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        try:
            async with asyncio.timeout(DISCONNECT_TIMEOUT_S):
                await self.client.disconnect()
        except Exception as exc:  # a dead server cannot answer CloseSession; the socket is closed below anyway
            log.debug("opcua_disconnect_unclean", source=self.config.name, error=repr(exc))
        finally:
            self.client.disconnect_socket()

    async def _connect(self) -> None:
        cfg = self.config
        secured = cfg.security_policy != "None" and cfg.security_mode != "None"
        if (
            cfg.security_policy != "None"
            and cfg.security_mode == "None"
            or (cfg.security_policy == "None" and cfg.security_mode != "None")
        ):
            raise OpcuaSecurityError(
                f"source {cfg.name}: security_policy {cfg.security_policy} with security_mode {cfg.security_mode}"
                " is not a valid pair (use None/None or Basic256Sha256 with Sign or SignAndEncrypt)"
            )
        server_der: bytes | None = None
        if secured or cfg.server_cert_sha256:
            server_der = await self._server_certificate(secured)
        if cfg.server_cert_sha256:
            check_pin(cfg.endpoint, server_der, cfg.server_cert_sha256)
        if server_der is not None:
            # Logged pinned or not: this is the value an operator copies into server_cert_sha256.
            log.info(
                "opcua_server_certificate",
                source=cfg.name,
                sha256=sha256_thumbprint(server_der),
                pinned=cfg.server_cert_sha256 is not None,
            )
        if secured:
            assert self.identity is not None
            await self.client.set_security(
                security_policy(cfg.security_policy),
                str(self.identity.cert_path),
                str(self.identity.key_path),
                server_certificate=server_der,
                mode=message_security_mode(cfg.security_mode),
            )
        try:
            await self.client.connect()
        except ua.UaStatusCodeError as exc:
            if exc.code in _AUTH_REJECTED:
                raise OpcuaSecurityError(f"source {cfg.name}: {cfg.endpoint} refused our identity: {exc}") from exc
            raise

    async def _server_certificate(self, secured: bool) -> bytes | None:
        """The server's certificate from GetEndpoints (over an unsecured channel, as the spec allows)."""
        cfg = self.config
        endpoints = await self.client.connect_and_get_server_endpoints()
        if secured:
            policy_uri = security_policy(cfg.security_policy).URI
            mode = message_security_mode(cfg.security_mode)
            matching = [e for e in endpoints if e.SecurityPolicyUri == policy_uri and e.SecurityMode == mode]
            if not matching:
                offered = sorted({f"{e.SecurityPolicyUri.rsplit('#', 1)[-1]}/{e.SecurityMode.name}" for e in endpoints})
                raise OpcuaSecurityError(
                    f"source {cfg.name}: {cfg.endpoint} offers no {cfg.security_policy}/{cfg.security_mode} endpoint"
                    f" (offered: {', '.join(offered)})"
                )
            endpoints = matching
        certs = [e.ServerCertificate for e in endpoints if e.ServerCertificate]
        return first_certificate(certs[0]) if certs else None

    async def _subscribe(self) -> None:
        cfg = self.config
        params = ua.CreateSubscriptionParameters()
        params.RequestedPublishingInterval = cfg.publishing_interval_ms
        # Lifetime/keep-alive as asyncua's defaults: keep-alives every ~10 s let the server tell us it is alive.
        params.RequestedLifetimeCount = 10000
        params.RequestedMaxKeepAliveCount = self.client.get_keepalive_count(cfg.publishing_interval_ms)
        params.MaxNotificationsPerPublish = 10000
        params.PublishingEnabled = True
        params.Priority = 0
        self.subscription = await self.client.create_subscription(
            params, None, queue_maxsize=NOTIFICATION_QUEUE_MAX, overflow=OverflowPolicy.DISCONNECT
        )
        requests = [item_request(handle, node) for handle, node in enumerate(cfg.nodes, start=1)]
        if cfg.events:
            self.event_handle = len(cfg.nodes) + 1
            requests.append(await self._event_request(self.event_handle))
        if not requests:
            return
        results = await self.subscription.create_monitored_items(requests)
        self.healthy_at = utcnow()
        # Not strict: the server's reply is peer data; a short one must not end the session with a ValueError.
        for request, result in zip(requests, results, strict=False):
            handle = request.RequestedParameters.ClientHandle
            if isinstance(result, ua.StatusCode):
                NODE_FAILURES.labels(cfg.name).inc()
                log.error(
                    "opcua_item_refused",
                    source=cfg.name,
                    node_id=request.ItemToMonitor.NodeId.to_string(),
                    status=result.name,
                )
                continue
            if handle != self.event_handle:
                self.tags_by_handle[handle] = cfg.nodes[handle - 1].tag

    async def _event_request(self, handle: int) -> ua.MonitoredItemCreateRequest:
        # ConditionType and AlarmConditionType together: the select clauses then include ActiveState/Id.
        types = [
            self.client.get_node(node_id(t)) for t in (ua.ObjectIds.ConditionType, ua.ObjectIds.AlarmConditionType)
        ]
        evfilter = await get_filter_from_event_type(types)
        self.event_filter = evfilter
        item = ua.ReadValueId()
        item.NodeId = node_id(ua.ObjectIds.Server)
        item.AttributeId = ua.AttributeIds.EventNotifier
        mparams = ua.MonitoringParameters()
        mparams.ClientHandle = handle
        mparams.SamplingInterval = 0
        # Events are not conflated: keep a burst of alarms (a trip raises several at once).
        mparams.QueueSize = 1000
        mparams.DiscardOldest = True
        mparams.Filter = evfilter
        return _reporting(item, mparams)

    async def watch(self) -> None:
        """Health watch: returns never; raises ConnectionLost when the server stops answering."""
        cfg = self.config
        while True:
            try:
                await asyncio.wait_for(self.lost.wait(), cfg.watchdog_interval_s)
            except TimeoutError:
                pass
            if self.lost.is_set():
                raise ConnectionLost(f"{cfg.endpoint}: connection lost ({self.lost_reason})")
            try:
                async with asyncio.timeout(max(cfg.watchdog_interval_s, 1.0)):
                    current, level = await self._read_health()
            except (OSError, TimeoutError, ConnectionError, ua.UaError) as exc:
                raise ConnectionLost(f"{cfg.endpoint}: health read failed: {exc!r}") from exc
            # Never None from the wire: asyncua decodes an omitted StatusCode as Good.
            assert current.StatusCode is not None and level.StatusCode is not None
            if not current.StatusCode.is_good():
                raise ConnectionLost(f"{cfg.endpoint}: server time unreadable ({current.StatusCode.name})")
            if level.StatusCode.is_good() and level.Value is not None:
                SERVICE_LEVEL.labels(cfg.name).set(float(level.Value.Value))
            self.healthy_at = utcnow()

    async def _read_health(self) -> tuple[ua.DataValue, ua.DataValue]:
        current, level = await self.client.uaclient.read_attributes(
            [CURRENT_TIME, SERVICE_LEVEL_NODE], ua.AttributeIds.Value
        )
        return current, level

    def history(
        self,
        node: NodeConfig,
        start: datetime,
        end: datetime,
        page_values: int | None = None,
    ) -> AsyncHistoryPages:
        return AsyncHistoryPages(self.client.get_node(ua.NodeId.from_string(node.node_id)), start, end, page_values)

    async def history_reaches(self, node: NodeConfig, when: datetime) -> bool:
        """Whether the server's history for `node` holds a value at or before `when` (else it starts later).

        A forward read from the start of OPC UA time to `when` for one value: the oldest the server keeps.
        """
        async for page in self.history(node, HISTORY_PROBE_START, when, page_values=1):
            return bool(page)
        return False

    def event_history(self, start: datetime, end: datetime) -> AsyncEventHistoryPages:
        assert self.event_filter is not None, "event history needs the event subscription's filter"
        return AsyncEventHistoryPages(self.client.get_node(node_id(ua.ObjectIds.Server)), start, end, self.event_filter)

    async def events_historized(self) -> bool:
        """The Server object's EventNotifier says whether the server keeps event history (OPC 10000-3 §5.4)."""
        notifier = await self.client.get_node(node_id(ua.ObjectIds.Server)).read_event_notifier()
        return ua.EventNotifier.HistoryRead in notifier
