"""What the security tests set up: an htpasswd file of bcrypt users with their roles, and a CA
of the test's own with a server certificate for 127.0.0.1 and localhost."""

from __future__ import annotations

from pathlib import Path

import bcrypt

from ironsight.lab.pki import Pki, make_pki

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


# The CA and certificate maker is the lab's (its Redfish BMCs speak TLS too).
__all__ = ["Pki", "make_pki"]


def tls_sections(pki: Pki) -> Sections:
    """Both APIs on HTTPS, and each service checking the other against the test's CA."""
    return {"api": {"cert_file": str(pki.cert_file), "key_file": str(pki.key_file)},
            "introspection": {"cert_file": str(pki.cert_file), "key_file": str(pki.key_file),
                              "ironic_cafile": str(pki.ca_file)},
            "discoverd": {"cafile": str(pki.ca_file)}}
