"""Reading HTTP Basic credentials, and the http_basic authenticator's answers."""

from __future__ import annotations

import base64
from pathlib import Path

import bcrypt
import pytest

from ironsight.common.auth.htpasswd import UserFile
from ironsight.common.auth.identity import Identity, Role
from ironsight.common.auth.middleware import HttpBasic, basic_credentials


def header(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def headers(user: str, password: str) -> dict[str, str]:
    return {"authorization": header(user, password)}


def test_basic_credentials_are_read() -> None:
    assert basic_credentials(header("alice", "pa:ss")) == ("alice", "pa:ss")


@pytest.mark.parametrize("value", [None, "", "Bearer abc", "Basic !!!", "Basic " + "A" * 5000,
                                   "Basic " + base64.b64encode(b"nocolon").decode(),
                                   "Basic " + base64.b64encode(b"\xff\xfe:x").decode()])
def test_anything_else_is_no_credentials(value: str | None) -> None:
    assert basic_credentials(value) is None


@pytest.fixture
def authenticator(tmp_path: Path) -> HttpBasic:
    path = tmp_path / "htpasswd"
    hashed = bcrypt.hashpw(b"pw", bcrypt.gensalt(4)).decode()
    path.write_text(f"alice:{hashed}\nbob:{hashed}\n")
    return HttpBasic(UserFile(path), {"alice": Role.ADMIN}, Role.READER)


async def test_a_configured_user_gets_their_role(authenticator: HttpBasic) -> None:
    assert await authenticator.identify(headers("alice", "pw")) == Identity("alice", Role.ADMIN)


async def test_an_unlisted_user_gets_the_default_role(authenticator: HttpBasic) -> None:
    assert await authenticator.identify(headers("bob", "pw")) == Identity("bob", Role.READER)


async def test_without_a_default_role_an_unlisted_user_is_refused(
        authenticator: HttpBasic) -> None:
    strict = HttpBasic(authenticator.users, authenticator.roles, None)
    assert await strict.identify(headers("bob", "pw")) is None


async def test_a_wrong_password_is_refused(authenticator: HttpBasic) -> None:
    assert await authenticator.identify(headers("alice", "nope")) is None
