"""The configured strategy, and serve's refusal of noauth beyond loopback."""

from __future__ import annotations

import pytest

from ironsight.common import config
from ironsight.common.auth.identity import Role
from ironsight.common.auth.strategy import check_listeners, is_loopback, parse_roles
from ironsight.common.exceptions import ConfigError


def conf(**default: str) -> config.Config:
    return config.load(overrides={"DEFAULT": default})


def test_roles_are_parsed() -> None:
    assert parse_roles(["a:admin", "b:Reader"]) == {"a": Role.ADMIN, "b": Role.READER}


def test_an_unknown_role_is_refused_naming_the_entry() -> None:
    with pytest.raises(ConfigError, match="'a:root'"):
        parse_roles(["a:root"])


@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.0.1", "::1", "localhost"])
def test_loopback_addresses(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.1", "example.org"])
def test_other_addresses(host: str) -> None:
    assert not is_loopback(host)


def test_noauth_on_loopback_is_allowed() -> None:
    check_listeners(conf(), [("API", "127.0.0.1")])


def test_noauth_on_a_network_address_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"API would listen on 0\.0\.0\.0 without authentication"):
        check_listeners(conf(), [("API", "0.0.0.0")])


def test_noauth_on_a_network_address_is_allowed_when_asked_for() -> None:
    check_listeners(conf(allow_remote_noauth="true"), [("API", "0.0.0.0")])


def test_http_basic_on_a_network_address_is_allowed() -> None:
    check_listeners(conf(auth_strategy="http_basic"), [("API", "0.0.0.0")])
