"""The C2SP tlog-witness: cosignature/v1 format (known answers from transparency-dev/formats), a real
`edge-agent witness serve` process (cosign, 409 with its size, 422 on an inconsistent checkpoint, 403/404, durable
state across a restart), and properties: any request body gets a 4xx with a reason or a cosignature, never a 500."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.audit import AuditLog, Signer, Verifier
from edge_agent.audit.checkpoint import Checkpoint, NoteSignature, SignedNote
from edge_agent.audit.hasher import leaf_hash
from edge_agent.audit.log import iter_lines
from edge_agent.audit.merkle import MerkleTree
from edge_agent.audit.witness import Witness, WitnessState, add_checkpoint_body, origin_hash, parse_add_checkpoint
from edge_agent.audit.witness_client import (
    WitnessConflict,
    WitnessRefused,
    WitnessTarget,
    request_cosignature,
    submit,
)
from edge_agent.signing.cosignature import CosignatureError, Cosigner, CosignerKey, cosigner_key_id, signed_message
from tests.fixtures.broker import free_port, wait_for_port

ORIGIN = "edge-agent/witness-test"
SEED = bytes(range(32))


class TestCosignatureFormat:
    """cosignature/v1 as C2SP tlog-cosignature defines it."""

    def test_key_id_of_a_published_cosigner_key(self) -> None:
        """transparency-dev/formats note_cosigv1_test.go: a native 0x04 vkey whose ID is da77ade7."""
        key = CosignerKey.parse("remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2")
        assert key.key_id == 0xDA77ADE7
        assert key.key_string() == "remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2"

    def test_timestamp_of_a_published_cosignature(self) -> None:
        """formats' TestCoSigV1Timestamp: key ID, then the 8-byte big-endian timestamp 1727964367."""
        raw = base64.b64decode(
            "ZGhGuQAAAABm/qTPeyKXD+R2rzyQsxPiP8mXum7qq/iF0u4vanlqJyocWODBt97w9uL+8qT7S5gxEHWWOworDcFiEBYJXORmnFBOBA=="
        )
        assert len(raw) == 4 + 8 + 64
        assert int.from_bytes(raw[4:12], "big") == 1727964367

    def test_signed_message_is_header_time_and_the_checkpoint(self) -> None:
        """The spec's example message, byte for byte."""
        text = b"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
        assert signed_message(text, 1679315147) == (
            b"cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\n"
            b"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
        )

    def test_fixed_key_vector(self) -> None:
        """A fixed seed and time give one signature line (Ed25519 is deterministic); the ID uses type 0x04."""
        cosigner = Cosigner(Signer("witness.example/w1", SEED))
        text = b"example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
        sig = cosigner.cosign(text, 1679315147)
        assert sig.key_hash == cosigner_key_id("witness.example/w1", cosigner.key.public)
        assert sig.key_hash != cosigner.signer.verifier.hash  # not the 0x01 log-signature ID
        assert sig.signature[:8] == (1679315147).to_bytes(8, "big")
        assert cosigner.key.verify(sig, text) == 1679315147
        # The same inputs, the same line: a regression pin for the format.
        assert sig.line() == cosigner.cosign(text, 1679315147).line()

    def test_tampered_text_or_timestamp_fails(self) -> None:
        cosigner = Cosigner(Signer("w", SEED))
        sig = cosigner.cosign(b"o\n1\nAAAA\n", 100)
        with pytest.raises(CosignatureError):
            cosigner.key.verify(sig, b"o\n2\nAAAA\n")
        shifted = NoteSignature(sig.name, sig.key_hash, (101).to_bytes(8, "big") + sig.signature[8:])
        with pytest.raises(CosignatureError):
            cosigner.key.verify(shifted, b"o\n1\nAAAA\n")

    def test_log_key_is_not_a_witness_key(self) -> None:
        with pytest.raises(Exception, match="0x04"):
            CosignerKey.parse(Signer("w", SEED).verifier.key_string())


