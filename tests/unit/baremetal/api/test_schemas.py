from __future__ import annotations

import pytest
from pydantic import ValidationError

from ironsight.baremetal.api.schemas import NodeCreate, PortCreate, apply_patch, normalize_mac
from ironsight.common.exceptions import Invalid

DOC = {"name": "n1", "properties": {"cpus": 4}, "extra": {}}
PATCHABLE = {"name", "properties", "extra"}


def test_add_sets_nested_key() -> None:
    out = apply_patch(DOC, [{"op": "add", "path": "/properties/memory_mb", "value": 1024}],
                      PATCHABLE)
    assert out["properties"] == {"cpus": 4, "memory_mb": 1024}


def test_patch_does_not_change_the_input() -> None:
    apply_patch(DOC, [{"op": "remove", "path": "/properties/cpus"}], PATCHABLE)
    assert DOC["properties"] == {"cpus": 4}


def test_remove_of_missing_key_is_refused_in_ironics_words() -> None:
    with pytest.raises(Invalid) as caught:
        apply_patch(DOC, [{"op": "remove", "path": "/properties/nope"}], PATCHABLE)
    assert caught.value.message == ("Couldn't apply patch '{'op': 'remove', 'path': "
                                    "'/properties/nope'}'. Reason: can't remove a "
                                    "non-existent object 'nope'")


def test_replace_of_missing_key_is_refused_without_showing_the_value() -> None:
    with pytest.raises(Invalid) as caught:
        apply_patch(DOC, [{"op": "replace", "path": "/properties/secret", "value": "s3cr3t"}],
                    PATCHABLE)
    assert "Reason: can't replace a non-existent object 'secret'" in caught.value.message
    assert "s3cr3t" not in caught.value.message


@pytest.mark.parametrize("field", ["uuid", "instance_uuid"])
def test_a_node_uuid_field_is_refused_in_ironics_words(field: str) -> None:
    with pytest.raises(ValidationError, match=f"Expected UUID for {field}: not-a-uuid"):
        NodeCreate.model_validate({"driver": "fake", field: "not-a-uuid"})


def test_a_port_uuid_is_refused_in_ironics_words() -> None:
    with pytest.raises(ValidationError, match="Expected UUID for uuid: !@"):
        PortCreate.model_validate({"address": "52:54:00:00:00:01", "uuid": "!@",
                                   "node_uuid": "3d865497-a114-437b-9f5e-5ebae51651ef"})


@pytest.mark.parametrize(("raw", "value"), [("True", True), ("false", False), ("on", True)])
def test_pxe_enabled_takes_ironics_string_booleans(raw: str, value: bool) -> None:
    port = PortCreate.model_validate({"address": "52:54:00:00:00:01", "pxe_enabled": raw,
                                      "node_uuid": "3d865497-a114-437b-9f5e-5ebae51651ef"})
    assert port.pxe_enabled is value


def test_internal_attribute_is_refused_by_name() -> None:
    with pytest.raises(Invalid, match="'/uuid' is an internal attribute"):
        apply_patch(DOC, [{"op": "replace", "path": "/uuid", "value": "x"}], PATCHABLE)


def test_unsupported_operation_is_refused() -> None:
    with pytest.raises(Invalid, match="'move'"):
        apply_patch(DOC, [{"op": "move", "path": "/name", "from": "/extra"}], PATCHABLE)


def test_patch_must_be_a_list() -> None:
    with pytest.raises(Invalid, match="non-empty list"):
        apply_patch(DOC, {"op": "add"}, PATCHABLE)


def test_escaped_slash_in_key() -> None:
    out = apply_patch(DOC, [{"op": "add", "path": "/extra/a~1b", "value": 1}], PATCHABLE)
    assert out["extra"] == {"a/b": 1}


@pytest.mark.parametrize("mac", ["52:54:00:AA:bb:01", "52-54-00-aa-bb-01"])
def test_mac_addresses_are_normalized(mac: str) -> None:
    assert normalize_mac(mac) == "52:54:00:aa:bb:01"


@pytest.mark.parametrize("mac", ["52:54:00:aa:bb", "zz:54:00:aa:bb:01", "", "5254.00aa.bb01"])
def test_bad_mac_addresses_are_refused(mac: str) -> None:
    with pytest.raises(ValueError, match="Expected a MAC address"):
        normalize_mac(mac)
