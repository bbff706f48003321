"""The `auth_strategy` of the configuration, made into an `Authenticator`."""

from __future__ import annotations

import ipaddress

from ironsight.common.auth.htpasswd import UserFile
from ironsight.common.auth.identity import ROLE_NAMES, Role
from ironsight.common.auth.middleware import Authenticator, HttpBasic, NoAuth
from ironsight.common.config import Config
from ironsight.common.exceptions import ConfigError


def parse_roles(entries: list[str]) -> dict[str, Role]:
    """`user:role` entries of `[DEFAULT] http_basic_roles`."""
    roles: dict[str, Role] = {}
    for entry in entries:
        user, sep, role = entry.rpartition(":")
        if not sep or not user or role.lower() not in ROLE_NAMES:
            raise ConfigError(f"[DEFAULT] http_basic_roles: {entry!r} is not USER:ROLE with "
                              f"ROLE one of {', '.join(ROLE_NAMES)}")
        roles[user] = Role.named(role)
    return roles


def parse_projects(entries: list[str]) -> dict[str, str]:
    """`user:project` entries of `[DEFAULT] http_basic_projects`."""
    projects: dict[str, str] = {}
    for entry in entries:
        user, sep, project = entry.rpartition(":")
        if not sep or not user or not project:
            raise ConfigError(f"[DEFAULT] http_basic_projects: {entry!r} is not USER:PROJECT")
        projects[user] = project
    return projects


def authenticator(conf: Config) -> Authenticator:
    section = conf.DEFAULT
    if section.auth_strategy == "noauth":
        return NoAuth()
    if section.auth_strategy == "keystone":
        from ironsight.common.auth.keystone import Keystone  # keystoneauth1: only when used

        return Keystone(conf)
    default = section.http_basic_default_role
    return HttpBasic(UserFile(section.http_basic_auth_user_file),
                     parse_roles(section.http_basic_roles),
                     None if default == "none" else Role.named(default),
                     parse_projects(section.http_basic_projects))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listeners(conf: Config, listeners: list[tuple[str, str]]) -> None:
    """Refuse to serve an API without authentication beyond this machine: with `noauth`,
    anyone who reaches the port may delete nodes and reboot them."""
    if conf.DEFAULT.auth_strategy != "noauth" or conf.DEFAULT.allow_remote_noauth:
        return
    for name, host in listeners:
        if not is_loopback(host):
            raise ConfigError(
                f"{name} would listen on {host} without authentication (auth_strategy = "
                "noauth): anyone reaching it could delete and reboot nodes. Set [DEFAULT] "
                "auth_strategy = http_basic or keystone, or listen on 127.0.0.1, or (on a "
                "network only trusted hosts reach) set [DEFAULT] allow_remote_noauth = true.")
