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
import hashlib
import math
import random
import time
from collections import Counter as Tally
from contextlib import suppress
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
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
from connectors.parsers import QuarantineReason
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
QUARANTINED = Counter(
    "edge_agent_opcua_quarantined_total", "OPC UA values and events refused into quarantine", ["source", "reason"]
)
GAPS = Counter("edge_agent_opcua_gaps_total", "data_gap records stored: intervals no data could fill",
               ["source", "reason"])
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
# A flood of bad values must not make one audit entry huge: the first are listed, the rest only counted (as MQTT).
QUARANTINE_AUDIT_ITEMS = 100
# Closing a dead session must not stall the reconnect: the server may never answer CloseSession.
DISCONNECT_TIMEOUT_S = 2.0
# Server-wide ids (OPC 10000-5): Server_ServerStatus_CurrentTime and Server_ServiceLevel.
CURRENT_TIME = ua.NodeId(ua.ObjectIds.Server_ServerStatus_CurrentTime)
SERVICE_LEVEL_NODE = ua.NodeId(ua.ObjectIds.Server_ServiceLevel)
# User-token rejections: retrying with the same credentials cannot succeed, so they are security errors.
# Quarantine reasons: the MQTT side's vocabulary, so both connectors' rows and metrics read alike.
SCHEMA_MISMATCH = QuarantineReason.SCHEMA_MISMATCH.value
INTERNAL_ERROR = QuarantineReason.INTERNAL_ERROR.value
# Integers JSON readers and SQLite keep exactly.
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# OPC UA's DateTime 0: "no timestamp".
_NULL_TIME = ua.uatypes.FILETIME_EPOCH_AS_UTC_DATETIME
# The start of a history probe: OPC UA's first representable time (its DateTime 0 itself asks for a backward read).
HISTORY_PROBE_START = _NULL_TIME + timedelta(seconds=1)
# Plausible source times, as the MQTT side's defaults: a device clock outside them would misplace a value in every
# report window (and a far-future one would stop backfill for its tag, which starts at the newest time seen).
SOURCE_TIME_MIN = datetime(2000, 1, 1, tzinfo=timezone.utc)
SOURCE_TIME_MAX_AHEAD_S = 86400.0
# Event Severity is 1..1000 (OPC 10000-5 BaseEventType); 0 stands for "not given".
SEVERITY_MAX = 1000
# StatusCode info bits (OPC 10000-4 §7.39.1): InfoType DataValue, and its Overflow bit.
_INFO_TYPE_MASK = 0x0C00
_INFO_TYPE_DATA_VALUE = 0x0400
_OVERFLOW_BIT = 0x0080
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

    def append_many(self, items: Sequence[tuple[str, str, dict[str, Any]]]) -> Sequence[Any]: ...


class QuarantineSink(Protocol):
    """What this connector needs of `edge_agent.store.Store`: a place for what cannot become a record."""

    def quarantine(self, source: str, topic: str, raw: bytes, reason: str,
                   received_time: datetime | None = None) -> int: ...


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


def overflowed(status: ua.StatusCode | None) -> bool:
    """The Overflow info bit (OPC 10000-4 §7.39.1): the server dropped values of this item before this one."""
    if status is None:
        return False
    return status.value & _INFO_TYPE_MASK == _INFO_TYPE_DATA_VALUE and bool(status.value & _OVERFLOW_BIT)


class ValueRefused(OpcuaError):
    """One OPC UA value or event that cannot become a record. `reason` is the quarantine reason; `detail` says why."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class Refused:
    """What a quarantine row keeps of a refused value or event, and why it was refused."""

    topic: str  # opcua/<source>/<tag>, or opcua/<source>/events
    raw: bytes  # the DataValue's OPC UA binary encoding where it has one, else its repr (UTF-8, escaped)
    reason: str
    detail: str


def _text(text: str, what: str) -> str:
    """A string that UTF-8 (the store, hashes, reports) can carry: a lone surrogate is refused, NUL is kept."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueRefused(SCHEMA_MISMATCH, f"{what}: lone surrogate at index {exc.start}") from exc
    return text


def _utc(when: datetime, what: str) -> datetime:
    try:
        return to_utc(when)
    except (OverflowError, ValueError) as exc:  # year 1 with a positive offset, year 9999 with a negative one
        raise ValueRefused(SCHEMA_MISMATCH, f"{what} {when!r} cannot be expressed in UTC") from exc


