"""OPC UA source: data-change and alarm subscriptions on one server, into the store, surviving server restarts.

The known failure of asyncua deployments is a subscription that is silently dead after the server restarts: the
client object looks connected and no value ever arrives again (opcua-asyncio #70), and reconnecting the same
`Client` instance can hang forever (#1660). So a connection here is disposable: `_Session` owns one freshly built
asyncua `Client` and its subscription, a health watch reads the server's CurrentTime and ServiceLevel every
`watchdog_interval_s`, and on any loss the whole session is thrown away and a NEW client is built after a jittered
backoff, with every monitored item recreated. The values the server produced while we were away are then read back
with HistoryRead (where the server keeps history) and stored with `historical=True`; a value's idempotency key is
the same whether it arrives live or from history, so an overlap is stored once. The same HistoryRead repairs the
other silent loss: a server drops the oldest values of a monitored item whose queue fills while we lag, so a tag that
delivers a full queue's worth at once has the span before it read back from history.

`OpcuaSource` is a daemon Component (contract 1): `run(ready)` sets `ready` once subscribed and runs until cancelled.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter as Tally
from contextlib import suppress
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

import structlog
from asyncua import Client, Node, ua
from asyncua.common.events import Event, get_filter_from_event_type
from asyncua.common.subscription import DataChangeEvent, OpcEvent, OverflowPolicy, StatusChangeEvent, Subscription
from prometheus_client import Counter, Gauge

from connectors.opcua_security import (
    Identity,
    OpcuaError,
    OpcuaSecurityError,
    ServerCertificateMismatch,
    check_pin,
    default_application_uri,
    ensure_certificate,
    first_certificate,
    load_identity,
    message_security_mode,
    security_policy,
    sha256_thumbprint,
)
from edge_agent.config import NodeConfig, OpcuaSourceConfig
from edge_agent.store import RecordWriter
from edge_agent.types import Record, idempotency_key, to_utc, utcnow

log = structlog.get_logger(component="opcua")

VALUES_RECEIVED = Counter("edge_agent_opcua_values_received_total", "OPC UA data changes received live", ["source"])
VALUES_BACKFILLED = Counter(
    "edge_agent_opcua_values_backfilled_total", "OPC UA values read back with HistoryRead after a gap", ["source"]
)
ALARMS_RECEIVED = Counter("edge_agent_opcua_alarms_received_total", "OPC UA alarm/condition events", ["source"])
RECORDS_STORED = Counter(
    "edge_agent_opcua_records_stored_total", "OPC UA records newly stored (duplicates excluded)", ["source"]
)
RECONNECTS = Counter("edge_agent_opcua_reconnects_total", "sessions re-established after a loss", ["source"])
CONNECT_FAILURES = Counter("edge_agent_opcua_connect_failures_total", "failed connect attempts", ["source"])
NODE_FAILURES = Counter("edge_agent_opcua_node_failures_total", "monitored items the server refused", ["source"])
OVERFLOW_SUSPECTED = Counter(
    "edge_agent_opcua_overflow_suspected_total", "bursts where a server-side item queue may have overflowed",
    ["source"],
)
CONNECTED = Gauge("edge_agent_opcua_connected", "1 while a session with live subscriptions is up", ["source"])
SERVICE_LEVEL = Gauge("edge_agent_opcua_service_level", "the server's ServiceLevel (0-255)", ["source"])

# Notifications buffered between the asyncua publish loop and our store writes. On overflow asyncua's DISCONNECT
# policy tears the session down: we reconnect and backfill from history instead of silently dropping values.
NOTIFICATION_QUEUE_MAX = 10000
# Records per store write, and the longest a received value waits for its batch (the writer adds its own batching).
BATCH_MAX_RECORDS = 500
BATCH_MAX_DELAY_S = 0.1
# A backfill re-reads this far before the last value seen: servers stamp values with their own (or the device's)
# clock and may deliver them out of order; the overlap costs a few duplicate reads, deduplicated by key.
BACKFILL_OVERLAP_S = 5.0
# Pending overflow repairs per session; beyond this a repair is dropped with a warning (the next reconnect backfills).
REPAIR_QUEUE_MAX = 1000
# Values per HistoryRead page: bounds memory while backfilling a long gap.
HISTORY_PAGE_VALUES = 2000
# Closing a dead session must not stall the reconnect: the server may never answer CloseSession.
DISCONNECT_TIMEOUT_S = 2.0
# Server-wide ids (OPC 10000-5): Server_ServerStatus_CurrentTime and Server_ServiceLevel.
CURRENT_TIME = ua.NodeId(ua.ObjectIds.Server_ServerStatus_CurrentTime)
SERVICE_LEVEL_NODE = ua.NodeId(ua.ObjectIds.Server_ServiceLevel)
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


class AuditSink(Protocol):
    """What this connector needs of `edge_agent.audit.AuditLog` (contract 2)."""

    def append(self, event: str, actor: str, payload: dict[str, Any]) -> Any: ...


@dataclass
class Backoff:
    """Full-jitter exponential backoff: many agents restarting together do not hammer the server in step."""

    minimum_s: float
    maximum_s: float
    attempt: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        ceiling = min(self.maximum_s, self.minimum_s * 2**self.attempt)
        self.attempt += 1
        return self.rng.uniform(self.minimum_s, max(self.minimum_s, ceiling))

    def reset(self) -> None:
        self.attempt = 0


def quality_of(status: ua.StatusCode | None) -> str:
    """docs/records.md quality from the status code's severity bits (good / uncertain / bad)."""
    if status is None or status.is_good():
        return "good"
    return "uncertain" if status.is_uncertain() else "bad"


