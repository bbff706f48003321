"""What both IPMI drivers (pxe_ipmitool and pxe_ipminative) do alike without a BMC: they
check the same driver_info (ipmi_common), declare the same secret, and refuse an unknown
boot device or power target before any call to the BMC. Every test runs for each driver,
and the driver_info checks for its power and its management interface alike.

What only one driver does is tested in test_ipmitool.py and test_ipminative.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from ironsight.baremetal.drivers.base import (
    BaseInterface,
    ManagementInterface,
    NodeContext,
    PowerInterface,
)
from ironsight.baremetal.drivers.ipminative import NativeIpmiManagement, NativeIpmiPower
from ironsight.baremetal.drivers.ipmitool import IpmitoolManagement, IpmitoolPower
from ironsight.common import config
from ironsight.common.exceptions import InvalidParameterValue, MissingParameterValue

# TEST-NET-1: no BMC ever answers there
UNREACHABLE = {"ipmi_address": "192.0.2.1", "ipmi_port": 6297}


@dataclass(frozen=True)
class IpmiDriver:
    hardware_type: str
    power_interface: type[PowerInterface]
    management_interface: type[ManagementInterface]
    # under which any call to a BMC fails with a DriverError (ipmitool: the program is
    # missing; pyghmi: no answer within 0.5 s), so that a refusal (InvalidParameterValue)
    # can only have come before the driver called the BMC
    no_bmc_conf: config.Config

    def node(self, **driver_info: Any) -> NodeContext:
        return NodeContext(uuid="node-1", driver=self.hardware_type, driver_info=driver_info)

    def power(self) -> PowerInterface:
        return self.power_interface(self.no_bmc_conf)

    def management(self) -> ManagementInterface:
        return self.management_interface(self.no_bmc_conf)


IPMITOOL = IpmiDriver(
    "pxe_ipmitool", IpmitoolPower, IpmitoolManagement,
    config.load(overrides={"ipmi": {"ipmitool_path": "/nonexistent/ipmitool", "retries": "0"}}))
IPMINATIVE = IpmiDriver(
    "pxe_ipminative", NativeIpmiPower, NativeIpmiManagement,
    config.load(overrides={"ipmi": {"command_timeout": "0.5", "retries": "0"}}))
DRIVERS = {"ipmitool": IPMITOOL, "ipminative": IPMINATIVE}


@pytest.fixture(params=DRIVERS.values(), ids=DRIVERS.keys())
def driver(request: pytest.FixtureRequest) -> IpmiDriver:
    """Each IPMI driver in turn."""
    driver: IpmiDriver = request.param
    return driver


@pytest.fixture(params=["power", "management"])
def interface(request: pytest.FixtureRequest, driver: IpmiDriver) -> BaseInterface:
    """The power and the management interface of each IPMI driver in turn."""
    if request.param == "power":
        return driver.power()
    return driver.management()


Validate = Callable[..., None]


@pytest.fixture
def validate(driver: IpmiDriver, interface: BaseInterface) -> Validate:
    """`interface.validate()` of a node with the given driver_info."""
    return lambda **driver_info: interface.validate(driver.node(**driver_info))


# --- validate ----------------------------------------------------------------------------------


def test_validate_accepts_complete_driver_info(validate: Validate) -> None:
    validate(ipmi_address="10.0.0.5", ipmi_port=623, ipmi_username="admin",
             ipmi_password="secret")


def test_validate_accepts_address_alone(validate: Validate) -> None:
    validate(ipmi_address="bmc.example.org")


def test_validate_names_missing_address(validate: Validate) -> None:
    with pytest.raises(MissingParameterValue, match="ipmi_address"):
        validate(ipmi_username="admin")


def test_validate_names_address_that_is_not_a_string(validate: Validate) -> None:
    with pytest.raises(InvalidParameterValue, match="ipmi_address"):
        validate(ipmi_address=["10.0.0.5"])


def test_validate_names_port_that_is_not_an_integer(validate: Validate) -> None:
    with pytest.raises(InvalidParameterValue, match="ipmi_port"):
        validate(ipmi_address="10.0.0.5", ipmi_port="six")


def test_validate_names_port_out_of_range(validate: Validate) -> None:
    with pytest.raises(InvalidParameterValue, match="ipmi_port"):
        validate(ipmi_address="10.0.0.5", ipmi_port=70000)


def test_validate_names_bad_password_without_showing_it(validate: Validate) -> None:
    with pytest.raises(InvalidParameterValue, match="ipmi_password") as raised:
        validate(ipmi_address="10.0.0.5", ipmi_password=987654321)
    assert "987654321" not in str(raised.value)


def test_password_is_declared_secret(interface: BaseInterface) -> None:
    assert interface.secret_properties == {"ipmi_password"}
    assert set(interface.properties) == {"ipmi_address", "ipmi_port", "ipmi_username",
                                         "ipmi_password"}


# --- refusals before any call to the BMC -------------------------------------------------------


async def test_unknown_boot_device_is_refused_before_any_call(driver: IpmiDriver) -> None:
    with pytest.raises(InvalidParameterValue, match="cdrom"):
        await driver.management().set_boot_device(driver.node(**UNREACHABLE), "cdrom")


async def test_unknown_power_target_is_refused_before_any_call(driver: IpmiDriver) -> None:
    with pytest.raises(InvalidParameterValue, match="soft reboot"):
        await driver.power().set_power_state(driver.node(**UNREACHABLE), "soft reboot",
                                             timeout=5)