def _plausible(when: datetime, what: str) -> datetime:
    """A source time in [SOURCE_TIME_MIN, now + SOURCE_TIME_MAX_AHEAD_S]; one outside would misplace the value."""
    utc = _utc(when, what)
    if utc < SOURCE_TIME_MIN or utc > utcnow() + timedelta(seconds=SOURCE_TIME_MAX_AHEAD_S):
        raise ValueRefused(SCHEMA_MISMATCH, f"{what} {utc.isoformat()} is outside the plausible range")
    return utc


def _stamp(*candidates: Any) -> datetime | None:
    """The first candidate that is a timestamp: OPC UA's DateTime 0 (1601-01-01) means none (OPC 10000-6 §5.2.2.5)."""
    for when in candidates:
        if when is None:
            continue
        if not isinstance(when, datetime):
            raise ValueRefused(SCHEMA_MISMATCH, f"timestamp {when!r} is a {type(when).__name__}, not a DateTime")
        if _utc(when, "timestamp") > _NULL_TIME:
            return when
    return None


def plain_value(value: Any) -> Any:
    """A JSON-storable form of an OPC UA value.

    Non-finite floats become the strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers; `tag_record`
    marks such a value uncertain). Integers beyond signed 64 bits (a UInt64 near its top) become exact decimal
    strings: JSON readers and SQLite would round them. A lone surrogate in a string is refused (`ValueRefused`).
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        number = int(value)  # an IntEnum (OPC UA enumerations) is stored as its number
        return number if INT64_MIN <= number <= INT64_MAX else str(number)
    if isinstance(value, float):
        number = float(value)
        if math.isnan(number):
            return "NaN"
        return number if math.isfinite(number) else ("Infinity" if number > 0 else "-Infinity")
    if isinstance(value, str):
        return _text(str(value), "string")
    if isinstance(value, datetime):
        return _utc(value, "DateTime value").isoformat()
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, ua.LocalizedText):
        return _text(value.Text, "LocalizedText") if value.Text is not None else None
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return _text(str(value), type(value).__name__)


def _non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, (list, tuple)) and any(_non_finite(v) for v in value)


def tag_record(source: str, tag: str, dv: ua.DataValue, *, historical: bool) -> Record:
    """One data value as a `tag_value` record. The key is (source, tag, source time, value): live and history agree.

    Raises `ValueRefused` for a value no record can hold faithfully (see `plain_value`, `_plausible`).
    """
    when = _plausible(_stamp(dv.SourceTimestamp, dv.ServerTimestamp) or utcnow(), "source time")
    raw = dv.Value.Value if dv.Value is not None else None
    value = plain_value(raw)
    quality = quality_of(dv.StatusCode)
    if quality == "good" and _non_finite(raw):
        quality = "uncertain"  # the server vouches for it, but a non-number is no measurement
    stamp = when.isoformat(timespec="microseconds")
    return Record(
        source=source,
        kind="tag_value",
        key=tag,
        source_time=when,
        value=value,
        quality=quality,
        idempotency_key=idempotency_key(source, "tag_value", tag, stamp, repr(value)),
        historical=historical,
    )


def alarm_record(source: str, event: Event, *, historical: bool = False) -> Record:
    """One alarm/condition event as an `alarm` record keyed by its asset (SourceName), deduplicated by EventId.

    The key is the same live and from HistoryRead (same select clauses, same EventId). Raises `ValueRefused` for a
    field no record can hold (a Severity that is no integer, a Time that is no DateTime or is implausible).
    """
    fields = event.get_event_props_as_fields_dict()

    def field_value(name: str) -> Any:
        variant = fields.get(name)
        return variant.Value if variant is not None else None

    raw_id = field_value("EventId")
    event_id = raw_id.hex() if isinstance(raw_id, bytes) else str(plain_value(raw_id) or "")
    when = _plausible(_stamp(field_value("Time"), field_value("ReceiveTime")) or utcnow(), "event Time")
    severity = field_value("Severity")
    if severity is not None and (isinstance(severity, bool) or not isinstance(severity, int)
                                 or not 0 <= severity <= SEVERITY_MAX):
        raise ValueRefused(SCHEMA_MISMATCH, f"event Severity {severity!r} is not an integer in 0..{SEVERITY_MAX}")
    active = field_value("ActiveState/Id")
    if active is not None and not isinstance(active, bool):
        raise ValueRefused(SCHEMA_MISMATCH, f"event ActiveState/Id {active!r} is not a Boolean")
    asset = str(plain_value(field_value("SourceName")) or "") or "unknown"
    value = {
        "event_id": event_id,
        "message": str(plain_value(field_value("Message")) or ""),
        "severity": int(severity or 0),
        "condition": str(plain_value(field_value("ConditionName")) or ""),
        "active": active,
    }
    key = idempotency_key(source, "alarm", event_id) if event_id else idempotency_key(
        source, "alarm", asset, when.isoformat(), value["message"]
    )
    return Record(source=source, kind="alarm", key=asset, source_time=when, value=value, idempotency_key=key,
                  historical=historical)


def _describe(exc: BaseException) -> str:
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # an exception whose str() fails still has a type name
        return type(exc).__name__


def _evidence(item: Any) -> bytes:
    """The refused item as bytes: OPC UA binary where it encodes (decodable later with asyncua), else its repr."""
    if isinstance(item, (ua.DataValue, ua.HistoryEventFieldList)):
        with suppress(Exception):  # an odd value may not encode: its repr is the evidence then
            return ua.ua_binary.struct_to_binary(item)
    try:
        return repr(item).encode("utf-8", "backslashreplace")
    except Exception as exc:
        return f"<unrepresentable {type(item).__name__}: {_describe(exc)}>".encode("utf-8", "backslashreplace")


def convert_value(source: str, tag: str, dv: ua.DataValue, *, historical: bool) -> Record | Refused:
    """The isolation barrier for one data value: a record, or what to quarantine. Never raises."""
    try:
        return tag_record(source, tag, dv, historical=historical)
    except ValueRefused as exc:
        return Refused(f"opcua/{source}/{tag}", _evidence(dv), exc.reason, exc.detail)
    except Exception as exc:  # nobody foresaw this value: it is kept aside, the values around it go on
        return Refused(f"opcua/{source}/{tag}", _evidence(dv), INTERNAL_ERROR, _describe(exc))


def convert_event(source: str, event: Event, *, historical: bool) -> Record | Refused:
    """The isolation barrier for one event: a record, or what to quarantine. Never raises."""
    try:
        return alarm_record(source, event, historical=historical)
    except ValueRefused as exc:
        return Refused(f"opcua/{source}/events", _evidence(_fields_of(event)), exc.reason, exc.detail)
    except Exception as exc:  # nobody foresaw this event: it is kept aside, the values around it go on
        return Refused(f"opcua/{source}/events", _evidence(_fields_of(event)), INTERNAL_ERROR, _describe(exc))


def convert_history_event(source: str, clauses: list[ua.SimpleAttributeOperand],
                          fields: ua.HistoryEventFieldList) -> Record | Refused:
    """The isolation barrier for one event read back with HistoryRead (`historical=True`). Never raises."""
    try:
        event = Event.from_event_fields(clauses, list(fields.EventFields))
    except Exception as exc:  # fields that do not match the select clauses: the field list is the evidence
        return Refused(f"opcua/{source}/events", _evidence(fields), INTERNAL_ERROR, _describe(exc))
    return convert_event(source, event, historical=True)


def _fields_of(event: Event) -> Any:
    try:
        return event.get_event_props_as_fields_dict()
    except Exception:  # the fields themselves are what is broken: the object is the evidence
        return event


GAP_REASONS = ("history_unavailable", "queue_overflow", "outage_exceeds_history", "event_history_unavailable")


def gap_record(source: str, tag: str | None, start: datetime, end: datetime | None, reason: str) -> Record:
    """A `data_gap` record: an interval for which the store holds no data and the server's history could not fill."""
    if reason not in GAP_REASONS:
        raise ValueError(f"gap reason {reason!r} is not one of {GAP_REASONS}")
    start_iso = to_utc(start).isoformat()
    end_iso = to_utc(end).isoformat() if end is not None else None
    return Record(
        source=source,
        kind="data_gap",
        key=tag or source,
        source_time=start,
        value={"start": start_iso, "end": end_iso, "reason": reason, "source": source, "tag": tag},
        idempotency_key=idempotency_key(source, "data_gap", tag or "", start_iso, end_iso or "", reason),
        historical=True,
    )


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
        self.healthy_at = utcnow()
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
        self.event_filter = evfilter
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
            self.healthy_at = utcnow()

    async def _read_health(self) -> tuple[ua.DataValue, ua.DataValue]:
        current, level = await self.client.uaclient.read_attributes(
            [CURRENT_TIME, SERVICE_LEVEL_NODE], ua.AttributeIds.Value
        )
        return current, level

    def history(self, node: NodeConfig, start: datetime, end: datetime, page_values: int | None = None,
                ) -> "AsyncHistoryPages":
        return AsyncHistoryPages(self.client.get_node(ua.NodeId.from_string(node.node_id)), start, end,
                                 page_values or HISTORY_PAGE_VALUES)

    async def history_reaches(self, node: NodeConfig, when: datetime) -> bool:
        """Whether the server's history for `node` holds a value at or before `when` (else it starts later).

        A forward read from the start of OPC UA time to `when` for one value: the oldest the server keeps.
        """
        async for page in self.history(node, HISTORY_PROBE_START, when, page_values=1):
            return bool(page)
        return False

    def event_history(self, start: datetime, end: datetime) -> "AsyncEventHistoryPages":
        assert self.event_filter is not None, "event history needs the event subscription's filter"
        return AsyncEventHistoryPages(self.client.get_node(ua.NodeId(ua.ObjectIds.Server)), start, end,
                                      self.event_filter)

    async def events_historized(self) -> bool:
        """The Server object's EventNotifier says whether the server keeps event history (OPC 10000-3 §5.4)."""
        notifier = await self.client.get_node(ua.NodeId(ua.ObjectIds.Server)).read_event_notifier()
        return ua.EventNotifier.HistoryRead in notifier


