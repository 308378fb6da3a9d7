"""Bundles that carry their evidence: `audit export` writes the records behind every report's facts, tied to the facts
by their record ids; `audit verify-bundle --recompute` recomputes every fact from them; edited, dropped or added
records are refused or named, never passed. Reports are built from simulated records as the agent builds them
(`generate.report_records` over a real store, `generate.report_facts`), without the engine."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from edge_agent.audit import AuditLog, Signer
from edge_agent.audit.evidence import EVIDENCE
from edge_agent.audit.evidence_records import RECORDS, absent_key, decode_ids, encode_ids, parse_record, record_line
from edge_agent.audit.export import export_bundle
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.manifest import BundleManifest, describe_files, sign_manifest
from edge_agent.audit.verify import VerifyResult, verify_bundle
from edge_agent.base.canonical import canonical_json
from edge_agent.base.types import StoredRecord, idempotency_key, ids_sha256
from edge_agent.config import AgentConfig, load_config
from edge_agent.reports.document import StoreEvidence, recompute
from edge_agent.reports.request import ResolvedRequest, ResolvedWindow, Scope
from edge_agent.signing import Verifier
from edge_agent.sim.records import Gap, plant_records
from edge_agent.store import Store
from tests.fixtures.evidence import file_reports

ORIGIN = "edge-agent/recompute-site"
START = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
# Small list limits, so the "not listed" facts appear too; the KPI settings of the demo plant.
CONFIG = """
[site]
id = "recompute-site"

[paths]
state_dir = "{state}"

[audit]
origin = "edge-agent/recompute-site"

[reports]
list_facts_max = 6
notes_max = 4

[reports.kpi]
lookback_days = 1
downtime_classes = {{ changeover = "planned" }}

[[reports.kpi.lines]]
line = "L1"
ideal_rate_per_min = 5.0
"""
REPORTS = [
    ("rpt-shift", "shift_summary", Scope()),
    ("rpt-alarms", "alarm_performance", Scope()),
    ("rpt-p101", "asset_history", Scope(assets=["P-101"])),
    ("rpt-down", "downtime_analysis", Scope()),
    ("rpt-alsum", "alarm_summary", Scope()),
]


def simulated() -> list[StoredRecord]:
    """12 h of the plant with the KPI scenarios (the 8 h window and 4 h before it), tag values every 5 minutes, a lost
    alarm history and 7 short gaps of one tag (more than list_facts_max), and one MES event no fact can read."""
    gaps = [Gap(START + timedelta(hours=2), START + timedelta(hours=2, minutes=10), None, "history_unavailable")]
    gaps += [
        Gap(
            START + timedelta(minutes=30 * i),
            START + timedelta(minutes=30 * i + 5),
            "T-301.level_pct",
            "queue_overflow",
        )
        for i in range(1, 8)
    ]
    records = plant_records(7, START - timedelta(hours=4), 12, tick_s=10, tag_every=30, kpi_scenarios=True, gaps=gaps)
    at = START + timedelta(hours=3)
    bad = StoredRecord(
        id=0,
        source="mqtt",
        kind="mes_event",
        key="L1",
        source_time=at,
        received_time=at,
        value={"type": 5},
        raw=b'{"type": 5}',
        idempotency_key=idempotency_key("bad", at.isoformat()),
    )
    return [*records, bad]


def make_reports(state: Path, config: AgentConfig) -> None:
    """The simulated records into the store; the five reports over its 8 h window, logged and filed."""
    window = ResolvedWindow(start=START, end=START + timedelta(hours=8), shift="A", timezone="UTC")
    requests = [
        (report_id, ResolvedRequest(type=kind, language="en", window=window, scope=scope))
        for report_id, kind, scope in REPORTS
    ]
    file_reports(state, config, ORIGIN, simulated(), requests)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, AgentConfig]:
    """A config file and its state dir: a store of simulated records, five reports over them, the audit log."""
    root = tmp_path_factory.mktemp("recompute")
    path = root / "edge-agent.toml"
    path.write_text(CONFIG.format(state=root / "state"), encoding="utf-8")
    config = load_config(path)
    make_reports(root / "state", config)
    return path, config


def export(config: AgentConfig, out: Path) -> Any:
    state = config.paths.state_dir
    with Store(config.paths.store_path) as store, AuditLog.open(state / "audit", ORIGIN) as log:
        evidence = StoreEvidence(store, config.reports)
        return export_bundle(state / "audit", out, reports_dir=state / "reports", log=log, evidence=evidence)


@pytest.fixture(scope="module")
def bundle(site: tuple[Path, AgentConfig], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "b"
    result = export(site[1], out)
    assert result.verification.ok, result.verification.summary()
    assert result.without_evidence == {}
    return out


def key(config: AgentConfig) -> Verifier:
    return read_verifiers(config.paths.state_dir / "audit")[-1]


def reason(check: VerifyResult) -> str:
    assert check.problem is not None, "the bundle verified"
    return str(check.problem)


def lines(bundle: Path) -> list[bytes]:
    return (bundle / RECORDS).read_bytes().splitlines()


@pytest.fixture
def restored(bundle: Path) -> Iterator[Path]:
    """The bundle, put back as exported after the test (records.jsonl, manifest.json, manifest.sig)."""
    saved = {name: (bundle / name).read_bytes() for name in (RECORDS, "manifest.json", "manifest.sig")}
    try:
        yield bundle
    finally:
        for name, data in saved.items():
            (bundle / name).write_bytes(data)


def resign(bundle: Path, config: AgentConfig) -> None:
    """What someone holding the plant's key could do after editing the bundle: list the files anew and sign."""
    manifest = BundleManifest.model_validate_json((bundle / "manifest.json").read_bytes())
    data = manifest.model_copy(update={"files": describe_files(bundle)}).to_bytes()
    (bundle / "manifest.json").write_bytes(data)
    signer = Signer.read(config.paths.state_dir / "audit" / "signing.key")
    (bundle / "manifest.sig").write_bytes(sign_manifest(data, ORIGIN, signer))


