"""Secret driver_info fields: encrypted as stored, decrypted only for drivers, and a value
that cannot be decrypted named by node and field, never shown."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from ironsight.baremetal.secrets import DriverSecrets, SecretUnreadable, is_sealed
from ironsight.common.keyfile import KeyFile, new_key, write_keys

INFO = {"ipmi_address": "10.0.0.5", "ipmi_username": "admin", "ipmi_password": "s3cret-pw",
        "ssh_key_contents": "-----BEGIN KEY-----"}


@pytest.fixture
def key_path(tmp_path: Path) -> Path:
    path = tmp_path / "keys"
    write_keys(path, [new_key()])
    return path


@pytest.fixture
def box(key_path: Path) -> DriverSecrets:
    return DriverSecrets(KeyFile(key_path), {"ipmi_password"})


def node(info: dict[str, object]) -> dict[str, object]:
    return {"uuid": "n-1", "driver": "fake", "driver_info": info, "power_state": None}


def test_without_a_key_file_values_are_stored_as_given() -> None:
    assert DriverSecrets(None).seal(INFO) == INFO


def test_secret_fields_are_stored_encrypted_and_others_as_given(box: DriverSecrets) -> None:
    sealed = box.seal(INFO)
    assert is_sealed(sealed["ipmi_password"]) and is_sealed(sealed["ssh_key_contents"])
    assert "s3cret-pw" not in str(sealed)
    assert sealed["ipmi_address"] == "10.0.0.5" and sealed["ipmi_username"] == "admin"


def test_a_driver_sees_the_plain_values(box: DriverSecrets) -> None:
    assert dict(box.context(node(box.seal(INFO))).driver_info) == INFO


def test_a_value_keeps_its_type_through_encryption(box: DriverSecrets) -> None:
    sealed = box.seal({"ipmi_password": 1234})
    assert box.reveal("n-1", sealed)["ipmi_password"] == 1234


def test_an_unchanged_stored_token_is_not_encrypted_again(box: DriverSecrets) -> None:
    stored = box.seal(INFO)
    again = box.seal({**stored, "ipmi_port": 623}, stored)
    assert again["ipmi_password"] == stored["ipmi_password"]


def test_a_token_like_value_sent_by_a_client_is_encrypted_as_a_value(box: DriverSecrets) -> None:
    stored = box.seal(INFO)
    forged = "fernet:not-a-token"
    sealed = box.seal({**stored, "ipmi_password": forged}, stored)
    assert box.reveal("n-1", sealed)["ipmi_password"] == forged


def test_a_node_without_tokens_is_given_to_drivers_unchanged() -> None:
    info = dict(INFO)
    assert DriverSecrets(None).reveal("n-1", info) is info


def test_a_token_of_another_key_names_node_and_field_not_the_value(box: DriverSecrets) -> None:
    other = DriverSecrets(KeyFile(_other_keys(box)))
    sealed = other.seal({"ipmi_password": "s3cret-pw"})
    with pytest.raises(SecretUnreadable) as err:
        box.context(node(sealed))
    assert "Node n-1: driver_info field 'ipmi_password'" in str(err.value)
    assert err.value.code == 400
    assert "s3cret-pw" not in str(err.value) and sealed["ipmi_password"] not in str(err.value)


def test_a_token_without_a_configured_key_says_so(box: DriverSecrets) -> None:
    sealed = box.seal(INFO)
    with pytest.raises(SecretUnreadable, match="no key file is configured"):
        DriverSecrets(None).reveal("n-1", sealed)


def test_reseal_encrypts_plain_values_and_old_tokens_with_the_newest_key(
        key_path: Path) -> None:
    old = new_key()
    write_keys(key_path, [old])
    box = DriverSecrets(KeyFile(key_path))
    stored = box.seal({"ipmi_password": "a"})
    newest = new_key()
    write_keys(key_path, [newest, old])
    box.keys.refresh()  # type: ignore[union-attr]
    resealed = box.reseal({**stored, "ssh_password": "b"})
    assert resealed is not None
    for field in ("ipmi_password", "ssh_password"):
        Fernet(newest).decrypt(resealed[field].removeprefix("fernet:").encode())
    assert box.reseal(resealed) is None  # nothing left to do


def _other_keys(box: DriverSecrets) -> Path:
    assert box.keys is not None
    path = box.keys.path.with_name("other")
    write_keys(path, [new_key()])
    return path