class _HistoryPages:
    """HistoryRead page by page, so a long gap never sits in memory at once.

    A compliant server returns a continuation point when more remains. Some (asyncua's own HistoryDict among them)
    just cut the reply at NumValuesPerNode without one: a full page without a continuation point is therefore followed
    by a new read starting at the last returned timestamp (that boundary item comes twice and is deduplicated by its
    idempotency key).
    """

    def __init__(self, node: Node, start: datetime, end: datetime, page_values: int) -> None:
        self.node = node
        self.start = start
        self.end = end
        self.page_values = page_values

    def _details(self) -> Any:
        raise NotImplementedError

    def _items(self, result: ua.HistoryReadResult) -> list[Any]:
        raise NotImplementedError

    def _time(self, item: Any) -> datetime | None:
        raise NotImplementedError

    def __aiter__(self) -> "_HistoryPages":
        self._continuation: bytes | None = None
        self._done = False
        return self

    async def __anext__(self) -> list[Any]:
        if self._done:
            raise StopAsyncIteration
        previous = self._continuation
        result = await self.node.history_read(self._details(), previous)
        result.StatusCode.check()
        items = self._items(result) if result.HistoryData is not None else []
        self._continuation = result.ContinuationPoint
        if self._continuation is not None:
            # A repeated continuation point would loop forever.
            self._done = self._continuation == previous or not items
            return items
        last = self._time(items[-1]) if items else None
        if len(items) >= self.page_values and last is not None and to_utc(last) > to_utc(self.start):
            self.start = last
        else:
            self._done = True
        return items


