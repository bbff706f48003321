"""Fernet key files: created private, read with errors that name the line and never the
key, read again when a rotation changes them."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet, InvalidToken

from ironsight.common.exceptions import ConfigError
from ironsight.common.keyfile import KeyFile, create_key_file, new_key, read_keys, write_keys


def test_a_created_key_file_is_0600_and_holds_one_key(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    create_key_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(read_keys(path)) == 1


def test_creating_a_key_file_never_replaces_one(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    create_key_file(path)
    before = path.read_bytes()
    with pytest.raises(ConfigError, match="exists already"):
        create_key_file(path)
    assert path.read_bytes() == before


def test_a_missing_key_file_is_named_with_how_to_create_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"does not exist.*create-key"):
        read_keys(tmp_path / "nope")


def test_a_bad_line_is_named_by_number_without_its_content(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text(new_key().decode() + "\nnot-a-key-but-maybe-a-password\n")
    with pytest.raises(ConfigError) as err:
        read_keys(path)
    assert "line 2 is not a Fernet key" in str(err.value)
    assert "maybe-a-password" not in str(err.value)


def test_an_empty_key_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text("# no key yet\n\n")
    with pytest.raises(ConfigError, match="holds no key"):
        read_keys(path)


def test_the_newest_key_encrypts_and_every_key_decrypts(tmp_path: Path) -> None:
    old, new = new_key(), new_key()
    path = tmp_path / "keys"
    write_keys(path, [new, old])
    keys = KeyFile(path)
    assert Fernet(new).decrypt(keys.encrypt(b"x")) == b"x"
    assert keys.decrypt(Fernet(old).encrypt(b"y")) == b"y"


def test_a_rotated_file_is_read_again_by_a_running_reader(tmp_path: Path) -> None:
    old, new = new_key(), new_key()
    path = tmp_path / "keys"
    write_keys(path, [old])
    keys = KeyFile(path)
    write_keys(path, [new])
    assert keys.decrypt(Fernet(new).encrypt(b"z")) == b"z"
    assert Fernet(new).decrypt(keys.encrypt(b"w")) == b"w"
    with pytest.raises(InvalidToken):  # a key removed from the file opens nothing more
        keys.decrypt(Fernet(old).encrypt(b"u"))


def test_a_token_of_no_listed_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    write_keys(path, [new_key()])
    with pytest.raises(InvalidToken):
        KeyFile(path).decrypt(Fernet(new_key()).encrypt(b"secret"))


def test_a_key_file_that_vanishes_leaves_the_keys_in_use(tmp_path: Path) -> None:
    key = new_key()
    path = tmp_path / "keys"
    write_keys(path, [key])
    keys = KeyFile(path)
    path.unlink()
    assert Fernet(key).decrypt(keys.encrypt(b"v")) == b"v"
