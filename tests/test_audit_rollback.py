"""Anti-rollback against a real broker, a real witness process, a real store and a real audit log: each tamper
sequence is detected with a named message (rollback to every earlier checkpoint, a deleted audit directory, a
swapped store, a witness refusing, a bundle without a consistency proof, a trusted checkpoint newer than the
bundle), the agent's anchor then signs nothing and stays not ready, doctor shows it, and only `audit recover` clears
it, on the record."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from edge_agent.app import _store_citations, _store_has_data
from edge_agent.audit import AuditLog, CheckpointError
from edge_agent.audit.anchor import AuditAnchor, checkpoint_topic
from edge_agent.audit.checkpoint import Checkpoint, SignedNote
from edge_agent.audit.export import export_bundle
from edge_agent.audit.log import CHECKPOINTS, ENTRIES, LATEST_CHECKPOINT, read_verifiers
from edge_agent.audit.rollback import (
    MARKER,
    Citation,
    MissingLogError,
    check_citations,
    judge_checkpoint,
    read_lines,
    read_marker,
    refuse_missing_log,
)
from edge_agent.audit.verify import verify_bundle, verify_log
from edge_agent.audit.witness_client import WitnessTarget, submit
from edge_agent.audit.witness_state import log_proofs
from edge_agent.config import AgentConfig
from edge_agent.config.mqtt import MqttConfig
from edge_agent.doctor.audit_rollback import check_audit_rollback
from edge_agent.publish.outbox import OutboxPublisher
from edge_agent.publish.retained import read_retained
from edge_agent.reports.document import ReportRepository
from edge_agent.store import Store
from tests.fixtures.broker import Broker
from tests.test_witness import WitnessProcess, start_witness

ORIGIN = "edge-agent/witness-test"  # the witness tests' origin: one log key naming
SITE = "rb-site"


def build_log(directory: Path, batches: int = 5, per_batch: int = 3) -> list[tuple[int, bytes]]:
    """A log with a checkpoint after each batch; returns every (size, note) signed, oldest first."""
    with AuditLog.open(directory, ORIGIN) as log:
        for b in range(batches):
            for i in range(per_batch):
                log.append("test.entry", "test", {"batch": b, "i": i})
            log.checkpoint()
    return [(json.loads(line)["size"], json.loads(line)["note"].encode()) for line in _lines(directory / CHECKPOINTS)]


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def rollback(directory: Path, size: int) -> None:
    """What an attacker without the key can do: cut the entries and checkpoints to an earlier signed size and put
    that checkpoint back as the latest."""
    (directory / ENTRIES).write_bytes(b"".join(_lines(directory / ENTRIES)[:size]))
    kept = [line for line in _lines(directory / CHECKPOINTS) if json.loads(line)["size"] <= size]
    (directory / CHECKPOINTS).write_bytes(b"".join(kept))
    (directory / LATEST_CHECKPOINT).write_text(json.loads(kept[-1])["note"], encoding="utf-8")


@pytest.fixture
def signed(tmp_path: Path) -> tuple[Path, list[tuple[int, bytes]]]:
    directory = tmp_path / "audit"
    return directory, build_log(directory)


class TestTrustedCheckpoint:
    def test_verify_detects_rollback_to_every_earlier_checkpoint(
        self, signed: tuple[Path, list[tuple[int, bytes]]], tmp_path: Path
    ) -> None:
        """Without a trusted checkpoint the rolled-back log verifies (the weakness); with the auditor's last one it
        fails naming the rollback, for every earlier checkpoint."""
        directory, notes = signed
        newest_size, newest = notes[-1]
        for size, _ in notes[:-1]:
            copy = tmp_path / f"rolled-{size}"
            shutil.copytree(directory, copy)
            rollback(copy, size)
            assert verify_log(copy, origin=ORIGIN).ok
            result = verify_log(copy, origin=ORIGIN, trusted=newest)
            assert result.summary() == (
                f"FAILED: ROLLBACK: trusted checkpoint has size {newest_size}, the log's latest signed checkpoint"
                f" only {size}: entries {size}..{newest_size - 1} were removed"
            )

    def test_rewritten_history_at_the_trusted_size(self, signed: tuple[Path, list[tuple[int, bytes]]]) -> None:
        directory, notes = signed
        forked = notes[1][1].replace(notes[1][1].split(b"\n")[2], b"A" * 43 + b"=")
        assert not verify_log(directory, origin=ORIGIN, trusted=forked).ok  # the forged note's signature fails

    def test_the_unrolled_log_extends_every_checkpoint(self, signed: tuple[Path, list[tuple[int, bytes]]]) -> None:
        directory, notes = signed
        for size, note in notes:
            result = verify_log(directory, origin=ORIGIN, trusted=note)
            assert result.ok and f"extends the trusted checkpoint of size {size}" in result.notes


class TestBundles:
    def test_bundle_without_consistency_proof_fails_unless_first_export(
        self, signed: tuple[Path, list[tuple[int, bytes]]], tmp_path: Path
    ) -> None:
        directory, _ = signed
        with AuditLog.open(directory, ORIGIN) as log:
            export_bundle(directory, tmp_path / "b1", reports_dir=tmp_path / "none", log=log)
            log.append("test.entry", "test", {"after": 1})
            export_bundle(directory, tmp_path / "b2", reports_dir=tmp_path / "none", log=log)
        first = verify_bundle(tmp_path / "b1")
        assert first.ok and first.notes[1].startswith("no consistency proof: the log's first export")
        (tmp_path / "b2" / "consistency.json").write_text("null\n")
        result = verify_bundle(tmp_path / "b2")
        assert result.summary() == (
            "FAILED: no consistency proof, but the manifest names a previous export (checkpoint size 17): this is"
            " not the log's first export"
        )

    def test_trusted_checkpoint_newer_than_the_bundle(
        self, signed: tuple[Path, list[tuple[int, bytes]]], tmp_path: Path
    ) -> None:
        directory, _ = signed
        with AuditLog.open(directory, ORIGIN) as log:
            export_bundle(directory, tmp_path / "b1", reports_dir=tmp_path / "none", log=log)
            log.append("test.entry", "test", {"after": 1})
            newer = log.checkpoint()
        result = verify_bundle(tmp_path / "b1", trusted=newer)
        assert result.summary() == (
            "FAILED: ROLLBACK: trusted checkpoint has size 18, newer than the bundle's checkpoint of size 17"
        )
        older = json.loads(_lines(directory / CHECKPOINTS)[2])["note"].encode()
        assert verify_bundle(tmp_path / "b1", trusted=older).ok  # entries 0.. are in the bundle: root recomputed


class TestStore:
    def test_deleted_audit_dir_beside_a_store_refuses_to_start(self, tmp_path: Path) -> None:
        with Store(tmp_path / "store.sqlite3") as store:
            store.outbox_put("t", b"x")
        _insert_report(tmp_path, "rpt-1", {"requested": 1, "generated": 2, "signoff": None})
        assert _store_has_data(tmp_path / "store.sqlite3")
        with pytest.raises(MissingLogError, match=r"audit init --new-log"):
            refuse_missing_log(tmp_path / "audit", True)
        refuse_missing_log(tmp_path / "audit", False)  # a first start: nothing to protect

    def test_swapped_store_and_truncated_log_are_named(self, tmp_path: Path) -> None:
        with AuditLog.open(tmp_path / "audit", ORIGIN) as log:
            requested = log.append("report.requested", "reports", {"report_id": "rpt-1"}).seq
            generated = log.append("report.generated", "reports", {"report_id": "rpt-1"}).seq
        _insert_report(tmp_path, "rpt-1", {"requested": requested, "generated": generated, "signoff": None})
        citations = _store_citations(tmp_path / "store.sqlite3")
        assert citations == [Citation("rpt-1", "requested", 1), Citation("rpt-1", "generated", 2)]
        assert check_citations(read_lines(tmp_path / "audit"), citations) == []
        # Another log (another site's): the cited entries are something else.
        with AuditLog.open(tmp_path / "other", ORIGIN) as other:
            other.append("test.entry", "test", {})
            other.append("test.entry", "test", {})
        (swapped,) = check_citations(read_lines(tmp_path / "other"), citations)[:1]
        assert swapped.message == (
            "store: report rpt-1 cites audit entry 1 as its requested entry, but that entry is test.entry for None:"
            " the store is from another log (swapped store or log)"
        )
        # The log cut back before the report was generated.
        lines = read_lines(tmp_path / "audit")[:2]
        (removed,) = check_citations(lines, citations)
        assert removed.message == (
            "store: report rpt-1 cites audit entry 2 as its generated entry, but the log ends at entry 1: entries"
            " were removed (rollback)"
        )


def _insert_report(state: Path, report_id: str, audit: dict[str, int | None]) -> None:
    repo = ReportRepository(state / "store.sqlite3", state / "reports")
    document = {
        "report_id": report_id,
        "request_id": "r1",
        "requested_by": "maria",
        "status": "draft",
        "body": {"request": {"type": "shift"}},
        "body_sha256": "0" * 64,
        "audit": audit,
    }
    repo.insert(document, "0" * 64)
    repo.close()


# -- against the broker and a witness ---------------------------------------------------------------------------------


def mqtt(broker: Broker, client_id: str) -> MqttConfig:
    return MqttConfig(host=broker.host, port=broker.port, client_id=client_id, reconnect_min_s=0.05)


async def publish_through_outbox(broker: Broker, store: Store, note: bytes) -> None:
    """The agent's path: a retained row in the outbox, published by the OutboxPublisher."""
    store.outbox_put(checkpoint_topic(SITE), note, 1, True)
    publisher = OutboxPublisher(mqtt(broker, "agent"), store)
    task = asyncio.create_task(publisher.run(asyncio.Event()))
    try:
        async with asyncio.timeout(10):
            while store.outbox_pending():
                await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


