"""verify-bundle re-checks every recorded approval offline (edge_agent/audit/approvals.py) and states whether
unsigned sign-off was allowed.

The forgeries are written the way someone holding the plant's audit key would: through AuditLog.append, so the chain,
the checkpoints and the signed manifest all hold and only the approval itself can give them away.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.audit import AuditLog
from edge_agent.audit.approvals import check_approvals, config_keys, security_states, unsigned_signoff_state
from edge_agent.audit.export import export_bundle
from edge_agent.audit.log import read_verifiers
from edge_agent.audit.verify import VerifyResult, verify_bundle
from edge_agent.reports.document import ReportRepository, SignoffPolicy, check_signed, decide
from edge_agent.signing import ApproverKey, Statement, public_raw, sign
from tests.test_audit_bundle import generate

ORIGIN = "edge-agent/approvals-site"
SUPERVISOR = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
STRANGER = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
UNSIGNED_WARNING = {"code": "reports_unsigned_signoff", "message": "reports.allow_unsigned_signoff = true: …"}
Mutate = Callable[[dict[str, Any]], None]


def key(private: Ed25519PrivateKey = SUPERVISOR, name: str = "supervisor") -> ApproverKey:
    return ApproverKey(name, public_raw(private))


def config_loaded(keys: list[ApproverKey]) -> dict[str, Any]:
    """A config.loaded payload whose `[[identities]]` hold `keys` (one identity per name)."""
    names = sorted({k.name for k in keys})
    identities = [
        {"name": n, "broker_user": None, "approver_keys": [k.openssh for k in keys if k.name == n]} for n in names
    ]
    return {"sha256": "ab" * 32, "path": "/etc/edge-agent/config.toml", "identities": identities}


def build(
    state: Path,
    *,
    signer: Ed25519PrivateKey | None = SUPERVISOR,
    fmt: str = "ed25519",
    mutate: Mutate | None = None,
    comment: str = "ok",
    unsigned_allowed: bool = False,
    logged: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> Path:
    """A log with config.loaded (`logged`, default: the supervisor's key as the plant's config), config.security, a
    generated report and its approval (signed by `signer`, None: unsigned; the recorded approval JSON passed through
    `mutate` after the agent verified it), then config.loaded `after` if given, exported as a bundle."""
    repo = ReportRepository.for_state_dir(state)
    try:
        with AuditLog.open(state / "audit", ORIGIN) as log:
            log.append("config.loaded", "agent", logged if logged is not None else config_loaded([key()]))
            log.append("config.security", "agent", {"warnings": [UNSIGNED_WARNING] if unsigned_allowed else []})
            document = generate(log, repo, "rpt-1", "Turno A sin novedades.")
            verified = approval = None
            if signer is not None:
                now = datetime.now(UTC)
                statement = Statement("rpt-1", document["body_sha256"], "approve", "supervisor", now, "n" * 24, "ok")
                approval = sign(statement, signer, fmt)  # type: ignore[arg-type]
                # The plant registered the signer's key (a stranger's key here is a plant that was told a false one).
                policy = SignoffPolicy((key(signer),), ("supervisor",), timedelta(minutes=10), timedelta(minutes=2))
                verified = check_signed(approval, policy, now=now)
                if mutate is not None:
                    mutate(approval)
            decide(repo, log, report_id="rpt-1", decision="approve", by="supervisor", via="mqtt", comment=comment,
                   approval=verified, approval_json=approval)  # fmt: skip
            if after is not None:
                log.append("config.loaded", "agent", after)
            export_bundle(state / "audit", state / "bundle", reports_dir=state / "reports", log=log)
    finally:
        repo.close()
    return state / "bundle"


def check(bundle: Path, keys: list[ApproverKey] | None = None) -> VerifyResult:
    return verify_bundle(bundle, read_verifiers(bundle.parent / "audit")[-1], approver_keys=keys)


def failure(result: VerifyResult) -> str:
    assert result.problem is not None, f"the bundle verified: {result.notes}"
    return str(result.problem)


def decision_seq(bundle: Path) -> int:
    entries = [json.loads(line) for line in (bundle / "entries.jsonl").read_text().splitlines()]
    return next(e["seq"] for e in entries if e["event"] == "report.signed_off")


def flip_bit(signature: str, bit: int) -> str:
    raw = bytearray(base64.b64decode(signature))
    raw[bit // 8] ^= 1 << (bit % 8)
    return base64.b64encode(bytes(raw)).decode()


class TestSignedApprovals:
    @pytest.mark.parametrize("fmt", ["ed25519", "sshsig"])
    def test_a_signed_approval_passes(self, tmp_path: Path, fmt: str) -> None:
        """With and without --approver-key the signed decision re-checks; the notes say which keys were used."""
        bundle = build(tmp_path, fmt=fmt)
        recorded = check(bundle)
        assert recorded.ok, recorded.problem
        held = "1 signed approval(s) re-checked against the approver keys the log held"
        assert any(held in n for n in recorded.notes)
        given_keys = check(bundle, [key()])
        assert given_keys.ok, given_keys.problem
        assert "1 signed approval(s) re-checked against the 1 approver key(s) given" in given_keys.notes

    def test_an_edited_statement_fails_naming_the_entry_and_code(self, tmp_path: Path) -> None:
        """A statement changed after signing (the comment) no longer verifies: bad_signature at the decision."""
        bundle = build(tmp_path, mutate=lambda a: a["statement"].update(comment="aprobado sin revisar"),
                       comment="aprobado sin revisar")  # fmt: skip
        seq = decision_seq(bundle)
        assert failure(check(bundle)) == (
            f"entry {seq}: report.signed_off of report rpt-1: approval bad_signature: the signature is not one of"
            f" 'supervisor''s keys (tried {key().fingerprint})"
        )

    def test_an_entry_that_says_other_than_the_statement_is_a_mismatch(self, tmp_path: Path) -> None:
        """An entry whose comment is not the signed one (the statement intact) fails as mismatch."""
        bundle = build(tmp_path, comment="edited")
        seq = decision_seq(bundle)
        assert failure(check(bundle)) == (
            f"entry {seq}: report.signed_off of report rpt-1: approval mismatch: the signed comment 'ok' is not the"
            " entry's 'edited'"
        )

    def test_a_flipped_signature_bit_fails(self, tmp_path: Path) -> None:
        """One bit of the Ed25519 signature flipped: bad_signature."""
        bundle = build(tmp_path, mutate=lambda a: a.update(signature=flip_bit(a["signature"], 77)))
        assert "approval bad_signature" in failure(check(bundle, [key()]))

    def test_a_key_the_auditor_does_not_hold_fails(self, tmp_path: Path) -> None:
        """Signed by a key the plant registered but the auditor's --approver-key list does not name: unknown_key."""
        bundle = build(tmp_path, signer=STRANGER, logged=config_loaded([key(STRANGER)]))
        assert check(bundle).ok  # the plant's config (in the log) held the stranger's key
        seq = decision_seq(bundle)
        assert failure(check(bundle, [key()])) == (
            f"entry {seq}: report.signed_off of report rpt-1: approval unknown_key: signed by"
            f" {key(STRANGER).fingerprint}, which is not a key registered for 'supervisor'"
        )


