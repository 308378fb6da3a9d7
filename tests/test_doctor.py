"""`edge-agent doctor` against real parts: Mosquitto (a mutual-TLS listener and a password one), the plant
simulator's OPC UA server (Basic256Sha256 SignAndEncrypt), the prepared model in models/default and a copy of the
shipped draft head, in a state directory laid out as an install's.

The servers run for the whole module (the OPC UA server in an event loop of its own thread), so each test runs the
command as an operator does, `edge_agent.cli.main([...])`, which starts its own `asyncio.run`. Doctor never starts
the engine.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from asyncua import Server, ua
from asyncua.common.utils import ServiceError

from edge_agent.audit.log import SIGNING_KEY
from edge_agent.cli import main
from edge_agent.config import AgentConfig
from edge_agent.connectors.opcua.security import default_application_uri, ensure_certificate, sha256_thumbprint
from edge_agent.doctor import AsyncProbe, Check, Probe, render, run_probes
from edge_agent.doctor.files import check_audit_key, check_state_dir, disk_verdict
from edge_agent.doctor.host import check_clock, check_ntp, check_unit, unit_environment
from edge_agent.llm.manifest import read_manifest, write_manifest
from edge_agent.signing import Signer
from tests.fixtures.broker import Broker, free_port
from tests.fixtures.opcua import Background, OpcuaServer
from tests.fixtures.tls import make_pki, tls_broker

pytestmark = [pytest.mark.broker, pytest.mark.opcua]

REPO = Path(__file__).resolve().parent.parent
MODEL = REPO / "models" / "default"
HEAD = REPO / "models" / "eagle31-default"
VIB = "P-101.vibration_mm_s"
# Every check id of the install below, in the table's order.
CHECK_IDS = [
    "config",
    "security",
    "state_dir",
    "audit_key",
    "audit_rollback",
    "disk",
    "clock",
    "clock.ntp",
    "unit",
    "model",
    "draft",
    "compile",
    "mqtt",
    "audit_witness",
    "opcua.plc",
]
# What this host decides, not the install: a container without systemd cannot say whether NTP synchronises it.
HOST_DEPENDENT = {"clock.ntp"}


@dataclass
class Plant:
    opcua: OpcuaServer
    tls: Broker
    pki: dict[str, Path]
    passwords: Broker
    distrustful: Server
    distrustful_endpoint: str


async def start_distrustful_server(endpoint: str, pki_dir: Path) -> Server:
    """An OPC UA server that trusts no client certificate, as a plant's does until the operator trusts ours."""

    async def untrusted(cert: object, app: object) -> None:
        raise ServiceError(ua.StatusCodes.BadCertificateUntrusted)

    server = Server()
    await server.init()
    server.set_endpoint(endpoint)
    server.set_security_policy([ua.SecurityPolicyType.Basic256Sha256_SignAndEncrypt])
    identity = ensure_certificate(pki_dir, "distrustful", "urn:edge-agent:test:distrustful", server=True)
    await server.set_application_uri(identity.application_uri)
    await server.load_certificate(str(identity.cert_path))
    await server.load_private_key(str(identity.key_path))
    server.set_certificate_validator(untrusted)
    await server.start()
    return server


@pytest.fixture(scope="module")
def plant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Plant]:
    if not (MODEL / "manifest.json").is_file() or not (HEAD / "manifest.json").is_file():
        pytest.fail(f"no prepared model in {MODEL} with its head in {HEAD}: run `make model`")
    background = Background()
    opcua = OpcuaServer(tmp_path_factory.mktemp("opcua"), security=("Basic256Sha256_SignAndEncrypt",))
    background.run(opcua.start())
    tls, pki = tls_broker(tmp_path_factory.mktemp("tls-broker"), ["127.0.0.1"])
    passwords = Broker(tmp_path_factory.mktemp("password-broker"), allow_anonymous=False, users={"agent": "agent-pw"})
    passwords.start()
    distrustful_endpoint = f"opc.tcp://127.0.0.1:{free_port()}/distrustful"
    distrustful = background.run(
        start_distrustful_server(distrustful_endpoint, tmp_path_factory.mktemp("distrustful-pki"))
    )
    try:
        yield Plant(opcua, tls, pki, passwords, distrustful, distrustful_endpoint)
    finally:
        background.run(distrustful.stop())
        passwords.stop()
        tls.stop()
        background.run(opcua.stop())
        background.close()


