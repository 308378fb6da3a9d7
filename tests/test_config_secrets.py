"""Environment overrides into arrays of tables, and secrets read from `*_file` keys (systemd credentials included):
named cases, and Hypothesis over variable names and values (a clear ConfigError or a valid config, never a crash)."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edge_agent.config import AgentConfig, ConfigError, load_config
from edge_agent.config.security import security_warnings

SOURCES = """
[site]
id = "plant-7"

[[opcua.sources]]
name = "press"
endpoint = "opc.tcp://127.0.0.1:4840"
username = "agent"

[[opcua.sources]]
name = "oven"
endpoint = "opc.tcp://127.0.0.1:4841"
"""


def write(tmp_path: Path, text: str, name: str = "agent.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems(path: Path, environ: dict[str, str]) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as info:
        load_config(path, environ=environ)
    return info.value.problems


class TestEnvIntoArraysOfTables:
    def test_an_index_names_the_entry(self, tmp_path: Path) -> None:
        """EDGE_AGENT__OPCUA__SOURCES__1__PASSWORD sets the second source's password and no other."""
        config = load_config(write(tmp_path, SOURCES), environ={"EDGE_AGENT__OPCUA__SOURCES__1__PASSWORD": "s3cret"})
        first, second = config.opcua.sources
        assert first.password is None
        assert second.password is not None and second.password.get_secret_value() == "s3cret"

    def test_an_index_beyond_the_array_names_the_variable(self, tmp_path: Path) -> None:
        env = {"EDGE_AGENT__OPCUA__SOURCES__2__PASSWORD": "x"}
        assert problems(write(tmp_path, SOURCES), env) == [
            (
                "opcua.sources[2].password",
                "environment override EDGE_AGENT__OPCUA__SOURCES__2__PASSWORD: index 2 is beyond opcua.sources,"
                " which has 2 entries in the config file",
            )
        ]

    def test_an_array_the_file_lacks_has_no_index(self, tmp_path: Path) -> None:
        env = {"EDGE_AGENT__MQTT__ROUTES__0__TOPIC": "plant/#"}
        assert problems(write(tmp_path, '[site]\nid = "plant-7"\n'), env) == [
            (
                "mqtt.routes[0].topic",
                "environment override EDGE_AGENT__MQTT__ROUTES__0__TOPIC: index 0 is beyond mqtt.routes,"
                " which has 0 entries in the config file",
            )
        ]

    def test_a_key_without_an_index_says_how_to_name_one(self, tmp_path: Path) -> None:
        env = {"EDGE_AGENT__OPCUA__SOURCES__PASSWORD": "x"}
        assert problems(write(tmp_path, SOURCES), env) == [
            (
                "opcua.sources.password",
                "environment override EDGE_AGENT__OPCUA__SOURCES__PASSWORD: opcua.sources is an array of tables:"
                " name an entry by its index, e.g. EDGE_AGENT__OPCUA__SOURCES__0__PASSWORD",
            )
        ]

    def test_a_bad_value_at_an_index_is_named_as_pydantic_names_it(self, tmp_path: Path) -> None:
        env = {"EDGE_AGENT__OPCUA__SOURCES__0__PUBLISHING_INTERVAL_MS": "-1"}
        assert [key for key, _ in problems(write(tmp_path, SOURCES), env)] == [
            "opcua.sources[0].publishing_interval_ms"
        ]


