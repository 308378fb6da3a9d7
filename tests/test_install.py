"""What a plant installs, run as a plant runs it.

`make install DESTDIR=…` once for the session (tests/fixtures/install.py: the wheel built from this checkout,
installed non-editably into a fresh virtualenv, the model and the EAGLE 3.1 head prepared, the example config, the
unit); then the agent started from that virtualenv on the installed example config, pointed at a TLS broker with
users and the report ACL (its password from the environment, as docs/deployment.md says), fed by the simulator; a
shift report requested over MQTT; `doctor` on the install, passing, then failing once the head's weights are gone.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fixtures.broker import REPORTS_ACL, SECURE_USERS, Broker, free_port
from tests.fixtures.install import Install, make_install
from tests.fixtures.tls import make_pki

pytestmark = [pytest.mark.slow, pytest.mark.engine, pytest.mark.broker]

REPO = Path(__file__).resolve().parents[1]
# The simulated plant: the last 8 h replayed at 3000x (10 s), a few of the simulator's tags over OPC UA.
SIM_HOURS = 8
TAGS = ("P-101.vibration_mm_s", "P-101.running", "P-102.running", "C-201.bearing_temp_c", "T-301.level_pct")


class TestMakeInstall:
    def test_every_file_is_placed_under_destdir(self, installed: Install) -> None:
        """The unit, the user's sysusers entry, the config (the shipped example, 0640), a private state dir holding
        the model and the head, the docs the unit links to: all under DESTDIR."""
        root = installed.root
        assert installed.unit.read_bytes() == (REPO / "systemd/edge-agent.service").read_bytes()
        assert (root / "usr/lib/sysusers.d/edge-agent.conf").read_bytes() == (
            REPO / "systemd/edge-agent.sysusers"
        ).read_bytes()
        assert installed.config.read_bytes() == (REPO / "configs/edge-agent.example.toml").read_bytes()
        assert stat.S_IMODE(installed.config.stat().st_mode) == 0o640
        assert stat.S_IMODE(installed.state.stat().st_mode) == 0o700
        assert (installed.state / "models/default/manifest.json").is_file()
        assert (installed.state / "models/eagle31-default/manifest.json").is_file()
        assert (root / "opt/edge-agent/docs/deployment.md").is_file()
        assert not (root / "etc/systemd/system/edge-agent.service.d/gpu.conf").exists()  # a CPU install
        assert [line for line in installed.output.splitlines() if "/6 " in line] == [
            "edge-agent install: 1/6 building the wheel",
            "edge-agent install: 2/6 system user edge-agent",
            "edge-agent install: 3/6 virtualenv /opt/edge-agent/venv (cpu)",
            "edge-agent install: 4/6 model and EAGLE 3.1 head in /var/lib/edge-agent/models",
            "edge-agent install: 5/6 config /etc/edge-agent/edge-agent.toml",
            "edge-agent install: 6/6 systemd unit",
        ]

    def test_edge_agent_is_on_path_as_a_link_to_the_venv(self, installed: Install) -> None:
        """`edge-agent` bare, as the docs call it: /usr/local/bin/edge-agent links to the venv's script by its host
        path (under DESTDIR the link is staged as it will be placed), and that script answers --version."""
        link = installed.root / "usr/local/bin/edge-agent"
        assert link.is_symlink()
        assert os.readlink(link) == "/opt/edge-agent/venv/bin/edge-agent"
        staged = installed.root / os.readlink(link).lstrip("/")
        result = subprocess.run([str(staged), "--version"], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[0].startswith("edge-agent 0.")

    def test_the_venv_runs_the_wheel_not_the_checkout(self, installed: Install) -> None:
        """The installed package lives in the venv's site-packages (no editable link back to this checkout) and
        carries the shipped narrator adapter and head as package data; qualify's iq.package finds every file of it
        as its RECORD lists it (the check an editable checkout always fails)."""
        probe = (
            "import edge_agent, json, importlib.metadata as m; from edge_agent.llm import prepare as p;"
            "from edge_agent.qualify.iq import check_package;"
            "d = m.distribution('edge-agent'); c = check_package();"
            "print(json.dumps({'file': edge_agent.__file__, 'direct_url': d.read_text('direct_url.json'),"
            " 'adapter': (p.NARRATOR_ADAPTER_DIR / 'adapter_model.safetensors').is_file(),"
            " 'head': (p.DRAFT_HEAD_DIR / 'model.safetensors').is_file(),"
            " 'iq_package': [c.passed, c.measured]}))"
        )
        out = subprocess.run(
            [str(installed.venv / "bin/python"), "-c", probe], capture_output=True, text=True, cwd="/", check=True
        ).stdout
        found = json.loads(out)
        assert Path(found["file"]).is_relative_to(installed.venv)
        assert '"editable": true' not in (found["direct_url"] or "")
        assert (found["adapter"], found["head"]) == (True, True)
        assert found["iq_package"][0] is True, found["iq_package"][1]

    def test_systemd_analyze_verify_accepts_the_placed_unit(self, installed: Install, tmp_path: Path) -> None:
        """The placed unit's ExecStart is the staged venv's `edge-agent` (as /opt/edge-agent/… is on a host), and
        `systemd-analyze verify` has nothing to say about the unit run from there."""
        text = installed.unit.read_text()
        prefix = "ExecStart=/opt/edge-agent/venv/bin/edge-agent "
        assert prefix in text and installed.cli.is_file() and os.access(installed.cli, os.X_OK)
        unit = tmp_path / "edge-agent.service"
        unit.write_text(text.replace(prefix, f"ExecStart={installed.cli} "))
        result = subprocess.run(
            ["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert result.returncode == 0, result.stderr
        assert "edge-agent.service" not in result.stderr, result.stderr

    def test_a_second_install_keeps_the_config_and_the_model(self, installed: Install) -> None:
        """Idempotent: run again (an upgrade), the operator's config stays byte for byte, the model is not
        converted again, and the link on PATH is replaced in place."""
        edited = installed.config.read_text() + "# edited by the plant\n"
        installed.config.write_text(edited)
        model_manifest = installed.state / "models/default/manifest.json"
        before = model_manifest.stat().st_mtime_ns
        output = make_install(installed.root)
        assert installed.config.read_text() == edited
        assert "kept as it is" in output
        assert model_manifest.stat().st_mtime_ns == before
        assert os.readlink(installed.root / "usr/local/bin/edge-agent") == "/opt/edge-agent/venv/bin/edge-agent"


# --- the plant run ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plant_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Broker, Path]]:
    """The plant's broker: TLS only, every client by user and password, the report ACL (docs/reports.md)."""
    workdir = tmp_path_factory.mktemp("plant-broker")
    pki = make_pki(workdir, ["localhost", "127.0.0.1"])
    broker = Broker(
        workdir,
        allow_anonymous=False,
        users=dict(SECURE_USERS),
        acl=REPORTS_ACL,
        extra_conf=f"cafile {pki['ca']}\ncertfile {pki['server_crt']}\nkeyfile {pki['server_key']}\n",
    )
    broker.start()
    yield broker, pki["ca"]
    broker.stop()


