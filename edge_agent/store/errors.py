"""The store's errors: every failed write or open raises one, with its transaction rolled back."""

from __future__ import annotations

import sqlite3


class StoreError(Exception):
    pass


class StoreFullError(StoreError):
    """The disk (or the database's page limit) is full: nothing was written. Retry once space returns."""


def is_full(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
