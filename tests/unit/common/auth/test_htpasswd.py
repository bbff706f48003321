"""The htpasswd user file: bcrypt entries only, checks remembered until the file changes."""

from __future__ import annotations

import os
from pathlib import Path

import bcrypt
import pytest

from ironsight.common.auth import htpasswd
from ironsight.common.auth.htpasswd import UserFile
from ironsight.common.exceptions import ConfigError


def entry(user: str, password: str) -> str:
    return f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(4)).decode()}\n"


@pytest.fixture
def users(tmp_path: Path) -> Path:
    path = tmp_path / "htpasswd"
    path.write_text("# operators\n" + entry("alice", "s3cret") + entry("bob", "hunter2"))
    return path


def test_a_right_password_passes(users: Path) -> None:
    assert UserFile(users).check("alice", "s3cret")


def test_a_wrong_password_fails(users: Path) -> None:
    assert not UserFile(users).check("alice", "hunter2")


def test_an_unknown_user_fails(users: Path) -> None:
    assert not UserFile(users).check("mallory", "s3cret")


def test_a_password_past_bcrypts_72_bytes_fails_without_error(users: Path) -> None:
    assert not UserFile(users).check("alice", "x" * 100)


def test_a_passed_check_is_remembered(users: Path) -> None:
    file = UserFile(users)
    assert not file.remembered("alice", "s3cret")
    file.check("alice", "s3cret")
    assert file.remembered("alice", "s3cret")


def test_a_failed_check_is_not_remembered(users: Path) -> None:
    file = UserFile(users)
    file.check("alice", "wrong")
    assert not file.remembered("alice", "wrong")


def test_a_changed_file_forgets_what_was_remembered(users: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(htpasswd, "STAT_EVERY", 0.0)
    file = UserFile(users)
    file.check("alice", "s3cret")
    users.write_text(entry("alice", "rotated"))
    os.utime(users, ns=(1, 1))
    assert not file.remembered("alice", "s3cret")
    assert not file.check("alice", "s3cret")
    assert file.check("alice", "rotated")


def test_a_removed_file_lets_nobody_in(users: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(htpasswd, "STAT_EVERY", 0.0)
    file = UserFile(users)
    file.check("alice", "s3cret")
    users.unlink()
    assert not file.check("alice", "s3cret")


def test_a_non_bcrypt_entry_is_refused_naming_the_user(tmp_path: Path) -> None:
    path = tmp_path / "htpasswd"
    path.write_text("carol:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n")
    with pytest.raises(ConfigError, match="'carol' is not bcrypt"):
        UserFile(path)


def test_a_line_without_a_colon_is_refused_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "htpasswd"
    path.write_text(entry("alice", "x") + "garbage\n")
    with pytest.raises(ConfigError, match="line 2"):
        UserFile(path)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read http_basic_auth_user_file"):
        UserFile(tmp_path / "none")