class TestKeysTheLogHeld:
    """Without --approver-key, each approval is checked against the keys of the newest config.loaded before it."""

    def test_a_bundle_whose_approval_names_a_strangers_key_fails(self, tmp_path: Path) -> None:
        """The entry records a stranger's key (and a valid signature by it); the log held the supervisor's: fails."""
        bundle = build(tmp_path, signer=STRANGER)
        seq = decision_seq(bundle)
        assert failure(check(bundle)) == (
            f"entry {seq}: report.signed_off of report rpt-1: approval unknown_key: signed by"
            f" {key(STRANGER).fingerprint}, which is not a key registered for 'supervisor'"
        )

    def test_a_bundle_approved_by_a_key_the_log_held_passes(self, tmp_path: Path) -> None:
        """The supervisor's key in the config.loaded before the decision: the approval re-checks."""
        result = check(build(tmp_path))
        assert result.ok, result.problem

    def test_a_key_added_after_the_approval_does_not_make_it_pass(self, tmp_path: Path) -> None:
        """The stranger's key in a config.loaded after the decision does not count for it."""
        bundle = build(tmp_path, signer=STRANGER, after=config_loaded([key(), key(STRANGER)]))
        assert "approval unknown_key: signed by" in failure(check(bundle))

    def test_no_key_for_the_approver_in_the_log_fails_naming_both(self, tmp_path: Path) -> None:
        """A config.loaded naming nobody's keys: `no key for supervisor in the log at seq N`."""
        bundle = build(tmp_path, logged={"sha256": "ab" * 32, "path": None})
        seq = decision_seq(bundle)
        assert failure(check(bundle)) == (
            f"entry {seq}: report.signed_off of report rpt-1: approval unknown_key: no key for supervisor in the log"
            f" at seq {seq} (the config.loaded entry in force is entry 1)"  # entry 0: the log's key
        )

    def test_no_config_loaded_at_all_fails(self, signed_lines: list[bytes]) -> None:
        """Entries with a decision but no config.loaded before it: the approval fails, saying there is none."""
        lines = [line for line in signed_lines if b'"event":"config.loaded"' not in line]
        problem = check_approvals(lines).problem
        assert problem is not None and problem.code == "unknown_key"
        assert problem.message.endswith("(no config.loaded entry precedes it in these entries)")

    def test_the_older_approver_keys_form_is_read_too(self, tmp_path: Path) -> None:
        """A config.loaded with `approver_keys: [{name, key}]` (the config's older list) holds those keys."""
        older = {"sha256": "ab" * 32, "path": None, "approver_keys": [{"name": "supervisor", "key": key().openssh}]}
        result = check(build(tmp_path, logged=older))
        assert result.ok, result.problem

    def test_a_malformed_key_in_config_loaded_fails_at_that_entry(self, signed_lines: list[bytes]) -> None:
        """An approver key that does not parse fails the bundle at its config.loaded entry."""
        entries = [json.loads(line) for line in signed_lines]
        loaded = next(e for e in entries if e["event"] == "config.loaded")
        loaded["payload"]["identities"][0]["approver_keys"] = ["ssh-rsa AAAA"]
        problem = check_approvals([json.dumps(e).encode() for e in entries]).problem
        assert problem is not None and problem.seq == loaded["seq"] and problem.code == "malformed"
        assert str(problem) == "config.loaded: malformed: approver key of 'supervisor': key type 'ssh-rsa': only" \
            " ssh-ed25519 keys are accepted"  # fmt: skip


