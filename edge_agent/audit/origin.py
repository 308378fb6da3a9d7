"""A log's origin: the first line of its checkpoints, its signing key's name, and what a witness keeps state by.

C2SP tlog-witness keys its state by origin, so a witness shared by several plants needs every origin it serves to
be globally unique; site ids are not (two customers both have a "planta-1"). The default origin is therefore
`edge-agent/<site id>/<first 16 hex digits of SHA-256 of the log's Ed25519 public key>`: 64 bits of a key only this
log holds. The key is made with the origin on the log's first open. A log that has a key keeps the origin it was
made with, read back from keys.txt (the newest key's name, which is every checkpoint's first line), so no log
changes origin on upgrade; an explicit `[audit] origin` always wins (and must match an existing log's).
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from edge_agent.audit.errors import AuditKeyError
from edge_agent.audit.files import SIGNING_KEY, read_signer, read_verifiers
from edge_agent.signing import Signer, SigningKeyError, check_name

# 16 hex digits = 64 bits: two logs share a default origin with probability ~n²/2^65, nil for any witness's n.
KEY_DIGITS = 16


def default_origin(site_id: str, public: bytes) -> str:
    """`edge-agent/<site id>/<first 16 hex of SHA-256 of the 32-byte Ed25519 public key>`."""
    return f"edge-agent/{site_id}/{hashlib.sha256(public).hexdigest()[:KEY_DIGITS]}"


def recorded_origin(directory: Path) -> str | None:
    """The origin of the log in `directory`: its newest key's name in keys.txt, or signing.key's name before
    keys.txt is written (a crash between the two); None when the log has no key yet."""
    verifiers = read_verifiers(directory)
    if verifiers:
        return verifiers[-1].name
    key = directory / SIGNING_KEY
    return read_signer(key).name if key.exists() else None


def log_origin(directory: Path, site_id: str, configured: str | None) -> str:
    """The origin to open the log in `directory` with: `configured`, else the recorded one, else the default for a
    key made here and now (written as signing.key, which the log's open then finds and records in keys.txt)."""
    if configured is not None:
        return configured
    recorded = recorded_origin(directory)
    if recorded is not None:
        return recorded
    made = Signer.generate("edge-agent")
    origin = default_origin(site_id, made.verifier.public)
    try:
        signer = dataclasses.replace(made, name=check_name(origin))
    except SigningKeyError as exc:
        raise AuditKeyError(f"default origin from site id {site_id!r}: {exc}") from exc
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        signer.write(directory / SIGNING_KEY)
    except FileExistsError:  # another process made the key first: its origin is the log's
        return read_signer(directory / SIGNING_KEY).name
    return origin
