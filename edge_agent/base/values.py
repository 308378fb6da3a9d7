"""Value domains for decoded JSON: what a document may hold before any part of the agent stores, hashes or reports it.

`json.loads` accepts values the rest of the pipeline cannot carry: `1e400` decodes to inf (not JSON again on the way
out), integers of any size (SQLite and most JSON readers stop at 64 bits), lone surrogate escapes such as `"\\ud800"`
(no UTF-8 encoding exists, so the store, the audit hash and the report prompt would fail on them later), and
arbitrarily deep or long values. `check_json_domain` walks a decoded value once, iteratively (a deep document cannot
exhaust the Python stack here), and raises on the first violation with the path that leads to it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from edge_agent.base.types import to_utc

# SQLite INTEGER, and the facts/JSON readers downstream, are signed 64-bit.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
# A path segment names a key, not repeats it: a 1 MiB key in an error message would be its own problem.
_SEGMENT_CHARS = 64


class ValueDomainError(ValueError):
    """A decoded JSON value outside what the agent accepts. `path` leads to it (`a.b[2].c`; "" is the whole value)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path or '(document)'}: {reason}")
        self.path = path
        self.reason = reason


def _segment(key: str) -> str:
    """A key as it appears in a path: lone surrogates escaped (the path must itself be valid UTF-8), long keys cut."""
    text = key.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= _SEGMENT_CHARS else text[:_SEGMENT_CHARS] + "…"


def _join(path: str, key: str) -> str:
    return f"{path}.{_segment(key)}" if path else _segment(key)


def _check_string(text: str, path: str, what: str, max_string_chars: int) -> None:
    if len(text) > max_string_chars:
        raise ValueDomainError(path, f"{what} of {len(text)} characters exceeds max_string_chars {max_string_chars}")
    if not text.isascii() and (found := _SURROGATE.search(text)) is not None:
        raise ValueDomainError(path, f"{what} has a lone surrogate U+{ord(found.group()):04X} at index {found.start()}")


def check_json_domain(value: Any, *, max_depth: int, max_string_chars: int) -> None:
    """Raise ValueDomainError for the first part of `value` (as `json.loads` returns it) outside the agent's domain.

    Refused: non-finite floats; integers outside the signed 64-bit range; strings or object keys with a lone
    surrogate or longer than `max_string_chars`; arrays/objects nested deeper than `max_depth` (the outermost
    container is depth 1); anything that is not a JSON type.
    """
    # (value, path to it, depth of its enclosing container, whether it is an object key); popped in document order.
    stack: list[tuple[Any, str, int, bool]] = [(value, "", 0, False)]
    while stack:
        node, path, depth, is_key = stack.pop()
        if node is None or isinstance(node, bool):
            continue
        if isinstance(node, str):
            _check_string(node, path, "object key" if is_key else "string", max_string_chars)
        elif isinstance(node, int):
            if not INT64_MIN <= node <= INT64_MAX:
                raise ValueDomainError(path, "integer outside the signed 64-bit range")
        elif isinstance(node, float):
            if not math.isfinite(node):
                raise ValueDomainError(path, f"number is not finite ({node})")
        elif isinstance(node, (dict, list)):
            if depth + 1 > max_depth:
                raise ValueDomainError(path, f"nesting deeper than max_json_depth {max_depth}")
            children: list[tuple[Any, str, int, bool]] = []
            if isinstance(node, list):
                children.extend((item, f"{path}[{i}]", depth + 1, False) for i, item in enumerate(node))
            else:
                for key, item in node.items():
                    if not isinstance(key, str):
                        raise ValueDomainError(path, f"object key {key!r} is not a string")
                    children += [(key, _join(path, key), depth + 1, True), (item, _join(path, key), depth + 1, False)]
            stack.extend(reversed(children))
        else:
            raise ValueDomainError(path, f"{type(node).__name__} is not a JSON value")


__all__ = ["INT64_MAX", "INT64_MIN", "ValueDomainError", "check_json_domain"]


@dataclass(frozen=True)
class PlausibleTimes:
    """Source times a plant record may carry: from `time_min` to `time_max_future` past its receive time.

    One rule for every connector (`[mqtt]` and each `[[opcua.sources]]` set their own bounds): a time outside it would
    misplace the record in every report window."""

    time_min: datetime
    time_max_future: timedelta

    def check_time(self, source_time: datetime, received_time: datetime) -> None:
        """ValueError unless time_min <= source_time <= received_time + time_max_future (both aware)."""
        if source_time < self.time_min:
            raise ValueError(f"{source_time.isoformat()} is before time_min {self.time_min.isoformat()}")
        if source_time - to_utc(received_time) > self.time_max_future:
            raise ValueError(
                f"{source_time.isoformat()} is more than time_max_future_s "
                f"{self.time_max_future.total_seconds():g} after the receive time {received_time.isoformat()}"
            )
