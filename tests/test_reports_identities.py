"""One identity per person (`[[identities]]`): four-eyes compares identities, `report approve` signs the body it
shows, and every refused sign-off leaves an audit entry (floods one per throttle window).

Layers: the table's validation (named cases, then Hypothesis over its input: a clear ConfigError or a valid table);
four-eyes through `check_signed` + `decide` on a real store and audit log; the command line; the report service on a
real broker for the refusals that happen before a sign-off is read.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.audit import AuditLog
from edge_agent.config import AgentConfig, ConfigError, load_config
from edge_agent.config.identities import identity_table
from edge_agent.reports.document import ReportRepository, SignoffPolicy, check_signed, decide
from edge_agent.reports.errors import SignoffError
from edge_agent.signing.approval import sign
from edge_agent.signing.approver_key import ApproverKey, public_raw
from edge_agent.signing.statement import Statement
from harness.reports_service import SIGNOFF_TOPIC, agent_config, running_service, seed_report
from tests.fixtures.broker import Broker
from tests.test_daemon import wait_until

ALICE = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
BOB = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
SITE = {"id": "demo", "timezone": "America/Mexico_City"}


def openssh(key: Ed25519PrivateKey) -> str:
    return ApproverKey("", public_raw(key)).openssh


def config_with(identities: list[dict[str, Any]], tmp_path: Path, **reports: Any) -> AgentConfig:
    return AgentConfig.model_validate(
        {
            "site": SITE,
            "paths": {"state_dir": str(tmp_path)},
            "mqtt": {"username": "agent", "password": "agent-pw"},
            "reports": {"approvers": ["alice", "bob"], **reports},
            "identities": identities,
        }
    )


PEOPLE = [
    {"name": "alice", "broker_user": "alice.mqtt", "approver_keys": [openssh(ALICE)]},
    {"name": "bob", "broker_user": "bob.mqtt", "approver_keys": [openssh(BOB)]},
]


def signed_by(key: Ed25519PrivateKey, by: str, report_id: str, body: str) -> dict[str, Any]:
    return sign(Statement(report_id, body, "approve", by, datetime.now(UTC), "n" * 24, "ok"), key, "ed25519")


def audit_events(audit_dir: Path, event: str) -> list[dict[str, Any]]:
    path = audit_dir / "entries.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e["event"] == event]


class TestTable:
    def test_a_broker_user_maps_to_its_identity_and_the_agents_own_to_none(self, tmp_path: Path) -> None:
        """alice.mqtt → alice; an undeclared broker user is a person of its name; anonymous and `agent` are none."""
        table = identity_table(config_with(PEOPLE, tmp_path))
        assert [table.of_broker_user(u) for u in ("alice.mqtt", "carol", None, "", "agent")] == [
            "alice",
            "carol",
            None,
            None,
            None,
        ]
        assert table.as_audit()[0] == {
            "name": "alice",
            "broker_user": "alice.mqtt",
            "approver_keys": [openssh(ALICE)],
        }

    def test_legacy_approver_keys_join_the_identity_of_their_name(self, tmp_path: Path) -> None:
        """`[[reports.approver_keys]]` still registers a key: for the identity of that name, or one of its own."""
        legacy = [{"name": "bob", "key": openssh(BOB)}]
        table = identity_table(config_with(PEOPLE[:1], tmp_path, approver_keys=legacy))
        assert table.as_audit()[1] == {"name": "bob", "broker_user": None, "approver_keys": [openssh(BOB)]}
        assert [(k.name, k.raw) for k in table.keys()] == [("alice", public_raw(ALICE)), ("bob", public_raw(BOB))]

    @pytest.mark.parametrize(
        ("identities", "legacy", "message"),
        [
            ([{"name": "alice"}, {"name": "alice"}], [], r"name \['alice'\] is given to more than one identity"),
            (
                [{"name": "a", "broker_user": "u"}, {"name": "b", "broker_user": "u"}],
                [],
                r"broker_user \['u'\] is given to more than one identity",
            ),
            ([{"name": "a", "broker_user": "agent"}], [], "is the agent's own"),
            ([{"name": "a", "approver_keys": ["ssh-rsa AAAA"]}], [], r"approver_keys\[0\]: key type 'ssh-rsa'"),
            (
                [{"name": "alice", "approver_keys": [openssh(ALICE)]}],
                [{"name": "bob", "key": openssh(ALICE)}],
                r"a key belongs to one identity.*\(alice, bob\)",
            ),
            (
                [{"name": "alice", "broker_user": "bob"}],
                [{"name": "bob", "key": openssh(BOB)}],
                "names 'bob', the broker user of identity 'alice'",
            ),
        ],
    )
    def test_an_ambiguous_table_is_refused(
        self, tmp_path: Path, identities: list[dict[str, Any]], legacy: list[dict[str, Any]], message: str
    ) -> None:
        """Each name, broker user and key belongs to one identity; the agent's broker user to none."""
        with pytest.raises(ValueError, match=message):
            config_with(identities, tmp_path, approver_keys=legacy)


