"""`make demo`'s console: the self-signed certificate it makes, configs/demo.toml's `[console]`, and the enrol link it
prints (`edge-agent console enrol` itself). The demo's whole run (engine, simulator, report) is `make demo`."""

from __future__ import annotations

import ipaddress
import re
import ssl
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec

from edge_agent.config import load_config
from edge_agent.console.auth.credentials import CredentialStore
from edge_agent.demo import CONSOLE_CERT_DAYS, console_certificate, enrol_link

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "configs" / "demo.toml"


class TestConsoleCertificate:
    def test_it_names_localhost_and_127_0_0_1_and_only_the_owner_reads_the_key(self, tmp_path: Path) -> None:
        cert_file, key_file = tmp_path / "demo" / "console.crt", tmp_path / "demo" / "console.key"
        assert console_certificate(cert_file, key_file) is True
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert san.get_values_for_type(x509.DNSName) == ["localhost"]
        assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
        assert cert.issuer == cert.subject
        assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
        assert (cert.not_valid_after_utc - datetime.now(UTC)).days == CONSOLE_CERT_DAYS - 1
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        # The pair loads as a TLS server's, as uvicorn loads it.
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert_file, key_file)

    def test_a_second_demo_keeps_the_pair_a_browser_may_trust(self, tmp_path: Path) -> None:
        cert_file, key_file = tmp_path / "console.crt", tmp_path / "console.key"
        console_certificate(cert_file, key_file)
        before = cert_file.read_bytes(), key_file.read_bytes()
        assert console_certificate(cert_file, key_file) is False
        assert (cert_file.read_bytes(), key_file.read_bytes()) == before

    def test_a_lone_certificate_is_made_again_with_its_key(self, tmp_path: Path) -> None:
        cert_file, key_file = tmp_path / "console.crt", tmp_path / "console.key"
        console_certificate(cert_file, key_file)
        old = cert_file.read_bytes()
        key_file.unlink()
        assert console_certificate(cert_file, key_file) is True
        assert cert_file.read_bytes() != old
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert_file, key_file)


class TestDemoConsole:
    def test_the_demo_config_serves_the_console_to_its_approver(self) -> None:
        """On, over the pair the demo makes in its state directory (relative, like its model: they exist where
        `make demo` runs), for the supervisor, who is the demo's one approver."""
        config = load_config(DEMO)
        console = config.console
        assert console.enabled
        assert (console.tls_cert_file, console.tls_key_file) == (
            config.paths.state_dir / "console.crt",
            config.paths.state_dir / "console.key",
        )
        assert console.tls_cert_file is not None and not console.tls_cert_file.is_absolute()
        assert console.roles == {"supervisor": ["approver"]}
        assert config.reports.approvers == ["supervisor"]
        assert console.effective_origin == "https://localhost:18443"

    def test_the_enrol_link_is_one_console_enrol_issued(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("EDGE_AGENT__PATHS__STATE_DIR", str(tmp_path))
        console = load_config(DEMO).console
        link = enrol_link(DEMO, console)
        match = re.fullmatch(r"https://localhost:18443/enrol/([A-Za-z0-9_-]{43})", link)
        assert match, link
        with CredentialStore.for_state_dir(tmp_path) as store:
            enrolment = store.enrolment(match[1], datetime.now(UTC))
        assert enrolment is not None
        assert (enrolment.identity, enrolment.role) == ("supervisor", "approver")
