"""pxe_ipminative without a BMC: driver_info checks and refusals that need no network."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers import ipminative
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ipmi_common import IpmiInfo
from ironsight.baremetal.drivers.ipminative import NativeIpmiManagement, NativeIpmiPower
from ironsight.common import config
from ironsight.common.exceptions import (
    DriverError,
    InvalidParameterValue,
    MissingParameterValue,
)

CONF = config.load(overrides={"ipmi": {"command_timeout": "0.5", "retries": "0"}})


def node(**driver_info: Any) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ipminative", driver_info=driver_info)


def test_validate_names_missing_address() -> None:
    with pytest.raises(MissingParameterValue, match="ipmi_address"):
        NativeIpmiPower(CONF).validate(node(ipmi_username="admin"))


def test_validate_names_bad_port() -> None:
    with pytest.raises(InvalidParameterValue, match="ipmi_port"):
        NativeIpmiManagement(CONF).validate(node(ipmi_address="10.0.0.5", ipmi_port="x"))


def test_validate_accepts_the_ipmitool_driver_info() -> None:
    NativeIpmiPower(CONF).validate(node(ipmi_address="10.0.0.5", ipmi_port=623,
                                        ipmi_username="admin", ipmi_password="secret"))


def test_password_is_declared_secret() -> None:
    assert NativeIpmiPower(CONF).secret_properties == {"ipmi_password"}


async def test_unknown_boot_device_is_refused_before_any_call() -> None:
    with pytest.raises(InvalidParameterValue, match="cdrom"):
        await NativeIpmiManagement(CONF).set_boot_device(node(ipmi_address="10.0.0.5"),
                                                         "cdrom")


async def test_unknown_power_target_is_refused() -> None:
    with pytest.raises(InvalidParameterValue, match="standby"):
        await NativeIpmiPower(CONF).set_power_state(node(ipmi_address="10.0.0.5"), "standby",
                                                    timeout=1)


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
