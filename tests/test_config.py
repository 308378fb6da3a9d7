"""Config: one TOML file, strict keys, env overrides, errors that name the key path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from edge_agent.config import ConfigError, load_config

REPO = Path(__file__).resolve().parents[1]

MINIMAL = """
[site]
id = "plant-7"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agent.toml"
    path.write_text(text, encoding="utf-8")
    return path


class TestLoadConfig:
    def test_minimal_file_gets_defaults(self, tmp_path: Path) -> None:
        """Only the site id is required; every other section has a safe default."""
        config = load_config(write(tmp_path, MINIMAL), environ={})
        assert config.site.id == "plant-7"
        assert config.mqtt.port == 1883
        assert config.mqtt.protocol == "5"
        assert config.paths.store_path == Path("/var/lib/edge-agent/store.sqlite3")

    def test_unknown_keys_are_errors_naming_their_path(self, tmp_path: Path) -> None:
        """A typo anywhere is reported with its full key path, all of them at once."""
        text = MINIMAL + '\n[mqtt]\nprot = 1884\n[[mqtt.routes]]\ntopic = "a/#"\nparserr = "json"\n'
        with pytest.raises(ConfigError) as info:
            load_config(write(tmp_path, text), environ={})
        paths = [path for path, _ in info.value.problems]
        assert paths == ["mqtt.prot", "mqtt.routes[0].parserr"]

    def test_int8_is_refused_on_a_gpu_with_what_to_set(self, tmp_path: Path) -> None:
        """int8 is the CPU engine's precision; a GPU config must name float32 or bfloat16."""
        with pytest.raises(ConfigError) as info:
            load_config(write(tmp_path, MINIMAL + '\n[llm]\ndevice = "cuda"\n'), environ={})
        assert info.value.problems[0][0] == "llm"
        assert 'on a GPU set llm.dtype = "float32" or "bfloat16"' in info.value.problems[0][1]
        config = load_config(write(tmp_path, MINIMAL + '\n[llm]\ndevice = "cuda"\ndtype = "float32"\n'), environ={})
        assert config.llm.dtype == "float32"

    def test_bad_value_names_key_and_reason(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError) as info:
            load_config(write(tmp_path, MINIMAL + "\n[mqtt]\nport = 70000\n"), environ={})
        assert info.value.problems[0][0] == "mqtt.port"
        assert "65535" in info.value.problems[0][1]

    def test_missing_site_is_an_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError) as info:
            load_config(write(tmp_path, "[mqtt]\nport = 1884\n"), environ={})
        assert info.value.problems == [("site", "Field required")]

    def test_env_overrides_file(self, tmp_path: Path) -> None:
        """EDGE_AGENT__SECTION__KEY wins over the file; values parse as TOML scalars."""
        env = {"EDGE_AGENT__MQTT__PORT": "1884", "EDGE_AGENT__MQTT__HOST": "broker.local", "OTHER": "x"}
        config = load_config(write(tmp_path, MINIMAL), environ=env)
        assert (config.mqtt.port, config.mqtt.host) == (1884, "broker.local")

    def test_env_override_with_unknown_key_is_an_error(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError) as info:
            load_config(write(tmp_path, MINIMAL), environ={"EDGE_AGENT__MQTT__PORTT": "1"})
        assert [p for p, _ in info.value.problems] == ["mqtt.portt"]

    def test_invalid_toml_is_reported(self, tmp_path: Path) -> None:
        with pytest.raises(ConfigError) as info:
            load_config(write(tmp_path, "[site\n"), environ={})
        assert info.value.problems[0][0] == "<file>"

    def test_secrets_are_masked(self, tmp_path: Path) -> None:
        config = load_config(write(tmp_path, MINIMAL + '\n[mqtt]\nusername = "u"\npassword = "hunter2"\n'), environ={})
        assert config.masked()["mqtt"]["password"] == "***"
        assert "hunter2" not in json.dumps(config.masked())
        assert config.mqtt.password is not None and config.mqtt.password.get_secret_value() == "hunter2"