class TestSecretFiles:
    def test_each_secret_reads_its_file_without_the_trailing_newline(self, tmp_path: Path) -> None:
        """mqtt.password_file, opcua.sources[i].password_file and llm.remote_api_key_file each fill their secret."""
        (tmp_path / "mqtt").write_text("hunter2\n")
        (tmp_path / "opcua").write_text("pa ss\r\n")
        (tmp_path / "api").write_text("sk-123")
        text = SOURCES.replace('username = "agent"', f'username = "agent"\npassword_file = "{tmp_path / "opcua"}"')
        text += f'\n[mqtt]\nusername = "edge"\npassword_file = "{tmp_path / "mqtt"}"\n'
        text += '\n[llm]\nbackend = "remote"\nremote_url = "http://gpu:8000/v1"\n'
        text += f'remote_api_key_file = "{tmp_path / "api"}"\n'
        config = load_config(write(tmp_path, text), environ={})
        assert config.mqtt.password is not None and config.mqtt.password.get_secret_value() == "hunter2"
        password = config.opcua.sources[0].password
        assert password is not None and password.get_secret_value() == "pa ss"
        assert config.llm.remote_api_key is not None and config.llm.remote_api_key.get_secret_value() == "sk-123"
        assert config.secret_files == {
            "mqtt.password": tmp_path / "mqtt",
            "opcua.sources[0].password": tmp_path / "opcua",
            "llm.remote_api_key": tmp_path / "api",
        }
        assert config.masked()["mqtt"]["password"] == "***"

    def test_credentials_directory_is_expanded_from_the_environment(self, tmp_path: Path) -> None:
        """`${CREDENTIALS_DIRECTORY}` (what systemd sets for LoadCredential=) is the one variable a path expands."""
        (tmp_path / "mqtt-password").write_text("from-systemd\n")
        text = '[site]\nid = "plant-7"\n[mqtt]\npassword_file = "${CREDENTIALS_DIRECTORY}/mqtt-password"\n'
        config = load_config(write(tmp_path, text), environ={"CREDENTIALS_DIRECTORY": str(tmp_path)})
        assert config.mqtt.password is not None and config.mqtt.password.get_secret_value() == "from-systemd"

    def test_a_password_from_a_file_is_not_a_password_in_the_config(self, tmp_path: Path) -> None:
        (tmp_path / "p").write_text("x")
        text = f'[site]\nid = "plant-7"\n[mqtt]\nusername = "edge"\npassword_file = "{tmp_path / "p"}"\n'
        codes = [w.code for w in security_warnings(load_config(write(tmp_path, text), environ={}), {})]
        assert codes == ["mqtt_plaintext_credentials"]

    def test_the_file_key_can_come_from_the_environment(self, tmp_path: Path) -> None:
        (tmp_path / "p").write_text("env-file\n")
        env = {"EDGE_AGENT__OPCUA__SOURCES__1__PASSWORD_FILE": str(tmp_path / "p")}
        config = load_config(write(tmp_path, SOURCES), environ=env)
        password = config.opcua.sources[1].password
        assert password is not None and password.get_secret_value() == "env-file"

    @pytest.mark.parametrize(
        ("setup", "value", "reason"),
        [
            (None, "{d}/absent", "{d}/absent does not exist"),
            ("dir", "{d}/dir", "{d}/dir is not a file"),
            ("empty", "{d}/empty", "{d}/empty is empty"),
            ("binary", "{d}/binary", "{d}/binary is not UTF-8 text"),
            ("huge", "{d}/huge", "{d}/huge is over 65536 bytes: not a secret"),
            (
                None,
                "${{CREDENTIALS_DIRECTORY}}/p",
                "${{CREDENTIALS_DIRECTORY}}/p names ${{CREDENTIALS_DIRECTORY}},"
                " which is not set: systemd sets it for a unit with LoadCredential=",
            ),
        ],
    )
    def test_an_unusable_file_is_an_error_naming_the_key(
        self, tmp_path: Path, setup: str | None, value: str, reason: str
    ) -> None:
        if setup == "dir":
            (tmp_path / "dir").mkdir()
        elif setup == "empty":
            (tmp_path / "empty").write_text("\n")
        elif setup == "binary":
            (tmp_path / "binary").write_bytes(b"\xff\xfe")
        elif setup == "huge":
            (tmp_path / "huge").write_bytes(b"x" * 65537)
        text = f'[site]\nid = "plant-7"\n[mqtt]\npassword_file = "{value.format(d=tmp_path)}"\n'
        assert problems(write(tmp_path, text), {}) == [("mqtt.password_file", reason.format(d=tmp_path))]

    def test_an_unreadable_file_is_an_error(self, tmp_path: Path) -> None:
        secret = tmp_path / "p"
        secret.write_text("x")
        secret.chmod(0)
        try:
            secret.read_text()
            pytest.skip("running as root: every file is readable")
        except PermissionError:
            pass
        text = f'[site]\nid = "plant-7"\n[mqtt]\npassword_file = "{secret}"\n'
        assert problems(write(tmp_path, text), {}) == [
            ("mqtt.password_file", f"cannot read {secret}: Permission denied")
        ]

    def test_a_secret_and_its_file_together_are_an_error(self, tmp_path: Path) -> None:
        (tmp_path / "p").write_text("x")
        text = f'[site]\nid = "plant-7"\n[mqtt]\npassword = "y"\npassword_file = "{tmp_path / "p"}"\n'
        assert problems(write(tmp_path, text), {}) == [
            ("mqtt.password_file", "mqtt.password and mqtt.password_file are both set: keep one")
        ]

    def test_a_file_key_beside_no_secret_is_an_unknown_key(self, tmp_path: Path) -> None:
        """Only secrets have `*_file` keys: `username_file` is a typo like any other."""
        text = '[site]\nid = "plant-7"\n[mqtt]\nusername_file = "/x"\n'
        assert [key for key, _ in problems(write(tmp_path, text), {})] == ["mqtt.username_file"]


_KEYS = [
    "site",
    "id",
    "mqtt",
    "port",
    "password",
    "password_file",
    "tls",
    "ca_file",
    "opcua",
    "sources",
    "routes",
    "0",
    "1",
    "7",
    "name",
    "endpoint",
    "llm",
    "speculative",
    "draft",
    "remote_api_key_file",
    "",
    "x",
]
_names = st.lists(
    st.sampled_from(_KEYS) | st.text(string.ascii_letters + string.digits + "_", max_size=6), min_size=1, max_size=5
).map(lambda keys: "EDGE_AGENT__" + "__".join(keys).upper())
_values = st.text(max_size=20) | st.sampled_from(
    ["1884", "true", "[1, 2]", "{a = 1}", "${CREDENTIALS_DIRECTORY}/p", '"opc.tcp://h"', "-1", "0", "/nonexistent"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(environ=st.dictionaries(_names, _values, max_size=4))
def test_any_environment_gives_a_config_or_a_config_error(tmp_path: Path, environ: dict[str, str]) -> None:
    """Whatever EDGE_AGENT__ variables a host has, loading ends in a valid config or a ConfigError whose every
    problem names a key and a reason; nothing else is raised."""
    path = tmp_path / "agent.toml"
    if not path.exists():
        path.write_text(SOURCES + '\n[mqtt]\nusername = "edge"\n[[mqtt.routes]]\ntopic = "plant/#"\n')
    try:
        config = load_config(path, environ={**environ, "CREDENTIALS_DIRECTORY": str(tmp_path)})
    except ConfigError as exc:
        assert exc.problems and all(key and reason for key, reason in exc.problems)
    else:
        assert isinstance(config, AgentConfig)