@dataclass
class Install:
    """A state directory as an install's (model, head, audit key, OPC UA client certificate) and its config."""

    state: Path
    config: dict[str, Any]
    path: Path

    @property
    def model_dir(self) -> Path:
        return self.state / "models" / "default"

    @property
    def head_dir(self) -> Path:
        return self.state / "models" / "eagle31-default"

    def write(self) -> Path:
        self.path.write_text("".join(f"{key} = {_toml(value)}\n" for key, value in self.config.items()))
        return self.path


def _toml(value: Any) -> str:
    """Any config value as TOML, tables inline: enough for these configs (JSON strings are TOML basic strings)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | Path):
        return json.dumps(str(value))
    return repr(value)


@pytest.fixture
def install(tmp_path: Path, plant: Plant) -> Install:
    state = tmp_path / "state"
    (state / "models").mkdir(parents=True)
    state.chmod(0o700)
    # The model by link (517 MB, read only); the head copied, since tests remove or corrupt it.
    (state / "models" / "default").symlink_to(MODEL, target_is_directory=True)
    shutil.copytree(HEAD, state / "models" / "eagle31-default")
    (state / "audit").mkdir(mode=0o700)
    Signer.generate("edge-agent/doctor-test").write(state / "audit" / SIGNING_KEY)
    # What the agent's first start generates (OpcuaSource), and the plant's operator then trusts on the server.
    ensure_certificate(state / "pki", "opcua-plc", default_application_uri("plc"))
    assert plant.opcua.certificate_der is not None
    config = {
        "site": {"id": "doctor-test"},
        "paths": {"state_dir": state},
        # Caps far below any test machine's free space: the disk check is about the install, not the CI box.
        "store": {"retention_max_mb": 1.0, "quarantine_max_mb": 1.0, "dead_letter_max_mb": 1.0},
        "mqtt": {
            "host": plant.tls.host,
            "port": plant.tls.port,
            "client_id": "agent-under-test",
            "tls": {
                "ca_file": plant.pki["ca"],
                "cert_file": plant.pki["client_crt"],
                "key_file": plant.pki["client_key"],
            },
        },
        "opcua": {
            "sources": [
                {
                    "name": "plc",
                    "endpoint": plant.opcua.endpoint,
                    "security_policy": "Basic256Sha256",
                    "security_mode": "SignAndEncrypt",
                    "server_cert_sha256": sha256_thumbprint(plant.opcua.certificate_der),
                    "nodes": [{"node_id": plant.opcua.node_id(VIB), "tag": VIB}],
                }
            ]
        },
    }
    return Install(state, config, tmp_path / "edge-agent.toml")


def doctor(install: Install, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, dict[str, Any]]]:
    """Exit code and the checks by id, from `edge-agent doctor --json` on the install's config."""
    path = install.write()
    code = main(["doctor", "--config", str(path), "--json", "--unit", str(install.state / "absent.service"), *extra])
    checks = json.loads(capsys.readouterr().out)
    return code, {c["id"]: c for c in checks}