@pytest.fixture
def witness(tmp_path: Path, signed: tuple[Path, list[tuple[int, bytes]]]) -> Iterator[WitnessProcess]:
    directory, _ = signed
    w = start_witness(tmp_path, (directory / "keys.txt").read_text().splitlines()[-1])
    yield w
    w.proc.terminate()
    w.proc.wait(10)


@pytest.mark.broker
class TestAnchor:
    async def test_published_checkpoint_catches_rollback_to_every_earlier_checkpoint(
        self, broker: Broker, signed: tuple[Path, list[tuple[int, bytes]]], tmp_path: Path
    ) -> None:
        directory, notes = signed
        newest_size, newest = notes[-1]
        with Store(tmp_path / "store.sqlite3") as store:
            await publish_through_outbox(broker, store, newest)
        published = await read_retained(mqtt(broker, "reader"), checkpoint_topic(SITE), "reader")
        assert published == newest
        for size, _ in notes[:-1]:
            copy = tmp_path / f"rolled-{size}"
            shutil.copytree(directory, copy)
            rollback(copy, size)
            where = "published checkpoint"
            verdict = judge_checkpoint(read_lines(copy), published, ORIGIN, read_verifiers(copy), where)
            assert verdict.kind == "inconsistent" and verdict.finding is not None
            assert verdict.finding.message == (
                f"published checkpoint: holds a signed checkpoint of size {newest_size}, the log only {size}"
                " entries: the log was rolled back"
            )
        keys = read_verifiers(directory)
        assert judge_checkpoint(read_lines(directory), published, ORIGIN, keys, "published checkpoint").kind == (
            "consistent"
        )

    async def test_rolled_back_agent_signs_nothing_stays_not_ready_until_recovered(
        self, broker: Broker, signed: tuple[Path, list[tuple[int, bytes]]], tmp_path: Path, witness: WitnessProcess
    ) -> None:
        directory, notes = signed
        target = WitnessTarget(witness.url, witness.key)
        assert submit(target, notes[-1][1], log_proofs(read_lines(directory)), 0).kind == "cosigned"
        with Store(tmp_path / "store.sqlite3") as store:
            await publish_through_outbox(broker, store, notes[-1][1])
        rollback(directory, notes[1][0])
        config = mqtt(broker, "agent")

        async def read_published() -> bytes | None:
            return await read_retained(config, checkpoint_topic(SITE), "agent-audit")

        log = AuditLog.open(directory, ORIGIN)
        anchor = AuditAnchor(log, publish=None, read_published=read_published, citations=lambda: [], witnesses=[target])
        ready = asyncio.Event()
        task = asyncio.create_task(anchor.run(ready))
        try:
            async with asyncio.timeout(20):
                await ready.wait()
            assert anchor.not_ready_reason is not None
            assert anchor.not_ready_reason.startswith(
                f"audit rollback detected: published checkpoint: holds a signed checkpoint of size {notes[-1][0]},"
                f" the log only {notes[1][0]} entries: the log was rolled back"
            )
            # The witness's size comes from its 409 (C2SP add-checkpoint), not from a read the spec does not have.
            rolled_back = (
                f"witness {witness.url} has cosigned size {notes[-1][0]}, the log's checkpoint is {notes[1][0]}:"
                " the log was rolled back"
            )
            assert rolled_back in {f.message for f in anchor.findings}
            with pytest.raises(CheckpointError, match="not signing: audit rollback detected"):
                log.append("test.entry", "test", {})
                log.checkpoint()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            log.close()
        assert read_marker(directory) is not None and (directory / MARKER).exists()
        state = tmp_path / "state"
        shutil.move(directory, state / "audit") if not (state / "audit").exists() else None
        agent = AgentConfig.model_validate({"site": {"id": SITE}, "paths": {"state_dir": str(state)}})
        doctor = check_audit_rollback(agent)
        assert doctor.status == "fail" and "the agent found a rollback and signs nothing" in doctor.detail
        # Recovery: explicit, audited in a signed entry, and the next start accepts exactly what it names.
        toml = tmp_path / "edge-agent.toml"
        toml.write_text(
            f'[site]\nid = "{SITE}"\n[paths]\nstate_dir = "{state}"\n[audit]\norigin = "{ORIGIN}"\n', encoding="utf-8"
        )
        done = subprocess.run(
            [sys.executable, "-m", "edge_agent", "audit", "recover", "--config", str(toml), "--reason", "test"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert not (state / "audit" / MARKER).exists()
        last = json.loads(read_lines(state / "audit")[-1])
        assert last["event"] == "audit.recovered" and last["payload"]["reason"] == "test"
        assert check_audit_rollback(agent).status == "ok"
        log = AuditLog.open(state / "audit", ORIGIN)
        anchor = AuditAnchor(log, publish=None, read_published=read_published, citations=lambda: [], witnesses=[target])
        task = asyncio.create_task(anchor.run(asyncio.Event()))
        try:
            async with asyncio.timeout(20):
                while not (anchor.released or anchor.findings):
                    await asyncio.sleep(0.05)
            assert anchor.findings == []
            log.append("test.entry", "test", {"after": "recovery"})
            assert Checkpoint.parse_body(SignedNote.parse(log.checkpoint()).text).size == log.size
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            log.close()


def test_new_log_records_why_and_the_old_checkpoint(tmp_path: Path) -> None:
    genesis = {"reason": "disk replaced", "actor": "maria", "previous_checkpoint": "o\n5\nx\n"}
    with AuditLog.open(tmp_path / "audit", ORIGIN, genesis=genesis):
        pass
    first = json.loads(read_lines(tmp_path / "audit")[0])
    assert first["event"] == "key.rotated" and first["payload"]["new_log"] == genesis
