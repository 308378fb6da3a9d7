"""OPC UA application certificates and server pinning, plus the connector's exception root.

A client certificate is generated on first start when none is configured (2048-bit RSA, self-signed, one year, the
application URI as a URI SubjectAltName, as OPC 10000-6 §6.2.2 and asyncua's `check_certificate` expect), with the
key written 0600. The server certificate is pinned by the SHA-256 of its DER encoding, compared before any session
is opened: a mismatch never reaches ActivateSession, so no password is sent to an impostor.
"""

from __future__ import annotations

import hashlib
import hmac
import socket
from dataclasses import dataclass
from pathlib import Path

from asyncua import ua
from asyncua.crypto import cert_gen, security_policies
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID

from edge_agent.signing import write_durably

# One year, asyncua's own default: long enough not to surprise a plant, short enough to be rotated.
CERT_VALID_DAYS = 365


class OpcuaError(Exception):
    """Root of every error the OPC UA connector raises."""


class OpcuaSecurityError(OpcuaError):
    """A security set-up that cannot work: bad certificate files, unsupported policy, pin mismatch."""


class ServerCertificateMismatch(OpcuaSecurityError):
    def __init__(self, endpoint: str, expected: str, actual: str) -> None:
        self.endpoint = endpoint
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"server certificate of {endpoint} has SHA-256 {actual}, but server_cert_sha256 pins {expected}:"
            " refusing to open a session"
        )


@dataclass(frozen=True)
class Identity:
    """An application instance certificate (DER file) and its private key (PEM file)."""

    cert_path: Path
    key_path: Path
    application_uri: str
    thumbprint_sha256: str
    generated: bool = False


def sha256_thumbprint(der: bytes) -> str:
    """Lower-case hex SHA-256 of a certificate's DER bytes: what `server_cert_sha256` pins."""
    return hashlib.sha256(der).hexdigest()


def normalize_pin(pin: str) -> str:
    """Accept `AB:CD:…`, `ab cd …` or plain hex; the result is 64 lower-case hex digits."""
    cleaned = pin.replace(":", "").replace(" ", "").lower()
    if len(cleaned) != 64 or any(c not in "0123456789abcdef" for c in cleaned):
        raise OpcuaSecurityError(f"server_cert_sha256 must be 64 hex digits (SHA-256), got {pin!r}")
    return cleaned


def check_pin(endpoint: str, server_cert_der: bytes | None, pin: str) -> None:
    """Raise ServerCertificateMismatch unless the server's certificate hashes to the pinned value."""
    expected = normalize_pin(pin)
    actual = sha256_thumbprint(server_cert_der) if server_cert_der else "<no certificate>"
    if not hmac.compare_digest(expected, actual):
        raise ServerCertificateMismatch(endpoint, expected, actual)


def first_certificate(der: bytes) -> bytes:
    """A server may send its certificate followed by its chain; the leaf is the first DER SEQUENCE."""
    if len(der) < 4 or der[0] != 0x30 or der[1] != 0x82:
        return der
    return der[: int.from_bytes(der[2:4], "big") + 4]


def default_application_uri(name: str, hostname: str | None = None) -> str:
    return f"urn:{hostname or socket.gethostname()}:edge-agent:{name}"


def ensure_certificate(
    pki_dir: Path, name: str, application_uri: str, *, server: bool = False, hostname: str | None = None
) -> Identity:
    """Load `<pki_dir>/<name>.der` + `.pem`, generating both on first use."""
    cert_path, key_path = pki_dir / f"{name}.der", pki_dir / f"{name}.pem"
    if cert_path.is_file() and key_path.is_file():
        return load_identity(cert_path, key_path)
    pki_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    hostname = hostname or socket.gethostname()
    key = cert_gen.generate_private_key()
    usage = [ExtendedKeyUsageOID.SERVER_AUTH] if server else [ExtendedKeyUsageOID.CLIENT_AUTH]
    cert = cert_gen.generate_self_signed_app_certificate(
        key,
        application_uri,
        {"organizationName": "edge-agent"},
        [x509.UniformResourceIdentifier(application_uri), x509.DNSName(hostname), x509.DNSName("localhost")],
        extended=usage,
        days=CERT_VALID_DAYS,
    )
    _write_private(key_path, cert_gen.dump_private_key_as_pem(key))
    der = cert.public_bytes(Encoding.DER)
    _write_private(cert_path, der, mode=0o644)
    return Identity(cert_path, key_path, application_uri, sha256_thumbprint(der), generated=True)


def load_identity(cert_path: Path, key_path: Path) -> Identity:
    """A configured certificate; its application URI is read from its SubjectAltName (asyncua checks they match)."""
    try:
        raw = cert_path.read_bytes()
        cert = x509.load_pem_x509_certificate(raw) if raw.startswith(b"-----") else x509.load_der_x509_certificate(raw)
        if not key_path.is_file():
            raise FileNotFoundError(key_path)
    except (OSError, ValueError) as exc:
        raise OpcuaSecurityError(f"cannot load OPC UA certificate {cert_path} / key {key_path}: {exc}") from exc
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
        uris = san.value.get_values_for_type(x509.UniformResourceIdentifier)
    except x509.ExtensionNotFound:
        uris = []
    if not uris:
        raise OpcuaSecurityError(f"certificate {cert_path} has no application URI (URI SubjectAltName)")
    return Identity(cert_path, key_path, uris[0], sha256_thumbprint(cert.public_bytes(Encoding.DER)))


def security_policy(name: str) -> type[security_policies.SecurityPolicy]:
    try:
        return getattr(security_policies, f"SecurityPolicy{name}")
    except AttributeError as exc:
        raise OpcuaSecurityError(f"unsupported OPC UA security policy {name!r}") from exc


def message_security_mode(mode: str) -> ua.MessageSecurityMode:
    try:
        return getattr(ua.MessageSecurityMode, mode if mode != "None" else "None_")
    except AttributeError as exc:
        raise OpcuaSecurityError(f"unsupported OPC UA security mode {mode!r}") from exc


def _write_private(path: Path, data: bytes, mode: int = 0o600) -> None:
    # Created with the final mode, then renamed: the key is never readable by others, even for an instant.
    write_durably(path, data, mode=mode)