def problems(checks: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {i: c["status"] for i, c in checks.items() if c["status"] != "ok" and i not in HOST_DEPENDENT}


class TestGoodInstall:
    def test_all_ok_exits_0(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """A complete install against live peers: every check ok (NTP as the host allows), exit 0."""
        code, checks = doctor(install, capsys)
        assert problems(checks) == {}
        assert code == 0
        assert "narrator narrator-smollm2-135m merged" in checks["model"]["detail"]
        assert "eagle3.1 (fc_norm on, norm_output on" in checks["draft"]["detail"]
        assert "a Basic256Sha256/SignAndEncrypt session opened" in checks["opcua.plc"]["detail"]
        assert "client id agent-under-test-doctor" in checks["mqtt"]["detail"]

    def test_json_lists_every_check_id(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """--json is a list of {id, status, detail, fix} holding every check, in the table's order."""
        path = install.write()
        main(["doctor", "--config", str(path), "--json", "--unit", str(install.state / "absent.service")])
        checks = json.loads(capsys.readouterr().out)
        assert [c["id"] for c in checks] == CHECK_IDS
        assert all(set(c) == {"id", "status", "detail", "fix"} for c in checks)
        assert all((c["fix"] is None) == (c["status"] == "ok") for c in checks)

    def test_table_shows_each_finding_and_a_summary(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """Without --json: a CHECK / STATUS / FOUND table, a row per check, the counts last."""
        path = install.write()
        main(["doctor", "--config", str(path), "--unit", str(install.state / "absent.service")])
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].split() == ["CHECK", "STATUS", "FOUND"]
        assert [line.split()[0] for line in lines[1:] if not line.startswith(" ")][:-1] == CHECK_IDS
        assert lines[-1].endswith("0 fail")


class TestUnitEnvironment:
    def test_the_shipped_unit_gives_the_state_and_cache_dirs(self) -> None:
        """The shipped unit's EDGE_AGENT__ variables, specifiers resolved as systemd does for a system unit."""
        unit = Path(__file__).resolve().parents[1] / "systemd" / "edge-agent.service"
        assert unit_environment(unit) == {
            "EDGE_AGENT__PATHS__STATE_DIR": "/var/lib/edge-agent",
            "EDGE_AGENT__LLM__COMPILE_CACHE_DIR": "/var/cache/edge-agent/compile",
        }

    def test_drop_ins_win_in_name_order_and_other_variables_are_ignored(self, tmp_path: Path) -> None:
        """A drop-in's Environment= overrides the unit's; HOME and quoted lists are read, only EDGE_AGENT__ kept."""
        unit = tmp_path / "edge-agent.service"
        unit.write_text("[Service]\nEnvironment=EDGE_AGENT__PATHS__STATE_DIR=%S/a HOME=%S/a\nEnvironmentFile=/x\n")
        (tmp_path / "edge-agent.service.d").mkdir()
        (tmp_path / "edge-agent.service.d" / "10-site.conf").write_text(
            '[Service]\nEnvironment="EDGE_AGENT__PATHS__STATE_DIR=/srv/agent state" "EDGE_AGENT__MQTT__PORT=8883"\n'
        )
        assert unit_environment(unit) == {
            "EDGE_AGENT__PATHS__STATE_DIR": "/srv/agent state",
            "EDGE_AGENT__MQTT__PORT": "8883",
        }
        assert unit_environment(tmp_path / "absent.service") == {}

    def test_doctor_loads_the_config_with_the_units_environment(
        self, install: Install, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """Run without the unit's variables set, doctor still checks the state dir the unit gives the agent."""
        path = install.write()
        unit = tmp_path / "edge-agent.service"
        unit.write_text(f"[Service]\nEnvironment=EDGE_AGENT__PATHS__STATE_DIR={tmp_path / 'unit-state'}\n")
        main(["doctor", "--config", str(path), "--json", "--unit", str(unit)])
        checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)}
        assert str(tmp_path / "unit-state") in checks["state_dir"]["detail"]


class TestConfig:
    def test_security_warning_warns_but_exits_0(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """An unpinned secured source earns its security warning as a warn; the session still opens; exit 0."""
        del install.config["opcua"]["sources"][0]["server_cert_sha256"]
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"security.opcua_server_unpinned": "warn"}
        assert "server_cert_sha256" in checks["security.opcua_server_unpinned"]["fix"]
        assert "(not pinned)" in checks["opcua.plc"]["detail"]
        assert code == 0

    def test_invalid_config_exits_2(self, install: Install) -> None:
        """A bad key ends the command before any check, with exit 2 as every command."""
        install.config["mqtt"]["prot"] = 1883
        with pytest.raises(SystemExit) as exit_:
            main(["doctor", "--config", str(install.write())])
        assert exit_.value.code == 2


class TestDraftHead:
    def test_head_removed_fails_naming_it(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """No head where the engine looks: fail naming the path, the fix is preparing the model again; exit 1."""
        shutil.rmtree(install.head_dir)
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"draft": "fail"}
        assert checks["draft"]["detail"] == f"draft head {install.head_dir} is missing"
        assert f"edge-agent model prepare --out {install.model_dir}" in checks["draft"]["fix"]
        assert code == 1

    def test_corrupted_head_byte_fails(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """One flipped byte in the head's weights: its manifest no longer matches, and the check names the file."""
        weights = install.head_dir / "model.safetensors"
        data = bytearray(weights.read_bytes())
        data[len(data) // 2] ^= 0xFF
        weights.write_bytes(bytes(data))
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"draft": "fail"}
        assert "does not match its manifest" in checks["draft"]["detail"]
        assert "model.safetensors: sha256" in checks["draft"]["detail"]
        assert code == 1

    def test_head_that_does_not_fit_the_model_fails_listing_why(
        self, install: Install, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A head whose own manifest holds but whose target_hidden_size is not the model's: fail naming both."""
        config_json = install.head_dir / "config.json"
        head_config = json.loads(config_json.read_text())
        head_config["target_hidden_size"] = 1024
        config_json.write_text(json.dumps(head_config))
        manifest = read_manifest(install.head_dir)
        write_manifest(
            install.head_dir, kind="draft", name=manifest.name, source=manifest.source, converter=manifest.converter
        )
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"draft": "fail"}
        assert "the head's target_hidden_size is 1024, the target's hidden_size is 576" in checks["draft"]["detail"]
        assert code == 1

    def test_speculative_off_warns(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """Speculative decoding switched off is a warning, not a failure."""
        install.config["llm"] = {"speculative": {"enabled": False}}
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"draft": "warn"}
        assert "speculative decoding off" in checks["draft"]["detail"]
        assert code == 0


class TestModel:
    def test_missing_model_fails_with_the_prepare_command(
        self, install: Install, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """No model directory: fail naming it and `model prepare`; the head cannot be checked against it (warn)."""
        (install.state / "models" / "default").unlink()
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"model": "fail", "draft": "warn"}
        assert checks["model"]["detail"] == f"model directory {install.model_dir} is missing"
        assert f"edge-agent model prepare --out {install.model_dir}" in checks["model"]["fix"]
        assert code == 1


class TestMqtt:
    def test_wrong_broker_password_fails_naming_it(
        self, install: Install, plant: Plant, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The broker refuses the credentials: fail naming the user and the broker's reason; exit 1."""
        install.config["mqtt"] = {"host": plant.passwords.host, "port": plant.passwords.port, "username": "agent"}
        monkeypatch.setenv("EDGE_AGENT__MQTT__PASSWORD", "not-the-password")
        code, checks = doctor(install, capsys)
        assert checks["mqtt"]["status"] == "fail"
        assert checks["mqtt"]["detail"].startswith("the broker refused user agent:")
        assert "Not authorized" in checks["mqtt"]["detail"]
        assert "password" in checks["mqtt"]["fix"]
        assert code == 1

    def test_right_password_connects(
        self, install: Install, plant: Plant, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The same broker with the right password: ok (the plain-TCP password is a security warning)."""
        install.config["mqtt"] = {"host": plant.passwords.host, "port": plant.passwords.port, "username": "agent"}
        monkeypatch.setenv("EDGE_AGENT__MQTT__PASSWORD", "agent-pw")
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"security.mqtt_plaintext_credentials": "warn"}
        assert "as user agent" in checks["mqtt"]["detail"]
        assert code == 0

    def test_untrusted_broker_certificate_is_a_tls_failure(
        self, install: Install, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A CA that did not sign the broker's certificate: fail saying TLS and why."""
        (tmp_path / "other").mkdir()
        install.config["mqtt"]["tls"]["ca_file"] = make_pki(tmp_path / "other", ["127.0.0.1"])["ca"]
        code, checks = doctor(install, capsys)
        assert checks["mqtt"]["status"] == "fail"
        assert checks["mqtt"]["detail"] == (
            f"TLS failure with 127.0.0.1:{install.config['mqtt']['port']}: the broker's certificate was not accepted"
            " (self-signed certificate in certificate chain)"
        )
        assert code == 1

    def test_nothing_listening_is_refused(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """No broker on the port: fail saying so."""
        install.config["mqtt"] = {"host": "127.0.0.1", "port": free_port()}
        code, checks = doctor(install, capsys)
        assert checks["mqtt"]["status"] == "fail"
        assert checks["mqtt"]["detail"].startswith("connection refused: nothing listens on 127.0.0.1:")
        assert code == 1


class TestOpcua:
    def test_unreachable_endpoint_fails(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """Nothing listens at the endpoint: fail saying unreachable; exit 1."""
        endpoint = f"opc.tcp://127.0.0.1:{free_port()}/edge-agent/sim"
        install.config["opcua"]["sources"][0]["endpoint"] = endpoint
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"opcua.plc": "fail"}
        assert checks["opcua.plc"]["detail"].startswith(f"{endpoint} is unreachable:")
        assert code == 1

    def test_pin_mismatch_fails_printing_the_actual_hash(
        self, install: Install, plant: Plant, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A pin the server's certificate does not hash to: fail printing the actual SHA-256, ready to pin."""
        assert plant.opcua.certificate_der is not None
        actual = sha256_thumbprint(plant.opcua.certificate_der)
        install.config["opcua"]["sources"][0]["server_cert_sha256"] = "ab" * 32
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"opcua.plc": "fail"}
        assert (
            f"presents a certificate with SHA-256 {actual}, but server_cert_sha256 pins {'ab' * 32}"
            in (checks["opcua.plc"]["detail"])
        )
        assert f'server_cert_sha256 = "{actual}"' in checks["opcua.plc"]["fix"]
        assert code == 1

    def test_security_pair_the_server_does_not_offer_fails_listing_offers(
        self, install: Install, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Sign asked of a SignAndEncrypt-only server: fail, the fix lists what it offers."""
        install.config["opcua"]["sources"][0]["security_mode"] = "Sign"
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"opcua.plc": "fail"}
        assert "offers no Basic256Sha256/Sign endpoint" in checks["opcua.plc"]["detail"]
        assert "Basic256Sha256/SignAndEncrypt" in checks["opcua.plc"]["fix"]
        assert code == 1

    def test_untrusted_client_certificate_fails_with_the_trust_fix(
        self, install: Install, plant: Plant, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A server that does not trust our certificate: fail naming the certificate to trust on it."""
        source = install.config["opcua"]["sources"][0]
        source["endpoint"] = plant.distrustful_endpoint
        del source["server_cert_sha256"]
        code, checks = doctor(install, capsys)
        cert = install.state / "pki" / "opcua-plc.der"
        assert checks["opcua.plc"]["status"] == "fail"
        assert checks["opcua.plc"]["detail"].startswith(
            f"{plant.distrustful_endpoint} does not trust our client certificate {cert} (sha256 "
        )
        assert checks["opcua.plc"]["detail"].endswith("(BadCertificateUntrusted)")
        assert checks["opcua.plc"]["fix"].startswith(f"trust {cert} on the server")
        assert code == 1

    def test_no_client_certificate_yet_warns(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """Before the agent's first start there is no certificate to trust: warn, and doctor generates none."""
        shutil.rmtree(install.state / "pki")
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"opcua.plc": "warn"}
        assert "no client certificate yet" in checks["opcua.plc"]["detail"]
        assert not (install.state / "pki").exists()
        assert code == 0

    def test_unknown_node_warns_naming_it(self, install: Install, capsys: pytest.CaptureFixture[str]) -> None:
        """A node the server does not have: the session opens, the refused node is named."""
        install.config["opcua"]["sources"][0]["nodes"].append({"node_id": "ns=2;s=P-999.nothing", "tag": "P-999.x"})
        code, checks = doctor(install, capsys)
        assert problems(checks) == {"opcua.plc": "warn"}
        assert "1 of 2 nodes refused: ns=2;s=P-999.nothing" in checks["opcua.plc"]["detail"]
        assert code == 0


class TestHostChecks:
    def test_group_writable_state_dir_fails(self, tmp_path: Path) -> None:
        """Mode 0770 lets the group write the store and audit log: fail with chmod."""
        tmp_path.chmod(0o770)
        check = check_state_dir(tmp_path, os.geteuid())
        assert (check.status, check.fix) == (
            "fail",
            f"chmod go-w {tmp_path} (0700, as systemd's StateDirectoryMode= makes it)",
        )

    def test_state_dir_of_another_user_fails(self, tmp_path: Path) -> None:
        """Owned by someone other than the user running doctor: fail, run it as the owner."""
        check = check_state_dir(tmp_path, os.geteuid() + 1)
        assert check.status == "fail"
        assert "run doctor as the agent's user" in (check.fix or "")

    def test_readable_signing_key_fails(self, tmp_path: Path) -> None:
        """A signing key the group may read: fail (the agent refuses it too)."""
        config = AgentConfig.model_validate({"site": {"id": "s"}, "paths": {"state_dir": str(tmp_path)}})
        (tmp_path / "audit").mkdir()
        key = tmp_path / "audit" / SIGNING_KEY
        Signer.generate("s").write(key)
        assert check_audit_key(config).status == "ok"
        key.chmod(0o640)
        check = check_audit_key(config)
        assert check.status == "fail"
        assert check.detail.startswith(f"{key} has mode 0640")

    def test_disk_verdict_against_the_caps(self) -> None:
        """Free space below the caps' headroom warns, below the floor fails; the numbers are in the finding."""
        mib = 1024 * 1024
        assert disk_verdict(5000 * mib, 2368.0, 0)[0] == "ok"
        assert disk_verdict(2000 * mib, 2368.0, 0)[0] == "warn"
        assert disk_verdict(2000 * mib, 2368.0, 500 * mib)[0] == "ok"  # the store already holds 500 of its caps
        status, numbers = disk_verdict(50 * mib, 2368.0, 0)
        assert status == "fail"
        assert numbers == (
            "50 MiB free; the store's caps (retention + quarantine + dead letters) are 2,368 MiB, of which it holds"
            " 0 MiB"
        )

    def test_clock_before_the_install_fails(self) -> None:
        """A clock reading earlier than the agent's own install (or 2025) is wrong."""
        installed = datetime(2026, 3, 1, tzinfo=UTC)
        assert check_clock(datetime(2026, 3, 2, tzinfo=UTC), installed).status == "ok"
        late = check_clock(datetime(2026, 2, 1, tzinfo=UTC), installed)
        assert (late.status, late.detail) == (
            "fail",
            "the host clock says 2026-02-01 00:00:00 UTC, before this agent was installed (2026-03-01 00:00:00 UTC)",
        )
        assert "before 2025" in check_clock(datetime(2000, 1, 1, tzinfo=UTC), datetime(1999, 1, 1, tzinfo=UTC)).detail

    def test_ntp_answers(self) -> None:
        """yes is ok; no, or no answer, warns."""
        assert check_ntp("yes", "").status == "ok"
        assert check_ntp("no", "").status == "warn"
        assert check_ntp(None, "timedatectl is not installed").detail.endswith("timedatectl is not installed")

    def test_shipped_unit_rates_ok(self) -> None:
        """The shipped unit's sandbox rates at most 2.5; no unit file is not a problem."""
        shipped = check_unit(REPO / "systemd" / "edge-agent.service")
        assert shipped.status == "ok", shipped
        assert "sandbox exposure" in shipped.detail
        assert check_unit(REPO / "systemd" / "absent.service").status == "ok"


class TestRunner:
    async def test_a_crashing_check_becomes_a_fail_and_the_others_run(self) -> None:
        """An exception in one probe is reported under its id; the probes after it still run, in order."""

        def crash() -> Check:
            raise KeyError("boom")

        async def network() -> Check:
            return Check.ok("net", "fine")

        checks = await run_probes(
            [Probe("first", lambda: Check.ok("first", "x")), Probe("crash", crash), AsyncProbe("net", network)]
        )
        assert [(c.id, c.status) for c in checks] == [("first", "ok"), ("crash", "fail"), ("net", "ok")]
        assert checks[1].detail == "the check itself crashed: KeyError: 'boom'"

    async def test_a_hanging_network_check_is_given_up(self) -> None:
        """A probe that never returns becomes a fail after its time limit."""

        async def hang() -> Check:
            await asyncio.sleep(3600)
            raise AssertionError("unreachable")

        [check] = await run_probes([AsyncProbe("slow", hang, timeout_s=0.05)])
        assert (check.status, check.detail) == ("fail", "no result within 0.05 s")

    def test_a_problem_needs_a_fix(self) -> None:
        """A warn or fail without a fix is refused: it would leave the operator where they started."""
        with pytest.raises(ValueError, match="needs a fix"):
            Check(id="x", status="warn", detail="something", fix=None)

    def test_table_puts_the_fix_under_its_finding(self) -> None:
        """Continuation lines (a second line of detail, the fix) start under FOUND."""
        text = render([Check.ok("a", "fine"), Check.fail("longer.id", "broken\n  why", "mend it")])
        assert text.splitlines() == [
            "CHECK      STATUS  FOUND",
            "a          ok      fine",
            "longer.id  fail    broken",
            "                     why",
            "                   fix: mend it",
            "                   see docs/troubleshooting.md#doctor-longerid",
            "1 ok, 0 warn, 1 fail",
        ]
