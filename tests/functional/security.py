"""What the security tests set up: an htpasswd file of bcrypt users with their roles, and a CA
of the test's own with a server certificate for 127.0.0.1 and localhost."""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

import bcrypt
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

# user -> (password, role); bcrypt at its lowest cost keeps the tests fast
USERS = {
    "admin": ("admin-pass-4d1c", "admin"),
    "ops": ("ops-pass-9a7e", "member"),
    "viewer": ("viewer-pass-37b2", "reader"),
    "bm-svc": ("bm-svc-pass-c55e", "member"),  # the conductor, to discoverd
    "di-svc": ("di-svc-pass-0f3a", "member"),  # discoverd, to the bare-metal API
}


def write_htpasswd(path: Path, users: dict[str, tuple[str, str]] = USERS) -> Path:
    lines = [f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(4)).decode()}"
             for user, (password, _) in users.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


Sections = dict[str, dict[str, str]]


def auth_sections(htpasswd: Path, users: dict[str, tuple[str, str]] = USERS) -> Sections:
    """http_basic with every user's role, and both services' credentials for each other."""
    roles = ",".join(f"{user}:{role}" for user, (_, role) in users.items())
    return {"DEFAULT": {"auth_strategy": "http_basic", "http_basic_auth_user_file": str(htpasswd),
                        "http_basic_roles": roles, "http_basic_default_role": "none"},
            "discoverd": {"username": "bm-svc", "password": users["bm-svc"][0]},
            "introspection": {"ironic_username": "di-svc",
                              "ironic_password": users["di-svc"][0]}}


def as_ini(*parts: Sections) -> str:
    """Sections merged (later values win) as an INI file's text."""
    merged: Sections = {}
    for part in parts:
        for section, values in part.items():
            merged.setdefault(section, {}).update(values)
    return "".join(f"[{section}]\n" + "".join(f"{k} = {v}\n" for k, v in values.items())
                   for section, values in merged.items())


def basic(user: str) -> tuple[str, str]:
    """httpx's `auth` for a user of USERS."""
    return user, USERS[user][0]


@dataclass(frozen=True)
class Pki:
    ca_file: Path
    cert_file: Path
    key_file: Path


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_pki(where: Path) -> Pki:
    """A CA and a certificate it signed for 127.0.0.1, ::1 and localhost (valid one day)."""
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("ironsight test CA"))
          .issuer_name(_name("ironsight test CA")).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False,
                                       False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
             x509.IPAddress(ipaddress.ip_address("::1"))]
    cert = (x509.CertificateBuilder().subject_name(_name("localhost"))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    pki = Pki(where / "ca.pem", where / "server.pem", where / "server.key")
    pki.ca_file.write_bytes(ca.public_bytes(pem))
    pki.cert_file.write_bytes(cert.public_bytes(pem))
    pki.key_file.write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
    pki.key_file.chmod(0o600)
    return pki


def tls_sections(pki: Pki) -> Sections:
    """Both APIs on HTTPS, and each service checking the other against the test's CA."""
    return {"api": {"cert_file": str(pki.cert_file), "key_file": str(pki.key_file)},
            "introspection": {"cert_file": str(pki.cert_file), "key_file": str(pki.key_file),
                              "ironic_cafile": str(pki.ca_file)},
            "discoverd": {"cafile": str(pki.ca_file)}}
