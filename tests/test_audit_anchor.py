"""The audit anchor fails closed and trusts only the log (docs/audit.md, "Rollback and witnesses"), against a real
Mosquitto broker and a real `edge-agent witness serve` process: signing waits for the retained checkpoint or a
witness; nothing on disk outside the log accepts a finding; a witness that did not cosign is retried and shown; a
retained checkpoint the log did not sign is a warning, one it signed that disagrees is a rollback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import REGISTRY
from pydantic import ValidationError

from edge_agent.audit import AuditLog, CheckpointError, Signer, Verifier
from edge_agent.audit.anchor import AuditAnchor, checkpoint_topic
from edge_agent.audit.checkpoint import Checkpoint, SignedNote, sign_checkpoint
from edge_agent.audit.log import LATEST_CHECKPOINT, SIGNING_KEY, read_verifiers
from edge_agent.audit.rollback import LEGACY_ACCEPTED, RECOVERED_EVENT, finding_key, judge_checkpoint, read_lines
from edge_agent.audit.witness_client import WitnessTarget
from edge_agent.audit.witness_state import COSIGNED, WITNESS_STATE
from edge_agent.config import AgentConfig
from edge_agent.doctor.audit_witness import witness_checks
from edge_agent.publish.retained import read_retained
from edge_agent.qualify.check import Check
from edge_agent.qualify.iq import check_witness
from edge_agent.signing.cosignature import Cosigner
from edge_agent.store import Store
from tests.fixtures.broker import Broker, free_port
from tests.test_audit_rollback import ORIGIN, SITE, build_log, mqtt, publish_through_outbox, rollback
from tests.test_witness import WitnessProcess, start_witness

PUBLISHED = "published checkpoint"
Judged = tuple[list[bytes], bytes, list[Verifier]]  # the log's lines, its latest checkpoint, its keys


def anchor_for(
    log: AuditLog,
    broker: Broker | None,
    published: list[bytes],
    witnesses: list[WitnessTarget] | None = None,
    require_witness: bool = False,
) -> AuditAnchor:
    """The anchor as app.py builds it, with retries in tens of milliseconds instead of seconds."""
    read = None
    if broker is not None:
        config = mqtt(broker, "agent")

        async def read_published() -> bytes | None:
            return await read_retained(config, checkpoint_topic(SITE), "agent-audit")

        read = read_published
    return AuditAnchor(
        log,
        publish=published.append if broker is not None else None,
        read_published=read,
        citations=lambda: [],
        witnesses=witnesses or [],
        require_witness=require_witness,
        every_s=0.05,
        retry_initial_s=0.05,
        retry_max_s=0.2,
    )


@asynccontextmanager
async def running(anchor: AuditAnchor) -> AsyncIterator[None]:
    ready = asyncio.Event()
    task = asyncio.create_task(anchor.run(ready))
    try:
        async with asyncio.timeout(30):
            await ready.wait()
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def until(condition: Callable[[], bool], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def metric(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def latest(directory: Path) -> bytes:
    return (directory / LATEST_CHECKPOINT).read_bytes()


@pytest.fixture
def audit_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "audit"
    build_log(directory)
    return directory


@pytest.fixture
def witness(tmp_path: Path, audit_dir: Path) -> Iterator[WitnessProcess]:
    w = start_witness(tmp_path, (audit_dir / "keys.txt").read_text().splitlines()[-1])
    yield w
    w.proc.terminate()
    w.proc.wait(10)


async def retain(broker: Broker, tmp_path: Path, payload: bytes) -> None:
    with Store(tmp_path / "store.sqlite3") as store:
        await publish_through_outbox(broker, store, payload)


@pytest.mark.broker
class TestFailsClosed:
    async def test_start_with_broker_down_signs_nothing(self, broker: Broker, audit_dir: Path) -> None:
        """No witness: the retained checkpoint is the only copy outside. While it cannot be read nothing is signed
        or published and /readyz says what the anchor waits for; once read, signing and publishing go on."""
        broker.stop()
        published: list[bytes] = []
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, published)
            async with running(anchor):
                assert not anchor.released
                assert anchor.not_ready_reason is not None
                assert anchor.not_ready_reason.startswith(
                    "signing waits for the retained checkpoint on the broker (broker: "
                )
                log.append("test.entry", "test", {"while": "broker down"})
                with pytest.raises(CheckpointError, match="not signing yet"):
                    log.checkpoint()
                anchor.anchor_latest()
                assert published == []
                assert metric("edge_agent_audit_signing_held") == 1
                broker.start()
                await until(lambda: anchor.released)
                note = log.checkpoint()
                await until(lambda: published[-1:] == [note])
                assert anchor.not_ready_reason is None and metric("edge_agent_audit_signing_held") == 0

    async def test_rolled_back_log_with_broker_down_never_publishes_its_checkpoint(
        self, broker: Broker, audit_dir: Path, tmp_path: Path
    ) -> None:
        """The issue's case: the broker is down at start, the log was rolled back. The old anchor published its own
        rolled-back checkpoint as the new retained one; now the rollback is found once the broker is back, and
        nothing was published or signed before."""
        newest = latest(audit_dir)
        await retain(broker, tmp_path, newest)
        rollback(audit_dir, 4)
        broker.stop()
        published: list[bytes] = []
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, published)
            async with running(anchor):
                assert not anchor.released and published == []
                broker.start()
                await until(lambda: bool(anchor.findings))
                assert anchor.not_ready_reason == (
                    "audit rollback detected: published checkpoint: holds a signed checkpoint of size 16, the log"
                    " only 4 entries: the log was rolled back"
                )
                assert published == [] and not anchor.released
        assert await read_retained(mqtt(broker, "r"), checkpoint_topic(SITE), "reader") == newest

    async def test_a_witness_answer_releases_signing_but_not_publishing(
        self, broker: Broker, audit_dir: Path, witness: WitnessProcess
    ) -> None:
        """With a witness, its answer is enough to sign; the retained topic gets nothing until it was read."""
        broker.stop()
        published: list[bytes] = []
        target = WitnessTarget(witness.url, witness.key)
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, published, [target])
            async with running(anchor):
                assert anchor.released
                log.append("test.entry", "test", {})
                log.checkpoint()
                await asyncio.sleep(0.3)  # the anchor's loop has run: it cosigns, and publishes nothing
                assert published == []
                assert anchor.not_ready_reason is not None
                assert anchor.not_ready_reason.startswith("the retained checkpoint is not read yet (broker: ")
                broker.start()
                await until(lambda: published[-1:] == [latest(audit_dir)])

    async def test_require_witness_waits_for_a_witness_even_with_the_retained_read(
        self, broker: Broker, audit_dir: Path
    ) -> None:
        port = free_port()
        key = Cosigner(Signer.generate("w.test/w1")).key
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, [], [WitnessTarget(f"http://127.0.0.1:{port}", key)], True)
            async with running(anchor):
                await asyncio.sleep(0.3)
                assert not anchor.released
                assert anchor.not_ready_reason is not None
                assert anchor.not_ready_reason.startswith(
                    "signing waits for a witness to answer (audit.require_witness): witness"
                    f" http://127.0.0.1:{port} unreachable"
                )

    def test_require_witness_needs_a_witness(self) -> None:
        with pytest.raises(ValidationError, match=r"require_witness = true needs at least one \[\[audit.witnesses"):
            AgentConfig.model_validate({"site": {"id": SITE}, "audit": {"require_witness": True}})


@pytest.mark.broker
class TestRecoveryOnlyThroughTheLog:
    async def test_appended_accepted_jsonl_line_does_not_silence_a_rollback(
        self, broker: Broker, audit_dir: Path, tmp_path: Path
    ) -> None:
        newest = latest(audit_dir)
        await retain(broker, tmp_path, newest)
        rollback(audit_dir, 4)
        line = {"time": "2026-12-01T00:00:00+00:00", "reason": "x", "keys": [finding_key(PUBLISHED, newest)]}
        (audit_dir / LEGACY_ACCEPTED).write_text(json.dumps(line) + "\n")
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, [])
            async with running(anchor):
                assert [f.key for f in anchor.findings] == [finding_key(PUBLISHED, newest)]
                assert not anchor.released

    async def test_recovered_entry_accepts_only_once_signed(
        self, broker: Broker, audit_dir: Path, tmp_path: Path
    ) -> None:
        """An `audit.recovered` entry no checkpoint covers (what anyone who can write the file can append) accepts
        nothing; the same entry under a signed checkpoint (what `audit recover` writes) accepts what it names."""
        newest = latest(audit_dir)
        await retain(broker, tmp_path, newest)
        rollback(audit_dir, 4)
        finding = {"key": finding_key(PUBLISHED, newest), "message": "accepted"}
        with AuditLog.open(audit_dir, ORIGIN) as log:
            log.hold("left unsigned")
            log.append(RECOVERED_EVENT, "operator", {"reason": "test", "findings": [finding]})
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, [])
            async with running(anchor):
                assert [f.key for f in anchor.findings] == [finding["key"]]
        (audit_dir / "ROLLBACK").unlink()
        with AuditLog.open(audit_dir, ORIGIN) as log:
            log.append(RECOVERED_EVENT, "operator", {"reason": "test", "findings": [finding]})
            log.checkpoint()
        published: list[bytes] = []
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, published)
            async with running(anchor):
                assert anchor.findings == [] and anchor.released
                await until(lambda: published[-1:] == [latest(audit_dir)])


@pytest.mark.broker
class TestWitnessFailuresShow:
    async def test_failed_cosign_is_retried_and_not_marked_done(
        self, broker: Broker, audit_dir: Path, witness: WitnessProcess
    ) -> None:
        witness.proc.terminate()
        witness.proc.wait(10)
        target = WitnessTarget(witness.url, witness.key)
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, [], [target])
            async with running(anchor):
                assert anchor.released  # the retained checkpoint (none) was read
                await until(lambda: "unreachable" in (anchor.not_ready_reason or ""))
                state = json.loads((audit_dir / WITNESS_STATE).read_text())[witness.url]
                assert state["state"] == "unreachable" and state["failures"] >= 1
                assert metric("edge_agent_audit_witness_ok", witness=witness.url) == 0
                assert (metric("edge_agent_audit_witness_failures_total", witness=witness.url, kind="unreachable")
                        or 0) >= 1  # fmt: skip
                assert not (audit_dir / COSIGNED).exists()
                witness.restart()
                await until(lambda: anchor.not_ready_reason is None)
                state = json.loads((audit_dir / WITNESS_STATE).read_text())[witness.url]
                assert (state["state"], state["size"], state["failures"]) == ("cosigned", 16, 0)
                assert metric("edge_agent_audit_witness_ok", witness=witness.url) == 1
                cosigned = SignedNote.parse((audit_dir / COSIGNED).read_bytes())
                assert cosigned.text == SignedNote.parse(latest(audit_dir)).text
                assert any(s.name == witness.key.name for s in cosigned.signatures)

    async def test_start_check_learns_the_witness_size_from_a_409(
        self, broker: Broker, audit_dir: Path, witness: WitnessProcess
    ) -> None:
        """The witness's state comes from add-checkpoint's 409 (no GET): with the local record of its size gone
        along with the entries, the rolled-back log is still caught."""
        target = WitnessTarget(witness.url, witness.key)
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, None, [], [target])
            async with running(anchor):
                await until(lambda: anchor.not_ready_reason is None)
        rollback(audit_dir, 4)
        (audit_dir / WITNESS_STATE).unlink()
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, None, [], [target])
            async with running(anchor):
                assert [(f.key, f.message) for f in anchor.findings] == [
                    (
                        f"witness:{witness.url}:rollback:16",
                        f"witness {witness.url} has cosigned size 16, the log's checkpoint is 4: the log was rolled"
                        " back",
                    )
                ]

    async def test_doctor_and_iq_name_an_unreachable_witness(
        self, audit_dir: Path, witness: WitnessProcess, tmp_path: Path
    ) -> None:
        state = tmp_path / "state"
        state.mkdir()
        audit_dir.rename(state / "audit")
        witnesses = [{"url": witness.url, "key": witness.key.key_string()}]
        config = AgentConfig.model_validate(
            {
                "site": {"id": SITE},
                "paths": {"state_dir": str(state)},
                "audit": {"origin": ORIGIN, "witnesses": witnesses, "require_witness": True},
            }
        )
        (ok,) = witness_checks(config)
        assert (ok.status, ok.detail) == ("ok", f"witness {witness.url} cosigned size 16")
        up = check_witness(config)
        assert isinstance(up, Check) and up.passed
        witness.proc.terminate()
        witness.proc.wait(10)
        (down,) = witness_checks(config)
        assert down.status == "fail" and down.detail.startswith(f"unreachable: witness {witness.url} unreachable")
        iq = check_witness(config)
        assert isinstance(iq, Check) and not iq.passed and iq.measured.startswith("fail: unreachable: witness")


@pytest.mark.broker
class TestRetainedCheckpoint:
    @pytest.mark.parametrize("kind", ["garbage", "another key"])
    async def test_garbage_retained_checkpoint_warns_and_signing_goes_on(
        self, broker: Broker, audit_dir: Path, tmp_path: Path, kind: str
    ) -> None:
        """Anyone with the broker's credentials can publish one: a warning, a metric, a named entry in the log,
        and this log's next checkpoint replaces it; nothing stops."""
        if kind == "garbage":
            payload = b"\x00not a checkpoint"
            says = "published checkpoint: not a checkpoint (signed note holds control characters): ignored"
        else:
            payload = sign_checkpoint(Checkpoint(ORIGIN, 99, b"\x01" * 32), [Signer.generate(ORIGIN)])
            says = "published checkpoint: a checkpoint of size 99 not signed by this log's key (no signature"
        await retain(broker, tmp_path, payload)
        before = metric("edge_agent_audit_retained_foreign_total") or 0
        published: list[bytes] = []
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, published)
            async with running(anchor):
                assert anchor.released and anchor.findings == []
                (warning,) = anchor.warnings
                assert warning.key == finding_key(PUBLISHED, payload) and warning.message.startswith(says)
                assert metric("edge_agent_audit_retained_foreign_total") == before + 1
                note = log.checkpoint()
                await until(lambda: published[-1:] == [note])
                assert anchor.not_ready_reason is None
        entries = [json.loads(line) for line in read_lines(audit_dir)]
        recorded = [e["payload"] for e in entries if e["event"] == "error"]
        assert recorded[-1]["kind"] == "retained_checkpoint_foreign" and recorded[-1]["key"] == warning.key

    async def test_retained_fork_signed_by_the_log_halts(self, broker: Broker, audit_dir: Path, tmp_path: Path) -> None:
        signer = Signer.read(audit_dir / SIGNING_KEY)
        forged = sign_checkpoint(Checkpoint(ORIGIN, 10, b"\x01" * 32), [signer])
        await retain(broker, tmp_path, forged)
        with AuditLog.open(audit_dir, ORIGIN) as log:
            anchor = anchor_for(log, broker, [])
            async with running(anchor):
                assert anchor.not_ready_reason == (
                    "audit rollback detected: published checkpoint: the log's first 10 entries do not match the"
                    " checkpoint published for that size: history was rewritten"
                )
                assert not anchor.released


