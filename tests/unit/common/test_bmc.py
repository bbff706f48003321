"""BMC addresses compared as hosts, whatever form a driver or a ramdisk wrote them in."""

from __future__ import annotations

import pytest

from ironsight.common.bmc import addresses_of, driver_field, field_value, host_of, hosts_text


@pytest.mark.parametrize(("value", "host"), [
    ("10.0.0.5", "10.0.0.5"),
    ("10.0.0.5:623", "10.0.0.5"),
    ("https://10.0.0.5:8443/redfish/v1", "10.0.0.5"),
    ("https://user@bmc-7.Example.com./", "bmc-7.example.com"),
    ("[fd00:0::5]:623", "fd00::5"),
    ("https://[FD00::5]", "fd00::5"),
    ("fd00:0:0::5", "fd00::5"),
])
def test_an_address_becomes_its_canonical_host(value: str, host: str) -> None:
    assert host_of(value) == host


@pytest.mark.parametrize("value", ["", "0.0.0.0", "::", "::/0", None, 42])
def test_a_ramdisks_no_address_is_none(value: object) -> None:
    assert host_of(value) is None


def test_every_address_field_of_driver_info_names_the_bmc() -> None:
    info = {"ipmi_address": "10.0.0.5", "redfish_address": "https://[fd00::5]",
            "ipmi_username": "admin", "deploy_address": "10.9.9.9"}
    assert addresses_of(info) == {"10.0.0.5", "fd00::5"}


def test_the_drivers_field_holds_the_host_in_its_own_form() -> None:
    assert driver_field("pxe_ipmitool") == "ipmi_address"
    assert driver_field("fake-hardware") is None
    assert field_value("redfish_address", "fd00::5") == "https://[fd00::5]"
    assert field_value("ipmi_address", "10.0.0.5") == "10.0.0.5"


def test_the_stored_hosts_text_names_each_host_between_spaces() -> None:
    assert hosts_text({"ipmi_address": "10.0.0.5", "redfish_address": "https://[fd00::5]"}) \
        == " 10.0.0.5 fd00::5 "
    assert hosts_text({"ipmi_username": "admin"}) is None