PEM_GARBAGE = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----"
KEYS = [openssh(ALICE), openssh(BOB), "00" * 32, "ssh-rsa AAAA", "ssh-ed25519 AAAA", PEM_GARBAGE, "not a key", ""]
TOML_VALUE = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12),  # what a TOML basic string holds
    st.sampled_from(["alice", "bob", "agent", "a/b", "+", KEYS[0]]),
    st.integers(-2, 2),
    st.booleans(),
)
IDENTITY = st.dictionaries(
    st.sampled_from(["name", "broker_user", "approver_keys", "role"]),
    st.one_of(TOML_VALUE, st.lists(st.one_of(st.sampled_from(KEYS), TOML_VALUE), max_size=3)),
    max_size=4,
)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    return json.dumps(value, ensure_ascii=False)  # a JSON string (no control characters) or integer is a TOML one


class TestProperty:
    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(IDENTITY, max_size=4), st.lists(st.sampled_from(KEYS[:3]), max_size=2))
    def test_any_identities_table_loads_or_is_a_config_error(
        self, identities: list[dict[str, Any]], legacy: Any
    ) -> None:
        """Whatever `[[identities]]` holds, load_config gives a valid table (one identity per name, broker user and
        key) or a ConfigError naming `identities`; nothing else escapes."""
        text = '[site]\nid = "demo"\n[mqtt]\nusername = "agent"\npassword = "pw"\n[reports]\napprovers = ["bob"]\n'
        text += "".join(f'[[reports.approver_keys]]\nname = "bob"\nkey = {json.dumps(k)}\n' for k in legacy)
        for identity in identities:
            text += "[[identities]]\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in identity.items())
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "agent.toml"
            path.write_text(text, encoding="utf-8")
            try:
                config = load_config(path, environ={})
            except ConfigError as exc:
                assert exc.problems and all(p.startswith(("identities", "reports")) for p, _ in exc.problems)
                return
        table = identity_table(config)
        names = [i.name for i in table.identities]
        users = [i.broker_user for i in table.identities if i.broker_user is not None]
        raws = [k.raw for k in table.keys()]
        assert len(set(names)) == len(names) and len(set(users)) == len(users) and len(set(raws)) == len(raws)
        assert "agent" not in users


@pytest.fixture
def store(tmp_path: Path) -> Any:
    repo = ReportRepository.for_state_dir(tmp_path)
    audit = AuditLog.open(tmp_path / "audit", origin="edge-agent/demo")
    yield repo, audit
    repo.close()
    audit.close()