# -- any bytes on the retained topic --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def judged_log(tmp_path_factory: pytest.TempPathFactory) -> Judged:
    directory = tmp_path_factory.mktemp("judged") / "audit"
    build_log(directory)
    return read_lines(directory), latest(directory), read_verifiers(directory)


def _judge(judged_log: Judged, payload: bytes) -> None:
    lines, note, keys = judged_log
    verdict = judge_checkpoint(lines, payload, ORIGIN, keys, PUBLISHED)
    assert verdict.kind in ("consistent", "foreign", "inconsistent")
    if verdict.kind == "consistent":
        assert verdict.finding is None
        assert SignedNote.parse(payload).text == SignedNote.parse(note).text  # only this log's own checkpoint
    else:
        assert verdict.finding is not None and verdict.finding.key == finding_key(PUBLISHED, payload)
        assert verdict.finding.message.startswith(f"{PUBLISHED}: ")


@given(payload=st.binary(max_size=400))
def test_any_retained_bytes_are_a_named_finding_or_accepted(judged_log: Judged, payload: bytes) -> None:
    _judge(judged_log, payload)


@given(
    position=st.integers(min_value=0, max_value=10_000),
    replacement=st.binary(min_size=0, max_size=3),
)
def test_any_edit_of_the_retained_checkpoint_is_a_named_finding_or_accepted(
    judged_log: Judged, position: int, replacement: bytes
) -> None:
    """One edit anywhere in the log's own checkpoint: accepted only if what is signed was untouched."""
    note = judged_log[1]
    i = position % (len(note) + 1)
    _judge(judged_log, note[:i] + replacement + note[i + len(replacement) :])
