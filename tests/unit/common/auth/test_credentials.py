"""What our clients send."""

from __future__ import annotations

import base64

from ironsight.common.auth.credentials import Credentials


def test_a_user_gives_a_basic_authorization_header() -> None:
    header = Credentials("alice", "pw").headers()["Authorization"]
    assert base64.b64decode(header.removeprefix("Basic ")) == b"alice:pw"


def test_a_token_gives_x_auth_token() -> None:
    assert Credentials(token="t0k").headers() == {"X-Auth-Token": "t0k"}


def test_no_credentials_give_no_headers() -> None:
    assert Credentials().headers() == {}


def test_the_password_is_not_in_the_repr() -> None:
    assert "pw-secret" not in repr(Credentials("alice", "pw-secret", "tok-secret"))