class TestConfigCheckCommand:
    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "edge_agent.cli", "config", "check", *args], capture_output=True, text=True
        )

    def test_valid_file_exits_0_and_prints_masked_config(self, tmp_path: Path) -> None:
        path = write(tmp_path, MINIMAL + '\n[mqtt]\npassword = "s3cret"\n')
        result = self.run(str(path))
        assert result.returncode == 0, result.stderr
        out = json.loads(result.stdout)
        assert out["config"]["mqtt"]["password"] == "***"
        assert "s3cret" not in result.stdout

    def test_invalid_file_exits_2_naming_every_bad_key(self, tmp_path: Path) -> None:
        path = write(tmp_path, MINIMAL + "\n[mqtt]\nport = 0\nfoo = 1\n")
        result = self.run(str(path))
        assert result.returncode == 2
        assert "mqtt.port" in result.stderr and "mqtt.foo" in result.stderr

    def test_the_example_is_valid_once_the_broker_ca_is_in_place(self, tmp_path: Path) -> None:
        """The plant's copy names one file the plant provides, the broker's CA (mqtt.tls.ca_file): `config check`
        names it until it is there (here moved by the environment), then exits 0."""
        ca = tmp_path / "broker-ca.pem"
        example = str(REPO / "configs" / "edge-agent.example.toml")
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_AGENT__")}
        env["EDGE_AGENT__MQTT__TLS__CA_FILE"] = str(ca)
        command = [sys.executable, "-m", "edge_agent.cli", "config", "check", example]
        missing = subprocess.run(command, capture_output=True, text=True, env=env)
        assert missing.returncode == 2
        assert missing.stderr.splitlines()[1:] == [f"  mqtt.tls.ca_file: file {ca} does not exist"]
        ca.write_text("-----BEGIN CERTIFICATE-----\n")
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr

    def test_the_demo_is_valid_where_its_model_is_prepared(self, tmp_path: Path) -> None:
        """The demo names its model, head and console certificate relative to where `make demo` runs it (the
        certificate and key are the demo's own, made before it starts the agent)."""
        for name in ("models/default", "models/eagle31-default"):
            (tmp_path / name).mkdir(parents=True)
        command = [sys.executable, "-m", "edge_agent.cli", "config", "check", str(REPO / "configs" / "demo.toml")]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        missing = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env)
        assert missing.returncode == 2
        assert missing.stderr.splitlines()[1:] == [
            "  console.tls_cert_file: file var/demo/console.crt does not exist",
            "  console.tls_key_file: file var/demo/console.key does not exist",
        ]
        (tmp_path / "var" / "demo").mkdir(parents=True)
        for name in ("console.crt", "console.key"):
            (tmp_path / "var" / "demo" / name).write_text("-----BEGIN -----\n")
        result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr

    def test_the_gpu_example_is_valid_once_its_files_are_in_place(self, tmp_path: Path) -> None:
        """configs/gpu.toml names three files the plant brings (the broker's CA, the imported model and head; here
        moved by the environment) and no int8, which a GPU engine cannot run: `config check` exits 0."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_AGENT__")}
        for key, name in [("MQTT__TLS__CA_FILE", "ca.pem"), ("LLM__MODEL_DIR", "m"), ("LLM__SPECULATIVE__DRAFT", "d")]:
            env[f"EDGE_AGENT__{key}"] = str(tmp_path / name)
        (tmp_path / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
        (tmp_path / "m").mkdir()
        (tmp_path / "d").mkdir()
        command = [sys.executable, "-m", "edge_agent.cli", "config", "check", str(REPO / "configs" / "gpu.toml")]
        result = subprocess.run(command, capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["config"]["llm"]["device"] == "cuda"


def _leaf_keys(model: type, prefix: str = "") -> list[str]:
    """Every option name in the config tree (nested sections and list-of-section items included)."""
    from typing import get_args

    from pydantic import BaseModel

    keys = []
    for name, field in model.model_fields.items():
        nested = [
            a
            for a in (field.annotation, *get_args(field.annotation))
            if isinstance(a, type) and issubclass(a, BaseModel)
        ]
        nested += [
            b
            for a in get_args(field.annotation)
            for b in get_args(a)
            if isinstance(b, type) and issubclass(b, BaseModel)
        ]
        if nested:
            keys += _leaf_keys(nested[0], f"{prefix}{name}.")
        else:
            keys.append(f"{prefix}{name}")
    return keys


def _undocumented(path: Path, keys: list[str]) -> list[str]:
    import re

    text = path.read_text(encoding="utf-8")
    return [key for key in keys if not re.search(rf"^#?\s*{re.escape(key.rsplit('.', 1)[-1])}\s*=", text, re.M)]


def test_example_config_documents_every_option() -> None:
    """configs/edge-agent.example.toml mentions every option a plant has (set or commented out); the simulator's
    options are the demo's (configs/demo.toml), not a plant's."""
    from edge_agent.config import AgentConfig

    plant = [key for key in _leaf_keys(AgentConfig) if not key.startswith("sim.")]
    assert _undocumented(REPO / "configs" / "edge-agent.example.toml", plant) == []


def test_example_config_is_a_plants() -> None:
    """The file a plant copies has no simulator section, drafts with EAGLE 3.1 at the default head, and earns no
    security warning: broker user and TLS, OPC UA signed, encrypted and pinned, four-eyes sign-off."""
    from edge_agent.config.security import security_warnings

    path = REPO / "configs" / "edge-agent.example.toml"
    assert "[sim]" not in path.read_text(encoding="utf-8")
    config = load_config(path, environ={})
    assert security_warnings(config, {}) == []
    assert config.llm.speculative.enabled and config.llm.speculative.draft is None and config.llm.model_dir is None
    assert config.mqtt.tls is not None and config.mqtt.username
    assert [(s.security_policy, s.security_mode) for s in config.opcua.sources] == [
        ("Basic256Sha256", "SignAndEncrypt")
    ]
    assert config.reports.four_eyes and config.reports.approvers
