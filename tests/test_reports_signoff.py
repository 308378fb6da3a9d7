"""Signed sign-off: approvals only the approver's registered key can make (edge_agent/signing/, reports/signoff.py).

Layers: the SSHSIG format against the real `ssh-keygen -Y sign|verify`; the pure checks with hand-made forgeries
(a stranger's key, a flipped bit, another report, another body, a stale or future time, a replayed nonce);
Hypothesis over signatures, times and nonces; then the report service on a broker with users and an ACL, where the
agent's own broker account publishes sign-offs that only a signature makes count.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.audit import AuditLog
from edge_agent.config import AgentConfig
from edge_agent.config.reports import ReportsConfig
from edge_agent.config.security import security_warnings
from edge_agent.reports.document import ReportRepository, SignoffPolicy, check_signed, decide
from edge_agent.reports.errors import SignoffError
from edge_agent.signing import (
    ApprovalError,
    ApproverKey,
    Statement,
    fingerprint,
    load_signing_key,
    parse_public_key,
    public_raw,
    sign,
    sshsig_check,
    verify_approval,
    verify_recorded_approval,
)
from harness.reports_service import SIGNOFF_TOPIC, agent_config, mosquitto_rr, running_service, seed_report
from tests.fixtures.broker import Broker

SUPERVISOR = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
STRANGER = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
NOW = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)
BODY = "ab" * 32


def registered(key: Ed25519PrivateKey = SUPERVISOR, name: str = "supervisor") -> ApproverKey:
    return ApproverKey(name, public_raw(key))


def statement(**changes: Any) -> Statement:
    fields: dict[str, Any] = {
        "report_id": "rpt-demo-1",
        "body_sha256": BODY,
        "decision": "approve",
        "by": "supervisor",
        "at": NOW,
        "nonce": "n" * 24,
        "comment": "ok",
    }
    return Statement(**(fields | changes))


def policy(*keys: ApproverKey) -> SignoffPolicy:
    return SignoffPolicy(
        keys or (registered(),), ("supervisor", "operator"), timedelta(minutes=10), timedelta(minutes=2)
    )


def openssh_private(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    )


class TestSshsig:
    pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")

    def test_a_signature_ssh_keygen_makes_verifies(self, tmp_path: Path) -> None:
        """`ssh-keygen -Y sign -n edge-agent-signoff` of the statement bytes is accepted as the key's signature."""
        key_file = tmp_path / "id_ed25519"
        key_file.write_bytes(openssh_private(SUPERVISOR))
        key_file.chmod(0o600)
        message = statement().bytes()
        (tmp_path / "statement").write_bytes(message)
        subprocess.run(
            ["ssh-keygen", "-Y", "sign", "-n", "edge-agent-signoff", "-f", str(key_file), str(tmp_path / "statement")],
            check=True,
            capture_output=True,
        )
        armored = (tmp_path / "statement.sig").read_text()
        approval = {"statement": statement().as_json(), "format": "sshsig", "signature": armored}
        assert verify_approval(approval, [registered()]).key == registered()

    def test_ssh_keygen_verifies_ours(self, tmp_path: Path) -> None:
        """What `report approve --key id_ed25519` writes passes `ssh-keygen -Y verify` for the namespace."""
        approval = sign(statement(), SUPERVISOR, "sshsig")
        (tmp_path / "sig").write_text(approval["signature"])
        (tmp_path / "allowed").write_text(f"supervisor {registered().openssh}\n")
        result = subprocess.run(
            ["ssh-keygen", "-Y", "verify", "-f", str(tmp_path / "allowed"), "-I", "supervisor"]
            + ["-n", "edge-agent-signoff", "-s", str(tmp_path / "sig")],
            input=statement().bytes(),
            capture_output=True,
        )
        assert result.returncode == 0, result.stderr

    def test_fingerprint_is_ssh_keygens(self, tmp_path: Path) -> None:
        """The fingerprint the agent logs is the one `ssh-keygen -lf` prints for the public key."""
        (tmp_path / "k.pub").write_text(registered().openssh + " supervisor@laptop\n")
        out = subprocess.run(["ssh-keygen", "-lf", str(tmp_path / "k.pub")], capture_output=True, check=True).stdout
        assert out.split()[1].decode() == fingerprint(public_raw(SUPERVISOR))


