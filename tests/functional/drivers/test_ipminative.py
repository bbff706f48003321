"""pxe_ipminative: pyghmi's client against the virtual BMC (pyghmi's BMC, with the
cipher-suite fix), in one process; the BMC's in-memory machine shows what reached it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ipminative import NativeIpmiManagement, NativeIpmiPower
from ironsight.common import config
from ironsight.common.exceptions import DriverError, PowerStateFailure
from ironsight.lab.bmc import BmcServer, BootDevice, InMemoryMachine, VirtualBmc

pytestmark = pytest.mark.functional

CONF = config.load(overrides={"ipmi": {"command_timeout": "2", "retries": "0"}})
SHORT = config.load(overrides={"ipmi": {"command_timeout": "1", "retries": "0"}})


def node(driver_info: dict[str, Any]) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ipminative", driver_info=driver_info)


async def test_power_state_is_read_from_the_bmc(virtual_bmc: Any,
                                                bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    assert await NativeIpmiPower(CONF).get_power_state(node(bmc_driver_info)) == \
        states.POWER_ON


async def test_power_on_reaches_the_machine(virtual_bmc: Any,
                                            bmc_driver_info: dict[str, Any]) -> None:
    await NativeIpmiPower(CONF).set_power_state(node(bmc_driver_info), states.POWER_ON, 10)
    assert virtual_bmc.machine.power_state == "on"
    assert virtual_bmc.machine.history == ["power on"]


async def test_power_off_reaches_the_machine(virtual_bmc: Any,
                                             bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    await NativeIpmiPower(CONF).set_power_state(node(bmc_driver_info), states.POWER_OFF, 10)
    assert virtual_bmc.machine.power_state == "off"


async def test_reboot_of_a_running_machine_resets_it(virtual_bmc: Any,
                                                     bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    await NativeIpmiPower(CONF).set_power_state(node(bmc_driver_info), states.REBOOT, 10)
    assert virtual_bmc.machine.history[-1] == "reset"
    assert virtual_bmc.machine.power_state == "on"


async def test_reboot_of_a_machine_that_is_off_powers_it_on(
        virtual_bmc: Any, bmc_driver_info: dict[str, Any]) -> None:
    await NativeIpmiPower(CONF).set_power_state(node(bmc_driver_info), states.REBOOT, 10)
    assert virtual_bmc.machine.history == ["power on"]


async def test_one_time_pxe_boot_reaches_the_machine(virtual_bmc: Any,
                                                     bmc_driver_info: dict[str, Any]) -> None:
    await NativeIpmiManagement(CONF).set_boot_device(node(bmc_driver_info), "pxe")
    assert virtual_bmc.machine.boot_device == BootDevice("network", persistent=False)


async def test_persistent_disk_boot_reaches_the_machine(virtual_bmc: Any,
                                                        bmc_driver_info: dict[str, Any]) -> None:
    await NativeIpmiManagement(CONF).set_boot_device(node(bmc_driver_info), "disk",
                                                     persistent=True)
    assert virtual_bmc.machine.boot_device == BootDevice("hd", persistent=True)


async def test_persistent_pxe_boot_is_read_back(bmc_driver_info: dict[str, Any]) -> None:
    management = NativeIpmiManagement(CONF)
    await management.set_boot_device(node(bmc_driver_info), "pxe", persistent=True)
    assert await management.get_boot_device(node(bmc_driver_info)) == {
        "boot_device": "pxe", "persistent": True}


async def test_one_time_disk_boot_is_read_back(bmc_driver_info: dict[str, Any]) -> None:
    management = NativeIpmiManagement(CONF)
    await management.set_boot_device(node(bmc_driver_info), "disk")
    assert await management.get_boot_device(node(bmc_driver_info)) == {
        "boot_device": "disk", "persistent": False}


async def test_wrong_password_is_a_clear_driver_error(virtual_bmc: Any,
                                                      bmc_driver_info: dict[str, Any]) -> None:
    info = {**bmc_driver_info, "ipmi_password": "not-the-password"}
    with pytest.raises(DriverError, match="Incorrect password") as raised:
        await NativeIpmiPower(CONF).get_power_state(node(info))
    assert f"127.0.0.1:{virtual_bmc.port}" in str(raised.value)
    assert "not-the-password" not in str(raised.value)


async def test_silent_bmc_fails_within_the_command_timeout(
        bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    info = {**bmc_driver_info, "ipmi_port": free_udp_port}
    start = time.monotonic()
    with pytest.raises(DriverError, match=f"127.0.0.1:{free_udp_port}"):
        await NativeIpmiPower(SHORT).get_power_state(node(info))
    assert time.monotonic() - start < 2


async def test_power_on_of_a_silent_bmc_is_a_power_state_failure(
        bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    info = {**bmc_driver_info, "ipmi_port": free_udp_port}
    start = time.monotonic()
    with pytest.raises(PowerStateFailure):
        await NativeIpmiPower(SHORT).set_power_state(node(info), states.POWER_ON, 10)
    assert time.monotonic() - start < 2


async def test_silent_bmc_does_not_disturb_calls_to_other_bmcs(
        bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    power = NativeIpmiPower(SHORT)
    with pytest.raises(DriverError):
        await power.get_power_state(node({**bmc_driver_info, "ipmi_port": free_udp_port}))
    assert await power.get_power_state(node(bmc_driver_info)) == states.POWER_OFF


async def test_bmc_restarted_on_the_same_port_is_reached_again() -> None:
    """pyghmi keeps sessions per BMC in process-wide tables: none may outlive a call and be
    handed to the next one once the BMC behind it has changed."""
    power = NativeIpmiPower(CONF)
    with BmcServer([VirtualBmc(InMemoryMachine(), "admin", "pw")]) as first:
        port = first.bmcs[0].port
        info = {"ipmi_address": "127.0.0.1", "ipmi_port": port, "ipmi_username": "admin",
                "ipmi_password": "pw"}
        assert await power.get_power_state(node(info)) == states.POWER_OFF
    with BmcServer([VirtualBmc(InMemoryMachine(powered_on=True), "admin", "pw", port=port)]):
        assert await power.get_power_state(node(info)) == states.POWER_ON
