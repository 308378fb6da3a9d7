"""A C2SP tlog-witness: cosigns a log's checkpoint only if it is consistent with the last one it cosigned.

    POST <prefix>/add-checkpoint      body: "old <size>\\n", up to 63 base64 proof lines, "\\n", a signed checkpoint
        200  text/plain               one cosignature/v1 note signature line (signing/cosignature.py)
        400  malformed request, or old size > checkpoint size
        403  no valid signature by a configured key for the checkpoint's origin
        404  origin not configured
        409  text/x.tlog.size         old size is not the size this witness last cosigned, or it is and so is the
                                      checkpoint's but the root differs: the body is the size this witness holds
        413  body over 1 MiB
        422  bad consistency proof, or a size-0 checkpoint with a non-empty root
    GET  <prefix>/<hex SHA-256 of origin>/checkpoint   the latest cosigned checkpoint with the log's and our
                                                      signatures (404 if none); for people: logs never rely on it,
                                                      since the spec has no such read (witness_client.py)

State (`--state DIR`): `state.json`, per origin the size, root and note of the last checkpoint cosigned. Checking
the old size and storing the new checkpoint happen under one lock, and the file is written to a temporary, fsync'd,
renamed and the directory fsync'd before the cosignature is returned: a witness never cosigns two checkpoints it
could not prove consistent, not even across a crash.

Every reply to bad input is a 4xx with a one-line reason (text/plain); nothing a client sends makes a 500.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import structlog

from edge_agent.audit.checkpoint import Checkpoint, CheckpointError, SignedNote
from edge_agent.audit.hasher import HASH_SIZE
from edge_agent.audit.proof import ProofError, verify_consistency
from edge_agent.signing.cosignature import Cosigner
from edge_agent.signing.keys import Verifier, write_durably

log = structlog.get_logger(component="witness")

STATE_FILE = "state.json"
SIZE_CONTENT_TYPE = "text/x.tlog.size"
# 1 MiB: a request is a size line, at most 63 hashes and a checkpoint of a few hundred bytes; anything near this is
# not a witness request.
MAX_BODY_BYTES = 1 << 20
MAX_PROOF_LINES = 63  # C2SP tlog-witness: clients send at most 63 proof lines
EMPTY_ROOT = hashlib.sha256(b"").digest()
_OLD = re.compile(r"^old (0|[1-9][0-9]*)$")
_ORIGIN_HASH_PATH = re.compile(r"^(.*)/([0-9a-f]{64})/checkpoint$")


@dataclass(frozen=True)
class Reply:
    status: HTTPStatus
    body: bytes
    content_type: str = "text/plain; charset=utf-8"

    @classmethod
    def error(cls, status: HTTPStatus, reason: str) -> Reply:
        return cls(status, (reason.replace("\n", " ")[:500] + "\n").encode())


class _Refused(Exception):
    def __init__(self, status: HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True)
class AddCheckpoint:
    """A parsed add-checkpoint request body."""

    old_size: int
    proof: list[bytes]
    note: bytes


def parse_add_checkpoint(body: bytes) -> AddCheckpoint:
    """The request body as C2SP tlog-witness defines it; raises _Refused(400) naming what is wrong."""
    split = body.find(b"\n\n")
    if split < 0:
        raise _Refused(HTTPStatus.BAD_REQUEST, "no empty line between the old size and proof lines and the checkpoint")
    try:
        header = body[:split].decode("ascii").split("\n")
    except UnicodeDecodeError as exc:
        raise _Refused(HTTPStatus.BAD_REQUEST, "old size and proof lines must be ASCII") from exc
    match = _OLD.match(header[0])
    if match is None:
        raise _Refused(HTTPStatus.BAD_REQUEST, f"first line {header[0][:80]!r} is not 'old <decimal size>'")
    if len(header) - 1 > MAX_PROOF_LINES:
        raise _Refused(HTTPStatus.BAD_REQUEST, f"{len(header) - 1} proof lines; at most {MAX_PROOF_LINES}")
    proof = []
    for i, line in enumerate(header[1:], start=1):
        try:
            value = base64.b64decode(line, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"proof line {i} is not base64") from exc
        if len(value) != HASH_SIZE:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"proof line {i} is {len(value)} bytes, not {HASH_SIZE}")
        proof.append(value)
    return AddCheckpoint(int(match.group(1)), proof, body[split + 2 :])


def add_checkpoint_body(old_size: int, proof: Sequence[bytes], note: bytes) -> bytes:
    """The request body a log sends (the client side of `parse_add_checkpoint`)."""
    lines = [f"old {old_size}\n"] + [base64.b64encode(h).decode() + "\n" for h in proof]
    return "".join(lines).encode() + b"\n" + note


def origin_hash(origin: str) -> str:
    return hashlib.sha256(origin.encode()).hexdigest()


class WitnessState:
    """Per origin, the last checkpoint cosigned; durable before `put` returns."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = directory / STATE_FILE
        raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"origins": {}}
        self._origins: dict[str, dict[str, Any]] = dict(raw.get("origins", {}))
        self.lock = threading.Lock()

    def get(self, origin: str) -> tuple[int, bytes, str] | None:
        record = self._origins.get(origin)
        if record is None:
            return None
        return int(record["size"]), base64.b64decode(record["root"]), str(record["note"])

    def put(self, origin: str, size: int, root: bytes, note: str) -> None:
        """Caller holds `lock`."""
        updated = {**self._origins, origin: {"size": size, "root": base64.b64encode(root).decode(), "note": note}}
        data = json.dumps({"origins": updated}, sort_keys=True, indent=1).encode() + b"\n"
        write_durably(self.directory / STATE_FILE, data)
        self._origins = updated