class TestKeys:
    def test_every_public_key_form_gives_the_same_key(self) -> None:
        """OpenSSH, PEM, base64 and hex forms of one key parse to the same 32 bytes."""
        raw = public_raw(SUPERVISOR)
        pem = SUPERVISOR.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        forms = [registered().openssh + " a comment", pem.decode(), base64.b64encode(raw).decode(), raw.hex()]
        assert [parse_public_key(f) for f in forms] == [raw] * 4

    @pytest.mark.parametrize(
        ("text", "reason"),
        [
            ("ssh-rsa AAAAB3NzaC1yc2E", "only ssh-ed25519"),
            ("ssh-ed25519 !!!", "does not decode"),
            ("ssh-ed25519 AAAAC3Nza\u00e9", "does not decode"),  # non-ASCII base64: refused like other bad text
            ("abcd", "not an Ed25519 public key"),
        ],
    )
    def test_a_bad_key_is_a_config_error_naming_why(self, text: str, reason: str) -> None:
        """approver_keys entries are validated when the config loads."""
        with pytest.raises(ValueError, match=reason):
            ReportsConfig.model_validate({"approvers": ["a"], "approver_keys": [{"name": "a", "key": text}]})

    def test_signing_key_files_pick_the_format(self) -> None:
        """An OpenSSH private key signs SSHSIG; a PEM PKCS#8 key signs plain Ed25519."""
        pem = SUPERVISOR.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        assert load_signing_key(openssh_private(SUPERVISOR))[1] == "sshsig"
        assert load_signing_key(pem)[1] == "ed25519"


class TestCheckSigned:
    @pytest.mark.parametrize("fmt", ["ed25519", "sshsig"])
    def test_the_approvers_signature_is_accepted(self, fmt: str) -> None:
        """A fresh statement signed by supervisor's registered key verifies, naming the key."""
        verified = check_signed(sign(statement(), SUPERVISOR, fmt), policy(), now=NOW)  # type: ignore[arg-type]
        assert (verified.statement.by, verified.key.fingerprint) == ("supervisor", registered().fingerprint)

    @pytest.mark.parametrize("fmt", ["ed25519", "sshsig"])
    def test_a_key_not_in_the_config_is_refused(self, fmt: str) -> None:
        """A forged sign-off: supervisor's name, a stranger's key."""
        with pytest.raises(SignoffError, match="not a key registered for 'supervisor'") as err:
            check_signed(sign(statement(), STRANGER, fmt), policy(), now=NOW)  # type: ignore[arg-type]
        assert err.value.code == "unknown_key"

    def test_a_stranger_key_without_naming_it_is_a_bad_signature(self) -> None:
        """A raw Ed25519 signature that does not carry its key still fails, as a signature that is not theirs."""
        forged = sign(statement(), STRANGER, "ed25519")
        del forged["public_key"]
        with pytest.raises(SignoffError, match="is not one of 'supervisor''s keys") as err:
            check_signed(forged, policy(), now=NOW)
        assert err.value.code == "bad_signature"

    def test_another_approvers_key_is_refused(self) -> None:
        """operator's registered key cannot sign in supervisor's name."""
        keys = (registered(), registered(STRANGER, "operator"))
        with pytest.raises(SignoffError) as err:
            check_signed(sign(statement(), STRANGER, "sshsig"), policy(*keys), now=NOW)
        assert err.value.code == "unknown_key"

    def test_an_edited_statement_is_refused(self) -> None:
        """Changing the decision after signing breaks the signature."""
        approval = sign(statement(), SUPERVISOR, "ed25519")
        approval["statement"]["decision"] = "reject"
        with pytest.raises(SignoffError) as err:
            check_signed(approval, policy(), now=NOW)
        assert err.value.code == "bad_signature"

    def test_a_retargeted_signoff_is_refused(self) -> None:
        """A signature for rpt-demo-1 sent as the sign-off of another report names both."""
        with pytest.raises(SignoffError, match="report_id 'rpt-demo-2' is not the signed 'rpt-demo-1'") as err:
            check_signed(sign(statement(), SUPERVISOR, "sshsig"), policy(), now=NOW, report_id="rpt-demo-2")
        assert err.value.code == "mismatch"

    @pytest.mark.parametrize(
        ("now", "match"),
        [(NOW + timedelta(minutes=11), "stale sign-off"), (NOW - timedelta(minutes=3), "from the future")],
    )
    def test_outside_the_time_window_is_stale(self, now: datetime, match: str) -> None:
        """Older than signoff_max_age_s (600 s) or more than signoff_max_skew_s (120 s) ahead: refused."""
        with pytest.raises(SignoffError, match=match) as err:
            check_signed(sign(statement(), SUPERVISOR, "ed25519"), policy(), now=now)
        assert err.value.code == "stale"


