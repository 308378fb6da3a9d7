"""The audit log's errors, each an `entry.AuditError`."""

from __future__ import annotations

from edge_agent.audit.entry import AuditError


class AuditIntegrityError(AuditError):
    """The log on disk is not what this agent wrote: it will not be extended or signed until someone looks."""


class AuditLockedError(AuditError):
    """Another process (normally the running agent) has the log open for appending."""


class AuditWriteError(AuditError):
    """An entry could not be made durable (disk full, I/O error); nothing of it is left in the file."""


class AuditKeyError(AuditError):
    """The log's signing key or keys.txt cannot be used (the signing room's SigningKeyError, as the log meets it)."""