class TestRequestBody:
    def test_round_trip(self) -> None:
        body = add_checkpoint_body(3, [b"\x01" * 32, b"\x02" * 32], b"o\n5\nroot\n\n- sig\n")
        parsed = parse_add_checkpoint(body)
        assert (parsed.old_size, parsed.proof, parsed.note) == (
            3,
            [b"\x01" * 32, b"\x02" * 32],
            b"o\n5\nroot\n\n- sig\n",
        )

    @pytest.mark.parametrize(
        "body",
        [b"old 01\n\nx", b"old -1\n\nx", b"new 1\n\nx", b"old 1\nnotbase64!\n\nx", b"old 1\n" + b"AAAA\n\nx", b"old 1"],
    )
    def test_malformed_is_400(self, body: bytes, tmp_path: Path) -> None:
        witness = _witness(tmp_path, Signer.generate(ORIGIN).verifier)
        reply = witness.add_checkpoint(body)
        assert reply.status == 400 and reply.body.strip()


# -- a real log and a real witness process -------------------------------------------------------------------------


def _witness(tmp_path: Path, *log_keys: Verifier) -> Witness:
    return Witness(WitnessState(tmp_path / "wstate"), Cosigner(Signer("w.example/w1", SEED)), list(log_keys))


def _log(directory: Path, entries: int) -> AuditLog:
    log = AuditLog.open(directory, ORIGIN)
    for i in range(entries):
        log.append("test.entry", "test", {"i": i})
    log.checkpoint()
    return log


def _fork(log_dir: Path, fork: Path, keep: int, forged: int) -> Path:
    """A copy of the log cut back to its first `keep` entries (its first checkpoint), then `forged` other entries
    signed by the same key: history rewritten."""
    shutil.copytree(log_dir, fork)
    lines = (fork / "entries.jsonl").read_bytes().splitlines(keepends=True)
    (fork / "entries.jsonl").write_bytes(b"".join(lines[:keep]))
    (fork / "checkpoints.jsonl").write_bytes(b"".join((fork / "checkpoints.jsonl").read_bytes().splitlines(True)[:1]))
    first = json.loads((fork / "checkpoints.jsonl").read_text().splitlines()[0])["note"]
    (fork / "checkpoint").write_text(first)
    with AuditLog.open(fork, ORIGIN) as forked:
        for i in range(forged):
            forked.append("test.forged", "test", {"i": i})
        forked.checkpoint()
    return fork


def _no_proof(old: int, new: int) -> list[bytes]:
    raise AssertionError(f"no proof expected ({old} -> {new})")


def _proof(directory: Path, old: int, new: int) -> list[bytes]:
    leaves = [leaf_hash(line) for line in iter_lines(directory / "entries.jsonl")][:new]
    return MerkleTree(leaves).consistency_proof(old, new) if 0 < old < new else []


