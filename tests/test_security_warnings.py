"""Start-up security warnings: one named case per warning, the property that checking never fails, and where they
surface (`edge-agent config check`, the log and the audit trail of a real `edge-agent run`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edge_agent.audit import AuditEntry
from edge_agent.config import AgentConfig
from edge_agent.config.security import SecurityWarning, WarningCode, security_warnings
from tests.fixtures.broker import SECURE_USERS, Broker, free_port
from tests.fixtures.notify import NotifySocket
from tests.test_daemon import Agent, receive_until, write_config

PIN = "ab" * 32
SECURE_MQTT: dict[str, Any] = {
    "host": "broker.plant",
    "port": 8883,
    "username": "edge-agent",
    "password": "from-env",
    "tls": {"ca_file": "/etc/edge-agent/ca.pem"},
}
PASSWORD_ENV = {"EDGE_AGENT__MQTT__PASSWORD": "from-env"}


def config(mqtt: dict[str, Any] | None = None, sources: list[dict[str, Any]] | None = None) -> AgentConfig:
    return AgentConfig.model_validate(
        {"site": {"id": "plant-7"}, "mqtt": SECURE_MQTT if mqtt is None else mqtt, "opcua": {"sources": sources or []}}
    )


def source(**fields: Any) -> dict[str, Any]:
    return {"name": "scada-1", "endpoint": "opc.tcp://10.0.0.5:4840", **fields}


def codes(warnings: list[SecurityWarning]) -> list[str]:
    return [w.code for w in warnings]


class TestSecurityWarnings:
    def test_a_hardened_config_has_none(self) -> None:
        """TLS, a user, the password from the environment, a pinned and encrypted OPC UA session: nothing to say."""
        sources = [source(security_policy="Basic256Sha256", security_mode="SignAndEncrypt", server_cert_sha256=PIN)]
        assert security_warnings(config(sources=sources), PASSWORD_ENV) == []

    def test_password_without_tls_is_plain_text_on_the_network(self) -> None:
        """mqtt.password with no [mqtt.tls]: the credentials cross the network readable."""
        warnings = security_warnings(config({**SECURE_MQTT, "tls": None}), PASSWORD_ENV)
        assert warnings == [
            SecurityWarning(
                code="mqtt_plaintext_credentials",
                message="mqtt.password is set but [mqtt.tls] is not: the password crosses the network to"
                " broker.plant:8883 in plain text; configure [mqtt.tls]",
            )
        ]

    def test_password_written_in_the_file_is_named(self) -> None:
        """A password not given as EDGE_AGENT__MQTT__PASSWORD came from the file, which more people can read."""
        warnings = security_warnings(config(), {})
        assert warnings == [
            SecurityWarning(
                code="mqtt_password_in_file",
                message="mqtt.password is written in the config file; set EDGE_AGENT__MQTT__PASSWORD from an"
                " EnvironmentFile only root can read instead (docs/deployment.md)",
            )
        ]

    def test_no_environment_given_counts_the_password_as_in_the_file(self) -> None:
        """Called with the config alone (no environment), a set password is reported as written in the file."""
        assert codes(security_warnings(config())) == ["mqtt_password_in_file"]

    def test_password_override_in_lower_case_counts_as_from_the_environment(self) -> None:
        """The loader accepts EDGE_AGENT__mqtt__password too, so the check does as well."""
        assert security_warnings(config(), {"EDGE_AGENT__mqtt__password": "x"}) == []

    def test_unchecked_hostname_lets_another_certificate_pose_as_the_broker(self) -> None:
        """mqtt.tls.check_hostname = false is named with the broker it weakens."""
        mqtt = {**SECURE_MQTT, "tls": {"check_hostname": False}}
        warnings = security_warnings(config(mqtt), PASSWORD_ENV)
        assert warnings == [
            SecurityWarning(
                code="mqtt_hostname_unchecked",
                message="mqtt.tls.check_hostname = false: any certificate the CA signed is accepted for"
                " broker.plant:8883, so another host holding one can pose as the broker",
            )
        ]

    def test_anonymous_connection_says_sign_off_is_disabled(self) -> None:
        """No username and no client certificate: anonymous, and report sign-off over MQTT is off."""
        mqtt = {"host": "broker.plant", "port": 8883, "tls": {}}
        assert security_warnings(config(mqtt), {}) == [
            SecurityWarning(
                code="mqtt_anonymous",
                message="the connection to broker.plant:8883 is anonymous (no mqtt.username, no mqtt.tls.cert_file):"
                " the broker cannot tell who anyone is, so report sign-off over MQTT is disabled",
            )
        ]

    def test_client_certificate_without_username_is_not_anonymous(self) -> None:
        """A client certificate identifies the agent to the broker as well as a username does."""
        tls = {"cert_file": "/etc/edge-agent/client.pem", "key_file": "/etc/edge-agent/client.key"}
        assert security_warnings(config({"host": "broker.plant", "tls": tls}), {}) == []

    def test_disabled_mqtt_gets_no_mqtt_warnings(self) -> None:
        """An agent that never connects to a broker has nothing to warn about there."""
        assert security_warnings(config({"enabled": False, "password": "x"}), {}) == []

    def test_secured_opcua_without_a_pinned_server_certificate(self) -> None:
        """Basic256Sha256 without server_cert_sha256: whatever certificate is presented is trusted."""
        sources = [source(security_policy="Basic256Sha256", security_mode="Sign")]
        assert security_warnings(config(sources=sources), PASSWORD_ENV) == [
            SecurityWarning(
                code="opcua_server_unpinned",
                message="opcua source scada-1: security_policy Basic256Sha256 without server_cert_sha256: whatever"
                " certificate opc.tcp://10.0.0.5:4840 presents is trusted, so an impostor is encrypted to as well;"
                " pin the SHA-256 the agent logs as opcua_server_certificate",
            )
        ]

    def test_unsecured_opcua_on_a_remote_endpoint(self) -> None:
        """security_mode None to another host: values travel unsigned and unencrypted."""
        assert security_warnings(config(sources=[source()]), PASSWORD_ENV) == [
            SecurityWarning(
                code="opcua_unsecured_remote",
                message="opcua source scada-1: security_mode None to opc.tcp://10.0.0.5:4840: values travel unsigned"
                " and unencrypted across the network; use Sign or SignAndEncrypt",
            )
        ]

    def test_unsecured_opcua_with_a_user_names_the_password_too(self) -> None:
        """With a username on an unsecured session, the warning says the credentials travel in the clear as well."""
        [warning] = security_warnings(config(sources=[source(username="edge", password="pw")]), PASSWORD_ENV)
        assert warning.message == (
            "opcua source scada-1: security_mode None to opc.tcp://10.0.0.5:4840: values, the user name and password"
            " travel unsigned and unencrypted across the network; use Sign or SignAndEncrypt"
        )

    @pytest.mark.parametrize(
        "endpoint",
        [
            "opc.tcp://localhost:4840",
            "opc.tcp://127.0.0.1:4840/edge-agent/sim",
            "opc.tcp://127.8.9.1",
            "opc.tcp://[::1]:4840",
        ],
    )
    def test_unsecured_opcua_on_loopback_is_not_warned(self, endpoint: str) -> None:
        """Traffic that never leaves the host is not exposed by security_mode None."""
        assert security_warnings(config(sources=[source(endpoint=endpoint)]), PASSWORD_ENV) == []

    @pytest.mark.parametrize(
        "endpoint", ["opc.tcp://[::1:4840", "opc.tcp://", "opc.tcp://scada.local:4840", "opc.tcp://127.0.0.1.nip.io"]
    )
    def test_an_endpoint_that_is_not_plainly_loopback_counts_as_remote(self, endpoint: str) -> None:
        """An unparsable host, none at all, or a DNS name is not trusted to stay on this host."""
        assert codes(security_warnings(config(sources=[source(endpoint=endpoint)]), PASSWORD_ENV)) == [
            "opcua_unsecured_remote"
        ]

    def test_warnings_come_mqtt_first_then_sources_in_order(self) -> None:
        """The order is stable, so two starts with one config log and record the same list."""
        sources = [
            source(name="a", security_policy="Basic256Sha256", security_mode="Sign"),
            source(name="b"),
        ]
        warnings = security_warnings(config({"host": "broker.plant", "password": "pw"}, sources), {})
        assert codes(warnings) == [
            "mqtt_plaintext_credentials",
            "mqtt_password_in_file",
            "mqtt_anonymous",
            "opcua_server_unpinned",
            "opcua_unsecured_remote",
        ]


_text = st.text(max_size=40)
_tls = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {"check_hostname": st.booleans()},
        optional={"ca_file": _text.filter(bool)},
    ),
    st.fixed_dictionaries(
        {"check_hostname": st.booleans(), "cert_file": _text.filter(bool), "key_file": _text.filter(bool)}
    ),
)
_mqtt = st.fixed_dictionaries(
    {
        "enabled": st.booleans(),
        "host": _text,
        "port": st.integers(1, 65535),
        "username": st.none() | _text,
        "password": st.none() | _text,
        "tls": _tls,
    }
)
_source = st.fixed_dictionaries(
    {
        "name": st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True),
        "endpoint": st.builds("opc.tcp://{}".format, st.text(max_size=60)),
        "security_policy": st.sampled_from(["None", "Basic256Sha256"]),
        "security_mode": st.sampled_from(["None", "Sign", "SignAndEncrypt"]),
        "server_cert_sha256": st.none() | _text,
        "username": st.none() | _text,
    }
)
_environ = st.dictionaries(
    st.sampled_from(["EDGE_AGENT__MQTT__PASSWORD", "EDGE_AGENT__mqtt__password", "EDGE_AGENT__MQTT__PORT", "HOME"]),
    _text,
    max_size=3,
)


class TestSecurityWarningsProperty:
    @given(mqtt=_mqtt, sources=st.lists(_source, max_size=3), environ=_environ)
    def test_never_raises_and_every_warning_is_a_known_code_with_a_message(
        self, mqtt: dict[str, Any], sources: list[dict[str, Any]], environ: dict[str, str]
    ) -> None:
        """For any valid config built from these fields the check returns, with known codes and non-empty messages,
        and says the same thing when asked twice."""
        agent_config = config(mqtt, sources)
        warnings = security_warnings(agent_config, environ)
        assert all(w.code in get_args(WarningCode) and w.message for w in warnings)
        assert security_warnings(agent_config, environ) == warnings


class TestConfigCheckPrintsWarnings:
    def test_warnings_go_to_stderr_and_the_json_and_the_exit_code_stays_0(self, tmp_path: Path) -> None:
        """`edge-agent config check` names each warning on stderr and under security_warnings, and still exits 0."""
        path = tmp_path / "agent.toml"
        path.write_text('[site]\nid = "plant-7"\n[mqtt]\nusername = "edge"\npassword = "s3cret"\n', encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("EDGE_AGENT__")}
        result = subprocess.run(
            [sys.executable, "-m", "edge_agent.cli", "config", "check", str(path)],
            capture_output=True,
            text=True,
            env=env,
        )
        printed = json.loads(result.stdout)["security_warnings"]
        assert (result.returncode, [w["code"] for w in printed]) == (
            0,
            ["mqtt_plaintext_credentials", "mqtt_password_in_file"],
        )
        assert result.stderr.splitlines() == [
            f"edge-agent: security warning ({w['code']}): {w['message']}" for w in printed
        ]


class TestStartUpWarnings:
    @pytest.mark.broker
    def test_run_logs_each_warning_and_records_them_in_one_audit_entry(
        self, secure_broker: Broker, tmp_path: Path, path_socket: NotifySocket
    ) -> None:
        """A real agent with its broker password inline and no TLS logs security_warning per warning and writes one
        config.security audit entry listing them, between config.loaded and agent.start."""
        mqtt = textwrap.dedent(
            f"""
            [mqtt]
            host = "{secure_broker.host}"
            port = {secure_broker.port}
            client_id = "security-test"
            username = "agent"
            password = "{SECURE_USERS["agent"]}"
            """
        )
        config_path = write_config(tmp_path, free_port(), mqtt=mqtt)
        agent = Agent(config_path, path_socket)
        receive_until(path_socket, "READY=1")
        agent.proc.send_signal(signal.SIGTERM)
        logged = [(e["code"], e["level"]) for e in agent.logs() if e["event"] == "security_warning"]
        lines = (config_path.parent / "state" / "audit" / "entries.jsonl").read_bytes().splitlines()
        entries = [e for e in map(AuditEntry.from_line, lines) if e.actor == "agent"]
        expected = ["mqtt_plaintext_credentials", "mqtt_password_in_file"]
        assert logged == [(code, "warning") for code in expected]
        assert [e.event for e in entries][:3] == ["config.loaded", "config.security", "agent.start"]
        assert [w["code"] for w in entries[1].payload["warnings"]] == expected
