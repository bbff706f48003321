"""pxe_ipmitool without a BMC: the command line, output parsing, and the process handling,
with a stand-in `ipmitool` script that records how it was called. The driver_info checks and
refusals it shares with pxe_ipminative are in test_ipmi_interfaces.py."""

from __future__ import annotations

import stat
import time
from pathlib import Path
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ipmi_common import IpmiInfo
from ironsight.baremetal.drivers.ipmitool import (
    IpmitoolManagement,
    IpmitoolPower,
    ipmitool_argv,
    ipmitool_env,
    parse_boot_param,
    parse_power_status,
)
from ironsight.common import config
from ironsight.common.exceptions import DriverError, PowerStateFailure

PASSWORD = "Sup3r-secret"
INFO = {"ipmi_address": "10.0.0.5", "ipmi_port": 6230, "ipmi_username": "admin",
        "ipmi_password": PASSWORD}


def node(**driver_info: Any) -> NodeContext:
    return NodeContext(uuid="1be26c0b-03f2-4d2e-ae87-c02d7f33c123", driver="pxe_ipmitool",
                       driver_info=driver_info)


# --- command line and environment --------------------------------------------------------------


def test_password_is_never_in_argv() -> None:
    argv = ipmitool_argv("ipmitool", IpmiInfo("10.0.0.5", 6230, "admin", PASSWORD),
                         ("power", "status"))
    assert not any(PASSWORD in arg for arg in argv)
    assert "-E" in argv and "-P" not in argv


def test_argv_addresses_the_bmc_over_lanplus() -> None:
    argv = ipmitool_argv("ipmitool", IpmiInfo("10.0.0.5", 6230, "admin", PASSWORD),
                         ("power", "status"))
    assert argv[:7] == ["ipmitool", "-I", "lanplus", "-H", "10.0.0.5", "-p", "6230"]
    assert argv[argv.index("-U") + 1] == "admin"
    assert argv[-2:] == ["power", "status"]


def test_argv_without_username_uses_the_null_user() -> None:
    argv = ipmitool_argv("ipmitool", IpmiInfo("10.0.0.5"), ("power", "status"))
    assert "-U" not in argv


def test_password_travels_in_the_environment() -> None:
    env = ipmitool_env(IpmiInfo("10.0.0.5", password=PASSWORD), base={"PATH": "/usr/bin"})
    assert env["IPMI_PASSWORD"] == PASSWORD


def test_missing_password_is_empty_so_ipmitool_never_prompts() -> None:
    env = ipmitool_env(IpmiInfo("10.0.0.5"), base={"IPMI_PASSWORD": "inherited",
                                                  "IPMITOOL_PASSWORD": "inherited"})
    assert env["IPMI_PASSWORD"] == ""
    assert "IPMITOOL_PASSWORD" not in env


def test_password_is_not_in_the_repr_of_the_bmc_info() -> None:
    info = IpmiInfo("10.0.0.5", 623, "admin", PASSWORD)
    assert PASSWORD not in repr(info) and PASSWORD not in str(info)


# --- output parsing ----------------------------------------------------------------------------


@pytest.mark.parametrize(("output", "state"), [
    ("Chassis Power is on\n", states.POWER_ON),
    ("Chassis Power is off\n", states.POWER_OFF),
])
def test_power_status_is_parsed(output: str, state: str) -> None:
    assert parse_power_status(output) == state


def test_unexpected_power_status_is_a_driver_error() -> None:
    with pytest.raises(DriverError, match="power status"):
        parse_power_status("Chassis Power is warm\n")