class TestProperties:
    @given(st.data())
    def test_no_bit_of_the_signature_can_change(self, data: st.DataObject) -> None:
        """Flipping any one bit of either signature form never yields an accepted sign-off."""
        fmt = data.draw(st.sampled_from(["ed25519", "sshsig"]))
        approval = sign(statement(), SUPERVISOR, fmt)  # type: ignore[arg-type]
        if fmt == "ed25519":
            raw = bytearray(base64.b64decode(approval["signature"]))
            bit = data.draw(st.integers(0, len(raw) * 8 - 1))
            raw[bit // 8] ^= 1 << (bit % 8)
            approval["signature"] = base64.b64encode(bytes(raw)).decode()
        else:
            lines = approval["signature"].strip().splitlines()
            blob = bytearray(base64.b64decode("".join(lines[1:-1])))
            bit = data.draw(st.integers(0, len(blob) * 8 - 1))
            blob[bit // 8] ^= 1 << (bit % 8)
            approval["signature"] = f"{lines[0]}\n{base64.b64encode(bytes(blob)).decode()}\n{lines[-1]}\n"
        with pytest.raises(SignoffError):
            check_signed(approval, policy(), now=NOW)

    @given(
        st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)),
        st.text(alphabet="abcXYZ019_-", min_size=16, max_size=64),
    )
    def test_any_time_is_accepted_exactly_inside_the_window(self, at: datetime, nonce: str) -> None:
        """A correctly signed statement is accepted iff now - 600 s <= at <= now + 120 s."""
        approval = sign(statement(at=at, nonce=nonce), SUPERVISOR, "ed25519")
        at = datetime.fromisoformat(approval["statement"]["at"])
        inside = NOW - timedelta(minutes=10) <= at <= NOW + timedelta(minutes=2)
        try:
            check_signed(approval, policy(), now=NOW)
        except SignoffError as exc:
            assert not inside and exc.code == "stale"
        else:
            assert inside

    @given(
        st.dictionaries(
            st.sampled_from(["type", "report_id", "body_sha256", "decision", "by", "at", "nonce", "comment", "x"]),
            st.one_of(st.text(max_size=80), st.integers(), st.none()),
        ),
        st.text(max_size=200),
        st.sampled_from(["ed25519", "sshsig", "rsa", ""]),
    )
    def test_any_payload_is_refused_with_a_code_never_a_crash(self, stmt: dict[str, Any], sig: str, fmt: str) -> None:
        """Arbitrary statements, signatures and formats end in SignoffError with a known code."""
        with pytest.raises(SignoffError) as err:
            check_signed({"statement": stmt, "format": fmt, "signature": sig}, policy(), now=NOW)
        assert err.value.code in {"malformed", "unknown_key", "bad_signature"}

    @given(st.binary(max_size=300))
    def test_any_sshsig_blob_parses_or_is_malformed(self, blob: bytes) -> None:
        """Truncated or garbage SSHSIG armour raises ApprovalError("malformed"), nothing else."""
        armored = f"-----BEGIN SSH SIGNATURE-----\n{base64.b64encode(b'SSHSIG' + blob).decode()}\n"
        armored += "-----END SSH SIGNATURE-----\n"
        try:
            sshsig_check(b"m", armored)
        except ApprovalError as exc:
            assert exc.code == "malformed"


@pytest.fixture
def repo_and_audit(tmp_path: Path) -> Any:
    repo = ReportRepository.for_state_dir(tmp_path)
    audit = AuditLog.open(tmp_path / "audit", origin="edge-agent/demo")
    yield repo, audit
    repo.close()
    audit.close()


