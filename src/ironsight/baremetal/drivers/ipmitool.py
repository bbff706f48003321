"""IPMI power and management through the `ipmitool` program (IPMI 2.0, `-I lanplus`).

Each call is one `ipmitool` process run without a shell. The password travels only in the
child's environment (`-E` reads $IPMI_PASSWORD): never in argv, where any user could read it
with `ps`, and never in logs or error messages. ipmitool's own retries are turned down to one
attempt (`-R 1`) so that `[ipmi] command_timeout` bounds a call; `[ipmi] retries` then repeats
failed calls, as Ironic does.

The driver_info parsing is shared with the pyghmi-based driver (`ipmi_common`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Mapping
from typing import Any

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import (
    BOOT_DEVICE_DISK,
    BOOT_DEVICE_PXE,
    BaseInterface,
    ManagementInterface,
    NodeContext,
    PowerInterface,
    check_boot_device,
)
from ironsight.baremetal.drivers.ipmi_common import (
    IPMI_PROPERTIES,
    IPMI_SECRET_PROPERTIES,
    IpmiInfo,
    parse_ipmi_info,
    with_retries,
)
from ironsight.baremetal.drivers.power_sequence import change_power_state, scrub
from ironsight.common.config import Config
from ironsight.common.exceptions import (
    DriverError,
)

LOG = logging.getLogger(__name__)

# Lines of `ipmitool chassis bootparam get 5` -> our boot devices
_BOOT_SELECTORS = {
    "Force PXE": BOOT_DEVICE_PXE,
    "Force Boot from default Hard-Drive": BOOT_DEVICE_DISK,
}
_POWER_STATUS_RE = re.compile(r"Chassis Power is (on|off)")
_BOOT_SELECTOR_RE = re.compile(r"Boot Device Selector\s*:\s*(.+)")
# what ipmitool says for a wrong password as well as for a silent BMC
_NO_SESSION = "Unable to establish IPMI v2 / RMCP+ session"


# --- ipmitool ----------------------------------------------------------------------------------


def ipmitool_argv(ipmitool: str, info: IpmiInfo, args: tuple[str, ...]) -> list[str]:
    """The command line; the password is deliberately absent (`-E`: from the environment)."""
    argv = [ipmitool, "-I", "lanplus", "-H", info.address, "-p", str(info.port)]
    if info.username:
        argv += ["-U", info.username]
    return [*argv, "-E", "-R", "1", *args]


def ipmitool_env(info: IpmiInfo, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ours plus IPMI_PASSWORD, always set so that ipmitool never
    falls back to prompting on a terminal."""
    env = {key: value for key, value in (os.environ if base is None else base).items()
           if key not in ("IPMI_PASSWORD", "IPMITOOL_PASSWORD")}
    env["IPMI_PASSWORD"] = info.password or ""
    env["LC_ALL"] = "C"  # we parse the output
    return env


def parse_power_status(output: str) -> str:
    """'Chassis Power is on' -> 'power on'."""
    match = _POWER_STATUS_RE.search(output)
    if match is None:
        raise DriverError(f"unexpected output of 'ipmitool power status': {output.strip()!r}")
    return states.POWER_ON if match.group(1) == "on" else states.POWER_OFF


def parse_boot_param(output: str) -> dict[str, Any]:
    """Read `ipmitool chassis bootparam get 5`: device (None: no override or another one)."""
    if "Boot Flag Invalid" in output:
        return {"boot_device": None, "persistent": None}
    match = _BOOT_SELECTOR_RE.search(output)
    if match is None:
        raise DriverError(
            f"unexpected output of 'ipmitool chassis bootparam get 5': {output.strip()!r}")
    device = _BOOT_SELECTORS.get(match.group(1).strip())
    persistent = "Options apply to all future boots" in output
    return {"boot_device": device, "persistent": persistent if device else None}


class IpmitoolRunner:
    """Runs one ipmitool command, bounded in time and retried as configured."""

    def __init__(self, conf: Config) -> None:
        self.conf = conf

    async def run(self, info: IpmiInfo, *args: str) -> str:
        return await with_retries(self.conf, f"ipmitool {' '.join(args)}", info,
                                  lambda: self._run_once(info, args))

    async def _run_once(self, info: IpmiInfo, args: tuple[str, ...]) -> str:
        what = f"ipmitool {' '.join(args)}"
        timeout = self.conf.ipmi.command_timeout
        LOG.debug("%s on BMC %s", what, info)
        try:
            proc = await asyncio.create_subprocess_exec(
                *ipmitool_argv(self.conf.ipmi.ipmitool_path, info, args),
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=ipmitool_env(info))
        except OSError as exc:
            raise DriverError(f"cannot run {self.conf.ipmi.ipmitool_path!r} for BMC {info}: "
                              f"{exc.strerror}") from None
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            raise DriverError(f"'{what}' on BMC {info} timed out after {timeout:g} s") from None
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        stdout = out.decode(errors="replace")
        if proc.returncode != 0:
            detail = err.decode(errors="replace").strip() or stdout.strip() or "no output"
            if _NO_SESSION in detail:
                detail += " (check ipmi_username and ipmi_password, and that the BMC answers)"
            raise DriverError(f"'{what}' on BMC {info} failed (exit status {proc.returncode}): "
                              f"{scrub(detail, info.password)}")
        return stdout


class _IpmitoolInterface(BaseInterface):
    properties = IPMI_PROPERTIES
    secret_properties = IPMI_SECRET_PROPERTIES

    def __init__(self, conf: Config) -> None:
        super().__init__(conf)
        self.ipmitool = IpmitoolRunner(conf)

    def validate(self, node: NodeContext) -> None:
        parse_ipmi_info(node)


class IpmitoolPower(_IpmitoolInterface, PowerInterface):
    async def get_power_state(self, node: NodeContext) -> str:
        info = parse_ipmi_info(node)
        return parse_power_status(await self.ipmitool.run(info, "power", "status"))

    async def set_power_state(self, node: NodeContext, target: str, timeout: float) -> None:
        info = parse_ipmi_info(node)

        async def get_state() -> str:
            return parse_power_status(await self.ipmitool.run(info, "power", "status"))

        async def send(action: str) -> None:
            await self.ipmitool.run(info, "power", action)

        await change_power_state(f"BMC {info}", target, timeout, get_state, send)


class IpmitoolManagement(_IpmitoolInterface, ManagementInterface):
    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        info = parse_ipmi_info(node)
        check_boot_device(device)
        args = ["chassis", "bootdev", device]
        if persistent:
            args.append("options=persistent")
        await self.ipmitool.run(info, *args)

    async def get_boot_device(self, node: NodeContext) -> dict[str, Any]:
        info = parse_ipmi_info(node)
        return parse_boot_param(await self.ipmitool.run(info, "chassis", "bootparam", "get", "5"))

    async def inject_nmi(self, node: NodeContext) -> None:
        """A diagnostic interrupt, as Ironic's ipmitool management sends it."""
        await self.ipmitool.run(parse_ipmi_info(node), "chassis", "power", "diag")
