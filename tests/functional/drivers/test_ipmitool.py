"""pxe_ipmitool: the real ipmitool program against the virtual BMC (pyghmi's BMC); the
BMC's in-memory machine shows what really reached it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ipmitool import IpmitoolManagement, IpmitoolPower
from ironsight.common import config
from ironsight.common.exceptions import DriverError, PowerStateFailure
from ironsight.lab.bmc import BootDevice

pytestmark = [
    pytest.mark.functional,
    pytest.mark.skipif(shutil.which("ipmitool") is None,
                       reason="ipmitool is not installed (apt-get install ipmitool)"),
]

CONF = config.load(overrides={"ipmi": {"command_timeout": "2", "retries": "0"}})
SHORT = config.load(overrides={"ipmi": {"command_timeout": "1", "retries": "0"}})


def node(driver_info: dict[str, Any]) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ipmitool", driver_info=driver_info)


async def test_power_state_is_read_from_the_bmc(virtual_bmc: Any,
                                                bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    assert await IpmitoolPower(CONF).get_power_state(node(bmc_driver_info)) == states.POWER_ON


async def test_power_on_reaches_the_machine(virtual_bmc: Any,
                                            bmc_driver_info: dict[str, Any]) -> None:
    await IpmitoolPower(CONF).set_power_state(node(bmc_driver_info), states.POWER_ON, 10)
    assert virtual_bmc.machine.power_state == "on"
    assert virtual_bmc.machine.history == ["power on"]


async def test_power_off_reaches_the_machine(virtual_bmc: Any,
                                             bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    await IpmitoolPower(CONF).set_power_state(node(bmc_driver_info), states.POWER_OFF, 10)
    assert virtual_bmc.machine.power_state == "off"


async def test_reboot_of_a_running_machine_resets_it(virtual_bmc: Any,
                                                     bmc_driver_info: dict[str, Any]) -> None:
    virtual_bmc.machine.power_on()
    await IpmitoolPower(CONF).set_power_state(node(bmc_driver_info), states.REBOOT, 10)
    assert virtual_bmc.machine.history[-1] == "reset"
    assert virtual_bmc.machine.power_state == "on"


async def test_reboot_of_a_machine_that_is_off_powers_it_on(
        virtual_bmc: Any, bmc_driver_info: dict[str, Any]) -> None:
    await IpmitoolPower(CONF).set_power_state(node(bmc_driver_info), states.REBOOT, 10)
    assert virtual_bmc.machine.history == ["power on"]


async def test_one_time_pxe_boot_reaches_the_machine(virtual_bmc: Any,
                                                     bmc_driver_info: dict[str, Any]) -> None:
    await IpmitoolManagement(CONF).set_boot_device(node(bmc_driver_info), "pxe")
    assert virtual_bmc.machine.boot_device == BootDevice("network", persistent=False)


async def test_persistent_disk_boot_reaches_the_machine(virtual_bmc: Any,
                                                        bmc_driver_info: dict[str, Any]) -> None:
    await IpmitoolManagement(CONF).set_boot_device(node(bmc_driver_info), "disk",
                                                   persistent=True)
    assert virtual_bmc.machine.boot_device == BootDevice("hd", persistent=True)


async def test_persistent_pxe_boot_is_read_back(bmc_driver_info: dict[str, Any]) -> None:
    management = IpmitoolManagement(CONF)
    await management.set_boot_device(node(bmc_driver_info), "pxe", persistent=True)
    assert await management.get_boot_device(node(bmc_driver_info)) == {
        "boot_device": "pxe", "persistent": True}


async def test_one_time_disk_boot_is_read_back(bmc_driver_info: dict[str, Any]) -> None:
    management = IpmitoolManagement(CONF)
    await management.set_boot_device(node(bmc_driver_info), "disk")
    assert await management.get_boot_device(node(bmc_driver_info)) == {
        "boot_device": "disk", "persistent": False}


async def test_no_boot_override_reads_as_no_device(bmc_driver_info: dict[str, Any]) -> None:
    assert await IpmitoolManagement(CONF).get_boot_device(node(bmc_driver_info)) == {
        "boot_device": None, "persistent": None}


async def test_wrong_password_is_a_clear_driver_error(virtual_bmc: Any,
                                                      bmc_driver_info: dict[str, Any]) -> None:
    info = {**bmc_driver_info, "ipmi_password": "not-the-password"}
    with pytest.raises(DriverError) as raised:
        await IpmitoolPower(CONF).get_power_state(node(info))
    message = str(raised.value)
    assert f"127.0.0.1:{virtual_bmc.port}" in message
    assert "Unable to establish IPMI v2 / RMCP+ session" in message
    assert "not-the-password" not in message


async def test_silent_bmc_fails_within_the_command_timeout(
        bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    info = {**bmc_driver_info, "ipmi_port": free_udp_port}
    start = time.monotonic()
    with pytest.raises(DriverError, match=f"127.0.0.1:{free_udp_port}"):
        await IpmitoolPower(SHORT).get_power_state(node(info))
    assert time.monotonic() - start < 2


async def test_power_on_of_a_silent_bmc_is_a_power_state_failure(
        bmc_driver_info: dict[str, Any], free_udp_port: int) -> None:
    info = {**bmc_driver_info, "ipmi_port": free_udp_port}
    start = time.monotonic()
    with pytest.raises(PowerStateFailure):
        await IpmitoolPower(SHORT).set_power_state(node(info), states.POWER_ON, 10)
    assert time.monotonic() - start < 2


async def test_bmcs_started_from_the_command_line_answer(tmp_path: Path,
                                                         free_udp_port: int) -> None:
    """`python -m ironsight.lab.bmc` (as `make demo` runs it): one line per BMC when ready,
    the password read from a file and never on its command line."""
    password_file = tmp_path / "password"
    password_file.write_text("cli-secret\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "ironsight.lab.bmc", "--port", str(free_udp_port), "--count", "2",
         "--user", "admin", "--password-file", str(password_file)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip() for _ in range(2)]
        assert lines == [f"bmc {i} listening on 127.0.0.1:{free_udp_port + i} user admin"
                         for i in range(2)]
        assert "cli-secret" not in Path(f"/proc/{proc.pid}/cmdline").read_text()
        info = {"ipmi_address": "127.0.0.1", "ipmi_port": free_udp_port + 1,
                "ipmi_username": "admin", "ipmi_password": "cli-secret"}
        await IpmitoolPower(CONF).set_power_state(node(info), states.POWER_ON, 10)
        assert await IpmitoolPower(CONF).get_power_state(node(info)) == states.POWER_ON
    finally:
        proc.terminate()
        assert proc.wait(5) == 0
