"""The log's side of C2SP tlog-witness: ask a witness to cosign a checkpoint, from the size it last cosigned.

`submit` is the whole exchange, and also how the agent learns where a witness stands (the spec serves no read of a
witness's state): POST add-checkpoint from the size the log believes the witness holds; a 409 carries the witness's
own size (text/x.tlog.size) and the request goes again from there, with a consistency proof. The answers, for the log:

    200                                   cosigned: what the witness cosigned before is a prefix of this log
    409, its size > the checkpoint's      the witness cosigned more entries than the log holds: rollback
    409 to old size = checkpoint size     the witness holds another root at this size: fork (C2SP: a root mismatch
                                          at the same size is a 409; a witness may send it without a size)
    422                                   the consistency proof fails against what the witness cosigned: fork
    404, 403, other answers               refused: origin not registered there, log key not trusted there, …
    no answer                             unreachable
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, NoteSignature, SignedNote
from edge_agent.audit.entry import AuditError
from edge_agent.audit.witness import SIZE_CONTENT_TYPE, add_checkpoint_body
from edge_agent.config.urls import redact_url
from edge_agent.signing.cosignature import CosignatureError, CosignerKey

# 10 s: a witness answers in milliseconds; longer means it is down, and the agent asks again after a backoff.
TIMEOUT_S = 10.0
_MAX_REPLY = 64 * 1024
# A 409 names the witness's size and the request is sent again from there; a size that moves again within three
# tries means something else is submitting this origin's checkpoints (a second log under the same origin).
MAX_TRIES = 3

AnswerKind = Literal["cosigned", "rollback", "fork", "refused", "unreachable"]


class WitnessError(AuditError):
    """A witness that could not be reached, refused the checkpoint, or answered something that is not a
    cosignature by its key."""


class WitnessConflict(WitnessError):
    """409: the witness last cosigned `known_size` (None: a 409 without a size, a root mismatch at the same size)."""

    def __init__(self, url: str, known_size: int | None) -> None:
        said = f"last cosigned size {known_size}" if known_size is not None else "holds another root at that size"
        super().__init__(f"witness {redact_url(url)} {said}")
        self.known_size = known_size


class WitnessRefused(WitnessError):
    """An answer other than 200 and 409: e.g. 422, the checkpoint is not consistent with what the witness cosigned."""

    def __init__(self, url: str, status: int, reason: str) -> None:
        super().__init__(f"witness {redact_url(url)} refused with {status}: {reason}")
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class WitnessTarget:
    url: str
    key: CosignerKey

    @property
    def label(self) -> str:
        """The URL as logs, metrics and /readyz show it (credentials masked)."""
        return redact_url(self.url)


@dataclass(frozen=True)
class WitnessAnswer:
    """What one exchange with a witness established. `size`: the size the witness holds, where it said."""

    kind: AnswerKind
    size: int | None
    detail: str
    signature: NoteSignature | None = None

    @property
    def answered(self) -> bool:
        """The witness spoke for the log's history (cosigned, or named a rollback or fork)."""
        return self.kind in ("cosigned", "rollback", "fork")


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
        if exc.code == 409:
            sized = (exc.headers.get("Content-Type") or "").startswith(SIZE_CONTENT_TYPE)
            if sized and text.isdigit():
                raise WitnessConflict(target.url, int(text)) from exc
            if not sized:
                raise WitnessConflict(target.url, None) from exc
        raise WitnessRefused(target.url, exc.code, text[:300]) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise WitnessError(f"witness {target.label} unreachable: {exc}") from exc
    try:
        parsed = SignedNote.parse(SignedNote.parse(note).text + b"\n" + body)
    except CheckpointError as exc:
        raise WitnessError(f"witness {target.label} answered no signature lines: {exc}") from exc
    for sig in parsed.signatures:
        if sig.name == target.key.name and sig.key_hash == target.key.key_id:
            target.key.verify(sig, parsed.text)
            return sig
    raise WitnessError(f"witness {target.label} answered no cosignature by {target.key.key_string()}")


def submit(
    target: WitnessTarget,
    note: bytes,
    proof: Callable[[int, int], list[bytes]],
    known_size: int,
    timeout: float = TIMEOUT_S,
) -> WitnessAnswer:
    """Have `target` cosign `note`, starting from `known_size` (the size last seen there: a hint only, the witness's
    409 is the truth). `proof(old, new)` is the log's consistency proof between two of its sizes."""
    size = Checkpoint.parse_body(SignedNote.parse(note).text).size
    where = f"witness {target.label}"
    old = known_size if known_size <= size else 0
    for _ in range(MAX_TRIES):
        try:
            signature = request_cosignature(target, old, proof(old, size) if 0 < old < size else [], note, timeout)
        except WitnessConflict as exc:
            if exc.known_size is None or exc.known_size == old == size:
                return WitnessAnswer(
                    "fork",
                    size,
                    f"{where} holds another checkpoint of size {size}: the log's history at that size was rewritten",
                )
            if exc.known_size > size:
                return WitnessAnswer(
                    "rollback",
                    exc.known_size,
                    f"{where} has cosigned size {exc.known_size}, the log's checkpoint is {size}: the log was rolled"
                    " back",
                )
            if exc.known_size == old:
                return WitnessAnswer("refused", old, f"{where} answered 409 naming the very size {old} sent")
            old = exc.known_size
            continue
        except WitnessRefused as exc:
            if exc.status == 422:
                return WitnessAnswer(
                    "fork",
                    old,
                    f"{where} refused checkpoint {size} as inconsistent with the one of size {old} it cosigned"
                    f" before: {exc.reason}",
                )
            return WitnessAnswer("refused", None, f"{where} refused with {exc.status}: {exc.reason}")
        except CosignatureError as exc:
            return WitnessAnswer("refused", None, f"{where} answered a cosignature that does not verify: {exc}")
        except WitnessError as exc:
            return WitnessAnswer("unreachable", None, str(exc))
        return WitnessAnswer("cosigned", size, f"{where} cosigned size {size}", signature)
    return WitnessAnswer(
        "refused", old, f"{where} named another size on each of {MAX_TRIES} tries (last {old}): is a second log"
        " submitting this origin?"
    )  # fmt: skip
