"""OPC UA source: data-change and alarm subscriptions on one server, into the store, surviving server restarts.

The known failure of asyncua deployments is a subscription that is silently dead after the server restarts: the
client object looks connected and no value ever arrives again (opcua-asyncio #70), and reconnecting the same
`Client` instance can hang forever (#1660). So a connection here is disposable: `Session` owns one freshly built
asyncua `Client` and its subscription, a health watch reads the server's CurrentTime and ServiceLevel every
`watchdog_interval_s`, and on any loss the whole session is thrown away and a NEW client is built after a jittered
backoff, with every monitored item recreated. The values the server produced while we were away are then read back
with HistoryRead (where the server keeps history) and stored with `historical=True`; a value's idempotency key is
the same whether it arrives live or from history, so an overlap is stored once. The same HistoryRead repairs the
other silent loss: a server drops the oldest values of a monitored item whose queue fills while we lag, so a tag that
delivers a full queue's worth at once has the span before it read back from history.

`OpcuaSource` is a daemon Component (contract 1): `run(ready)` sets `ready` once subscribed and runs until cancelled.

Modules: `session` (one disposable connection), `history` (HistoryRead pages), `records` (values and events as
records: the isolation barrier, `data_gap`), `source` (the Component), `metrics`. The names below are the public ones.
"""

from edge_agent.connectors.opcua.history import AsyncEventHistoryPages, AsyncHistoryPages
from edge_agent.connectors.opcua.metrics import (
    ALARMS_RECEIVED,
    CONNECT_FAILURES,
    CONNECTED,
    GAPS,
    NODE_FAILURES,
    OVERFLOW_SUSPECTED,
    QUARANTINED,
    RECONNECTS,
    RECORDS_STORED,
    SERVICE_LEVEL,
    VALUES_BACKFILLED,
    VALUES_RECEIVED,
)
from edge_agent.connectors.opcua.records import (
    GAP_REASONS,
    Refused,
    ValueRefused,
    alarm_record,
    convert_event,
    convert_history_event,
    convert_value,
    gap_record,
    overflowed,
    plain_value,
    quality_of,
    tag_record,
)
from edge_agent.connectors.opcua.security import OpcuaError, OpcuaSecurityError, ServerCertificateMismatch
from edge_agent.connectors.opcua.session import Backoff, ConnectionLost, Session, item_request
from edge_agent.connectors.opcua.source import OpcuaSource, QuarantineSink

__all__ = [
    "ALARMS_RECEIVED",
    "CONNECTED",
    "CONNECT_FAILURES",
    "GAPS",
    "GAP_REASONS",
    "NODE_FAILURES",
    "OVERFLOW_SUSPECTED",
    "QUARANTINED",
    "RECONNECTS",
    "RECORDS_STORED",
    "SERVICE_LEVEL",
    "VALUES_BACKFILLED",
    "VALUES_RECEIVED",
    "AsyncEventHistoryPages",
    "AsyncHistoryPages",
    "Backoff",
    "ConnectionLost",
    "OpcuaError",
    "OpcuaSecurityError",
    "OpcuaSource",
    "QuarantineSink",
    "Refused",
    "ServerCertificateMismatch",
    "Session",
    "ValueRefused",
    "alarm_record",
    "convert_event",
    "convert_history_event",
    "convert_value",
    "gap_record",
    "item_request",
    "overflowed",
    "plain_value",
    "quality_of",
    "tag_record",
]
