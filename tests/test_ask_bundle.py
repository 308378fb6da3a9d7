"""Bundles that carry answers: `audit export` writes, for each `ask.answered` entry of its window, every record the
answer was computed from (edge_agent.ask.evidence); `audit verify-bundle --recompute` answers each question again from
those records alone and compares what the entry records; an edited carried record is named by its answer."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.ask.evidence import StoreAnswerEvidence, recompute_answer
from edge_agent.ask.pipeline import answer_at
from edge_agent.ask.trail import record_answer
from edge_agent.audit import AuditLog
from edge_agent.audit.evidence import EVIDENCE
from edge_agent.audit.evidence_records import RECORDS
from edge_agent.audit.export import export_bundle
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.manifest import BundleManifest, describe_files, sign_manifest
from edge_agent.audit.verify import VerifyResult, verify_bundle
from edge_agent.base.canonical import canonical_json
from edge_agent.config import AgentConfig, load_config
from edge_agent.reports.document import StoreEvidence, recompute
from edge_agent.signing import Signer, Verifier
from edge_agent.store import Store
from harness.shift import SHIFT_START, TZ, shift_records

ORIGIN = "edge-agent/ask-bundle"
NOW = SHIFT_START + timedelta(hours=8, minutes=30)  # 14:30 in Mexico City: shift A is over
QUESTION = "¿Cuál fue la vibración máxima de la P-101 en el turno A?"
COMMAND = "arranca la bomba P-101"
CONFIG = """
[site]
id = "demo"
timezone = "{tz}"

[paths]
state_dir = "{state}"

[audit]
origin = "{origin}"

[[reports.shifts]]
name = "A"
start = "06:00"
end = "14:00"
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[AgentConfig, dict[str, int], str]:
    """A store holding shift A; the audit log holding the answer to QUESTION and the refusal of COMMAND."""
    root = tmp_path_factory.mktemp("ask-bundle")
    path = root / "edge-agent.toml"
    path.write_text(CONFIG.format(tz=TZ, state=root / "state", origin=ORIGIN), encoding="utf-8")
    config = load_config(path)
    config.paths.state_dir.mkdir()
    seqs: dict[str, int] = {}
    with Store(config.paths.store_path) as store, AuditLog.open(config.paths.audit_dir, ORIGIN) as log:
        store.insert_records(shift_records())
        for question in (QUESTION, COMMAND):
            answer = answer_at(config, store, question, user="supervisor", lang=None, now=NOW)
            seqs[question] = record_answer(log, answer, question, "supervisor")
            if question == QUESTION:
                question_id = answer.question_id
    return config, seqs, question_id