class TestFourEyes:
    def _approve(self, tmp_path: Path, store: Any, requested_by: str | None, key: Ed25519PrivateKey, by: str) -> Any:
        repo, audit = store
        report_id = seed_report(tmp_path, "demo", "r-1", requested_by=requested_by)
        policy = SignoffPolicy.from_config(config_with(PEOPLE, tmp_path))
        approval = signed_by(key, by, report_id, repo.get(report_id)["body_sha256"])
        verified = check_signed(approval, policy, now=datetime.now(UTC))
        return decide(repo, audit, report_id=report_id, decision="approve", by=verified.statement.by, via="mqtt",
                      approval=verified, approval_json=approval, identities=policy.identities)  # fmt: skip

    def test_approving_as_the_requesters_identity_via_another_broker_user_is_refused(
        self, tmp_path: Path, store: Any
    ) -> None:
        """alice requested as broker user alice.mqtt; her key's approval is refused, naming the rule and the user."""
        with pytest.raises(SignoffError) as refused:
            self._approve(tmp_path, store, "alice.mqtt", ALICE, "alice")
        assert refused.value.code == "four_eyes"
        assert str(refused.value).startswith(
            "four-eyes rule (reports.four_eyes): 'alice' (as broker user 'alice.mqtt') requested report"
        )

    def test_another_identity_approves(self, tmp_path: Path, store: Any) -> None:
        """bob approves what alice.mqtt requested."""
        document = self._approve(tmp_path, store, "alice.mqtt", BOB, "bob")
        assert (document["status"], document["signoff"]["by"]) == ("approved", "bob")

    def test_approving_with_the_keys_of_the_wrong_identity_is_refused(self, tmp_path: Path, store: Any) -> None:
        """alice's key signing a statement that names bob is no approval of bob's: unknown_key."""
        with pytest.raises(SignoffError) as refused:
            self._approve(tmp_path, store, "carol", ALICE, "bob")
        assert refused.value.code == "unknown_key"

    @pytest.mark.parametrize(("requested_by", "who"), [(None, "an anonymous client"), ("agent", "'agent'")])
    def test_a_report_requested_by_no_identity_cannot_be_approved(
        self, tmp_path: Path, store: Any, requested_by: str | None, who: str
    ) -> None:
        """Anonymous or with the agent's own broker user: anyone may be behind it, so no approval; reject still
        withdraws it."""
        with pytest.raises(SignoffError, match=f"requested by (the agent's own broker user )?{who}") as refused:
            self._approve(tmp_path, store, requested_by, BOB, "bob")
        assert refused.value.code == "four_eyes"
        repo, audit = store
        report_id = repo.list(1)[0]["report_id"]
        rejected = decide(repo, audit, report_id=report_id, decision="reject", by="bob", via="cli")
        assert rejected["status"] == "rejected"


async def cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "edge_agent.cli", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


class TestApproveCommand:
    def _setup(self, tmp_path: Path) -> tuple[Path, Path, str]:
        key_file = tmp_path / "id_ed25519"
        key_file.write_bytes(
            BOB.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
            )
        )
        path = tmp_path / "agent.toml"
        path.write_text(
            f'[site]\nid = "demo"\n[paths]\nstate_dir = "{tmp_path / "state"}"\n[reports]\napprovers = ["bob"]\n'
            f'[[identities]]\nname = "bob"\nbroker_user = "bob.mqtt"\napprover_keys = ["{openssh(BOB)}"]\n'
        )
        return path, key_file, seed_report(tmp_path / "state", "demo", "r-1", requested_by="operator")

    async def test_approve_shows_and_signs_the_body_it_hashed(self, tmp_path: Path) -> None:
        """`report approve --key` prints the report and the hash of the body it shows, and that hash is signed."""
        path, key_file, report_id = self._setup(tmp_path)
        code, out, err = await cli("report", "approve", report_id, "--key", str(key_file), "-c", str(path))
        assert code == 0, err
        repo = ReportRepository.for_state_dir(tmp_path / "state")
        body = repo.get(report_id)["body_sha256"]
        repo.close()
        assert f"signing body_sha256 {body} of report {report_id}" in err.splitlines()
        signed = audit_events(tmp_path / "state" / "audit", "report.signed_off")
        assert [e["payload"]["approval"]["statement"]["body_sha256"] for e in signed] == [body]

    async def test_approve_after_the_stored_body_changed_is_refused_and_audited(self, tmp_path: Path) -> None:
        """The stored body is edited after generation (its recorded hash kept): approve refuses to sign it, audits
        `body_changed`, and the report stays a draft."""
        path, key_file, report_id = self._setup(tmp_path)
        repo = ReportRepository.for_state_dir(tmp_path / "state")
        document = repo.get(report_id)
        document["body"]["facts"] = [{"kind": "note", "text": "added after review"}]
        repo.update(document)
        repo.close()
        code, _, err = await cli("report", "approve", report_id, "--key", str(key_file), "-c", str(path))
        assert code == 1
        assert f"edge-agent: report {report_id}'s body hashes to " in err
        assert "it changed after it was generated" in err
        refused = audit_events(tmp_path / "state" / "audit", "report.signoff_refused")
        assert [(e["payload"]["code"], e["payload"]["via"]) for e in refused] == [("body_changed", "cli")]
        repo = ReportRepository.for_state_dir(tmp_path / "state")
        assert repo.get(report_id)["status"] == "draft"
        repo.close()