class TestExport:
    def test_the_bundle_carries_records_and_evidence_listed_in_the_signed_manifest(self, bundle: Path) -> None:
        """records.jsonl and evidence.json are files of the signed manifest like every other."""
        manifest = json.loads((bundle / "manifest.json").read_bytes())
        assert {RECORDS, EVIDENCE} <= {f["path"] for f in manifest["files"]}
        evidence = json.loads((bundle / EVIDENCE).read_bytes())
        assert (evidence["format"], evidence["facts_version"], evidence["without_evidence"]) == (
            "edge-agent-evidence/3",
            "1",
            {},
        )
        assert sorted(evidence["reports"]) == sorted(r for r, _, _ in REPORTS)
        assert evidence["reports"]["rpt-shift"]["settings"]["list_max"] == 6

    def test_each_record_line_is_canonical_and_round_trips(self, bundle: Path) -> None:
        """Every line is the canonical JSON of a stored record, ascending by id, and reads back to the same line."""
        ids = []
        for number, line in enumerate(lines(bundle), start=1):
            record = parse_record(line, number)
            assert record_line(record) == line == canonical_json(json.loads(line))
            ids.append(record.id)
        assert ids == sorted(set(ids))

    def test_only_mes_events_carry_their_idempotency_key(self, bundle: Path, site: tuple[Path, AgentConfig]) -> None:
        """The downtime pairing is the one fact reading the key: MES events carry the stored one, no other kind does,
        and a record read back stands in a key unique to it."""
        with Store(site[1].paths.store_path) as store:
            stored = {r.id: r.idempotency_key for r in store.records()}
        kinds = set()
        for number, line in enumerate(lines(bundle), start=1):
            data, record = json.loads(line), parse_record(line, number)
            kinds.add(data["kind"])
            if data["kind"] == "mes_event":
                assert data["idempotency_key"] == record.idempotency_key == stored[record.id]
            else:
                assert "idempotency_key" not in data
                assert record.idempotency_key == absent_key(record.id)
        assert kinds == {"tag_value", "alarm", "mes_event", "log_line", "data_gap"}

    @pytest.mark.parametrize(
        ("kind", "change"),
        [("mes_event", lambda r: r.pop("idempotency_key")), ("tag_value", lambda r: r.update(idempotency_key="k"))],
        ids=["removed-from-mes-event", "added-to-tag-value"],
    )
    def test_a_key_removed_from_an_mes_event_or_added_elsewhere_is_refused(
        self, bundle: Path, kind: str, change: Any
    ) -> None:
        """Which records carry the key is part of the format: either change is a malformed line."""
        from edge_agent.audit.evidence_records import EvidenceError

        record = next(json.loads(x) for x in lines(bundle) if json.loads(x)["kind"] == kind)
        change(record)
        with pytest.raises(EvidenceError, match=r"records.jsonl line 7: the members are \["):
            parse_record(canonical_json(record), 7)

    def test_each_facts_ids_hash_to_its_record_ids_sha256(self, bundle: Path) -> None:
        """The tie, with nothing but the bundle's files: the ids the evidence lists per fact hash to the fact's."""
        evidence = json.loads((bundle / EVIDENCE).read_bytes())
        for report_id, entry in evidence["reports"].items():
            facts = json.loads((bundle / "reports" / f"{report_id}.json").read_bytes())["body"]["facts"]
            for fact in facts:
                ids = decode_ids(entry["facts"][fact["id"]], fact["id"], 10**6)
                assert (ids_sha256(ids), len(ids)) == (fact["record_ids_sha256"], fact["record_count"])

    def test_a_report_the_store_no_longer_gives_goes_without_evidence_and_recompute_says_so(
        self, site: tuple[Path, AgentConfig], tmp_path: Path
    ) -> None:
        """Other fact settings at export than at generation: the report is exported without evidence, with why."""
        config = site[1].model_copy(update={"reports": site[1].reports.model_copy(update={"list_facts_max": 24})})
        result = export(config, tmp_path / "b")
        assert "rpt-shift" in result.without_evidence and len(result.without_evidence) < len(REPORTS)
        assert all("reports.list_facts_max" in why for why in result.without_evidence.values())
        first = sorted(result.without_evidence)[0]
        assert verify_bundle(tmp_path / "b", key(config)).ok
        assert reason(verify_bundle(tmp_path / "b", key(config), recompute=recompute)).startswith(
            f"--recompute: report {first} carries no evidence: the store's records give other facts"
        )


