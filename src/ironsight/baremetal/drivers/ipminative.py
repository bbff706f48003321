"""IPMI power and management through pyghmi's client: pure Python, no ipmitool needed.

pyghmi is synchronous, so each BMC call runs in a thread of its own, bounded by
`[ipmi] command_timeout`. A thread cannot be killed, so what runs in it must end by itself:
pyghmi gives up on a silent BMC after about five seconds, and a call that has not finished
keeps its BMC's lock, so later calls to that BMC fail fast instead of piling up. The threads
are daemons outside asyncio's (small, shared) default pool: a dead BMC neither starves other
`to_thread` users nor delays the conductor's exit.

pyghmi keeps process-wide session tables keyed by (bmc, user, password, port). Reusing those
sessions is fragile: a session whose BMC restarted or went away is handed back and waited on.
Each call therefore logs in, does its work and logs out, and removes pyghmi's record of the
login attempt, which pyghmi itself never removes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pyghmi.exceptions import IpmiException
from pyghmi.ipmi import command as ipmi_command
from pyghmi.ipmi.private import session as ipmi_session

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
from ironsight.common.exceptions import DriverError
from ironsight.common.pyghmi_calls import bmc_lock, in_daemon_thread

LOG = logging.getLogger(__name__)
T = TypeVar("T")

_PYGHMI_BOOT_DEVICES = {BOOT_DEVICE_PXE: "network", BOOT_DEVICE_DISK: "hd"}
_BOOT_DEVICES_FROM_PYGHMI = {name: device for device, name in _PYGHMI_BOOT_DEVICES.items()}

def _bmc_lock(info: IpmiInfo) -> threading.Lock:
    return bmc_lock(info.address, info.port)


def _forget_login(info: IpmiInfo) -> None:
    """Drop pyghmi's record of a login to this BMC.

    pyghmi files login attempts under the caller's (str) credentials and later deletes them
    under the encoded (bytes) ones, so the record stays forever and the next Command for the
    same BMC gets the old session object back, dead or not.
    """
    key = (info.address, info.username or "", info.password or "", info.port, None)
    ipmi_session.Session.initting_sessions.pop(key, None)


def _describe(exc: BaseException, info: IpmiInfo) -> str:
    """pyghmi raises IpmiException(None) when a BMC does not answer."""
    text = str(exc)
    if text in ("", "None"):
        text = "no answer" if isinstance(exc, IpmiException) else type(exc).__name__
    return scrub(text, info.password)


def _in_session(info: IpmiInfo, what: str, lock_timeout: float,
                action: Callable[[Any], T]) -> T:
    """Log in, run `action(command)`, log out. Runs in a worker thread."""
    lock = _bmc_lock(info)
    if not lock.acquire(timeout=lock_timeout):
        raise DriverError(f"'{what}' on BMC {info}: a previous call to this BMC has not "
                          "finished (BMC not answering?)")
    try:
        _forget_login(info)
        try:
            cmd = ipmi_command.Command(bmc=info.address, userid=info.username or "",
                                       password=info.password or "", port=info.port)
        except Exception as exc:
            raise DriverError(
                f"cannot open an IPMI session to BMC {info}: {_describe(exc, info)}") from None
        try:
            return action(cmd)
        except Exception as exc:
            raise DriverError(f"'{what}' on BMC {info} failed: {_describe(exc, info)}") from None
        finally:
            with contextlib.suppress(Exception):
                cmd.ipmi_session.logout()
    finally:
        _forget_login(info)
        lock.release()


class _NativeIpmiInterface(BaseInterface):
    properties = IPMI_PROPERTIES
    secret_properties = IPMI_SECRET_PROPERTIES

    def validate(self, node: NodeContext) -> None:
        parse_ipmi_info(node)

    async def _call(self, info: IpmiInfo, what: str, action: Callable[[Any], T]) -> T:
        """One bounded, retried pyghmi call."""
        timeout = self.conf.ipmi.command_timeout

        async def once() -> T:
            try:
                return await asyncio.wait_for(
                    in_daemon_thread(_in_session, info, what, timeout, action), timeout)
            except TimeoutError:
                raise DriverError(
                    f"'{what}' on BMC {info}: no answer within {timeout:g} s") from None

        LOG.debug("%s on BMC %s", what, info)
        return await with_retries(self.conf, what, info, once)


def _power_state(cmd: Any) -> str:
    state = cmd.get_power()["powerstate"]
    if state not in ("on", "off"):
        raise DriverError(f"unexpected power state {state!r}")
    return states.POWER_ON if state == "on" else states.POWER_OFF


class NativeIpmiPower(_NativeIpmiInterface, PowerInterface):
    async def get_power_state(self, node: NodeContext) -> str:
        info = parse_ipmi_info(node)
        return await self._call(info, "get power state", _power_state)

    async def set_power_state(self, node: NodeContext, target: str, timeout: float) -> None:
        info = parse_ipmi_info(node)

        async def get_state() -> str:
            return await self._call(info, "get power state", _power_state)

        async def send(action: str) -> None:
            await self._call(info, f"power {action}", lambda cmd: cmd.set_power(action))

        await change_power_state(f"BMC {info}", target, timeout, get_state, send)


class NativeIpmiManagement(_NativeIpmiInterface, ManagementInterface):
    async def set_boot_device(self, node: NodeContext, device: str,
                              persistent: bool = False) -> None:
        info = parse_ipmi_info(node)
        check_boot_device(device)
        name = _PYGHMI_BOOT_DEVICES[device]

        def set_bootdev(cmd: Any) -> None:
            result = cmd.set_bootdev(name, persist=persistent)
            if isinstance(result, dict) and "error" in result:
                raise DriverError(str(result["error"]))

        await self._call(info, f"set boot device {device}", set_bootdev)

    async def get_boot_device(self, node: NodeContext) -> dict[str, Any]:
        info = parse_ipmi_info(node)
        result = await self._call(info, "get boot device", lambda cmd: cmd.get_bootdev())
        device = _BOOT_DEVICES_FROM_PYGHMI.get(result.get("bootdev"))
        return {"boot_device": device,
                "persistent": bool(result.get("persistent")) if device else None}
