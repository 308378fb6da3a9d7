"""Tamper-evident audit trail: a hash-chained JSONL log, RFC 6962 Merkle checkpoints signed as C2SP notes with
Ed25519, auditor export bundles and offline verification.

    log = AuditLog.open(state_dir / "audit", origin_for(config))   # creates the key on first start (origin.py)
    entry = log.append("report.generated", "reports", {...})                   # fsync'd before it returns
    log.checkpoint(); log.close()
"""

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError
from edge_agent.audit.entry import AuditEntry, AuditError, EntryFormatError
from edge_agent.audit.log import (
    EVENTS,
    AuditIntegrityError,
    AuditKeyError,
    AuditLockedError,
    AuditLog,
    AuditWriteError,
)
from edge_agent.audit.merkle import MerkleError
from edge_agent.audit.proof import ProofError, RootMismatch
from edge_agent.audit.sink import AuditSink
from edge_agent.signing import Signer, Verifier

__all__ = [
    "EVENTS",
    "AuditEntry",
    "AuditError",
    "AuditIntegrityError",
    "AuditKeyError",
    "AuditLockedError",
    "AuditLog",
    "AuditSink",
    "AuditWriteError",
    "Checkpoint",
    "CheckpointError",
    "EntryFormatError",
    "MerkleError",
    "ProofError",
    "RootMismatch",
    "Signer",
    "Verifier",
]