class TestDecide:
    def _seed(self, tmp_path: Path, request_id: str = "r-1") -> tuple[str, str]:
        report_id = seed_report(tmp_path, "demo", request_id)
        repo = ReportRepository.for_state_dir(tmp_path)
        body = repo.get(report_id)["body_sha256"]
        repo.close()
        return report_id, body

    def test_a_signed_approval_is_recorded_and_rechecks_offline(self, tmp_path: Path, repo_and_audit: Any) -> None:
        """The entry holds statement, signature and key; verify_recorded_approval re-checks it against the keys."""
        repo, audit = repo_and_audit
        report_id, body = self._seed(tmp_path)
        approval = sign(statement(report_id=report_id, body_sha256=body, at=datetime.now(UTC)), SUPERVISOR, "sshsig")
        verified = check_signed(approval, policy(), now=datetime.now(UTC))
        decide(repo, audit, report_id=report_id, decision="approve", by="supervisor", via="mqtt", comment="ok",
               approval=verified, approval_json=approval)  # fmt: skip
        entry = json.loads((tmp_path / "audit" / "entries.jsonl").read_text().splitlines()[-1])
        assert entry["event"] == "report.signed_off"
        assert entry["payload"]["key_fingerprint"] == registered().fingerprint
        rechecked = verify_recorded_approval(entry["event"], entry["actor"], entry["payload"], [registered()])
        assert rechecked is not None and rechecked.statement.nonce == "n" * 24
        with pytest.raises(ApprovalError, match="not a key registered"):
            verify_recorded_approval(entry["event"], entry["actor"], entry["payload"], [registered(STRANGER)])
        edited = entry["payload"] | {"body_sha256": "cd" * 32}
        with pytest.raises(ApprovalError, match="signed body_sha256"):
            verify_recorded_approval(entry["event"], entry["actor"], edited, [registered()])

    def test_a_replayed_nonce_is_refused_even_for_another_report(self, tmp_path: Path, repo_and_audit: Any) -> None:
        """The nonce store remembers a nonce across reports and reopenings."""
        repo, audit = repo_and_audit
        first, body = self._seed(tmp_path, "r-1")
        second, _ = self._seed(tmp_path, "r-2")
        now = datetime.now(UTC)
        approval = sign(statement(report_id=first, body_sha256=body, at=now), SUPERVISOR, "ed25519")
        verified = check_signed(approval, policy(), now=now)
        decide(repo, audit, report_id=first, decision="approve", by="supervisor", via="mqtt", comment="ok",
               approval=verified, approval_json=approval)  # fmt: skip
        reopened = ReportRepository.for_state_dir(tmp_path)
        try:
            with pytest.raises(SignoffError, match=r"replayed sign-off: nonce n{24}") as err:
                decide(reopened, audit, report_id=second, decision="approve", by="supervisor", via="mqtt",
                       comment="ok", approval=verified, approval_json=approval)  # fmt: skip
        finally:
            reopened.close()
        assert err.value.code == "replayed"

    def test_a_signature_for_another_body_is_refused(self, tmp_path: Path, repo_and_audit: Any) -> None:
        """A statement whose body hash is not the report's (an edited or regenerated report) does not decide it."""
        repo, audit = repo_and_audit
        report_id, body = self._seed(tmp_path)
        now = datetime.now(UTC)
        approval = sign(statement(report_id=report_id, at=now), SUPERVISOR, "ed25519")
        verified = check_signed(approval, policy(), now=now)
        with pytest.raises(SignoffError, match=f"signed for body {BODY}, report {report_id}'s body is {body}") as err:
            decide(repo, audit, report_id=report_id, decision="approve", by="supervisor", via="mqtt", comment="ok",
                   approval=verified, approval_json=approval)  # fmt: skip
        assert err.value.code == "other_body" and repo.get(report_id)["status"] == "draft"


class TestConfig:
    def test_four_eyes_is_on_by_default_and_unsigned_is_a_warning(self) -> None:
        """reports.four_eyes defaults to true; allow_unsigned_signoff = true earns reports_unsigned_signoff."""
        site = {"id": "demo", "timezone": "UTC"}
        assert AgentConfig.model_validate({"site": site}).reports.four_eyes is True
        config = AgentConfig.model_validate(
            {"site": site, "mqtt": {"enabled": False}, "reports": {"allow_unsigned_signoff": True}}
        )
        assert [w.code for w in security_warnings(config, {})] == ["reports_unsigned_signoff"]

    def test_a_key_for_someone_not_an_approver_is_refused(self) -> None:
        with pytest.raises(ValueError, match=r"names \['ghost'\], who are not in reports.approvers"):
            ReportsConfig.model_validate(
                {"approvers": ["a"], "approver_keys": [{"name": "ghost", "key": registered().openssh}]}
            )