class TestRecompute:
    def test_every_fact_of_every_kind_is_recomputed_equal(self, bundle: Path, site: tuple[Path, AgentConfig]) -> None:
        """Every fact of the five reports comes out of the bundle's records equal, every kind the reports have."""
        check = verify_bundle(bundle, key(site[1]), recompute=recompute)
        assert check.ok, check.summary()
        facts = [
            f
            for r, _, _ in REPORTS
            for f in json.loads((bundle / "reports" / f"{r}.json").read_bytes())["body"]["facts"]
        ]
        assert any(
            n == f"recomputed all {len(facts)} facts of 5 report(s) from the bundle's records: every one equal"
            for n in check.notes
        )
        kinds = {f["kind"] for f in facts}
        assert kinds >= {
            "window", "completeness", "record_counts", "tag_stats", "state_change", "state_changes_not_listed",
            "alarm_total", "top_alarm", "downtime_total", "downtime_cause", "downtime_longest", "downtime_asset",
            "downtime", "production", "quality_checks", "operator_note", "operator_notes_not_listed", "data_gap",
            "data_gaps_not_listed", "skipped_records", "oee", "mtbf", "mttr", "alarm_rate", "alarm_flood",
            "alarm_chattering", "alarm_standing", "alarm_stale", "alarm_bad_actors", "alarm_priority_mix",
        }  # fmt: skip

    def test_without_recompute_the_ids_are_still_checked(self, bundle: Path, site: tuple[Path, AgentConfig]) -> None:
        """Plain verify-bundle ties the records to the facts by their ids and says so."""
        check = verify_bundle(bundle, key(site[1]))
        assert check.ok, check.summary()
        assert any("every fact's record ids match its record_ids_sha256" in n for n in check.notes)

    def test_an_edited_value_is_named_by_report_fact_expected_and_found(
        self, restored: Path, site: tuple[Path, AgentConfig]
    ) -> None:
        """Someone with the plant's key raises a vibration peak and re-signs: only --recompute catches it, naming the
        report, the fact, the recorded and the recomputed figure."""
        shift = json.loads((restored / "reports" / "rpt-shift.json").read_bytes())["body"]["facts"]
        peak = next(f for f in shift if f["kind"] == "tag_stats" and f["subject"] == "P-101.vibration_mm_s")
        peak_id = peak["record_ids"][1]  # key records: min, max, first, last
        edited = []
        for line in lines(restored):
            record = json.loads(line)
            if record["id"] == peak_id:
                record["value"] = 99.5
            edited.append(canonical_json(record))
        (restored / RECORDS).write_bytes(b"".join(x + b"\n" for x in edited))
        assert reason(verify_bundle(restored, key(site[1]))) == (
            "records.jsonl: SHA-256 differs from the signed manifest (changed after export)"
        )
        resign(restored, site[1])
        assert verify_bundle(restored, key(site[1])).ok  # the ids still match: the figure is what changed
        found = reason(verify_bundle(restored, key(site[1]), recompute=recompute))
        assert found.startswith("recomputed facts differ: report rpt-p101: fact ")
        assert (
            f"report rpt-shift: fact {peak['id']}: values.max: expected {peak['values']['max']!r}, found 99.5" in found
        )

    def test_a_dropped_record_is_named(self, restored: Path, site: tuple[Path, AgentConfig]) -> None:
        """A record removed and the manifest re-signed: the evidence lists it, records.jsonl does not hold it."""
        original = lines(restored)
        dropped = json.loads(original[100])["id"]
        (restored / RECORDS).write_bytes(b"".join(x + b"\n" for x in original[:100] + original[101:]))
        resign(restored, site[1])
        assert reason(verify_bundle(restored, key(site[1]))).endswith(
            f"its evidence lists record {dropped}, which records.jsonl does not hold (removed after export?)"
        )

    def test_an_added_record_is_named(self, restored: Path, site: tuple[Path, AgentConfig]) -> None:
        """A record added and the manifest re-signed: no report's evidence lists it."""
        original = lines(restored)
        extra = json.loads(original[-1])
        extra["id"] += 1
        (restored / RECORDS).write_bytes(b"".join(x + b"\n" for x in [*original, canonical_json(extra)]))
        resign(restored, site[1])
        assert reason(verify_bundle(restored, key(site[1]))) == (
            f"records.jsonl holds record {extra['id']}, which no report's evidence lists (added after export?)"
        )


