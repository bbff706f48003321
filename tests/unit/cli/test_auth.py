"""The CLI's credentials: options and OS_* variables, or a clouds.yaml cloud."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import yaml  # type: ignore[import-untyped]

from ironsight.cli.auth import Cloud, credentials, load_cloud
from ironsight.common.auth.credentials import Credentials


@pytest.fixture
def clouds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "clouds.yaml"
    path.write_text(yaml.safe_dump({"clouds": {
        "lab": {"auth_type": "http_basic",
                "auth": {"username": "alice", "password": "pw", "endpoint": "https://bm:6385"},
                "baremetal_introspection_endpoint_override": "https://di:5050",
                "cacert": "/etc/ca.pem"},
        "open": {"auth_type": "none", "baremetal_endpoint_override": "http://bm:6385"},
        "ks": {"auth_type": "password", "auth": {"auth_url": "http://ks/v3"}}}}))
    monkeypatch.setenv("OS_CLIENT_CONFIG_FILE", str(path))
    return path


def test_a_cloud_gives_credentials_and_endpoints(clouds: Path) -> None:
    cloud = load_cloud("lab")
    assert cloud == Cloud(Credentials("alice", "pw", cafile="/etc/ca.pem"), "https://bm:6385",
                          "https://di:5050")


def test_a_cloud_without_authentication_gives_no_user(clouds: Path) -> None:
    assert load_cloud("open") == Cloud(Credentials(), "http://bm:6385", None)


def test_an_unsupported_auth_type_is_refused_naming_it(clouds: Path) -> None:
    with pytest.raises(click.ClickException, match="'password' is not supported"):
        load_cloud("ks")


def test_an_unknown_cloud_is_refused_naming_it(clouds: Path) -> None:
    with pytest.raises(click.ClickException, match="cloud 'nope' is not in"):
        load_cloud("nope")


def test_options_win_over_the_cloud(clouds: Path) -> None:
    got = credentials("bob", "bobs", "/other/ca.pem", load_cloud("lab"))
    assert got == Credentials("bob", "bobs", cafile="/other/ca.pem")


def test_another_user_than_the_clouds_does_not_get_its_password(
        clouds: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(click, "prompt", lambda *a, **k: "typed")
    assert credentials("bob", None, None, load_cloud("lab")).password == "typed"


def test_no_user_means_no_credentials() -> None:
    assert credentials(None, None, None, None) == Credentials()