def build_windowed(state: Path) -> Path:
    """The agent starts (config.loaded with the supervisor's key), restarts, and records a signed approval; the
    export's window starts after the restart, so the config.loaded in force precedes it."""
    repo = ReportRepository.for_state_dir(state)
    try:
        with AuditLog.open(state / "audit", ORIGIN) as log:
            log.append("config.loaded", "agent", config_loaded([key()]))
            log.append("config.security", "agent", {"warnings": []})
        time.sleep(0.01)
        start = datetime.now(UTC)
        with AuditLog.open(state / "audit", ORIGIN) as log:
            document = generate(log, repo, "rpt-1", "Turno A sin novedades.")
            now = datetime.now(UTC)
            statement = Statement("rpt-1", document["body_sha256"], "approve", "supervisor", now, "n" * 24, "ok")
            approval = sign(statement, SUPERVISOR, "ed25519")
            policy = SignoffPolicy((key(),), ("supervisor",), timedelta(minutes=10), timedelta(minutes=2))
            verified = check_signed(approval, policy, now=now)
            decide(repo, log, report_id="rpt-1", decision="approve", by="supervisor", via="mqtt", comment="ok",
                   approval=verified, approval_json=approval)  # fmt: skip
            export_bundle(state / "audit", state / "bundle", reports_dir=state / "reports", log=log, start=start)
    finally:
        repo.close()
    return state / "bundle"