def previous_format(bundle: Path, config: AgentConfig, out: Path) -> Path:
    """The bundle as edge-agent-evidence/1 wrote it, with its evidence format: every record with its stored
    idempotency_key; re-signed with the plant's key, as that exporter signed it."""
    shutil.copytree(bundle, out)
    with Store(config.paths.store_path) as store:
        stored = {r.id: r.idempotency_key for r in store.records()}
    old = [canonical_json({**json.loads(x), "idempotency_key": stored[json.loads(x)["id"]]}) for x in lines(out)]
    (out / RECORDS).write_bytes(b"".join(x + b"\n" for x in old))
    evidence = json.loads((out / EVIDENCE).read_bytes())
    (out / EVIDENCE).write_bytes(canonical_json({**evidence, "format": "edge-agent-evidence/1"}) + b"\n")
    resign(out, config)
    return out


class TestPreviousFormat:
    def test_a_bundle_of_format_1_still_verifies_and_recomputes(
        self, bundle: Path, site: tuple[Path, AgentConfig], tmp_path: Path
    ) -> None:
        """A bundle an auditor already holds (every record with its key) verifies, every fact recomputed equal."""
        old = previous_format(bundle, site[1], tmp_path / "old")
        check = verify_bundle(old, key(site[1]), recompute=recompute)
        assert check.ok, check.summary()
        assert any(n.endswith("every one equal") for n in check.notes)

    def test_a_format_1_record_without_its_key_is_refused(
        self, bundle: Path, site: tuple[Path, AgentConfig], tmp_path: Path
    ) -> None:
        """Format 1 carries the key on every record: a line without it is malformed, not read as format 2."""
        old = previous_format(bundle, site[1], tmp_path / "old")
        records = lines(old)
        first = json.loads(records[0])
        del first["idempotency_key"]
        (old / RECORDS).write_bytes(b"".join(x + b"\n" for x in [canonical_json(first), *records[1:]]))
        resign(old, site[1])
        assert reason(verify_bundle(old, key(site[1]))).startswith("records.jsonl line 1: the members are [")