class AsyncHistoryPages(_HistoryPages):
    """Raw values of one node (ReadRawModifiedDetails)."""

    def _details(self) -> ua.ReadRawModifiedDetails:
        details = ua.ReadRawModifiedDetails()
        details.IsReadModified = False
        details.StartTime = self.start
        details.EndTime = self.end
        details.NumValuesPerNode = self.page_values
        details.ReturnBounds = False
        return details

    def _items(self, result: ua.HistoryReadResult) -> list[ua.DataValue]:
        return list(result.HistoryData.DataValues or [])

    def _time(self, item: ua.DataValue) -> datetime | None:
        return item.SourceTimestamp


class AsyncEventHistoryPages(_HistoryPages):
    """Events of the Server object (ReadEventDetails), with the live subscription's select clauses."""

    def __init__(self, node: Node, start: datetime, end: datetime, event_filter: ua.EventFilter) -> None:
        super().__init__(node, start, end, HISTORY_PAGE_VALUES)
        self.event_filter = event_filter
        paths = [[q.Name for q in c.BrowsePath] for c in event_filter.SelectClauses]
        self._time_index = paths.index(["Time"]) if ["Time"] in paths else None

    def _details(self) -> ua.ReadEventDetails:
        details = ua.ReadEventDetails()
        details.StartTime = self.start
        details.EndTime = self.end
        details.NumValuesPerNode = self.page_values
        details.Filter = self.event_filter
        return details

    def _items(self, result: ua.HistoryReadResult) -> list[ua.HistoryEventFieldList]:
        return list(result.HistoryData.Events or [])

    def _time(self, item: ua.HistoryEventFieldList) -> datetime | None:
        fields = item.EventFields or []
        if self._time_index is None or self._time_index >= len(fields):
            return None
        when = fields[self._time_index].Value
        return when if isinstance(when, datetime) else None


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
class _Converted:
    """What one batch of notifications (or one history page) became: records, refusals, and gaps it revealed."""

    records: list[Record] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    gaps: list[Record] = field(default_factory=list)

    def add(self, item: Record | Refused) -> None:
        (self.records if isinstance(item, Record) else self.refused).append(item)

    def __len__(self) -> int:
        return len(self.records) + len(self.refused) + len(self.gaps)


