"""Files a config names that the agent cannot start without: `config check` exits 2 naming the key, and
`edge-agent run` exits 2 at once with a line per missing path, before anything starts (not after the engine's
llm.start_timeout_s)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edge_agent.config import load_config
from edge_agent.config.required_files import missing_files

REPO = Path(__file__).resolve().parents[1]


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(f'[site]\nid = "plant-7"\n[paths]\nstate_dir = "{tmp_path / "state"}"\n{body}', encoding="utf-8")
    return path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_AGENT__")}
    return subprocess.run(
        [sys.executable, "-m", "edge_agent", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
    )


@pytest.fixture
def missing_draft(tmp_path: Path) -> Path:
    """A config naming a model directory that exists and a draft head directory that does not."""
    (tmp_path / "model").mkdir()
    return write(
        tmp_path, f'[llm]\nmodel_dir = "{tmp_path / "model"}"\n[llm.speculative]\ndraft = "{tmp_path / "head"}"\n'
    )


class TestConfigCheck:
    def test_a_missing_draft_dir_exits_2_naming_the_key(self, missing_draft: Path, tmp_path: Path) -> None:
        result = cli("config", "check", str(missing_draft))
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"edge-agent: invalid config {missing_draft}: 1 problem(s)",
            f"  llm.speculative.draft: directory {tmp_path / 'head'} does not exist",
        ]
        assert result.stdout == ""


class TestRun:
    def test_a_missing_draft_dir_stops_the_start_at_once(self, missing_draft: Path, tmp_path: Path) -> None:
        """Exit 2 within seconds (the engine would have waited llm.start_timeout_s, 300 s), nothing opened."""
        started = time.monotonic()
        result = cli("run", "--config", str(missing_draft))
        elapsed = time.monotonic() - started
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"edge-agent: cannot start: llm.speculative.draft: directory {tmp_path / 'head'} does not exist"
        ]
        assert elapsed < 10, elapsed
        assert not (tmp_path / "state").exists()  # no store, no audit log

    def test_the_default_model_unprepared_names_model_prepare(self, tmp_path: Path) -> None:
        """No model_dir and nothing prepared in the state dir: the defaults are named with what makes them."""
        result = cli("run", "--config", str(write(tmp_path, "")))
        state = tmp_path / "state"
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"edge-agent: cannot start: llm.model_dir: not set, and the default directory {state}/models/default"
            " does not exist: run `edge-agent model prepare`",
            f"edge-agent: cannot start: llm.speculative.draft: not set, and the default directory"
            f" {state}/models/eagle31-default does not exist: run `edge-agent model prepare`",
        ]


class TestMissingFiles:
    def test_every_named_path_the_enabled_parts_need(self, tmp_path: Path) -> None:
        """Model, head, broker TLS files and OPC UA client certificates, in config order, each by its key."""
        d = tmp_path
        body = f"""
[mqtt.tls]
ca_file = "{d}/ca.pem"
cert_file = "{d}/client.pem"
key_file = "{d}/client.key"
[[opcua.sources]]
name = "press"
endpoint = "opc.tcp://127.0.0.1:4840"
client_cert = "{d}/opcua.der"
client_key = "{d}"
[llm]
model_dir = "{d}/model"
[llm.speculative]
draft = "{d}/head"
"""
        (d / "client.pem").write_text("")
        config = load_config(write(d, body), environ={})
        assert missing_files(config) == [
            ("llm.model_dir", f"directory {d}/model does not exist"),
            ("llm.speculative.draft", f"directory {d}/head does not exist"),
            ("mqtt.tls.ca_file", f"file {d}/ca.pem does not exist"),
            ("mqtt.tls.key_file", f"file {d}/client.key does not exist"),
            ("opcua.sources[0].client_cert", f"file {d}/opcua.der does not exist"),
            ("opcua.sources[0].client_key", f"{d} is not a file"),
        ]

    def test_what_the_agent_makes_itself_or_does_not_use_is_not_asked_for(self, tmp_path: Path) -> None:
        """Defaults (audit key, OPC UA client certificate, int8 copy, compile cache) and the paths of disabled
        parts are no one's to provide: nothing is missing."""
        d = tmp_path
        body = f"""
[mqtt]
enabled = false
[mqtt.tls]
ca_file = "{d}/ca.pem"
[[opcua.sources]]
name = "press"
endpoint = "opc.tcp://127.0.0.1:4840"
security_policy = "Basic256Sha256"
security_mode = "SignAndEncrypt"
[llm]
backend = "remote"
remote_url = "http://gpu:8000/v1"
model_dir = "{d}/model"
[llm.speculative]
draft = "{d}/head"
"""
        assert missing_files(load_config(write(d, body), environ={})) == []