def other(value: Any, data: st.DataObject) -> Any:
    """A value of the same member that differs from `value`."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + data.draw(st.integers(-5, 5).filter(bool))
    new = data.draw(
        st.one_of(st.none(), st.booleans(), st.integers(-10, 10), st.floats(-1e3, 1e3), st.text(max_size=6))
    )
    assume(new != value or type(new) is not type(value))
    return new


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_edit_drop_or_addition_of_a_record_passes(
    restored: Path, site: tuple[Path, AgentConfig], data: st.DataObject
) -> None:
    """Change any member of any record, drop one or add one: verify-bundle --recompute refuses the bundle."""
    original = lines(restored)
    index = data.draw(st.integers(0, len(original) - 1), label="record")
    record = json.loads(original[index])
    action = data.draw(st.sampled_from(["edit", "drop", "add"]), label="action")
    if action == "drop":
        edited = original[:index] + original[index + 1 :]
    elif action == "add":
        copy = dict(record, id=data.draw(st.integers(1, json.loads(original[-1])["id"] + 10)), key="X-1.extra")
        edited = sorted([*original, canonical_json(copy)], key=lambda x: json.loads(x)["id"])
    else:
        member = data.draw(st.sampled_from(sorted(record)), label="member")
        if member in ("source_time", "received_time"):
            shift = timedelta(microseconds=data.draw(st.integers(1, 10**10)))
            when = datetime.strptime(record[member], "%Y-%m-%dT%H:%M:%S.%fZ") + shift
            record[member] = when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        elif member == "raw":
            record[member] = base64.b64encode(base64.b64decode(record[member]) + b"x").decode()
        else:
            record[member] = other(record[member], data)
        edited = [*original[:index], canonical_json(record), *original[index + 1 :]]
    try:
        (restored / RECORDS).write_bytes(b"".join(x + b"\n" for x in edited))
        check = verify_bundle(restored, key(site[1]), recompute=recompute)
        assert not check.ok
    finally:
        (restored / RECORDS).write_bytes(b"".join(x + b"\n" for x in original))


class TestIds:
    @given(st.sets(st.integers(0, 300)))
    def test_runs_round_trip(self, ids: set[int]) -> None:
        """Any id set written as runs reads back as itself, ascending."""
        assert decode_ids(encode_ids(ids), "t", 10**6) == sorted(ids)

    def test_runs_by_hand(self) -> None:
        assert encode_ids([13, 1, 2, 3, 4, 9, 12]) == "1-4,9,12-13"
        assert encode_ids([]) == ""

    @pytest.mark.parametrize("text", ["3-1", "1,1", "5,2", "1-", "a", "-1", "1-999999999"])
    def test_malformed_runs_are_refused(self, text: str) -> None:
        from edge_agent.audit.evidence_records import EvidenceError

        with pytest.raises(EvidenceError):
            decode_ids(text, "t", 1000)


class TestCli:
    def test_export_then_verify_bundle_recompute(self, site: tuple[Path, AgentConfig], tmp_path: Path) -> None:
        """`audit export` writes the evidence from the configured store; `verify-bundle --recompute` passes on it
        and exits 1 naming the difference once a figure is changed and the manifest re-signed."""
        path, config = site
        out = tmp_path / "b"
        run = subprocess.run(
            [sys.executable, "-m", "edge_agent", "audit", "export", "--config", str(path), "--out", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stderr
        summary = json.loads(run.stdout)
        assert summary["without_evidence"] == {} and len(summary["reports"]) == 5
        verify = [sys.executable, "-m", "edge_agent", "audit", "verify-bundle", str(out), "--pubkey"]
        verify.append(key(config).key_string())
        run = subprocess.run([*verify, "--recompute"], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert "facts of 5 report(s) from the bundle's records: every one equal" in run.stdout
        shift = json.loads((out / "reports" / "rpt-shift.json").read_bytes())["body"]["facts"]
        count = next(f for f in shift if f["kind"] == "record_counts")
        cited = set(
            decode_ids(
                json.loads((out / EVIDENCE).read_bytes())["reports"]["rpt-shift"]["facts"][count["id"]], "t", 10**6
            )
        )
        edited = []
        for line in lines(out):
            record = json.loads(line)
            if record["id"] in cited and record["kind"] == "log_line":
                record["source_time"] = "2026-11-30T23:00:00.000000Z"  # moved out of the window
                cited = set()
            edited.append(canonical_json(record))
        (out / RECORDS).write_bytes(b"".join(x + b"\n" for x in edited))
        resign(out, config)
        run = subprocess.run([*verify, "--recompute"], capture_output=True, text=True, timeout=120)
        assert run.returncode == 1
        assert "audit verify-bundle: FAILED: recomputed facts differ: report " in run.stderr
        assert re.search(
            r"recomputed facts differ: report rpt-\w+: fact F\d\d: [\w.]+: expected \d+, found \d+", run.stderr
        )
