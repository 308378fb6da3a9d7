"""Why a Sparkplug message (or one of its metrics) was quarantined: the row's `reason` and the metric label.

`schema_mismatch`, `duplicate_id` and `internal_error` are the MQTT and OPC UA connectors' own; the rest are
Sparkplug's (docs/records.md, "Sparkplug B").
"""

from __future__ import annotations

from enum import StrEnum


class SparkplugReason(StrEnum):
    # A topic under spBv1.0/ that is no Sparkplug topic (unknown verb, missing or empty element).
    INVALID_TOPIC = "invalid_topic"
    # Bytes that are no Sparkplug B protobuf Payload (or a STATE message that is no JSON object).
    INVALID_PAYLOAD = "invalid_payload"
    # NDATA/DDATA/DBIRTH/DDEATH from an edge node (or a device) whose BIRTH this host has not seen: the aliases
    # cannot be resolved. A rebirth is requested.
    DATA_BEFORE_BIRTH = "data_before_birth"
    # A metric whose alias (or name) the node's BIRTH did not define. Its message's other metrics are stored.
    UNKNOWN_ALIAS = "unknown_alias"
    # A seq gap the reorder timeout did not close. The message after the gap is the evidence; its values are stored,
    # and the interval is a data_gap.
    SEQUENCE_GAP = "sequence_gap"
    # An NDEATH whose bdSeq is not its NBIRTH's: a death of an older session, which must not mark the live one dead.
    BDSEQ_MISMATCH = "bdseq_mismatch"
    # A datatype with no value form here (Unknown, PropertySet, a DataSet cell of a non-scalar type).
    UNSUPPORTED_DATATYPE = "unsupported_datatype"
    SCHEMA_MISMATCH = "schema_mismatch"
    DUPLICATE_ID = "duplicate_id"
    INTERNAL_ERROR = "internal_error"


__all__ = ["SparkplugReason"]
