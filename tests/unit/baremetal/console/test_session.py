"""Console session cookies: signed, expiring, and never carrying a secret."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest

from ironsight.baremetal.console.session import Sessions, check_csrf, load_key
from ironsight.common.auth.identity import Identity, Role
from ironsight.common.exceptions import ConfigError

KEY = b"k" * 32


def test_a_cookie_reads_back_as_the_session_it_was_made_from() -> None:
    sessions = Sessions(KEY, 3600)
    made = sessions.new(Identity("alice", Role.MEMBER, "p1"))
    read = sessions.decode(sessions.encode(made))
    assert read == made
    assert read is not None and read.identity == Identity("alice", Role.MEMBER, "p1")


def test_a_cookie_with_a_changed_role_is_refused() -> None:
    sessions = Sessions(KEY, 3600)
    cookie = sessions.encode(sessions.new(Identity("bob", Role.READER)))
    body, _, signature = cookie.partition(".")
    forged = base64.urlsafe_b64encode(
        base64.urlsafe_b64decode(body + "==").replace(b'"reader"', b'"admin"')).rstrip(b"=")
    assert sessions.decode(forged.decode() + "." + signature) is None


def test_a_cookie_signed_with_another_key_is_refused() -> None:
    cookie = Sessions(b"x" * 32, 3600).encode(Sessions(b"x" * 32, 3600).new(
        Identity("a", Role.ADMIN)))
    assert Sessions(KEY, 3600).decode(cookie) is None


def test_an_expired_session_is_refused() -> None:
    sessions = Sessions(KEY, 60)
    cookie = sessions.encode(sessions.new(Identity("a", Role.ADMIN), now=1000.0))
    assert sessions.decode(cookie, now=1059.0) is not None
    assert sessions.decode(cookie, now=1061.0) is None


@pytest.mark.parametrize("cookie", ["", "garbage", "a.b", "." * 5000, "éé.éé"])
def test_a_damaged_cookie_is_no_session(cookie: str) -> None:
    assert Sessions(KEY, 60).decode(cookie) is None


def test_the_csrf_token_must_match_exactly() -> None:
    session = Sessions(KEY, 60).new(Identity("a", Role.ADMIN))
    assert check_csrf(session, session.csrf)
    assert not check_csrf(session, session.csrf[:-1])
    assert not check_csrf(session, None)
    assert not check_csrf(session, "")


def test_a_reader_is_shown_no_buttons() -> None:
    sessions = Sessions(KEY, 60)
    assert not sessions.new(Identity("r", Role.READER)).can_act
    assert sessions.new(Identity("m", Role.MEMBER)).can_act


def test_the_key_file_is_made_private_once_and_then_reused(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "console.key"
    first = load_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_key(path) == first and len(first) == 32


def test_a_key_file_without_a_key_is_a_config_error_naming_the_option(tmp_path: Path) -> None:
    path = tmp_path / "bad.key"
    path.write_text("not base64 !!\n")
    with pytest.raises(ConfigError, match=r"\[console\] session_key_file"):
        load_key(path)
