"""pxe_ipminative only: pyghmi's client keeps sessions in process-wide tables, which must not
outlive a call. What it does like pxe_ipmitool (power, boot device, wrong password, silent
BMC) is tested for both in test_ipmi_power_and_boot.py."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ipminative import NativeIpmiPower
from ironsight.common import config
from ironsight.lab.bmc import BmcServer, InMemoryMachine, VirtualBmc

pytestmark = pytest.mark.functional

# Calls here must succeed: 5 s leaves room for a stall of the (noisy, shared) test machine.
CONF = config.load(overrides={"ipmi": {"command_timeout": "5", "retries": "0"}})


def node(driver_info: dict[str, Any]) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ipminative", driver_info=driver_info)


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
