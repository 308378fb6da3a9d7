"""The statement an approver signs: the canonical JSON (edge_agent/base/canonical.py) of

    {"type": "edge-agent-signoff/v1", "report_id", "body_sha256", "decision": "approve"|"reject", "by", "at", "nonce",
     "comment"}

`at` is the signing time (ISO 8601 UTC, `…Z`), `nonce` 16 to 64 characters of [A-Za-z0-9_-] chosen by the signer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from edge_agent.base.canonical import CanonicalJsonError, canonical_json
from edge_agent.signing.errors import ApprovalError

STATEMENT_TYPE = "edge-agent-signoff/v1"
STATEMENT_KEYS = frozenset({"type", "report_id", "body_sha256", "decision", "by", "at", "nonce", "comment"})
_NONCE = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")


@dataclass(frozen=True)
class Statement:
    """A sign-off decision on one report body, as the approver signed it."""

    report_id: str
    body_sha256: str
    decision: Literal["approve", "reject"]
    by: str
    at: datetime
    nonce: str
    comment: str

    def as_json(self) -> dict[str, str]:
        return {
            "type": STATEMENT_TYPE,
            "report_id": self.report_id,
            "body_sha256": self.body_sha256,
            "decision": self.decision,
            "by": self.by,
            "at": format_time(self.at),
            "nonce": self.nonce,
            "comment": self.comment,
        }

    def bytes(self) -> bytes:
        return canonical_json(self.as_json())


def format_time(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_statement(data: Any) -> Statement:
    """A statement object → Statement, or ApprovalError("malformed") naming the first bad member."""
    if not isinstance(data, Mapping):
        raise ApprovalError("malformed", f"statement: expected an object, got {type(data).__name__}")
    keys = set(data)
    if keys != STATEMENT_KEYS:
        missing, extra = sorted(STATEMENT_KEYS - keys), sorted(k for k in keys - STATEMENT_KEYS)
        raise ApprovalError("malformed", f"statement: missing {missing}, unexpected {extra}")
    for key in STATEMENT_KEYS:
        if not isinstance(data[key], str):
            raise ApprovalError("malformed", f"statement.{key}: expected a string, got {type(data[key]).__name__}")
    if data["type"] != STATEMENT_TYPE:
        raise ApprovalError("malformed", f"statement.type {data['type']!r} is not {STATEMENT_TYPE!r}")
    if not 1 <= len(data["report_id"]) <= 128:
        raise ApprovalError("malformed", "statement.report_id: 1 to 128 characters")
    if not _SHA256_HEX.fullmatch(data["body_sha256"]):
        raise ApprovalError("malformed", f"statement.body_sha256 {data['body_sha256'][:80]!r} is not a SHA-256 in hex")
    if data["decision"] not in ("approve", "reject"):
        raise ApprovalError("malformed", f"statement.decision {data['decision'][:40]!r}: approve or reject")
    if not 1 <= len(data["by"]) <= 256:
        raise ApprovalError("malformed", "statement.by: 1 to 256 characters")
    if not _NONCE.fullmatch(data["nonce"]):
        raise ApprovalError("malformed", "statement.nonce: 16 to 64 characters of A-Z a-z 0-9 _ -")
    if len(data["comment"]) > 2000:
        raise ApprovalError("malformed", "statement.comment: at most 2000 characters")
    if not _TIME.fullmatch(data["at"]):
        raise ApprovalError("malformed", f"statement.at {data['at'][:40]!r} is not YYYY-MM-DDTHH:MM:SS[.ffffff]Z")
    try:
        at = datetime.fromisoformat(data["at"])
    except ValueError as exc:
        raise ApprovalError("malformed", f"statement.at {data['at']!r}: {exc}") from exc
    return Statement(
        data["report_id"], data["body_sha256"], data["decision"], data["by"], at, data["nonce"], data["comment"]
    )


def statement_bytes(data: Mapping[str, Any]) -> bytes:
    """The exact bytes an approver signs for a statement object (its canonical JSON)."""
    try:
        return canonical_json(dict(data))
    except CanonicalJsonError as exc:
        raise ApprovalError("malformed", f"statement has no canonical form: {exc}") from exc


__all__ = ["STATEMENT_KEYS", "STATEMENT_TYPE", "Statement", "format_time", "parse_statement", "statement_bytes"]
