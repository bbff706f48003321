"""How a token Keystone vouches for becomes a caller: the role, the project rule, and the
remembering of valid tokens. Keystone's answers are parsed by keystoneauth1 as it parses a real
one (the functional tests run against a real Keystone)."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import pytest
from keystoneauth1 import access

from ironsight.common import config
from ironsight.common.auth.identity import Identity, Role
from ironsight.common.auth.keystone import Keystone
from ironsight.common.auth.middleware import Forbidden, Unavailable
from ironsight.common.auth.strategy import authenticator
from ironsight.common.exceptions import ConfigError

SERVICE = {"auth_url": "http://keystone.invalid:5000/v3", "username": "svc", "password": "pw"}


def keystone(**options: str) -> Keystone:
    conf = config.load(overrides={"DEFAULT": {"auth_strategy": "keystone"},
                                  "keystone_authtoken": {**SERVICE, **options}})
    found = authenticator(conf)
    assert isinstance(found, Keystone)
    return found


def token(roles: list[str], project: str | None = "admin", system: bool = False,
          expires_in: float = 3600) -> access.AccessInfo:
    expires = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=expires_in)
    body: dict[str, Any] = {"token": {
        "user": {"id": "u1", "name": "alice", "domain": {"id": "default", "name": "Default"}},
        "roles": [{"id": name, "name": name} for name in roles],
        "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%S.000000Z"),
        "methods": ["password"]}}
    if project is not None:
        body["token"]["project"] = {"id": f"id-{project}", "name": project,
                                    "domain": {"id": "default", "name": "Default"}}
    if system:
        body["token"]["system"] = {"all": True}
    return access.create(body=body, auth_token="tok")


def test_the_highest_of_keystones_default_roles_is_the_callers_role() -> None:
    found = keystone()._identity(token(["reader", "member", "manager", "admin"]))
    assert found == Identity("alice", Role.ADMIN)


def test_a_reader_token_is_a_reader() -> None:
    assert keystone()._identity(token(["reader"])).role is Role.READER


def test_a_token_with_none_of_our_roles_is_forbidden() -> None:
    with pytest.raises(Forbidden, match="none of the roles admin, member, reader"):
        keystone()._identity(token(["service"]))


def test_a_token_of_another_project_acts_for_that_project() -> None:
    found = keystone()._identity(token(["admin"], project="tenant-x"))
    assert (found.role, found.project) == (Role.ADMIN, "id-tenant-x")


def test_a_token_of_an_operators_project_acts_on_the_whole_fleet() -> None:
    found = keystone()._identity(token(["member"], project="admin"))
    assert (found.role, found.project) == (Role.MEMBER, None)


def test_an_operators_project_may_be_named_by_id() -> None:
    found = keystone(allowed_projects="id-tenant-x")._identity(token(["member"], "tenant-x"))
    assert (found.role, found.project) == (Role.MEMBER, None)


def test_a_system_scoped_token_counts_whatever_the_allowed_projects() -> None:
    found = keystone()._identity(token(["reader"], project=None, system=True))
    assert (found.role, found.project) == (Role.READER, None)


def test_without_allowed_projects_every_project_token_is_project_scoped() -> None:
    found = keystone(allowed_projects="")._identity(token(["admin"], "admin"))
    assert found.project == "id-admin"


def test_a_token_scoped_to_no_project_nor_the_system_is_forbidden() -> None:
    with pytest.raises(Forbidden, match="scoped to no project"):
        keystone()._identity(token(["admin"], project=None))


async def test_a_remembered_token_is_not_asked_about_again() -> None:
    checker = keystone()  # its Keystone's name does not resolve: a question would get 503
    found = token(["member"])
    checker._remember(hashlib.sha256(b"tok").digest(), checker._identity(found), found.expires)
    assert await checker.identify({"x-auth-token": "tok"}) == Identity("alice", Role.MEMBER)


async def test_an_unknown_token_is_asked_about_and_keystone_unreachable_is_unavailable(
        ) -> None:
    with pytest.raises(Unavailable, match="cannot reach Keystone"):
        await keystone(http_connect_timeout="2").identify({"x-auth-token": "other"})


def test_a_token_is_remembered_no_longer_than_it_lives() -> None:
    checker = keystone(token_cache_time="300")
    found = token(["member"], expires_in=-1)
    checker._remember(b"key", checker._identity(found), found.expires)
    assert b"key" not in checker._known


def test_a_token_cache_time_of_zero_remembers_nothing() -> None:
    checker = keystone(token_cache_time="0")
    found = token(["member"])
    checker._remember(b"key", checker._identity(found), found.expires)
    assert b"key" not in checker._known


async def test_no_token_or_an_oversized_one_is_unauthenticated_without_asking() -> None:
    checker = keystone()
    assert await checker.identify({}) is None
    assert await checker.identify({"x-auth-token": "t" * 20000}) is None


@pytest.mark.parametrize("missing", ["auth_url", "username", "password"])
def test_keystone_without_its_service_user_is_a_config_error(missing: str) -> None:
    options = {k: v for k, v in SERVICE.items() if k != missing}
    conf = config.load(overrides={"DEFAULT": {"auth_strategy": "keystone"},
                                  "keystone_authtoken": options})
    with pytest.raises(ConfigError, match=f"keystone_authtoken\\] {missing}"):
        authenticator(conf)


def test_the_challenge_names_keystones_public_uri() -> None:
    checker = keystone(www_authenticate_uri="https://id.example.org:5000")
    assert checker.challenge == 'Keystone uri="https://id.example.org:5000"'