class Witness:
    """The protocol without the HTTP: `add_checkpoint(body)` and `checkpoint(origin hash)` return a Reply."""

    def __init__(
        self,
        state: WitnessState,
        cosigner: Cosigner,
        log_keys: Sequence[Verifier],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.state = state
        self.cosigner = cosigner
        self._keys: dict[str, list[Verifier]] = {}
        for key in log_keys:
            self._keys.setdefault(key.name, []).append(key)  # a log key's name is its origin
        self._clock = clock
        self._last_timestamp = 0

    def add_checkpoint(self, body: bytes) -> Reply:
        try:
            return self._add(body)
        except _Refused as exc:
            return Reply.error(exc.status, str(exc))

    def _add(self, body: bytes) -> Reply:
        request = parse_add_checkpoint(body)
        try:
            note = SignedNote.parse(request.note)
            checkpoint = Checkpoint.parse_body(note.text)
        except CheckpointError as exc:
            raise _Refused(HTTPStatus.BAD_REQUEST, f"checkpoint: {exc}") from exc
        keys = self._keys.get(checkpoint.origin)
        if keys is None:
            raise _Refused(HTTPStatus.NOT_FOUND, f"unknown log origin {checkpoint.origin!r}")
        try:
            note.verified_by(keys)
        except CheckpointError as exc:
            raise _Refused(HTTPStatus.FORBIDDEN, f"checkpoint signature: {exc}") from exc
        if request.old_size > checkpoint.size:
            raise _Refused(
                HTTPStatus.BAD_REQUEST, f"old size {request.old_size} is larger than the checkpoint's {checkpoint.size}"
            )
        if checkpoint.size == 0 and checkpoint.root != EMPTY_ROOT:
            raise _Refused(HTTPStatus.UNPROCESSABLE_ENTITY, "a checkpoint of size 0 must have the empty tree's root")
        with self.state.lock:
            known = self.state.get(checkpoint.origin)
            known_size = known[0] if known else 0
            if request.old_size != known_size:
                log.warning(
                    "witness_conflict", origin=checkpoint.origin, old=request.old_size, known=known_size,
                    size=checkpoint.size,
                )  # fmt: skip
                return Reply(HTTPStatus.CONFLICT, f"{known_size}\n".encode(), SIZE_CONTENT_TYPE)
            if known is not None and checkpoint.size == known_size and checkpoint.root != known[1]:
                # C2SP tlog-witness: same size, another root is a 409 (the log's client reads it as a fork).
                log.warning("witness_root_mismatch", origin=checkpoint.origin, size=checkpoint.size)
                return Reply(HTTPStatus.CONFLICT, f"{known_size}\n".encode(), SIZE_CONTENT_TYPE)
            if request.old_size == 0:
                if request.proof:
                    raise _Refused(HTTPStatus.UNPROCESSABLE_ENTITY, "old size 0 needs an empty consistency proof")
            else:
                assert known is not None
                try:
                    verify_consistency(known_size, checkpoint.size, known[1], checkpoint.root, request.proof)
                except ProofError as exc:
                    log.warning("witness_inconsistent", origin=checkpoint.origin, size=checkpoint.size, error=str(exc))
                    raise _Refused(
                        HTTPStatus.UNPROCESSABLE_ENTITY,
                        f"not consistent with the checkpoint of size {known_size} cosigned before: {exc}",
                    ) from exc
            timestamp = max(int(self._clock()), self._last_timestamp, 1)
            self._last_timestamp = timestamp
            cosignature = self.cosigner.cosign(note.text, timestamp)
            stored = SignedNote(note.text, (*note.signatures, cosignature)).encode().decode("utf-8")
            self.state.put(checkpoint.origin, checkpoint.size, checkpoint.root, stored)
        log.info("witness_cosigned", origin=checkpoint.origin, size=checkpoint.size, old=request.old_size)
        return Reply(HTTPStatus.OK, cosignature.line().encode())

    def checkpoint(self, hashed_origin: str) -> Reply:
        for origin in self._keys:
            if origin_hash(origin) == hashed_origin:
                known = self.state.get(origin)
                if known is not None:
                    return Reply(HTTPStatus.OK, known[2].encode())
        return Reply.error(HTTPStatus.NOT_FOUND, "no checkpoint cosigned for that origin")


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        if not self.path.split("?", 1)[0].endswith("/add-checkpoint"):
            self._send(Reply.error(HTTPStatus.NOT_FOUND, f"{self.path[:80]} not found; POST /add-checkpoint"))
            return
        length_header = self.headers.get("Content-Length")
        if length_header is None or not length_header.isdigit():
            self._send(Reply.error(HTTPStatus.LENGTH_REQUIRED, "Content-Length required"))
            return
        length = int(length_header)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            self._send(Reply.error(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY_BYTES} bytes"))
            return
        body = self.rfile.read(length)
        try:
            reply = self.server.witness.add_checkpoint(body)
        except Exception as exc:  # a bug, never the client's bytes: say so, keep serving
            log.error("witness_internal_error", error=repr(exc), exc_info=exc)
            reply = Reply.error(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error")
        self._send(reply)

    def do_GET(self) -> None:  # noqa: N802
        match = _ORIGIN_HASH_PATH.match(self.path.split("?", 1)[0])
        if match is None:
            self._send(Reply.error(HTTPStatus.NOT_FOUND, "GET /<hex SHA-256 of the origin>/checkpoint"))
            return
        self._send(self.server.witness.checkpoint(match.group(2)))

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        self.wfile.write(reply.body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
        log.debug("witness_request", client=self.client_address[0], line=format % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], witness: Witness) -> None:
        super().__init__(address, _Handler)
        self.witness = witness


def make_server(witness: Witness, host: str, port: int) -> _Server:
    """An HTTP server for `witness` bound to host:port (0: any free port; `server_address` says which)."""
    return _Server((host, port), witness)


__all__ = [
    "AddCheckpoint",
    "Reply",
    "Witness",
    "WitnessState",
    "add_checkpoint_body",
    "make_server",
    "origin_hash",
    "parse_add_checkpoint",
]
