"""Canonical JSON: the one byte form of every JSON value the agent hashes or signs.

Audit entries (`entry_hash`, the Merkle leaves), report bodies (`body_sha256`) and engine fingerprints
(`fingerprint_sha256`) are all SHA-256 of `canonical_json(value)`, which is exactly

    json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")

* object keys sorted by code point at every level (Python's `str` order, which differs from RFC 8785's UTF-16 order
  only between keys holding characters above U+FFFF and keys holding U+E000..U+FFFF);
* no whitespace: `,` between members and elements, `:` between a key and its value;
* UTF-8; every character written as itself except `"` and `\\` (as `\\"`, `\\\\`) and U+0000..U+001F (as `\\b`, `\\t`,
  `\\n`, `\\f`, `\\r`, or `\\u00XX` in lowercase hex) — no other `\\u` escapes;
* integers in decimal, any size; floats as Python's shortest round-trip repr (`0.1`, `1.0`, `1e+16`, `1e-07`);
  `true`, `false`, `null`; NaN and infinities refused (they are not JSON);
* no newline at the end.

`ascii_json` is a second, older form, kept only for the two hashes that are stored or compared across versions and
already hold it: `request_sha256` (the store compares it when a request id is reused) and the config fingerprint
(`config_sha256` in the audit log). Switching them would refuse repeated requests with non-ASCII scope across an
upgrade and change every fingerprint of a config with non-ASCII names. Nothing new uses it.

This module imports nothing from the project: every layer (audit, reports, llm, config) may use it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


class CanonicalJsonError(ValueError):
    """A value with no canonical form: NaN or an infinity, a lone surrogate, a non-JSON type, a cycle."""


def canonical_json(value: Any) -> bytes:
    """The canonical form described in the module docstring; CanonicalJsonError when `value` has none."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError (a lone surrogate) is a ValueError
        raise CanonicalJsonError(str(exc)) from exc


def ascii_json(value: Any) -> bytes:
    """The older form of `request_sha256` and the config fingerprint (see the module docstring): sorted keys, no
    whitespace, every non-ASCII character as a `\\uXXXX` escape (surrogate pairs above U+FFFF), and NaN/infinities
    written as `NaN`/`Infinity` — `json.dumps(value, sort_keys=True, separators=(",", ":"))`."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        raise CanonicalJsonError(str(exc)) from exc


def sha256_hex(data: bytes | str) -> str:
    """SHA-256 in lowercase hex; a `str` is hashed as its UTF-8 bytes."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()