def plain_value(value: Any) -> Any:
    """A JSON-storable form of an OPC UA value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, datetime):
        return to_utc(value).isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, ua.LocalizedText):
        return value.Text
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return str(value)


def tag_record(source: str, tag: str, dv: ua.DataValue, *, historical: bool) -> Record:
    """One data value as a `tag_value` record. The key is (source, tag, source time, value): live and history agree."""
    when = dv.SourceTimestamp or dv.ServerTimestamp or utcnow()
    value = plain_value(dv.Value.Value if dv.Value is not None else None)
    stamp = to_utc(when).isoformat(timespec="microseconds")
    return Record(
        source=source,
        kind="tag_value",
        key=tag,
        source_time=when,
        value=value,
        quality=quality_of(dv.StatusCode),
        idempotency_key=idempotency_key(source, "tag_value", tag, stamp, repr(value)),
        historical=historical,
    )


def alarm_record(source: str, event: Event) -> Record:
    """One alarm/condition event as an `alarm` record keyed by its asset (SourceName), deduplicated by EventId."""
    fields = event.get_event_props_as_fields_dict()

    def field_value(name: str) -> Any:
        variant = fields.get(name)
        return variant.Value if variant is not None else None

    raw_id = field_value("EventId") or b""
    event_id = raw_id.hex() if isinstance(raw_id, bytes) else str(raw_id)
    when = field_value("Time") or utcnow()
    asset = field_value("SourceName") or "unknown"
    active = field_value("ActiveState/Id")
    value = {
        "event_id": event_id,
        "message": plain_value(field_value("Message")) or "",
        "severity": int(field_value("Severity") or 0),
        "condition": plain_value(field_value("ConditionName")) or "",
        "active": bool(active) if active is not None else None,
    }
    key = idempotency_key(source, "alarm", event_id) if event_id else idempotency_key(
        source, "alarm", asset, to_utc(when).isoformat(), value["message"]
    )
    return Record(source=source, kind="alarm", key=str(asset), source_time=when, value=value, idempotency_key=key)


def _first_error(group: BaseExceptionGroup) -> BaseException:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            return _first_error(exc)
        if not isinstance(exc, asyncio.CancelledError):
            return exc
    return group.exceptions[0]


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


class _Session:
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
                log.warning("opcua_password_without_encryption", source=cfg.name,
                            hint="use security_policy Basic256Sha256 so the password is encrypted on the wire")
        client.connection_lost_callback = self._on_connection_lost
        return client

    async def _on_connection_lost(self, exc: Exception) -> None:
        self.lost_reason = repr(exc)
        self.lost.set()

    async def __aenter__(self) -> "_Session":
        try:
            async with asyncio.timeout(self.config.connect_timeout_s):
                await self._connect()
            await self._subscribe()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
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
        if cfg.security_policy != "None" and cfg.security_mode == "None" or (
            cfg.security_policy == "None" and cfg.security_mode != "None"
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
            log.info("opcua_server_certificate", source=cfg.name, sha256=sha256_thumbprint(server_der),
                     pinned=cfg.server_cert_sha256 is not None)
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
        for request, result in zip(requests, results):
            handle = request.RequestedParameters.ClientHandle
            if isinstance(result, ua.StatusCode):
                NODE_FAILURES.labels(cfg.name).inc()
                log.error("opcua_item_refused", source=cfg.name, node_id=request.ItemToMonitor.NodeId.to_string(),
                          status=result.name)
                continue
            if handle != self.event_handle:
                self.tags_by_handle[handle] = cfg.nodes[handle - 1].tag

    async def _event_request(self, handle: int) -> ua.MonitoredItemCreateRequest:
        # ConditionType and AlarmConditionType together: the select clauses then include ActiveState/Id.
        types = [
            self.client.get_node(ua.NodeId(t)) for t in (ua.ObjectIds.ConditionType, ua.ObjectIds.AlarmConditionType)
        ]
        evfilter = await get_filter_from_event_type(types)
        item = ua.ReadValueId()
        item.NodeId = ua.NodeId(ua.ObjectIds.Server)
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
            if not current.StatusCode.is_good():
                raise ConnectionLost(f"{cfg.endpoint}: server time unreadable ({current.StatusCode.name})")
            if level.StatusCode.is_good() and level.Value is not None:
                SERVICE_LEVEL.labels(cfg.name).set(float(level.Value.Value))

    async def _read_health(self) -> tuple[ua.DataValue, ua.DataValue]:
        current, level = await self.client.uaclient.read_attributes(
            [CURRENT_TIME, SERVICE_LEVEL_NODE], ua.AttributeIds.Value
        )
        return current, level

    async def history(self, node: NodeConfig, start: datetime, end: datetime) -> "AsyncHistoryPages":
        return AsyncHistoryPages(self.client.get_node(ua.NodeId.from_string(node.node_id)), start, end)


class AsyncHistoryPages:
    """HistoryRead raw values page by page, so a long gap never sits in memory at once.

    A compliant server returns a continuation point when more values remain. Some (asyncua's own HistoryDict among
    them) just cut the reply at NumValuesPerNode without one: a full page without a continuation point is therefore
    followed by a new read starting at the last returned timestamp (that boundary value comes twice and is
    deduplicated by its idempotency key).
    """

    def __init__(self, node: Node, start: datetime, end: datetime) -> None:
        self.node = node
        self.start = start
        self.end = end

    def __aiter__(self) -> "AsyncHistoryPages":
        self._continuation: bytes | None = None
        self._done = False
        return self

    async def __anext__(self) -> list[ua.DataValue]:
        if self._done:
            raise StopAsyncIteration
        details = ua.ReadRawModifiedDetails()
        details.IsReadModified = False
        details.StartTime = self.start
        details.EndTime = self.end
        details.NumValuesPerNode = HISTORY_PAGE_VALUES
        details.ReturnBounds = False
        previous = self._continuation
        result = await self.node.history_read(details, previous)
        result.StatusCode.check()
        values = list(result.HistoryData.DataValues or []) if result.HistoryData is not None else []
        self._continuation = result.ContinuationPoint
        if self._continuation is not None:
            # A repeated continuation point would loop forever.
            self._done = self._continuation == previous or not values
            return values
        last = values[-1].SourceTimestamp if values else None
        if len(values) >= HISTORY_PAGE_VALUES and last is not None and to_utc(last) > to_utc(self.start):
            self.start = last
        else:
            self._done = True
        return values


@dataclass
class _Burst:
    """Per tag, the notifications consumed back to back (one or more publishes), for `_suspect_overflow`."""

    counts: Tally[str] = field(default_factory=Tally)
    first: dict[str, datetime] = field(default_factory=dict)
    before: dict[str, datetime | None] = field(default_factory=dict)

    def add(self, batch: Sequence[Record], last_seen: dict[str, datetime]) -> None:
        for r in batch:
            if r.kind != "tag_value":
                continue
            if r.key not in self.counts:
                self.before[r.key] = last_seen.get(r.key)
                self.first[r.key] = r.source_time
            self.counts[r.key] += 1
            self.first[r.key] = min(self.first[r.key], r.source_time)


@dataclass
class _AuditTally:
    records: int = 0
    stored: int = 0
    historical: int = 0
    alarms: int = 0
    first: datetime | None = None
    last: datetime | None = None

    def add(self, records: Sequence[Record], stored: int) -> None:
        self.records += len(records)
        self.stored += stored
        self.historical += sum(r.historical for r in records)
        self.alarms += sum(r.kind == "alarm" for r in records)
        times = [r.source_time for r in records]
        if times:
            self.first = min([t for t in (self.first, min(times)) if t is not None])
            self.last = max([t for t in (self.last, max(times)) if t is not None])


class OpcuaSource:
    """A daemon Component: one configured OPC UA server into the store through the shared `RecordWriter`."""

    def __init__(
        self,
        config: OpcuaSourceConfig,
        writer: RecordWriter,
        *,
        pki_dir: Path,
        audit: AuditSink | None = None,
        audit_every_s: float = 60.0,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.name = f"opcua:{config.name}"
        self._writer = writer
        self._pki_dir = pki_dir
        self._audit = audit
        self._audit_every_s = audit_every_s
        self._backoff = Backoff(config.reconnect_min_s, config.reconnect_max_s, rng=rng or random.Random())
        # Newest source time seen per tag, live or backfilled: where the next backfill starts.
        self.last_seen: dict[str, datetime] = {}
        self._nodes_by_tag = {node.tag: node for node in config.nodes}
        self._repairs: asyncio.Queue[tuple[NodeConfig, datetime, datetime]] | None = None
        self._sessions = 0
        self._tally = _AuditTally()
        self._audit_due = time.monotonic() + audit_every_s
        self._identity: Identity | None = None
        self._audit_tasks: set[asyncio.Future[Any]] = set()
        self._in_flight: set[asyncio.Future[None]] = set()

    # --- Component ------------------------------------------------------------------------------------------

    async def run(self, ready: asyncio.Event) -> None:
        cfg = self.config
        self._identity = self._load_identity()
        try:
            while True:
                try:
                    async with _Session(cfg, self._identity) as session:
                        await self._serve(session, ready)
                except (OpcuaSecurityError, asyncio.CancelledError):
                    raise
                except (OpcuaError, OSError, TimeoutError, ConnectionError, ua.UaError) as exc:
                    CONNECTED.labels(cfg.name).set(0)
                    delay = self._backoff.next_delay()
                    if isinstance(exc, ConnectionLost):
                        log.warning("opcua_connection_lost", source=cfg.name, error=str(exc),
                                    retry_in_s=round(delay, 2))
                    else:
                        CONNECT_FAILURES.labels(cfg.name).inc()
                        log.warning("opcua_connect_failed", source=cfg.name, endpoint=cfg.endpoint, error=repr(exc),
                                    retry_in_s=round(delay, 2))
                    await asyncio.sleep(delay)
        finally:
            CONNECTED.labels(cfg.name).set(0)
            if self._in_flight:
                await asyncio.shield(asyncio.gather(*self._in_flight, return_exceptions=True))
            await asyncio.shield(self._audit_settled())
            await asyncio.shield(self._flush_audit(force=True))
            await asyncio.shield(self._audit_settled())

    def _load_identity(self) -> Identity | None:
        cfg = self.config
        if cfg.security_policy == "None":
            return None
        if cfg.client_cert is not None or cfg.client_key is not None:
            if cfg.client_cert is None or cfg.client_key is None:
                raise OpcuaSecurityError(f"source {cfg.name}: client_cert and client_key must be set together")
            identity = load_identity(cfg.client_cert, cfg.client_key)
        else:
            identity = ensure_certificate(self._pki_dir, f"opcua-{cfg.name}", default_application_uri(cfg.name))
        log.info("opcua_client_certificate", source=cfg.name, path=str(identity.cert_path),
                 generated=identity.generated, sha256=identity.thumbprint_sha256,
                 application_uri=identity.application_uri)
        return identity

    async def _serve(self, session: _Session, ready: asyncio.Event) -> None:
        cfg = self.config
        # Snapshot before the first notification moves it: the gap runs from here to the new subscription.
        gap_start = dict(self.last_seen)
        first_session = self._sessions == 0
        self._sessions += 1
        if not first_session:
            RECONNECTS.labels(cfg.name).inc()
        self._backoff.reset()
        CONNECTED.labels(cfg.name).set(1)
        log.info("opcua_subscribed", source=cfg.name, endpoint=cfg.endpoint, items=len(session.tags_by_handle),
                 events=session.event_handle is not None, session=self._sessions)
        ready.set()
        try:
            async with asyncio.TaskGroup() as tasks:
                # Kept across sessions: a repair the lost session did not finish is done by the next one.
                if self._repairs is None:
                    self._repairs = asyncio.Queue(REPAIR_QUEUE_MAX)
                repairs = self._repairs
                tasks.create_task(self._consume(session, repairs), name=f"opcua-{cfg.name}-consume")
                tasks.create_task(session.watch(), name=f"opcua-{cfg.name}-watch")
                if cfg.history_backfill:
                    tasks.create_task(self._backfill(session, gap_start, first_session),
                                      name=f"opcua-{cfg.name}-backfill")
                    tasks.create_task(self._repair(session, repairs), name=f"opcua-{cfg.name}-repair")
        except BaseExceptionGroup as group:
            # The first failure (usually the watch's ConnectionLost) decides; the rest were cancelled with it.
            raise _first_error(group) from group

    # --- live values ----------------------------------------------------------------------------------------

    async def _consume(self, session: _Session, repairs: asyncio.Queue[tuple[NodeConfig, datetime, datetime]]) -> None:
        assert session.subscription is not None
        sub = session.subscription
        loop = asyncio.get_running_loop()
        burst = _Burst()
        while True:
            batch: list[Record] = []
            event: Any = await self._next_event(sub, 0)  # a poll: None when the queue has run dry
            if event is None:
                # Everything the server has published so far is consumed: judge this burst, start the next.
                if self.config.history_backfill:
                    self._suspect_overflow(burst, repairs)
                burst = _Burst()
                event = await self._next_event(sub, None)
            deadline = loop.time() + BATCH_MAX_DELAY_S
            while event is not None:
                self._convert(session, event, batch)
                if len(batch) >= BATCH_MAX_RECORDS or (remaining := deadline - loop.time()) <= 0:
                    break
                event = await self._next_event(sub, remaining)
            if batch:
                burst.add(batch, self.last_seen)
                await self._store(batch)

    def _suspect_overflow(self, burst: "_Burst", repairs: asyncio.Queue[tuple[NodeConfig, datetime, datetime]]) -> None:
        """Queue a history repair for tags whose server-side queue may have overflowed.

        A server drops the oldest queued values of a monitored item when the client lags (asyncua does it without
        setting the Overflow bit), so loss is invisible in the data. A tag that delivered a full queue's worth in
        one burst (notifications consumed back to back) is suspect: what it may have lost lies between its value
        before the burst and the burst's first. A false alarm costs one HistoryRead whose values are all
        duplicates. Items with queue_size 1 are left alone: "latest value only" is what that setting asks for.
        """
        for tag, count in burst.counts.items():
            node = self._nodes_by_tag.get(tag)
            before = burst.before.get(tag)
            if node is None or node.queue_size <= 1 or count < node.queue_size or before is None:
                continue
            OVERFLOW_SUSPECTED.labels(self.config.name).inc()
            try:
                repairs.put_nowait((node, before, burst.first[tag]))
            except asyncio.QueueFull:
                log.warning("opcua_repair_queue_full", source=self.config.name, tag=tag)

    @staticmethod
    async def _next_event(sub: Subscription, timeout: float | None) -> Any:
        """The next notification, or None after `timeout` seconds.

        Not asyncua's `next_event(timeout)`: it uses `asyncio.wait_for`, which on Python 3.11 can swallow the
        cancellation that arrives as an item does; the TaskGroup then waits forever for this task to stop.
        """
        try:
            async with asyncio.timeout(timeout):
                return await sub.next_event()
        except TimeoutError:
            return None
        except StopAsyncIteration as exc:
            raise ConnectionLost("subscription closed") from exc

    def _convert(self, session: _Session, event: Any, batch: list[Record]) -> None:
        cfg = self.config
        if isinstance(event, DataChangeEvent):
            tag = session.tags_by_handle.get(event.data.monitored_item.ClientHandle)
            if tag is None:
                return
            batch.append(tag_record(cfg.name, tag, event.data.monitored_item.Value, historical=False))
            VALUES_RECEIVED.labels(cfg.name).inc()
        elif isinstance(event, OpcEvent):
            try:
                batch.append(alarm_record(cfg.name, event.event))
            except (TypeError, ValueError) as exc:  # a server's odd event must not stop the values around it
                log.warning("opcua_event_unreadable", source=cfg.name, error=repr(exc))
                return
            ALARMS_RECEIVED.labels(cfg.name).inc()
        elif isinstance(event, StatusChangeEvent):
            status = event.notification.Status
            # BadTimeout / BadShutdown: the server dropped this subscription; only a new session brings it back.
            if not status.is_good():
                session.lost_reason = f"subscription status {status.name}"
                session.lost.set()

    async def _store(self, records: list[Record]) -> None:
        # Shielded and tracked: a stop arriving while the batch commits still counts and audits it (run() waits).
        task = asyncio.ensure_future(self._commit(records))
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)
        await asyncio.shield(task)

    async def _commit(self, records: list[Record]) -> None:
        stored = await self._writer.write(records)
        RECORDS_STORED.labels(self.config.name).inc(stored)
        for r in records:
            if r.kind == "tag_value" and (r.key not in self.last_seen or r.source_time > self.last_seen[r.key]):
                self.last_seen[r.key] = r.source_time
        self._tally.add(records, stored)
        await self._flush_audit()

    # --- backfill -------------------------------------------------------------------------------------------

    async def _backfill(self, session: _Session, gap_start: dict[str, datetime], first_session: bool) -> None:
        """HistoryRead each node from its last seen value to now; the overlap with live values is deduplicated."""
        cfg = self.config
        end = utcnow() + timedelta(seconds=1)  # the live subscription covers everything after this
        earliest = end - timedelta(seconds=cfg.history_backfill_max_s)
        total = 0
        for node in cfg.nodes:
            start = gap_start.get(node.tag)
            if start is None and first_session and cfg.history_backfill_initial_s > 0:
                start = end - timedelta(seconds=cfg.history_backfill_initial_s)
            if start is None:
                continue
            start = max(start - timedelta(seconds=BACKFILL_OVERLAP_S), earliest)
            total += await self._history_into_store(session, node, start, end)
        if total:
            log.info("opcua_backfilled", source=cfg.name, values=total)

    async def _repair(self, session: _Session, repairs: asyncio.Queue[tuple[NodeConfig, datetime, datetime]]) -> None:
        """Fill what a suspected server-side queue overflow dropped (see `_suspect_overflow`)."""
        while True:
            node, start, end = await repairs.get()
            try:
                read = await self._history_into_store(session, node, start, end)
            except BaseException:
                with suppress(asyncio.QueueFull):  # the session died under it: the next one retries
                    repairs.put_nowait((node, start, end))
                raise
            log.info("opcua_overflow_repaired", source=self.config.name, tag=node.tag, values_read=read,
                     start=start.isoformat(), end=end.isoformat())

    async def _history_into_store(self, session: _Session, node: NodeConfig, start: datetime, end: datetime) -> int:
        """HistoryRead one node's raw values in [start, end] into the store (historical=True); returns values read."""
        cfg = self.config
        total = 0
        try:
            async for page in await session.history(node, start, end):
                records = [tag_record(cfg.name, node.tag, dv, historical=True) for dv in page]
                if records:
                    VALUES_BACKFILLED.labels(cfg.name).inc(len(records))
                    total += len(records)
                    await self._store(records)
        except ua.UaStatusCodeError as exc:
            # The server keeps no history for this node (BadHistoryOperationUnsupported and kin): nothing to do.
            log.info("opcua_history_unavailable", source=cfg.name, tag=node.tag, status=exc.__class__.__name__)
        return total

    # --- audit ----------------------------------------------------------------------------------------------

    async def _flush_audit(self, force: bool = False) -> None:
        """One `ingest.batch` entry per `audit_every_s` (not per value): the audit log stays small and fsyncs rare."""
        if self._audit is None or self._tally.records == 0:
            return
        if not force and time.monotonic() < self._audit_due:
            return
        tally, self._tally = self._tally, _AuditTally()
        self._audit_due = time.monotonic() + self._audit_every_s
        payload = {
            "source": self.config.name,
            "endpoint": self.config.endpoint,
            "records": tally.records,
            "stored": tally.stored,
            "historical": tally.historical,
            "alarms": tally.alarms,
            "first_source_time": tally.first.isoformat() if tally.first else None,
            "last_source_time": tally.last.isoformat() if tally.last else None,
        }
        # Shielded: a stop arriving mid-append must not leave an entry half-reported; run() waits for it.
        task = asyncio.ensure_future(asyncio.to_thread(self._audit.append, "ingest.batch", "opcua", payload))
        self._audit_tasks.add(task)
        await asyncio.shield(self._audit_settled())

    async def _audit_settled(self) -> None:
        """Wait for every audit append in flight; a failed one is logged, never raised into ingest."""
        for task in list(self._audit_tasks):
            try:
                await task
            except Exception as exc:  # the audit log failing must be loud, but must not stop ingest
                if task in self._audit_tasks:
                    log.error("opcua_audit_append_failed", source=self.config.name, error=repr(exc))
            self._audit_tasks.discard(task)


__all__ = [
    "AuditSink",
    "Backoff",
    "ConnectionLost",
    "OpcuaError",
    "OpcuaSecurityError",
    "OpcuaSource",
    "ServerCertificateMismatch",
    "alarm_record",
    "tag_record",
]