BOOTPARAM_PXE_ONCE = """Boot parameter version: 1
Boot parameter 5 is valid/unlocked
Boot parameter data: 8004000000
 Boot Flags :
   - Boot Flag Valid
   - Options apply to only next boot
   - BIOS PC Compatible (legacy) boot
   - Boot Device Selector : Force PXE
   - BIOS verbosity : System Default
"""
BOOTPARAM_DISK_ALWAYS = """Boot parameter version: 1
Boot parameter 5 is valid/unlocked
Boot parameter data: c008000000
 Boot Flags :
   - Boot Flag Valid
   - Options apply to all future boots
   - BIOS PC Compatible (legacy) boot
   - Boot Device Selector : Force Boot from default Hard-Drive
"""
BOOTPARAM_NO_OVERRIDE = """Boot parameter version: 1
Boot parameter 5 is valid/unlocked
Boot parameter data: 0000000000
 Boot Flags :
   - Boot Flag Invalid
   - Options apply to only next boot
   - BIOS PC Compatible (legacy) boot
   - Boot Device Selector : No override
"""


def test_one_time_pxe_boot_is_parsed() -> None:
    assert parse_boot_param(BOOTPARAM_PXE_ONCE) == {"boot_device": "pxe", "persistent": False}


def test_persistent_disk_boot_is_parsed() -> None:
    assert parse_boot_param(BOOTPARAM_DISK_ALWAYS) == {"boot_device": "disk",
                                                       "persistent": True}


def test_no_boot_override_is_no_device() -> None:
    assert parse_boot_param(BOOTPARAM_NO_OVERRIDE) == {"boot_device": None, "persistent": None}


def test_other_boot_device_is_reported_as_none() -> None:
    output = BOOTPARAM_PXE_ONCE.replace("Force PXE", "Force Boot from CD/DVD")
    assert parse_boot_param(output)["boot_device"] is None


# --- running ipmitool (a stand-in script) ------------------------------------------------------


class FakeIpmitool:
    """A shell script in place of ipmitool: records argv and $IPMI_PASSWORD, keeps a power
    state in a file, and runs `extra` first (to fail, hang or misbehave)."""

    def __init__(self, tmp_path: Path, extra: str = "", power: str = "off") -> None:
        self.dir = tmp_path
        (tmp_path / "power").write_text(power)
        self.path = tmp_path / "ipmitool"
        self.path.write_text(f"""#!/bin/sh
d={tmp_path}
printf '%s\\n' "$*" >> $d/argv
printf '%s\\n' "$IPMI_PASSWORD" >> $d/passwords
{extra}
case "$*" in
  *"power status") echo "Chassis Power is $(cat $d/power)" ;;
  *"power on") echo on > $d/power; echo "Chassis Power Control: Up/On" ;;
  *"power off") echo off > $d/power; echo "Chassis Power Control: Down/Off" ;;
  *"power reset") echo "Chassis Power Control: Reset" ;;
  *"chassis bootdev "*) echo "Set Boot Device to pxe" ;;
  *"chassis power diag") echo "Chassis Power Control: Diag" ;;
  *) echo "unknown command: $*" >&2; exit 1 ;;
esac
""")
        self.path.chmod(self.path.stat().st_mode | stat.S_IXUSR)

    def conf(self, **ipmi: str) -> config.Config:
        return config.load(overrides={"ipmi": {"ipmitool_path": str(self.path),
                                               "retry_interval": "0", **ipmi}})

    @property
    def calls(self) -> list[str]:
        argv = self.dir / "argv"
        return argv.read_text().splitlines() if argv.exists() else []

    def commands(self) -> list[str]:
        """The ipmitool command of each call (what follows the options)."""
        return [call.split(" -R 1 ", 1)[1] for call in self.calls]


async def test_power_status_runs_ipmitool_with_password_only_in_environment(
        tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, power="on")
    state = await IpmitoolPower(ipmitool.conf()).get_power_state(node(**INFO))
    assert state == states.POWER_ON
    assert PASSWORD not in (tmp_path / "argv").read_text()
    assert (tmp_path / "passwords").read_text().splitlines() == [PASSWORD]


async def test_power_on_sends_power_on_and_waits_for_it(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, power="off")
    await IpmitoolPower(ipmitool.conf()).set_power_state(node(**INFO), states.POWER_ON, 5)
    assert ipmitool.commands() == ["power on", "power status"]


