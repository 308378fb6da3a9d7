"""The signing room's exception root. Everything here raises a SigningError subclass naming the bad value; the
subsystems above turn it into their own error where it crosses into them (the audit log's AuditKeyError)."""

from __future__ import annotations

from typing import Literal

ApprovalCode = Literal["malformed", "unknown_key", "bad_signature", "mismatch"]


class SigningError(Exception):
    """A key, signature or signed statement that cannot be used or does not hold."""


class ApprovalError(SigningError, ValueError):
    """A signed approval that does not hold; `code` says which kind of failure, the message names the values."""

    def __init__(self, code: ApprovalCode, message: str) -> None:
        super().__init__(message)
        self.code = code


__all__ = ["ApprovalCode", "ApprovalError", "SigningError"]
