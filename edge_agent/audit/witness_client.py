"""The log's side of C2SP tlog-witness: ask a witness to cosign, and read back what it last cosigned."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from edge_agent.audit.checkpoint import NoteSignature, SignedNote
from edge_agent.audit.cosignature import CosignerKey
from edge_agent.audit.entry import AuditError
from edge_agent.audit.witness import SIZE_CONTENT_TYPE, add_checkpoint_body, origin_hash

# 10 s: a witness answers in milliseconds; longer means it is down, and the next checkpoint tries again.
TIMEOUT_S = 10.0
_MAX_REPLY = 64 * 1024


class WitnessError(AuditError):
    """A witness that could not be reached, refused the checkpoint, or answered something that is not a
    cosignature by its key."""


class WitnessConflict(WitnessError):
    """409: the witness last cosigned `known_size`, not the old size we sent."""

    def __init__(self, url: str, known_size: int) -> None:
        super().__init__(f"witness {url} last cosigned size {known_size}")
        self.known_size = known_size


class WitnessRefused(WitnessError):
    """A 4xx other than 409: e.g. 422, the checkpoint is not consistent with what the witness cosigned before."""

    def __init__(self, url: str, status: int, reason: str) -> None:
        super().__init__(f"witness {url} refused with {status}: {reason}")
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class WitnessTarget:
    url: str
    key: CosignerKey


def request_cosignature(
    target: WitnessTarget, old_size: int, proof: Sequence[bytes], note: bytes, timeout: float = TIMEOUT_S
) -> NoteSignature:
    """POST add-checkpoint; the witness's verified cosignature on `note`."""
    url = target.url.rstrip("/") + "/add-checkpoint"
    request = urllib.request.Request(url, data=add_checkpoint_body(old_size, proof, note), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (a configured URL)
            body = response.read(_MAX_REPLY)
    except urllib.error.HTTPError as exc:
        text = exc.read(_MAX_REPLY).decode("utf-8", "replace").strip()
        if exc.code == 409 and (exc.headers.get("Content-Type") or "").startswith(SIZE_CONTENT_TYPE):
            if text.isdigit():
                raise WitnessConflict(target.url, int(text)) from exc
        raise WitnessRefused(target.url, exc.code, text[:300]) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise WitnessError(f"witness {target.url} unreachable: {exc}") from exc
    parsed = SignedNote.parse(SignedNote.parse(note).text + b"\n" + body)
    for sig in parsed.signatures:
        if sig.name == target.key.name and sig.key_hash == target.key.key_id:
            target.key.verify(sig, parsed.text)
            return sig
    raise WitnessError(f"witness {target.url} answered no cosignature by {target.key.key_string()}")


def latest_cosigned(target: WitnessTarget, origin: str, timeout: float = TIMEOUT_S) -> bytes | None:
    """The checkpoint the witness last cosigned for `origin` (GET <origin hash>/checkpoint), None if none."""
    url = f"{target.url.rstrip('/')}/{origin_hash(origin)}/checkpoint"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310
            return bytes(response.read(_MAX_REPLY))
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        raise WitnessError(f"witness {target.url}: {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise WitnessError(f"witness {target.url} unreachable: {exc}") from exc