async def cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "edge_agent.cli", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.broker
class TestOverMqtt:
    async def test_only_a_signature_makes_a_signoff_count(self, secure_broker: Broker, tmp_path: Path) -> None:
        """On the agent's own broker account (readwrite edge/#): unsigned, forged, replayed and re-targeted
        sign-offs are refused and audited by reason; `report approve --key --mqtt` approves."""
        key_file = tmp_path / "id_ed25519"
        key_file.write_bytes(openssh_private(SUPERVISOR))
        keys = [{"name": "supervisor", "key": registered().openssh}]
        config = agent_config(tmp_path, secure_broker, secure=True, approver_keys=keys)
        first = seed_report(config.paths.state_dir, "demo", "r-1")
        other = seed_report(config.paths.state_dir, "demo", "r-2")
        body = ReportRepository.for_state_dir(config.paths.state_dir).get(first)["body_sha256"]
        forged = sign(statement(report_id=first, body_sha256=body, at=datetime.now(UTC)), STRANGER, "sshsig")
        good = sign(
            statement(report_id=other, body_sha256=body, at=datetime.now(UTC), nonce=secrets.token_urlsafe(18)),
            SUPERVISOR,
            "ed25519",
        )
        toml = tmp_path / "workstation.toml"
        toml.write_text(
            f'[site]\nid = "demo"\ntimezone = "America/Mexico_City"\n[paths]\nstate_dir = "{tmp_path / "ws"}"\n'
            f'[mqtt]\nhost = "{secure_broker.host}"\nport = {secure_broker.port}\nusername = "agent"\n'
            f'password = "agent-pw"\n[reports]\napprovers = ["supervisor"]\n'
            f'[[reports.approver_keys]]\nname = "supervisor"\nkey = "{registered().openssh}"\n'
        )

        async def as_agent(payload: dict[str, Any]) -> dict[str, Any]:
            return await mosquitto_rr(secure_broker, payload, topic=f"{SIGNOFF_TOPIC}/agent", user="agent", timeout=20)

        async with running_service(config, engine=None) as running:
            unsigned = await as_agent({"report_id": first, "decision": "approve", "by": "supervisor"})
            forgery = await as_agent({"report_id": first, "decision": "approve", "comment": "ok", "approval": forged})
            retargeted = await as_agent({"report_id": first, "decision": "approve", "comment": "ok", "approval": good})
            reviewed = tmp_path / "reviewed.json"
            reviewed.write_text(json.dumps(running.service.repo.get(first)))
            code, out, err = await cli(
                "report", "approve", first, "--key", str(key_file), "--report", str(reviewed), "--mqtt", "-c", str(toml)
            )
            replay = {"report_id": other, "decision": "approve", "comment": "ok", "approval": good}
            accepted = await as_agent(replay)
            replayed = await as_agent(replay)
            status = running.service.repo.get(first)["status"]
        assert unsigned["status"] == "refused" and unsigned["reason"].startswith("unsigned sign-off refused")
        assert forgery["status"] == "refused" and "not a key registered for 'supervisor'" in forgery["reason"]
        assert (
            retargeted["status"] == "refused"
            and f"report_id {first!r} is not the signed {other!r}" in (retargeted["reason"])
        )
        assert code == 0, err
        assert (json.loads(out)["status"], json.loads(out)["by"], status) == ("approved", "supervisor", "approved")
        # both seeded reports hold the same facts-only body, so the statement signed for `other` decides it
        assert accepted["status"] == "approved"
        assert replayed["status"] == "refused" and replayed["reason"].startswith("replayed sign-off")
        entries = [json.loads(line) for line in (config.paths.audit_dir / "entries.jsonl").read_text().splitlines()]
        refused = [e["payload"]["code"] for e in entries if e["event"] == "report.signoff_refused"]
        assert refused == ["unsigned", "unknown_key", "mismatch", "replayed"]
        signed = [e for e in entries if e["event"] == "report.signed_off"]
        assert all(verify_recorded_approval(e["event"], e["actor"], e["payload"], [registered()]) for e in signed)
        assert len(signed) == 2
