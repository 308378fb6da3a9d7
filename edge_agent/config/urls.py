"""Credentials inside URLs (`https://user:pass@host/v1`): split out before use, masked wherever a URL is shown.

A URL's userinfo is a secret like any password: it must not reach logs, fingerprints, reports or audit bundles. The
remote engine sends it as an `Authorization: Basic` header and names the server by `strip_userinfo(url)`; the
config's masked form (`AgentConfig.masked`, hence its fingerprint and `config check`) shows `redact_url(url)`.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

# scheme://userinfo@ : the userinfo runs to the last '@' before the first '/', '?' or '#' (RFC 3986 §3.2).
_USERINFO = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#]*)@(?P<rest>.*)$", re.S)
MASK = "***"


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """The URL without its userinfo, and (user, password) percent-decoded, or None when it has none."""
    match = _USERINFO.match(url)
    if match is None:
        return url, None
    user, _, password = match["userinfo"].partition(":")
    return match["scheme"] + match["rest"], (unquote(user), unquote(password))


def strip_userinfo(url: str) -> str:
    return split_userinfo(url)[0]


def redact_url(url: str) -> str:
    """The URL with its userinfo (user and password) replaced by `***`; unchanged when it has none."""
    match = _USERINFO.match(url)
    return url if match is None else f"{match['scheme']}{MASK}@{match['rest']}"


__all__ = ["MASK", "redact_url", "split_userinfo", "strip_userinfo"]
