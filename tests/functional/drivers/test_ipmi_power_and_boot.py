"""What both IPMI drivers do alike against the virtual BMC (pyghmi's BMC): power and boot
device commands reach its in-memory machine, boot devices read back, and a wrong password or
a silent BMC is a clear, bounded error. Every test runs once per driver: `pxe_ipmitool` (the
real ipmitool program) and `pxe_ipminative` (pyghmi's client, in this process).

What only one driver does is tested in test_ipmitool.py and test_ipminative.py."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import ManagementInterface, NodeContext, PowerInterface
from ironsight.baremetal.drivers.ipminative import NativeIpmiManagement, NativeIpmiPower
from ironsight.baremetal.drivers.ipmitool import IpmitoolManagement, IpmitoolPower
from ironsight.common import config
from ironsight.common.exceptions import DriverError, PowerStateFailure
from ironsight.lab.bmc import BootDevice

pytestmark = pytest.mark.functional

CONF = config.load(overrides={"ipmi": {"command_timeout": "2", "retries": "0"}})
SHORT = config.load(overrides={"ipmi": {"command_timeout": "1", "retries": "0"}})
# For a call that must succeed: room for a stall of the (noisy, shared) test machine.
PATIENT = config.load(overrides={"ipmi": {"command_timeout": "5", "retries": "0"}})


@dataclass(frozen=True)
class IpmiDriver:
    """One implementation of IPMI power and management, as the conductor would load it."""

    hardware_type: str
    power_interface: type[PowerInterface]
    management_interface: type[ManagementInterface]
    wrong_password_says: str  # what its error for a refused login says

    def node(self, driver_info: dict[str, Any]) -> NodeContext:
        return NodeContext(uuid="node-1", driver=self.hardware_type, driver_info=driver_info)

    def power(self, conf: config.Config = CONF) -> PowerInterface:
        return self.power_interface(conf)

    def management(self, conf: config.Config = CONF) -> ManagementInterface:
        return self.management_interface(conf)


IPMITOOL = IpmiDriver("pxe_ipmitool", IpmitoolPower, IpmitoolManagement,
                      wrong_password_says="Unable to establish IPMI v2 / RMCP+ session")
IPMINATIVE = IpmiDriver("pxe_ipminative", NativeIpmiPower, NativeIpmiManagement,
                        wrong_password_says="Incorrect password")


@pytest.fixture(params=[
    pytest.param(IPMITOOL, id="ipmitool", marks=pytest.mark.skipif(
        shutil.which("ipmitool") is None,
        reason="ipmitool is not installed (apt-get install ipmitool)")),
    pytest.param(IPMINATIVE, id="ipminative"),
])
def driver(request: pytest.FixtureRequest) -> IpmiDriver:
    """Each IPMI driver in turn."""
    driver: IpmiDriver = request.param
    return driver


# --- power -------------------------------------------------------------------------------------


async def test_power_state_is_read_from_the_bmc(driver: IpmiDriver, virtual_bmc: Any,
                                                bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    assert await driver.power().get_power_state(driver.node(bmc_driver_info)) == \
        states.POWER_ON


async def test_power_on_reaches_the_machine(driver: IpmiDriver, virtual_bmc: Any,
                                            bmc_driver_info: dict[str, Any]) -> None:
    await driver.power().set_power_state(driver.node(bmc_driver_info), states.POWER_ON, 10)
    assert virtual_bmc.machine.power_state == "on"
    assert virtual_bmc.machine.history == ["power on"]


async def test_power_off_reaches_the_machine(driver: IpmiDriver, virtual_bmc: Any,
                                             bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    await driver.power().set_power_state(driver.node(bmc_driver_info), states.POWER_OFF, 10)
    assert virtual_bmc.machine.power_state == "off"


async def test_reboot_of_a_running_machine_resets_it(driver: IpmiDriver, virtual_bmc: Any,
                                                     bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    await driver.power().set_power_state(driver.node(bmc_driver_info), states.REBOOT, 10)
    assert virtual_bmc.machine.history[-1] == "reset"
    assert virtual_bmc.machine.power_state == "on"


async def test_reboot_of_a_machine_that_is_off_powers_it_on(
        driver: IpmiDriver, virtual_bmc: Any, bmc_driver_info: dict[str, Any]) -> None:
    await driver.power().set_power_state(driver.node(bmc_driver_info), states.REBOOT, 10)
    assert virtual_bmc.machine.history == ["power on"]


# --- boot device -------------------------------------------------------------------------------


async def test_one_time_pxe_boot_reaches_the_machine(driver: IpmiDriver, virtual_bmc: Any,
                                                     bmc_driver_info: dict[str, Any]) -> None:
    await driver.management().set_boot_device(driver.node(bmc_driver_info), "pxe")
    assert virtual_bmc.machine.boot_device == BootDevice("network", persistent=False)


async def test_persistent_disk_boot_reaches_the_machine(driver: IpmiDriver, virtual_bmc: Any,
                                                        bmc_driver_info: dict[str, Any]) -> None:
    await driver.management().set_boot_device(driver.node(bmc_driver_info), "disk",
                                              persistent=True)
    assert virtual_bmc.machine.boot_device == BootDevice("hd", persistent=True)


async def test_persistent_pxe_boot_is_read_back(driver: IpmiDriver,
                                                bmc_driver_info: dict[str, Any]) -> None:
    management = driver.management()
    await management.set_boot_device(driver.node(bmc_driver_info), "pxe", persistent=True)
    assert await management.get_boot_device(driver.node(bmc_driver_info)) == {
        "boot_device": "pxe", "persistent": True}


async def test_one_time_disk_boot_is_read_back(driver: IpmiDriver,
                                               bmc_driver_info: dict[str, Any]) -> None:
    management = driver.management()
    await management.set_boot_device(driver.node(bmc_driver_info), "disk")
    assert await management.get_boot_device(driver.node(bmc_driver_info)) == {
        "boot_device": "disk", "persistent": False}


async def test_no_boot_override_reads_as_no_device(driver: IpmiDriver,
                                                   bmc_driver_info: dict[str, Any]) -> None:
    assert await driver.management().get_boot_device(driver.node(bmc_driver_info)) == {
        "boot_device": None, "persistent": None}


# --- failures ----------------------------------------------------------------------------------


async def test_wrong_password_is_a_clear_driver_error(driver: IpmiDriver, virtual_bmc: Any,
                                                      bmc_driver_info: dict[str, Any]) -> None:
    info = {**bmc_driver_info, "ipmi_password": "not-the-password"}
    with pytest.raises(DriverError) as raised:
        await driver.power().get_power_state(driver.node(info))
    message = str(raised.value)
    assert f"127.0.0.1:{virtual_bmc.port}" in message
    assert driver.wrong_password_says in message
    assert "not-the-password" not in message


async def test_silent_bmc_fails_within_the_command_timeout(
        driver: IpmiDriver, bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    info = {**bmc_driver_info, "ipmi_port": free_udp_port}
    start = time.monotonic()
    with pytest.raises(DriverError, match=f"127.0.0.1:{free_udp_port}"):
        await driver.power(SHORT).get_power_state(driver.node(info))
    assert time.monotonic() - start < 2


async def test_power_on_of_a_silent_bmc_is_a_power_state_failure(
        driver: IpmiDriver, bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    info = {**bmc_driver_info, "ipmi_port": free_udp_port}
    start = time.monotonic()
    with pytest.raises(PowerStateFailure):
        await driver.power(SHORT).set_power_state(driver.node(info), states.POWER_ON, 10)
    assert time.monotonic() - start < 2


async def test_silent_bmc_does_not_disturb_calls_to_other_bmcs(
        driver: IpmiDriver, bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    with pytest.raises(DriverError):
        await driver.power(SHORT).get_power_state(
            driver.node({**bmc_driver_info, "ipmi_port": free_udp_port}))
    power = driver.power(PATIENT)
    assert await power.get_power_state(driver.node(bmc_driver_info)) == states.POWER_OFF