@dataclass
class WitnessProcess:
    url: str
    key: CosignerKey
    state: Path
    proc: subprocess.Popen[bytes]
    args: list[str]

    def restart(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        wait_for_port(int(self.url.rsplit(":", 1)[1]))


def start_witness(tmp_path: Path, log_key: str) -> WitnessProcess:
    key_file = tmp_path / "witness.key"
    exe = [sys.executable, "-m", "edge_agent"]
    out = subprocess.run(
        [*exe, "witness", "keygen", "--name", "witness.test/w1", "--key", str(key_file)],
        check=True,
        capture_output=True,
        text=True,
    )
    port = free_port()
    args = [*exe, "witness", "serve", "--state", str(tmp_path / "wstate"), "--listen", f"127.0.0.1:{port}"]
    args += ["--key", str(key_file), "--log-key", log_key]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    wait_for_port(port)
    return WitnessProcess(f"http://127.0.0.1:{port}", CosignerKey.parse(out.stdout), tmp_path / "wstate", proc, args)


@pytest.fixture
def log_dir(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "audit"
    _log(directory, 6).close()
    yield directory


@pytest.fixture
def witness(tmp_path: Path, log_dir: Path) -> Iterator[WitnessProcess]:
    key = (log_dir / "keys.txt").read_text().splitlines()[-1]
    w = start_witness(tmp_path, key)
    yield w
    w.proc.terminate()
    w.proc.wait(10)


def _post(url: str, body: bytes) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url + "/add-checkpoint", data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read()


class TestWitnessProcess:
    def test_cosigns_from_zero_and_keeps_it(self, witness: WitnessProcess, log_dir: Path) -> None:
        """The first checkpoint of a log (old 0) is cosigned; the cosignature verifies; GET serves it (for people:
        the agent never relies on it)."""
        note = (log_dir / "checkpoint").read_bytes()
        target = WitnessTarget(witness.url, witness.key)
        sig = request_cosignature(target, 0, [], note)
        assert witness.key.verify(sig, SignedNote.parse(note).text) > 0
        state = json.loads((witness.state / "state.json").read_text())
        assert state["origins"][ORIGIN]["size"] == 7
        with urllib.request.urlopen(f"{witness.url}/{origin_hash(ORIGIN)}/checkpoint", timeout=10) as r:
            served = r.read()
        assert SignedNote.parse(served).text == SignedNote.parse(note).text

    def test_extends_with_a_consistency_proof_across_a_restart(self, witness: WitnessProcess, log_dir: Path) -> None:
        target = WitnessTarget(witness.url, witness.key)
        request_cosignature(target, 0, [], (log_dir / "checkpoint").read_bytes())
        witness.restart()  # state is durable: the size it cosigned survives
        with AuditLog.open(log_dir, ORIGIN) as log:
            log.append("test.entry", "test", {"more": True})
            note = log.checkpoint()
        with pytest.raises(WitnessConflict) as conflict:
            request_cosignature(target, 0, [], note)
        assert conflict.value.known_size == 7
        sig = request_cosignature(target, 7, _proof(log_dir, 7, 8), note)
        assert witness.key.verify(sig, SignedNote.parse(note).text)

    def test_409_names_the_size_it_cosigned(self, witness: WitnessProcess, log_dir: Path) -> None:
        note = (log_dir / "checkpoint").read_bytes()
        request_cosignature(WitnessTarget(witness.url, witness.key), 0, [], note)
        status, content_type, body = _post(witness.url, add_checkpoint_body(3, [], note))
        assert (status, content_type, body) == (409, "text/x.tlog.size", b"7\n")

    def test_witness_409_carries_size(self, witness: WitnessProcess, log_dir: Path, tmp_path: Path) -> None:
        """Same size, another root (a fork signed by the log's key): 409 with the witness's size, as C2SP
        tlog-witness says, not 422; the log's client reads it as a fork."""
        target = WitnessTarget(witness.url, witness.key)
        request_cosignature(target, 0, [], (log_dir / "checkpoint").read_bytes())
        fork = _fork(log_dir, tmp_path / "fork", keep=3, forged=4)
        note = (fork / "checkpoint").read_bytes()
        assert Checkpoint.parse_body(SignedNote.parse(note).text).size == 7
        status, content_type, body = _post(witness.url, add_checkpoint_body(7, [], note))
        assert (status, content_type, body) == (409, "text/x.tlog.size", b"7\n")
        answer = submit(target, note, lambda old, new: _proof(fork, old, new), 0)
        assert (answer.kind, answer.size) == ("fork", 7)
        assert answer.detail == (
            f"witness {witness.url} holds another checkpoint of size 7: the log's history at that size was rewritten"
        )

    def test_submit_follows_the_409_size_with_a_proof(self, witness: WitnessProcess, log_dir: Path) -> None:
        """A log that does not know the witness's size (old 0) learns it from the 409 and sends the proof from it."""
        target = WitnessTarget(witness.url, witness.key)
        request_cosignature(target, 0, [], (log_dir / "checkpoint").read_bytes())
        with AuditLog.open(log_dir, ORIGIN) as log:
            log.append("test.entry", "test", {"more": True})
            note = log.checkpoint()
        answer = submit(target, note, lambda old, new: _proof(log_dir, old, new), 0)
        assert (answer.kind, answer.size) == ("cosigned", 8)
        assert answer.signature is not None and witness.key.verify(answer.signature, SignedNote.parse(note).text)

    def test_submit_names_a_rollback_from_the_409_size(self, witness: WitnessProcess, log_dir: Path) -> None:
        target = WitnessTarget(witness.url, witness.key)
        with AuditLog.open(log_dir, ORIGIN) as log:
            first = (log_dir / "checkpoint").read_bytes()
            log.append("test.entry", "test", {"more": True})
            request_cosignature(target, 0, [], log.checkpoint())
        answer = submit(target, first, lambda old, new: _proof(log_dir, old, new), 0)
        assert (answer.kind, answer.size) == ("rollback", 8)
        assert answer.detail == (
            f"witness {witness.url} has cosigned size 8, the log's checkpoint is 7: the log was rolled back"
        )

    def test_submit_to_a_stopped_witness_is_unreachable(self, witness: WitnessProcess, log_dir: Path) -> None:
        witness.proc.terminate()
        witness.proc.wait(10)
        answer = submit(WitnessTarget(witness.url, witness.key), (log_dir / "checkpoint").read_bytes(), _no_proof, 0)
        assert answer.kind == "unreachable" and not answer.answered

    def test_refuses_an_inconsistent_checkpoint(self, witness: WitnessProcess, log_dir: Path, tmp_path: Path) -> None:
        """A fork signed by the same key (history rewritten after size 3) is refused with 422, never cosigned."""
        target = WitnessTarget(witness.url, witness.key)
        request_cosignature(target, 0, [], (log_dir / "checkpoint").read_bytes())
        fork = _fork(log_dir, tmp_path / "fork", keep=3, forged=8)
        note = (fork / "checkpoint").read_bytes()
        size = Checkpoint.parse_body(SignedNote.parse(note).text).size
        with pytest.raises(WitnessRefused) as refused:
            request_cosignature(target, 7, _proof(fork, 7, size), note)
        assert refused.value.status == 422
        assert "not consistent with the checkpoint of size 7" in refused.value.reason

    def test_unknown_origin_404_and_forged_signature_403(self, witness: WitnessProcess, tmp_path: Path) -> None:
        other = _log(tmp_path / "other", 1)
        other.close()
        status, _, body = _post(
            witness.url, add_checkpoint_body(0, [], (tmp_path / "other" / "checkpoint").read_bytes())
        )
        assert status == 403 and b"signature" in body  # same origin, another key: no trusted signature
        foreign = AuditLog.open(tmp_path / "foreign", "edge-agent/elsewhere")
        foreign.close()
        status, _, body = _post(
            witness.url, add_checkpoint_body(0, [], (tmp_path / "foreign" / "checkpoint").read_bytes())
        )
        assert status == 404 and b"unknown log origin" in body

    def test_garbage_over_http_is_4xx(self, witness: WitnessProcess) -> None:
        for body in (b"", b"\xff\xfe\n\n\x00", b"old 0\n\n" + b"A" * 5000, b"old 99999999999999999999\n\n"):
            status, _, reply = _post(witness.url, body)
            assert 400 <= status < 500 and reply.strip(), (body[:20], status)


# -- properties: any bytes, any note ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prop_setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Witness, bytes]:
    base = tmp_path_factory.mktemp("prop")
    log = _log(base / "audit", 4)
    note = (base / "audit" / "checkpoint").read_bytes()
    key = log.verifier
    log.close()
    return _witness(base, key), note


@given(body=st.binary(max_size=600))
def test_any_body_gets_a_reason_or_a_cosignature(prop_setup: tuple[Witness, bytes], body: bytes) -> None:
    witness, _ = prop_setup
    reply = witness.add_checkpoint(body)
    assert reply.status in (200, 400, 403, 404, 409, 422)
    assert reply.body.endswith(b"\n") and reply.body.strip()


@given(
    position=st.integers(min_value=0, max_value=10_000),
    replacement=st.binary(min_size=0, max_size=3),
    old=st.integers(min_value=0, max_value=20),
)
def test_any_mutated_checkpoint_note_is_never_a_500(
    prop_setup: tuple[Witness, bytes], position: int, replacement: bytes, old: int
) -> None:
    """One edit anywhere in a valid note: a 4xx naming why, or (the edit only touched nothing signed) 200/409."""
    witness, note = prop_setup
    i = position % (len(note) + 1)
    mutated = note[:i] + replacement + note[i + len(replacement) :]
    reply = witness.add_checkpoint(add_checkpoint_body(old, [], mutated))
    assert reply.status in (200, 400, 403, 404, 409, 422)
    if reply.status == 200:
        assert SignedNote.parse(mutated).text == SignedNote.parse(note).text


def test_state_file_is_fsynced_json(tmp_path: Path) -> None:
    state = WitnessState(tmp_path)
    with state.lock:
        state.put(ORIGIN, 5, b"\x00" * 32, "n")
    assert WitnessState(tmp_path).get(ORIGIN) == (5, b"\x00" * 32, "n")
    assert not (tmp_path / "state.json.tmp").exists()