class TestConfigInForce:
    """A window that starts after the config.loaded in force carries that entry, proved included in the tree."""

    def test_a_windowed_export_after_a_restart_verifies_without_approver_keys(self, tmp_path: Path) -> None:
        """The bundle holds no config.loaded; its config_in_force.json gives the supervisor's key: passes."""
        bundle = build_windowed(tmp_path)
        entries = (bundle / "entries.jsonl").read_bytes()
        assert b'"event":"config.loaded"' not in entries
        carried = json.loads((bundle / "config_in_force.json").read_bytes())
        assert carried["seq"] == 1  # entry 0: the log's key
        assert json.loads((bundle / "manifest.json").read_bytes())["config_in_force"] == 1
        result = check(bundle)
        assert result.ok, result.problem
        assert any("1 signed approval(s) re-checked against the approver keys the log held" in n for n in result.notes)

    def test_an_edited_carried_config_entry_fails(self, tmp_path: Path) -> None:
        """The stranger's key put into the carried entry: it is no longer the entry the checkpoint includes."""
        bundle = build_windowed(tmp_path)
        path = bundle / "config_in_force.json"
        carried = json.loads(path.read_bytes())
        entry = json.loads(carried["entry"])
        entry["payload"] = config_loaded([key(STRANGER, "supervisor")])
        carried["entry"] = json.dumps(entry, separators=(",", ":"), sort_keys=True)
        path.write_text(json.dumps(carried))
        assert failure(check(bundle)).startswith(
            "entry 1: config_in_force.json (entry 1): not included in the signed tree (edited after export?)"
        )

    def test_a_removed_carried_config_entry_fails(self, tmp_path: Path) -> None:
        """The signed manifest names entry 1: a bundle without the file fails, naming it."""
        bundle = build_windowed(tmp_path)
        (bundle / "config_in_force.json").unlink()
        assert failure(check(bundle)) == (
            "entry 1: manifest.json names the config.loaded entry 1, but config_in_force.json (entry 1) is missing"
        )


@pytest.fixture(scope="module")
def windowed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_windowed(tmp_path_factory.mktemp("windowed"))


class TestConfigInForceProperties:
    @given(st.data())
    def test_no_byte_of_the_carried_entry_can_change(self, windowed: Path, data: st.DataObject) -> None:
        """Any one byte of the carried config.loaded line changed: the bundle fails (never a crash, never a pass)."""
        carried = json.loads((windowed / "config_in_force.json").read_bytes())
        line = bytearray(carried["entry"].encode())
        at = data.draw(st.integers(0, len(line) - 1))
        line[at] = data.draw(st.integers(0x20, 0x7E).filter(lambda b: b != line[at]))
        with tempfile.TemporaryDirectory() as tmp:
            bundle = Path(shutil.copytree(windowed, Path(tmp) / "bundle"))
            carried["entry"] = line.decode()
            (bundle / "config_in_force.json").write_text(json.dumps(carried))
            result = verify_bundle(bundle, read_verifiers(windowed.parent / "audit")[-1])
        assert result.problem is not None