def agent_env(installed: Install, broker: Broker, ca: Path, health_port: int, opcua_port: int, user: str) -> dict:
    """What the plant fills in: its broker and CA, the agent's password in the environment (secrets.env), its
    OPC UA server. Eager engine: the compiled default costs ~100 s of kernel compile and is tested on its own
    (tests/test_engine_compiled.py)."""
    nodes = ", ".join(f'{{ node_id = "ns=2;s={tag}", tag = "{tag}", sampling_interval_ms = 0.0 }}' for tag in TAGS)
    source = (
        f'[{{ name = "sim", endpoint = "opc.tcp://127.0.0.1:{opcua_port}/edge-agent/sim", '
        f"history_backfill_initial_s = {(SIM_HOURS + 1) * 3600}.0, nodes = [{nodes}] }}]"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_AGENT__")}
    return env | {
        "EDGE_AGENT__PATHS__STATE_DIR": str(installed.state),
        "EDGE_AGENT__MQTT__HOST": "localhost",
        "EDGE_AGENT__MQTT__PORT": str(broker.port),
        "EDGE_AGENT__MQTT__USERNAME": user,
        "EDGE_AGENT__MQTT__PASSWORD": SECURE_USERS[user],
        "EDGE_AGENT__MQTT__CLIENT_ID": f"edge-agent-{user}",
        "EDGE_AGENT__MQTT__TLS__CA_FILE": str(ca),
        "EDGE_AGENT__OPCUA__SOURCES": source,
        "EDGE_AGENT__HEALTH__PORT": str(health_port),
        "EDGE_AGENT__LLM__ENFORCE_EAGER": "true",
        "EDGE_AGENT__LOGGING__FORMAT": "json",
        "HF_HUB_OFFLINE": "1",
    }


def sim_config(path: Path, broker: Broker, ca: Path, opcua_port: int) -> Path:
    """The simulated plant (not part of the install): its OPC UA server and its MES publisher on the same broker."""
    path.write_text(
        f"""
[site]
id = "planta-monterrey"
[paths]
state_dir = "{path.parent / "sim-state"}"
[mqtt]
host = "localhost"
port = {broker.port}
username = "agent"
password = "{SECURE_USERS["agent"]}"
[mqtt.tls]
ca_file = "{ca}"
[llm]
enabled = false
[sim]
opcua_endpoint = "opc.tcp://127.0.0.1:{opcua_port}/edge-agent/sim"
seed = 42
tick_s = 10.0
backfill_hours = {SIM_HOURS}.0
speed = 3000.0
history_hours = {SIM_HOURS + 2}.0
"""
    )
    return path


def readiness(port: int) -> dict:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())
    except OSError:
        return {}


