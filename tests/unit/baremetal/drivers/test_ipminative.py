"""pxe_ipminative without a BMC: a BMC still busy with an unfinished pyghmi call. The
driver_info checks and refusals it shares with pxe_ipmitool are in test_ipmi_interfaces.py."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers import ipminative
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ipmi_common import IpmiInfo
from ironsight.baremetal.drivers.ipminative import NativeIpmiPower
from ironsight.common import config
from ironsight.common.exceptions import DriverError

CONF = config.load(overrides={"ipmi": {"command_timeout": "0.5", "retries": "0"}})


def node(**driver_info: Any) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ipminative", driver_info=driver_info)


async def test_bmc_still_busy_with_an_unfinished_call_fails_fast() -> None:
    """A pyghmi thread cannot be killed: calls to a BMC whose last call is still running
    must fail within the command timeout instead of piling up."""
    info = node(ipmi_address="192.0.2.1", ipmi_port=6299)
    lock = ipminative._bmc_lock(IpmiInfo("192.0.2.1", 6299))
    lock.acquire()
    try:
        start = time.monotonic()
        with pytest.raises(DriverError, match=r"192\.0\.2\.1:6299"):
            await NativeIpmiPower(CONF).get_power_state(info)
        assert time.monotonic() - start < 1.5
    finally:
        lock.release()


async def test_power_state_failure_is_raised_for_an_unfinished_call() -> None:
    info = node(ipmi_address="192.0.2.1", ipmi_port=6298)
    lock = ipminative._bmc_lock(IpmiInfo("192.0.2.1", 6298))
    lock.acquire()
    try:
        with pytest.raises(DriverError, match="power on"):
            await NativeIpmiPower(CONF).set_power_state(info, states.POWER_ON, timeout=5)
    finally:
        lock.release()