@pytest.fixture(scope="module")
def bundle(site: tuple[AgentConfig, dict[str, int], str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = site[0]
    out = tmp_path_factory.mktemp("bundle") / "b"
    with Store(config.paths.store_path) as store, AuditLog.open(config.paths.audit_dir, ORIGIN) as log:
        result = export_bundle(
            config.paths.audit_dir,
            out,
            reports_dir=config.paths.state_dir / "reports",
            log=log,
            evidence=StoreEvidence(store, config.reports),
            answers=StoreAnswerEvidence(config.paths.store_path, config),
        )
    assert result.verification is not None and result.verification.ok, result.verification
    return out


@pytest.fixture(scope="module")
def exported(bundle: Path) -> dict[str, bytes]:
    """The files the tests edit, as exported."""
    return {name: (bundle / name).read_bytes() for name in (RECORDS, EVIDENCE, "manifest.json", "manifest.sig")}


def put_back(bundle: Path, exported: dict[str, bytes]) -> None:
    for name, data in exported.items():
        (bundle / name).write_bytes(data)


@pytest.fixture
def restored(bundle: Path, exported: dict[str, bytes]) -> Iterator[Path]:
    """The bundle, put back as exported after the test."""
    try:
        yield bundle
    finally:
        put_back(bundle, exported)


def key(config: AgentConfig) -> Verifier:
    return read_verifiers(config.paths.audit_dir)[-1]


def recomputed(bundle: Path, config: AgentConfig) -> VerifyResult:
    return verify_bundle(bundle, key(config), recompute=recompute, recompute_answer=recompute_answer)


def resign(bundle: Path, config: AgentConfig) -> None:
    """What someone holding the plant's key could do after editing the bundle: list the files anew and sign."""
    manifest = BundleManifest.model_validate_json((bundle / "manifest.json").read_bytes())
    data = manifest.model_copy(update={"files": describe_files(bundle)}).to_bytes()
    (bundle / "manifest.json").write_bytes(data)
    signer = Signer.read(config.paths.audit_dir / "signing.key")
    (bundle / "manifest.sig").write_bytes(sign_manifest(data, ORIGIN, signer))


def evidence(bundle: Path) -> dict[str, Any]:
    return dict(json.loads((bundle / EVIDENCE).read_bytes()))


class TestExport:
    def test_the_answer_carries_the_records_it_read(
        self, bundle: Path, site: tuple[AgentConfig, dict[str, int], str]
    ) -> None:
        """The answer's entry lists its question and records, among them every sample of the tag in shift A; the
        refusal carries none, saying why."""
        _, seqs, question_id = site
        carried = evidence(bundle)
        answer = carried["answers"][str(seqs[QUESTION])]
        assert answer["question_id"] == question_id
        records = {json.loads(x)["id"]: json.loads(x) for x in (bundle / RECORDS).read_bytes().splitlines()}
        samples = [r["value"] for r in records.values() if r["key"] == "P-101.vibration_mm_s"]
        assert samples == [3.1, 4.5, 7.86, 5.2, 4.0]
        assert carried["answers_without_evidence"] == {str(seqs[COMMAND]): "it has no facts (status refused)"}
        assert carried["format"] == "edge-agent-evidence/3"


class TestRecompute:
    def test_a_bundle_with_an_answer_recomputes(
        self, bundle: Path, site: tuple[AgentConfig, dict[str, int], str]
    ) -> None:
        """--recompute answers the question again from the carried records alone: every member equal."""
        check = recomputed(bundle, site[0])
        assert check.ok, check.summary()
        assert "recomputed all 1 answer(s) from the bundle's records: every one equal" in check.notes
        assert f"answer {site[1][COMMAND]} carries no evidence: it has no facts (status refused)" in check.notes

    def test_one_changed_carried_record_fails_naming_the_answer(
        self, restored: Path, site: tuple[AgentConfig, dict[str, int], str]
    ) -> None:
        """The maximum sample 7.86 → 9.5 in records.jsonl and the manifest re-signed: the answer is named, with its
        question id and the fact whose hash moved."""
        config, seqs, question_id = site
        lines = (restored / RECORDS).read_bytes().splitlines()
        edited = [
            canonical_json({**json.loads(x), "value": 9.5}) if json.loads(x)["value"] == 7.86 else x for x in lines
        ]
        assert edited != lines
        (restored / RECORDS).write_bytes(b"".join(x + b"\n" for x in edited))
        resign(restored, config)
        check = recomputed(restored, config)
        assert str(check.problem).startswith(
            f"--recompute: answer {seqs[QUESTION]} (question {question_id}) differs:"
            " cited A02 (tag_stats P-101.vibration_mm_s): sha256 differ; facts_sha256: recorded"
        )

    def test_without_recompute_the_changed_record_fails_the_signed_manifest(
        self, restored: Path, site: tuple[AgentConfig, dict[str, int], str]
    ) -> None:
        """Not re-signed: the manifest names the edited file."""
        (restored / RECORDS).write_bytes((restored / RECORDS).read_bytes().replace(b"7.86", b"9.5"))
        check = verify_bundle(restored, key(site[0]))
        assert not check.ok and RECORDS in str(check.problem)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_an_edited_answer_evidence_is_refused_or_equal(
    restored: Path, exported: dict[str, bytes], site: tuple[AgentConfig, dict[str, int], str], data: st.DataObject
) -> None:
    """evidence.json is untrusted: any value in place of the answer's question_id, records or settings either is
    the exported one or fails verification with a reason, never an exception."""
    config, seqs, _ = site
    put_back(restored, exported)
    original = evidence(restored)
    member = data.draw(st.sampled_from(["question_id", "records", "settings"]))
    value = data.draw(
        st.one_of(
            st.none(), st.integers(), st.text(max_size=20), st.from_regex(r"[0-9]{1,3}(-[0-9]{1,3})?", fullmatch=True)
        )
    )
    edited = json.loads(json.dumps(original))
    edited["answers"][str(seqs[QUESTION])][member] = value
    (restored / EVIDENCE).write_bytes(canonical_json(edited) + b"\n")
    resign(restored, config)
    check = recomputed(restored, config)
    assert check.ok == (edited == original), check.summary()


class TestCli:
    def test_export_then_verify_bundle_recompute(
        self, site: tuple[AgentConfig, dict[str, int], str], tmp_path: Path
    ) -> None:
        """`audit export` carries the answer from the configured store; `verify-bundle --recompute` exits 0 with
        the answer recomputed equal."""
        config = site[0]
        path = config.paths.state_dir.parent / "edge-agent.toml"
        out = tmp_path / "b"
        export = [sys.executable, "-m", "edge_agent", "audit", "export", "--config", str(path), "--out", str(out)]
        run = subprocess.run(export, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        verify = [sys.executable, "-m", "edge_agent", "audit", "verify-bundle", str(out), "--recompute"]
        run = subprocess.run(
            [*verify, "--pubkey", key(config).key_string()], capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stderr
        assert "recomputed all 1 answer(s) from the bundle's records: every one equal" in run.stdout