async def test_reboot_of_a_running_node_is_a_reset(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, power="on")
    await IpmitoolPower(ipmitool.conf()).set_power_state(node(**INFO), states.REBOOT, 5)
    assert ipmitool.commands() == ["power status", "power reset", "power status"]


async def test_reboot_of_a_node_that_is_off_powers_it_on(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, power="off")
    await IpmitoolPower(ipmitool.conf()).set_power_state(node(**INFO), states.REBOOT, 5)
    assert ipmitool.commands() == ["power status", "power on", "power status"]


async def test_power_state_never_reached_fails_within_the_timeout(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, extra='case "$*" in *"power on") exit 0;; esac')
    start = time.monotonic()
    with pytest.raises(PowerStateFailure, match=r"10\.0\.0\.5:6230.*power on"):
        await IpmitoolPower(ipmitool.conf()).set_power_state(node(**INFO), states.POWER_ON, 0.5)
    assert time.monotonic() - start < 2


async def test_failure_names_the_bmc_and_carries_stderr(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(
        tmp_path, extra='echo "Error: Unable to establish IPMI v2 / RMCP+ session" >&2; exit 1')
    with pytest.raises(DriverError) as raised:
        await IpmitoolPower(ipmitool.conf(retries="0")).get_power_state(node(**INFO))
    message = str(raised.value)
    assert "10.0.0.5:6230" in message
    assert "Unable to establish IPMI v2 / RMCP+ session" in message


async def test_failure_message_never_shows_the_password(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, extra='echo "bad password $IPMI_PASSWORD" >&2; exit 1')
    with pytest.raises(DriverError) as raised:
        await IpmitoolPower(ipmitool.conf(retries="0")).get_power_state(node(**INFO))
    assert PASSWORD not in str(raised.value)


async def test_failed_call_is_retried_as_configured(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, extra="exit 1")
    with pytest.raises(DriverError):
        await IpmitoolPower(ipmitool.conf(retries="2")).get_power_state(node(**INFO))
    assert len(ipmitool.calls) == 3


async def test_call_that_succeeds_on_retry_succeeds(tmp_path: Path) -> None:
    flaky = f'[ -e {tmp_path}/failed ] || {{ touch {tmp_path}/failed; exit 1; }}'
    ipmitool = FakeIpmitool(tmp_path, extra=flaky, power="on")
    state = await IpmitoolPower(ipmitool.conf(retries="1")).get_power_state(node(**INFO))
    assert state == states.POWER_ON


async def test_hanging_ipmitool_is_killed_at_the_command_timeout(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path, extra=f"echo $$ > {tmp_path}/pid; exec sleep 30")
    start = time.monotonic()
    with pytest.raises(DriverError, match=r"timed out after 0\.3 s"):
        await IpmitoolPower(ipmitool.conf(command_timeout="0.3", retries="0")).get_power_state(
            node(**INFO))
    assert time.monotonic() - start < 2
    pid = int((tmp_path / "pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


async def test_missing_ipmitool_program_is_a_driver_error(tmp_path: Path) -> None:
    conf = config.load(overrides={"ipmi": {"ipmitool_path": str(tmp_path / "nope"),
                                           "retries": "0"}})
    with pytest.raises(DriverError, match="cannot run"):
        await IpmitoolPower(conf).get_power_state(node(**INFO))


async def test_persistent_boot_device_adds_the_persistent_option(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path)
    await IpmitoolManagement(ipmitool.conf()).set_boot_device(node(**INFO), "disk",
                                                              persistent=True)
    assert ipmitool.commands() == ["chassis bootdev disk options=persistent"]


async def test_an_nmi_is_a_diagnostic_interrupt(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path)
    await IpmitoolManagement(ipmitool.conf()).inject_nmi(node(**INFO))
    assert ipmitool.commands() == ["chassis power diag"]


async def test_one_time_boot_device_has_no_options(tmp_path: Path) -> None:
    ipmitool = FakeIpmitool(tmp_path)
    await IpmitoolManagement(ipmitool.conf()).set_boot_device(node(**INFO), "pxe")
    assert ipmitool.commands() == ["chassis bootdev pxe"]
