"""The redfish driver's driver_info: Ironic's names, each error naming its field and never a
secret (what it does against a BMC: tests/functional/drivers/test_redfish_emulator.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.redfish import RedfishInfo, RedfishPower, parse_redfish_info
from ironsight.common import config
from ironsight.common.exceptions import InvalidParameterValue, MissingParameterValue

CONF = config.load()
SECRET = "s3cret-7f1e"


def node(**info: Any) -> NodeContext:
    return NodeContext(uuid="n1", driver="redfish", driver_info=info)


def parse(**info: Any) -> RedfishInfo:
    return parse_redfish_info(node(**info), CONF)


def test_an_address_without_scheme_is_https() -> None:
    assert parse(redfish_address="10.0.0.5").address == "https://10.0.0.5"


def test_an_http_address_is_kept_as_given() -> None:
    assert parse(redfish_address="http://bmc:8000/").address == "http://bmc:8000"


def test_a_missing_address_names_the_field() -> None:
    with pytest.raises(MissingParameterValue, match="redfish_address"):
        parse(redfish_username="admin")


@pytest.mark.parametrize("address", ["ftp://bmc", "https://", "https://bmc:port"])
def test_a_bad_address_names_the_field(address: str) -> None:
    with pytest.raises(InvalidParameterValue, match="'redfish_address'"):
        parse(redfish_address=address)


def test_the_auth_type_defaults_to_the_configured_one() -> None:
    assert parse(redfish_address="bmc").auth_type == "auto"
    assert parse(redfish_address="bmc", redfish_auth_type="basic").auth_type == "basic"


def test_an_unknown_auth_type_names_the_field() -> None:
    with pytest.raises(InvalidParameterValue, match="'redfish_auth_type'"):
        parse(redfish_address="bmc", redfish_auth_type="digest")


@pytest.mark.parametrize(("raw", "verify"), [("false", False), ("True", True), (False, False)])
def test_verify_ca_takes_ironics_booleans(raw: Any, verify: bool) -> None:
    assert parse(redfish_address="bmc", redfish_verify_ca=raw).verify is verify


def test_verify_ca_takes_a_ca_file(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    assert parse(redfish_address="bmc", redfish_verify_ca=str(ca)).verify == str(ca)


def test_verify_ca_naming_no_file_names_the_field() -> None:
    with pytest.raises(InvalidParameterValue, match="'redfish_verify_ca'"):
        parse(redfish_address="bmc", redfish_verify_ca="/nonexistent/ca.pem")


def test_a_system_id_is_a_redfish_path() -> None:
    with pytest.raises(InvalidParameterValue, match="'redfish_system_id'"):
        parse(redfish_address="bmc", redfish_system_id="1")


def test_the_bmc_is_named_without_its_password() -> None:
    info = parse(redfish_address="bmc", redfish_username="admin", redfish_password=SECRET)
    assert str(info) == "Redfish BMC https://bmc"
    assert SECRET not in repr(info) and SECRET not in str(info.key())


def test_a_non_string_password_is_refused_without_showing_it() -> None:
    with pytest.raises(InvalidParameterValue) as raised:
        parse(redfish_address="bmc", redfish_password=12345)
    assert "redfish_password" in str(raised.value) and "12345" not in str(raised.value)


def test_validate_reads_only_driver_info() -> None:
    RedfishPower(CONF).validate(node(redfish_address="bmc"))  # no BMC is contacted