# One pending repair: the node, the span to read back, and whether loss is certain (Overflow bit) or suspected.
_Repair = tuple[NodeConfig, datetime, datetime, bool]


@dataclass
class _AuditTally:
    records: int = 0
    stored: int = 0
    historical: int = 0
    alarms: int = 0
    first: datetime | None = None
    last: datetime | None = None
    quarantined: Tally[str] = field(default_factory=Tally)
    quarantine_items: list[dict[str, Any]] = field(default_factory=list)

    def add(self, records: Sequence[Record], stored: int) -> None:
        self.records += len(records)
        self.stored += stored
        self.historical += sum(r.historical for r in records)
        self.alarms += sum(r.kind == "alarm" for r in records)
        times = [r.source_time for r in records]
        if times:
            self.first = min([t for t in (self.first, min(times)) if t is not None])
            self.last = max([t for t in (self.last, max(times)) if t is not None])

    def refuse(self, refused: Sequence[Refused]) -> None:
        for item in refused:
            self.quarantined[item.reason] += 1
            if len(self.quarantine_items) < QUARANTINE_AUDIT_ITEMS:
                self.quarantine_items.append({"topic": item.topic, "reason": item.reason, "detail": item.detail,
                                              "bytes": len(item.raw), "sha256": hashlib.sha256(item.raw).hexdigest()})

    def entries(self, source: str, endpoint: str) -> list[tuple[str, str, dict[str, Any]]]:
        entries: list[tuple[str, str, dict[str, Any]]] = []
        if self.records:
            entries.append(("ingest.batch", "opcua", {
                "source": source,
                "endpoint": endpoint,
                "records": self.records,
                "stored": self.stored,
                "historical": self.historical,
                "alarms": self.alarms,
                "first_source_time": self.first.isoformat() if self.first else None,
                "last_source_time": self.last.isoformat() if self.last else None,
            }))
        if self.quarantined:
            count = sum(self.quarantined.values())
            entries.append(("quarantine", "opcua", {
                "source": source,
                "count": count,
                "by_reason": dict(sorted(self.quarantined.items())),
                "items": self.quarantine_items,
                "items_omitted": count - len(self.quarantine_items),
            }))
        return entries