def publish(broker: Broker, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
    cmd = [
        "mosquitto_pub",
        "-h",
        broker.host,
        "-p",
        str(broker.port),
        "-q",
        "1",
        "-t",
        topic,
        "-m",
        json.dumps(payload),
    ]
    subprocess.run([*cmd, *(["-r"] if retain else [])], check=True, capture_output=True, timeout=10)


@pytest.mark.broker
class TestRefusalsAreAudited:
    async def test_a_retained_signoff_is_refused_and_audited(self, broker: Broker, tmp_path: Path) -> None:
        """A retained sign-off, delivered when the service subscribes, is never acted on: `retained` is audited."""
        config = agent_config(tmp_path, broker)
        publish(broker, f"{SIGNOFF_TOPIC}/alice", {"report_id": "rpt-x", "decision": "approve"}, retain=True)
        async with running_service(config, engine=None):
            await wait_until(lambda: bool(audit_events(config.paths.audit_dir, "report.signoff_refused")), 20)
        [entry] = audit_events(config.paths.audit_dir, "report.signoff_refused")
        assert {k: entry["payload"][k] for k in ("code", "broker_user", "attempted_report_id")} == {
            "code": "retained",
            "broker_user": "alice",
            "attempted_report_id": "rpt-x",
        }

    async def test_a_signoff_with_a_bad_reply_topic_is_refused_and_audited(
        self, broker: Broker, tmp_path: Path
    ) -> None:
        """A sign-off naming another user's reply topic is not decided, and its refusal (`reply_topic`) is audited."""
        config = agent_config(tmp_path, broker)
        async with running_service(config, engine=None):
            payload = {"report_id": "rpt-x", "decision": "approve", "reply_to": "edge/demo/reports/reply/bob/x"}
            publish(broker, f"{SIGNOFF_TOPIC}/alice", payload)
            await wait_until(lambda: bool(audit_events(config.paths.audit_dir, "report.signoff_refused")), 20)
        [entry] = audit_events(config.paths.audit_dir, "report.signoff_refused")
        assert (entry["payload"]["code"], entry["payload"]["broker_user"]) == ("reply_topic", "alice")
        assert "outside the requester's reply namespace edge/demo/reports/reply/alice/..." in entry["payload"]["reason"]

    async def test_throttled_signoffs_leave_one_audit_entry_per_window(self, broker: Broker, tmp_path: Path) -> None:
        """throttle_invalid_max 1: alice's invalid sign-off is refused (`invalid`); her next four are dropped unread,
        summarised by one `throttled` entry for the window."""
        config = agent_config(tmp_path, broker, throttle_invalid_max=1)
        async with running_service(config, engine=None):
            publish(broker, f"{SIGNOFF_TOPIC}/alice", {"report_id": "rpt-x", "decision": "maybe"})
            for _ in range(4):
                publish(broker, f"{SIGNOFF_TOPIC}/alice", {"report_id": "rpt-x", "decision": "approve"})
            await wait_until(lambda: len(audit_events(config.paths.audit_dir, "report.signoff_refused")) == 2, 20)
            await asyncio.sleep(0.5)  # nothing more follows
        refused = audit_events(config.paths.audit_dir, "report.signoff_refused")
        assert [e["payload"]["code"] for e in refused] == ["invalid", "throttled"]
        assert refused[1]["payload"]["reason"].startswith(
            "throttled: alice had 1 invalid requests or refused sign-offs"
        )