def wait_for(what: str, check, timeout: float, proc: subprocess.Popen) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        assert proc.poll() is None, f"{what}: the process exited with {proc.returncode}"
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def audit_entries(state: Path) -> list[dict]:
    return [json.loads(line) for line in (state / "audit/entries.jsonl").read_text().splitlines()]


def doctor(installed: Install, env: dict) -> tuple[int, dict[str, dict]]:
    result = subprocess.run(
        [str(installed.cli), "doctor", "--config", str(installed.config), "--json", "--unit", str(installed.unit)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    checks = json.loads(result.stdout)
    return result.returncode, {c["id"]: c for c in checks}


def test_a_plant_install_writes_a_report_with_the_narrator_and_eagle31(
    installed: Install, plant_broker: tuple[Broker, Path], tmp_path: Path
) -> None:
    """The installed agent on the installed example config: a shift report over MQTT with a model-written narrative,
    drafted by the shipped head (the audit log's draft.loaded shows fc_norm and norm_output on, the report's
    fingerprint names the shipped head's manifest); `doctor` passes, and fails naming the head once its weights go."""
    broker, ca = plant_broker
    health_port, opcua_port = free_port(), free_port()
    env = agent_env(installed, broker, ca, health_port, opcua_port, "agent")
    logs = tmp_path / "logs"
    logs.mkdir()

    with open(logs / "agent.log", "ab") as agent_log, open(logs / "sim.log", "ab") as sim_log:
        agent = subprocess.Popen(
            [str(installed.cli), "run", "--config", str(installed.config)], env=env, stdout=agent_log, stderr=agent_log
        )
        sim = None
        try:

            def component(name: str) -> bool:
                components = readiness(health_port).get("components", [])
                return any(c["name"] == name and c["state"] == "ready" for c in components)

            wait_for("the agent's MQTT ingest", lambda: component("mqtt-ingest"), 180, agent)
            sim = subprocess.Popen(
                [str(installed.cli), "sim", "--config", str(sim_config(tmp_path / "sim.toml", broker, ca, opcua_port))],
                env={k: v for k, v in env.items() if not k.startswith("EDGE_AGENT__")},
                stdout=sim_log,
                stderr=sim_log,
            )
            wait_for("the simulator to catch up", lambda: b"sim_caught_up" in (logs / "sim.log").read_bytes(), 300, sim)
            wait_for("the agent to be ready", lambda: readiness(health_port).get("ready") is True, 600, agent)

            end = datetime.now(UTC).replace(microsecond=0)
            window = f"{(end - timedelta(hours=SIM_HOURS)).isoformat()}/{end.isoformat()}"
            request = subprocess.run(
                [
                    str(installed.cli),
                    *("report", "request", "--config", str(installed.config), "--type", "shift_summary"),
                    *("--window", window, "--lang", "es", "--format", "json", "--timeout", "600"),
                ],
                env=agent_env(installed, broker, ca, health_port, opcua_port, "operator"),
                capture_output=True,
                text=True,
                timeout=700,
            )
            assert request.returncode == 0, request.stderr[-4000:]
            report = json.loads(request.stdout)

            code, checks = doctor(installed, env)
            assert code == 0, checks

            # While the plant runs, the head's weights go: doctor fails on that alone, naming the file and how
            # to put it back; `model prepare` puts it back.
            (installed.state / "models/eagle31-default/model.safetensors").unlink()
            code, checks = doctor(installed, env)
            assert code == 1
            failed = {cid: c for cid, c in checks.items() if c["status"] == "fail"}
            assert list(failed) == ["draft"], failed
            assert "model.safetensors" in failed["draft"]["detail"] and "model prepare" in failed["draft"]["fix"]
            shutil.rmtree(installed.state / "models/eagle31-default")
            subprocess.run(
                [str(installed.cli), "model", "prepare", "--out", str(installed.state / "models/default")],
                env=env,
                check=True,
                capture_output=True,
                timeout=300,
            )
            assert doctor(installed, env)[0] == 0
        finally:
            for proc in (sim, agent):
                if proc is not None and proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    try:
                        proc.wait(60)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()

    assert agent.returncode == 0, (logs / "agent.log").read_text()[-4000:]
    statuses = [section["status"] for section in report["body"]["sections"]]
    assert any(status.startswith("model") for status in statuses), statuses
    assert report["body"]["narrative_status"] in ("model", "mixed")
    draft = report["body"]["generation"]["fingerprint"]["draft"]
    shipped = REPO / "edge_agent/llm/shipped/eagle31-narrator-smollm2-135m/manifest.json"
    assert draft["manifest_sha256"] == hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert (draft["variant"], draft["fc_norm"], draft["norm_output"]) == ("eagle3.1", True, True)
    loaded = [e["payload"]["draft"] for e in audit_entries(installed.state) if e["event"] == "draft.loaded"]
    assert loaded and all((d["fc_norm"], d["norm_output"]) == (True, True) for d in loaded)
    # At the default precision the engine ran the int8 copy it made of the prepared model; the fingerprint names
    # the copy, the copy's manifest names the prepared model, and the precision is recorded.
    fingerprint = report["body"]["generation"]["fingerprint"]
    model = fingerprint["model"]
    assert fingerprint["precision"] == "int8"
    assert (
        model["manifest_sha256"]
        == hashlib.sha256((installed.state / "models/default-int8/manifest.json").read_bytes()).hexdigest()
    )
    assert (
        model["source"]["model_manifest_sha256"]
        == hashlib.sha256((installed.state / "models/default/manifest.json").read_bytes()).hexdigest()
    )
    assert json.loads((installed.state / "models/default/manifest.json").read_text())["adapter"]["name"] == (
        "narrator-smollm2-135m"
    )