class OpcuaSource:
    """A daemon Component: one configured OPC UA server into the store through the shared `RecordWriter`.

    Every value and event passes an isolation barrier (`convert_value`, `convert_event`): what cannot become a record
    is quarantined with its reason (`quarantine`, e.g. the `Store`), counted and audited, and the rest of its batch
    goes on. An interval that neither the live subscription nor the server's history could fill becomes a
    `data_gap` record and an `opcua.gap` audit entry.
    """

    def __init__(
        self,
        config: OpcuaSourceConfig,
        writer: RecordWriter,
        *,
        quarantine: QuarantineSink,
        pki_dir: Path,
        audit: AuditSink | None = None,
        audit_every_s: float = 60.0,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.name = f"opcua:{config.name}"
        self._writer = writer
        self._quarantine = quarantine
        self._pki_dir = pki_dir
        self._audit = audit
        self._audit_every_s = audit_every_s
        self._backoff = Backoff(config.reconnect_min_s, config.reconnect_max_s, rng=rng or random.Random())
        # Newest source time seen per tag, live or backfilled: where the next backfill starts.
        self.last_seen: dict[str, datetime] = {}
        # Backfills a session started and did not finish (it was lost): the next session starts them over from here.
        self._backfill_from: dict[str, datetime] = {}
        self._events_backfill_from: datetime | None = None
        # Until when the event subscription is known to have delivered every event (its last good health read).
        self._events_covered_until: datetime | None = None
        self._nodes_by_tag = {node.tag: node for node in config.nodes}
        self._repairs: asyncio.Queue[_Repair] | None = None
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
        # Snapshot before the first notification moves it: the gap runs from here to the new subscription. A gap a
        # lost session did not finish filling starts where that session's started.
        for tag, seen in self.last_seen.items():
            self._backfill_from.setdefault(tag, seen)
        if self._events_backfill_from is None:
            self._events_backfill_from = self._events_covered_until
        gap_start = dict(self._backfill_from)
        events_from = self._events_backfill_from
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
                    if session.event_handle is not None:
                        tasks.create_task(self._backfill_events(session, events_from, first_session),
                                          name=f"opcua-{cfg.name}-backfill-events")
        except BaseExceptionGroup as group:
            # The first failure (usually the watch's ConnectionLost) decides; the rest were cancelled with it.
            raise _first_error(group) from group
        finally:
            if session.event_handle is not None:
                self._events_covered_until = session.healthy_at

    # --- live values ----------------------------------------------------------------------------------------

    async def _consume(self, session: _Session, repairs: asyncio.Queue[_Repair]) -> None:
        assert session.subscription is not None
        sub = session.subscription
        loop = asyncio.get_running_loop()
        burst = _Burst()
        while True:
            batch = _Converted()
            event: Any = await self._next_event(sub, 0)  # a poll: None when the queue has run dry
            if event is None:
                # Everything the server has published so far is consumed: judge this burst, start the next.
                if self.config.history_backfill:
                    self._suspect_overflow(burst, repairs, batch)
                burst = _Burst()
                if batch:
                    await self._store(batch)
                    batch = _Converted()
                event = await self._next_event(sub, None)
            deadline = loop.time() + BATCH_MAX_DELAY_S
            while event is not None:
                self._convert(session, event, batch, repairs)
                if len(batch) >= BATCH_MAX_RECORDS or (remaining := deadline - loop.time()) <= 0:
                    break
                event = await self._next_event(sub, remaining)
            if batch:
                burst.add(batch.records, self.last_seen)
                await self._store(batch)

    def _suspect_overflow(self, burst: "_Burst", repairs: asyncio.Queue[_Repair], out: _Converted) -> None:
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
            self._queue_repair(repairs, (node, before, burst.first[tag], False), out)

    def _queue_repair(self, repairs: asyncio.Queue[_Repair], repair: _Repair, out: _Converted) -> None:
        try:
            repairs.put_nowait(repair)
        except asyncio.QueueFull:
            # Nobody will read this span back: it is recorded as a gap rather than lost without a word.
            node, start, end, _ = repair
            log.warning("opcua_repair_queue_full", source=self.config.name, tag=node.tag)
            out.gaps.append(gap_record(self.config.name, node.tag, start, end, "queue_overflow"))

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

    def _convert(self, session: _Session, event: Any, out: _Converted, repairs: asyncio.Queue[_Repair]) -> None:
        cfg = self.config
        if isinstance(event, DataChangeEvent):
            tag = session.tags_by_handle.get(event.data.monitored_item.ClientHandle)
            if tag is None:
                return
            dv = event.data.monitored_item.Value
            item = convert_value(cfg.name, tag, dv, historical=False)
            out.add(item)
            VALUES_RECEIVED.labels(cfg.name).inc()
            if isinstance(item, Record):
                # The value delivered before this one (arrival order: the server's queue order).
                before = session.latest.get(tag) or self.last_seen.get(tag) or session.healthy_at
                session.latest[tag] = item.source_time
                if overflowed(dv.StatusCode):
                    self._overflowed(self._nodes_by_tag[tag], before, item.source_time, out, repairs)
        elif isinstance(event, OpcEvent):
            out.add(convert_event(cfg.name, event.event, historical=False))
            ALARMS_RECEIVED.labels(cfg.name).inc()
        elif isinstance(event, StatusChangeEvent):
            status = event.notification.Status
            # BadTimeout / BadShutdown: the server dropped this subscription; only a new session brings it back.
            if not status.is_good():
                session.lost_reason = f"subscription status {status.name}"
                session.lost.set()

    def _overflowed(self, node: NodeConfig, before: datetime, at: datetime, out: _Converted,
                    repairs: asyncio.Queue[_Repair]) -> None:
        """A value flagged Overflow: the server lost values of this item between `before` and `at`."""
        before, at = sorted((before, at))  # a device may stamp out of order; the span is what lies between
        log.warning("opcua_queue_overflow", source=self.config.name, tag=node.tag, start=before.isoformat(),
                    end=at.isoformat())
        if self.config.history_backfill:
            self._queue_repair(repairs, (node, before, at, True), out)
        else:
            out.gaps.append(gap_record(self.config.name, node.tag, before, at, "queue_overflow"))

    async def _store(self, batch: _Converted) -> None:
        # Shielded and tracked: a stop arriving while the batch commits still counts and audits it (run() waits).
        task = asyncio.ensure_future(self._commit(batch))
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)
        await asyncio.shield(task)

    async def _commit(self, batch: _Converted) -> None:
        records = batch.records
        stored = await self._writer.write(records) if records else 0
        RECORDS_STORED.labels(self.config.name).inc(stored)
        for r in records:
            if r.kind == "tag_value" and (r.key not in self.last_seen or r.source_time > self.last_seen[r.key]):
                self.last_seen[r.key] = r.source_time
        if batch.refused:
            await asyncio.to_thread(self._quarantine_sync, batch.refused)
        for gap in batch.gaps:
            await self._commit_gap(gap)
        self._tally.add(records, stored)
        self._tally.refuse(batch.refused)
        await self._flush_audit()

    def _quarantine_sync(self, refused: Sequence[Refused]) -> None:
        for item in refused:
            self._quarantine.quarantine(self.config.name, item.topic, item.raw, item.reason)
            QUARANTINED.labels(self.config.name, item.reason).inc()
            log.warning("opcua_quarantined", source=self.config.name, topic=item.topic, reason=item.reason,
                        detail=item.detail)

    async def _commit_gap(self, gap: Record) -> None:
        """Store one `data_gap` record; the first time it is stored, count it and write its `opcua.gap` entry."""
        if not await self._writer.write([gap]):
            return  # recorded before (same source, tag, interval, reason)
        GAPS.labels(self.config.name, gap.value["reason"]).inc()
        log.warning("opcua_data_gap", **gap.value)
        if self._audit is not None:
            task = asyncio.ensure_future(asyncio.to_thread(self._audit.append_many, [("opcua.gap", "opcua", gap.value)]))
            self._audit_tasks.add(task)
            await asyncio.shield(self._audit_settled())

    async def _gap(self, tag: str | None, start: datetime, end: datetime | None, reason: str) -> None:
        await self._store(_Converted(gaps=[gap_record(self.config.name, tag, start, end, reason)]))

    # --- backfill -------------------------------------------------------------------------------------------

    async def _backfill(self, session: _Session, gap_start: dict[str, datetime], first_session: bool) -> None:
        """HistoryRead each node from its last seen value to now; the overlap with live values is deduplicated.

        What the history cannot give is recorded as a gap: the head of an outage longer than history_backfill_max_s
        (`outage_exceeds_history`), and a span the server's history no longer (or never) held
        (`history_unavailable`). The first session's `history_backfill_initial_s` read claims nothing, so finds no gap.
        """
        cfg = self.config
        end = utcnow() + timedelta(seconds=1)  # the live subscription covers everything after this
        earliest = end - timedelta(seconds=cfg.history_backfill_max_s)
        total = 0
        for node in cfg.nodes:
            seen = gap_start.get(node.tag)
            if seen is not None:
                total += await self._fill(session, node, seen, earliest, end)
            elif first_session and cfg.history_backfill_initial_s > 0:
                initial = end - timedelta(seconds=cfg.history_backfill_initial_s)
                with suppress(ua.UaStatusCodeError):  # no history kept for this node: nothing to add
                    total += (await self._history_into_store(session, node, initial, end))[0]
            self._backfill_from.pop(node.tag, None)
        if total:
            log.info("opcua_backfilled", source=cfg.name, values=total)

    async def _fill(self, session: _Session, node: NodeConfig, seen: datetime, earliest: datetime,
                    end: datetime) -> int:
        """Backfill one node whose values are stored up to `seen`; returns values read."""
        start = seen
        if seen < earliest:
            await self._gap(node.tag, seen, earliest, "outage_exceeds_history")
            start = earliest
        try:
            held = await session.history_reaches(node, start)
            read, first = await self._history_into_store(
                session, node, max(start - timedelta(seconds=BACKFILL_OVERLAP_S), earliest), end)
        except ua.UaStatusCodeError as exc:  # BadHistoryOperationUnsupported and kin: the server keeps none
            log.info("opcua_history_unavailable", source=self.config.name, tag=node.tag, status=type(exc).__name__)
            await self._gap(node.tag, start, end, "history_unavailable")
            return 0
        if not held:
            # The history starts after the last value we hold: what lies between is gone.
            await self._gap(node.tag, start, first if first is not None and first < end else end,
                            "history_unavailable")
        return read

    async def _repair(self, session: _Session, repairs: asyncio.Queue[_Repair]) -> None:
        """Fill what a server-side queue overflow dropped (see `_suspect_overflow`, `_overflowed`)."""
        while True:
            node, start, end, certain = await repairs.get()
            try:
                read, _ = await self._history_into_store(session, node, start, end)
            except ua.UaStatusCodeError as exc:
                log.info("opcua_history_unavailable", source=self.config.name, tag=node.tag,
                         status=type(exc).__name__)
                if certain:  # the server said values were lost, and its history cannot give them back
                    await self._gap(node.tag, start, end, "queue_overflow")
                continue
            except BaseException:
                with suppress(asyncio.QueueFull):  # the session died under it: the next one retries
                    repairs.put_nowait((node, start, end, certain))
                raise
            log.info("opcua_overflow_repaired", source=self.config.name, tag=node.tag, values_read=read,
                     start=start.isoformat(), end=end.isoformat())

    async def _history_into_store(self, session: _Session, node: NodeConfig, start: datetime,
                                  end: datetime) -> tuple[int, datetime | None]:
        """HistoryRead one node's raw values in [start, end] into the store (historical=True).

        Returns the values read and the oldest source time among them. Raises `ua.UaStatusCodeError` when the
        server refuses the read (it keeps no history for the node).
        """
        cfg = self.config
        total = 0
        oldest: datetime | None = None
        async for page in session.history(node, start, end):
            batch = _Converted()
            for dv in page:
                batch.add(convert_value(cfg.name, node.tag, dv, historical=True))
            if page:
                VALUES_BACKFILLED.labels(cfg.name).inc(len(page))
                total += len(page)
                times = [r.source_time for r in batch.records]
                if times:
                    oldest = min([t for t in (oldest, min(times)) if t is not None])
                await self._store(batch)
        return total, oldest

    async def _backfill_events(self, session: _Session, since: datetime | None, first_session: bool) -> None:
        """HistoryRead the Server object's events from when the last session was last known healthy to now.

        Stored with `historical=True`, deduplicated against the live ones by EventId. A server that keeps no event
        history (its EventNotifier lacks HistoryRead, or it refuses the read) gets an `event_history_unavailable`
        gap for the interval, as does the head of an outage longer than history_backfill_max_s.
        """
        cfg = self.config
        end = utcnow() + timedelta(seconds=1)  # the live subscription covers everything after this
        earliest = end - timedelta(seconds=cfg.history_backfill_max_s)
        claimed = since is not None
        if since is None:
            if not (first_session and cfg.history_backfill_initial_s > 0):
                return
            since = end - timedelta(seconds=cfg.history_backfill_initial_s)
        if claimed and since < earliest:
            await self._gap(None, since, earliest, "outage_exceeds_history")
        start = max(since, earliest)
        read = 0
        try:
            if not await session.events_historized():
                raise ua.UaStatusCodeError(ua.StatusCodes.BadHistoryOperationUnsupported)
            assert session.event_filter is not None
            clauses = session.event_filter.SelectClauses
            async for page in session.event_history(max(start - timedelta(seconds=BACKFILL_OVERLAP_S), earliest), end):
                batch = _Converted()
                for fields in page:
                    batch.add(convert_history_event(cfg.name, clauses, fields))
                read += len(page)
                await self._store(batch)
        except ua.UaStatusCodeError as exc:
            log.info("opcua_event_history_unavailable", source=cfg.name, status=type(exc).__name__)
            if claimed:
                await self._gap(None, start, end, "event_history_unavailable")
        self._events_backfill_from = None
        if read:
            log.info("opcua_events_backfilled", source=cfg.name, events=read)

    # --- audit ----------------------------------------------------------------------------------------------

    async def _flush_audit(self, force: bool = False) -> None:
        """One `ingest.batch` (and `quarantine`) entry per `audit_every_s`, not per value: the log stays small."""
        if self._audit is None or (self._tally.records == 0 and not self._tally.quarantined):
            return
        if not force and time.monotonic() < self._audit_due:
            return
        tally, self._tally = self._tally, _AuditTally()
        self._audit_due = time.monotonic() + self._audit_every_s
        entries = tally.entries(self.config.name, self.config.endpoint)
        # Shielded: a stop arriving mid-append must not leave an entry half-reported; run() waits for it.
        task = asyncio.ensure_future(asyncio.to_thread(self._audit.append_many, entries))
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
    "QuarantineSink",
    "Refused",
    "ServerCertificateMismatch",
    "ValueRefused",
    "alarm_record",
    "convert_event",
    "convert_history_event",
    "convert_value",
    "gap_record",
    "overflowed",
    "plain_value",
    "tag_record",
]