class TestUnsignedSignoff:
    def test_unsigned_decisions_are_noted_and_the_setting_stated(self, tmp_path: Path) -> None:
        """An unsigned decision passes with a note; the manifest and the output say unsigned sign-off was on."""
        bundle = build(tmp_path, signer=None, unsigned_allowed=True)
        result = check(bundle)
        assert result.ok, result.problem
        manifest = json.loads((bundle / "manifest.json").read_text())
        assert manifest["unsigned_signoff"] == "on"
        seq = decision_seq(bundle)
        assert f"entry {seq}: the decision on report rpt-1 by operator:supervisor was recorded unsigned" in result.notes
        assert any(n.startswith("reports.allow_unsigned_signoff was ON") for n in result.notes)

    def test_off_is_stated_too(self, tmp_path: Path) -> None:
        """With signed sign-off only, the manifest says off and so does the output."""
        bundle = build(tmp_path)
        assert json.loads((bundle / "manifest.json").read_text())["unsigned_signoff"] == "off"
        assert any(n.startswith("reports.allow_unsigned_signoff was off") for n in check(bundle).notes)

    def test_the_setting_in_force_before_the_window_counts(self) -> None:
        """The last config.security before the window's first entry is in force for it; none at all: unknown."""
        states = [(3, True), (40, False)]
        assert unsigned_signoff_state(states, 10, 30) == "on"  # entry 3's setting still held
        assert unsigned_signoff_state(states, 41, 50) == "off"
        assert unsigned_signoff_state(states, 0, 2) == "unknown"
        assert unsigned_signoff_state(states, 0, 50) == "on"

    def test_cli_prints_the_setting_and_names_a_bad_approver_key(self, tmp_path: Path) -> None:
        """verify-bundle prints the state; --approver-key with the wrong key exits 1 with the named message."""
        bundle = build(tmp_path, signer=STRANGER, logged=config_loaded([key(STRANGER)]))
        pub = read_verifiers(tmp_path / "audit")[-1].key_string()
        ok = cli("verify-bundle", str(bundle), "--pubkey", pub)
        assert ok.returncode == 0, ok.stderr
        assert "note: reports.allow_unsigned_signoff was off" in ok.stdout
        bad = cli("verify-bundle", str(bundle), "--pubkey", pub, "--approver-key", f"supervisor={key().openssh}")
        assert bad.returncode == 1
        assert "approval unknown_key: signed by" in bad.stderr and f"entry {decision_seq(bundle)}:" in bad.stderr
        usage = cli("verify-bundle", str(bundle), "--approver-key", "supervisor")
        assert usage.returncode == 2 and "expected NAME=KEY" in usage.stderr


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", "audit", *args], capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def signed_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    bundle = build(tmp_path_factory.mktemp("prop"))
    return (bundle / "entries.jsonl").read_bytes().splitlines()


class TestProperties:
    @given(st.data())
    def test_no_bit_of_a_recorded_signature_can_change(self, signed_lines: list[bytes], data: st.DataObject) -> None:
        """Any one bit flipped in the recorded Ed25519 signature fails the re-check, with or without trusted keys."""
        entries = [json.loads(line) for line in signed_lines]
        decision = next(e for e in entries if e["event"] == "report.signed_off")
        bit = data.draw(st.integers(0, 64 * 8 - 1))
        approval = decision["payload"]["approval"]
        approval["signature"] = flip_bit(approval["signature"], bit)
        lines = [json.dumps(e).encode() for e in entries]
        trusted = data.draw(st.sampled_from([None, [key()]]))
        problem = check_approvals(lines, trusted).problem
        assert problem is not None and problem.code == "bad_signature" and problem.seq == decision["seq"]

    @given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                            st.sampled_from(["identities", "approver_keys", "name", "key"]), inner, max_size=3),
                        max_leaves=12))  # fmt: skip
    def test_any_config_loaded_payload_gives_keys_or_a_value_error(self, payload: Any) -> None:
        """Whatever a config.loaded entry holds, reading its keys returns them or raises ValueError naming why."""
        try:
            keys = config_keys(payload if isinstance(payload, dict) else {"identities": payload})
        except ValueError as exc:
            assert str(exc)
        else:
            assert all(len(k.raw) == 32 for k in keys)

    @given(st.lists(st.tuples(st.integers(0, 60), st.booleans()), max_size=8), st.integers(0, 60), st.integers(0, 60))
    def test_the_state_is_on_exactly_when_a_setting_in_force_was_on(
        self, raw: list[tuple[int, bool]], a: int, b: int
    ) -> None:
        """Against a naive reading: the settings in force are the last before the window and every one inside."""
        states = sorted(dict(raw).items())
        first, last = min(a, b), max(a, b)
        in_force = [on for seq, on in states if first <= seq <= last] + [on for seq, on in states if seq < first][-1:]
        expected = "unknown" if not in_force else ("on" if any(in_force) else "off")
        assert unsigned_signoff_state(states, first, last) == expected

    def test_security_states_reads_the_warning_codes(self) -> None:
        """config.security entries with and without the warning, among other entries."""
        lines = [
            b'{"actor":"agent","event":"config.security","payload":{"warnings":[]},"seq":0}',
            b'{"actor":"agent","event":"ingest.batch","payload":{"count":1},"seq":1}',
            b'{"actor":"agent","event":"config.security","payload":{"warnings":[{"code":"reports_unsigned_signoff"}]},'
            b'"seq":2}',
        ]
        assert security_states(lines) == [(0, False), (2, True)]
