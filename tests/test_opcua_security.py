"""OPC UA security: Basic256Sha256 sessions with a generated client certificate, pinning, user/password."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from edge_agent.connectors.opcua import OpcuaSecurityError, ServerCertificateMismatch
from edge_agent.connectors.opcua.security import (
    check_pin,
    ensure_certificate,
    load_identity,
    normalize_pin,
    sha256_thumbprint,
)
from tests.fixtures.opcua import OpcuaServer, running_source, source_config, wait_until

pytestmark = pytest.mark.opcua

VIB = "P-101.vibration_mm_s"
T0 = datetime(2020, 3, 2, 6, 0, tzinfo=UTC)


class TestEncryptedSession:
    async def test_sign_and_encrypt_session_with_generated_client_certificate(
        self, opcua_server_secure: OpcuaServer, tmp_path: Path
    ) -> None:
        """With no client cert configured, one is generated into pki/, its thumbprint logged, and values flow."""
        config = source_config(
            opcua_server_secure.endpoint, [VIB], security_policy="Basic256Sha256", security_mode="SignAndEncrypt"
        )
        with capture_logs() as logs:
            async with running_source(config, tmp_path / "agent") as agent:
                await opcua_server_secure.write({VIB: 6.5}, T0)
                await wait_until(lambda: any(r.value == 6.5 for r in agent.tag_values(VIB)), what="the value 6.5")
        cert = tmp_path / "agent" / "pki" / "opcua-plc.der"
        key = tmp_path / "agent" / "pki" / "opcua-plc.pem"
        logged = [e for e in logs if e["event"] == "opcua_client_certificate"]
        assert logged[0]["generated"] is True
        assert logged[0]["sha256"] == sha256_thumbprint(cert.read_bytes())
        assert stat.S_IMODE(key.stat().st_mode) == 0o600

    async def test_sign_only_session_with_the_right_pin(self, opcua_server_secure: OpcuaServer, tmp_path: Path) -> None:
        """A pin equal to the server certificate's SHA-256 lets a Sign session through."""
        der = opcua_server_secure.certificate_der
        assert der is not None
        config = source_config(
            opcua_server_secure.endpoint,
            [VIB],
            security_policy="Basic256Sha256",
            security_mode="Sign",
            server_cert_sha256=sha256_thumbprint(der).upper(),
        )
        async with running_source(config, tmp_path / "agent") as agent:
            await opcua_server_secure.write({VIB: 1.25}, T0)
            await wait_until(lambda: any(r.value == 1.25 for r in agent.tag_values(VIB)), what="the value 1.25")

    async def test_wrong_pin_is_refused_with_both_hashes(
        self, opcua_server_secure: OpcuaServer, tmp_path: Path
    ) -> None:
        """A server whose certificate does not hash to the pin is refused before any session, naming both hashes."""
        der = opcua_server_secure.certificate_der
        assert der is not None
        config = source_config(
            opcua_server_secure.endpoint,
            [VIB],
            security_policy="Basic256Sha256",
            security_mode="SignAndEncrypt",
            server_cert_sha256="ab" * 32,
        )
        with pytest.raises(ServerCertificateMismatch) as info:
            async with running_source(config, tmp_path / "agent"):
                pass
        assert info.value.expected == "ab" * 32
        assert info.value.actual == sha256_thumbprint(der)
        assert "refusing to open a session" in str(info.value)

    async def test_endpoint_without_the_configured_mode_is_a_clear_error(
        self, opcua_server: OpcuaServer, tmp_path: Path
    ) -> None:
        """Asking an unsecured-only server for SignAndEncrypt fails naming what the server offers."""
        config = source_config(
            opcua_server.endpoint, [VIB], security_policy="Basic256Sha256", security_mode="SignAndEncrypt"
        )
        with pytest.raises(OpcuaSecurityError, match=r"offers no Basic256Sha256/SignAndEncrypt endpoint.*None"):
            async with running_source(config, tmp_path / "agent"):
                pass


class TestUserPassword:
    async def test_right_password_gets_a_session(self, opcua_server_users: OpcuaServer, tmp_path: Path) -> None:
        """Username and password from the config authenticate the session."""
        config = source_config(opcua_server_users.endpoint, [VIB], username="edge", password="s3cret")
        async with running_source(config, tmp_path / "agent") as agent:
            await opcua_server_users.write({VIB: 2.0}, T0)
            await wait_until(lambda: any(r.value == 2.0 for r in agent.tag_values(VIB)), what="the value 2.0")

    async def test_wrong_password_is_a_security_error(self, opcua_server_users: OpcuaServer, tmp_path: Path) -> None:
        """A rejected identity is not retried forever: the source fails with OpcuaSecurityError."""
        config = source_config(opcua_server_users.endpoint, [VIB], username="edge", password="wrong")
        with pytest.raises(OpcuaSecurityError, match="refused our identity"):
            async with running_source(config, tmp_path / "agent"):
                pass


class TestCertificates:
    def test_generated_certificate_is_reused_on_the_next_start(self, tmp_path: Path) -> None:
        """A second start loads the certificate generated by the first instead of making a new one."""
        first = ensure_certificate(tmp_path, "c", "urn:test:edge-agent:c")
        second = ensure_certificate(tmp_path, "c", "urn:test:edge-agent:c")
        assert first.generated and not second.generated
        assert second.thumbprint_sha256 == first.thumbprint_sha256
        assert second.application_uri == "urn:test:edge-agent:c"

    def test_configured_certificate_without_application_uri_is_refused(self, tmp_path: Path) -> None:
        """A certificate lacking a URI SubjectAltName cannot match asyncua's application URI check."""
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import NameOID

        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bare")])
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(1)
            .not_valid_before(T0)
            .not_valid_after(datetime(2040, 1, 1, tzinfo=UTC))
            .sign(key, hashes.SHA256())
        )
        (tmp_path / "bare.der").write_bytes(cert.public_bytes(serialization.Encoding.DER))
        (tmp_path / "bare.pem").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        with pytest.raises(OpcuaSecurityError, match="no application URI"):
            load_identity(tmp_path / "bare.der", tmp_path / "bare.pem")

    @pytest.mark.parametrize("pin", ["AB:" * 31 + "AB", "ab " * 31 + "ab", "AB" * 32])
    def test_pin_spellings_normalize(self, pin: str) -> None:
        """Colon-, space-separated and upper-case pins all mean the same 64 hex digits."""
        assert normalize_pin(pin) == "ab" * 32

    def test_malformed_pin_is_refused(self) -> None:
        """A pin that is not 64 hex digits is a configuration error, not a mismatch."""
        with pytest.raises(OpcuaSecurityError, match="64 hex digits"):
            check_pin("opc.tcp://x:4840", b"cert", "abc")
