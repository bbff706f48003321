"""The CLI's credentials, by OpenStack's conventions: `--os-username`/`--os-password`/
`--os-cacert` or `OS_USERNAME`/`OS_PASSWORD`/`OS_CACERT`, or a cloud of a `clouds.yaml`
(`--os-cloud`/`OS_CLOUD`, `auth_type: http_basic`), in that order of precedence.

A password on the command line is visible to every user of the machine (in `ps`); the
environment or a clouds.yaml readable only by its owner are the safe places, and the CLI
asks for the password on the terminal when a user is given without one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml  # type: ignore[import-untyped]

from ironsight.common.auth.credentials import Credentials

CLOUDS_FILES = ("clouds.yaml", "~/.config/openstack/clouds.yaml", "/etc/openstack/clouds.yaml")


@dataclass(frozen=True)
class Cloud:
    """What a clouds.yaml cloud gives: credentials and, maybe, the endpoints."""

    credentials: Credentials
    baremetal_url: str | None = None
    discoverd_url: str | None = None


def _clouds_file() -> Path | None:
    env = os.environ.get("OS_CLIENT_CONFIG_FILE")
    candidates = [env] if env else list(CLOUDS_FILES)
    for candidate in candidates:
        path = Path(candidate).expanduser()
        if path.is_file():
            return path
    return None


def load_cloud(name: str) -> Cloud:
    path = _clouds_file()
    if path is None:
        raise click.ClickException(f"cloud {name!r}: no clouds.yaml found (looked in "
                          f"{', '.join(CLOUDS_FILES)} and $OS_CLIENT_CONFIG_FILE)")
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise click.ClickException(f"cannot read {path}: {exc}") from None
    cloud = (doc.get("clouds") or {}).get(name) if isinstance(doc, dict) else None
    if not isinstance(cloud, dict):
        raise click.ClickException(f"cloud {name!r} is not in {path}")
    auth_type = cloud.get("auth_type", "http_basic")
    if auth_type not in ("http_basic", "none", "noauth"):
        raise click.ClickException(f"cloud {name!r} in {path}: auth_type {auth_type!r} is not "
                          "supported by the ironsight CLI (http_basic or none)")
    auth: dict[str, Any] = cloud.get("auth") or {}
    credentials = Credentials(
        str(auth.get("username") or "") if auth_type == "http_basic" else "",
        str(auth.get("password") or "") if auth_type == "http_basic" else "",
        cafile=str(cloud.get("cacert") or ""))
    return Cloud(credentials,
                 cloud.get("baremetal_endpoint_override") or auth.get("endpoint"),
                 cloud.get("baremetal_introspection_endpoint_override"))


def credentials(username: str | None, password: str | None, cacert: str | None,
                cloud: Cloud | None) -> Credentials:
    base = cloud.credentials if cloud is not None else Credentials()
    user = username or base.username
    secret = password if password is not None else (base.password if base.username == user
                                                     else "")
    if user and not secret:
        secret = click.prompt(f"Password of {user}", hide_input=True, err=True)
    return Credentials(user or "", secret or "", cafile=cacert or base.cafile)
