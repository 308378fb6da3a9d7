"""Credentials inside `llm.remote_url` (https://user:pass@host/v1) never reach logs, fingerprints, reports or bundles
(edge_agent/config/urls.py): each place a URL is printed or recorded, checked with a secret that must not appear."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from edge_agent.config import AgentConfig
from edge_agent.config.urls import redact_url, split_userinfo
from edge_agent.doctor.llm import _engine_unused
from edge_agent.llm.remote import RemoteEngine
from edge_agent.llm.types import EngineStartError, fingerprint_sha256

SECRET = "s3cr3t-p%40ss"  # percent-encoded '@' inside the password
DECODED = "s3cr3t-p@ss"


def config(url: str) -> AgentConfig:
    return AgentConfig.model_validate(
        {"site": {"id": "demo", "timezone": "UTC"}, "llm": {"backend": "remote", "remote_url": url}}
    )


class FakeServer(BaseHTTPRequestHandler):
    """/v1/models and /version of an OpenAI-compatible server; remembers each Authorization header."""

    seen: list[str | None] = []

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        FakeServer.seen.append(self.headers.get("Authorization"))
        if self.path == "/v1/models":
            body: dict[str, Any] = {"data": [{"id": "smollm2", "root": "/models/smollm2", "max_model_len": 4096}]}
        elif self.path == "/version":
            body = {"version": "0.32.0"}
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    FakeServer.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


class TestUrls:
    @pytest.mark.parametrize(
        ("url", "redacted", "stripped", "creds"),
        [
            ("https://user:pw@host/v1", "https://***@host/v1", "https://host/v1", ("user", "pw")),
            ("http://u@h:8000/v1", "http://***@h:8000/v1", "http://h:8000/v1", ("u", "")),
            ("https://a:b%40c@h/v1?x=@y", "https://***@h/v1?x=@y", "https://h/v1?x=@y", ("a", "b@c")),
            ("http://h:8000/v1", "http://h:8000/v1", "http://h:8000/v1", None),
            ("http://h/v1/a@b", "http://h/v1/a@b", "http://h/v1/a@b", None),  # an '@' in the path is no userinfo
            ("plant/+/log/#", "plant/+/log/#", "plant/+/log/#", None),
        ],
    )
    def test_userinfo_is_found_and_only_it(
        self, url: str, redacted: str, stripped: str, creds: tuple[str, str] | None
    ) -> None:
        """The userinfo ends at the last '@' before the path; nothing else of the URL changes."""
        assert redact_url(url) == redacted
        assert split_userinfo(url) == (stripped, creds)


class TestConfig:
    def test_masked_config_and_its_fingerprint_hide_the_credentials(self) -> None:
        """config check's output and the fingerprint in config.loaded: the URL's userinfo is ***."""
        cfg = config(f"https://edge:{SECRET}@gpu.plant/v1")
        assert cfg.masked()["llm"]["remote_url"] == "https://***@gpu.plant/v1"
        assert SECRET not in json.dumps(cfg.masked()) and DECODED not in json.dumps(cfg.masked())
        # Changing only the password does not change the fingerprint: it is not derived from the secret.
        assert cfg.fingerprint() == config("https://edge:other@gpu.plant/v1").fingerprint()

    def test_config_check_prints_no_credentials(self, tmp_path: Path) -> None:
        """`edge-agent config check` as an operator runs it."""
        path = tmp_path / "edge-agent.toml"
        path.write_text(
            '[site]\nid = "demo"\ntimezone = "UTC"\n\n[mqtt]\nenabled = false\n\n'
            f'[llm]\nbackend = "remote"\nremote_url = "https://edge:{SECRET}@gpu.plant/v1"\n',
            encoding="utf-8",
        )
        run = subprocess.run(
            [sys.executable, "-m", "edge_agent", "config", "check", "--config", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert run.returncode == 0, run.stderr
        assert "https://***@gpu.plant/v1" in run.stdout
        assert SECRET not in run.stdout + run.stderr and DECODED not in run.stdout + run.stderr

    def test_doctor_names_the_server_without_credentials(self) -> None:
        """doctor's 'no local engine' line."""
        line = _engine_unused(config(f"https://edge:{SECRET}@gpu.plant/v1"))
        assert line == "no local engine: llm.backend = remote (https://***@gpu.plant/v1)"


class TestRemoteEngine:
    async def test_credentials_go_in_a_header_never_in_the_fingerprint_or_logs(self, server: int) -> None:
        """The server sees Basic auth; the fingerprint (what reports and audit entries record) and the log do not
        see the password."""
        engine = RemoteEngine(config(f"http://edge:{SECRET}@127.0.0.1:{server}/v1"))
        with capture_logs() as logs:
            await engine.start()
        assert FakeServer.seen and all(
            h == "Basic ZWRnZTpzM2NyM3QtcEBzcw==" for h in FakeServer.seen
        )  # edge:s3cr3t-p@ss
        assert engine.base_fingerprint["url"] == f"http://127.0.0.1:{server}/v1"
        recorded = json.dumps([engine.base_fingerprint, fingerprint_sha256(engine.base_fingerprint), logs])
        assert SECRET not in recorded and DECODED not in recorded and "edge:" not in recorded

    async def test_an_unreachable_server_is_named_without_credentials(self) -> None:
        """The start error (logged, shown on /readyz) names the server, not the password."""
        engine = RemoteEngine(config(f"http://edge:{SECRET}@127.0.0.1:9/v1"))
        with pytest.raises(EngineStartError) as err:
            await engine.start()
        text = str(err.value) + repr(err.value.__cause__)
        assert "http://127.0.0.1:9/v1" in text
        assert SECRET not in text and DECODED not in text
