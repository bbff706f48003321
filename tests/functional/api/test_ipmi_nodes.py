"""Nodes driven through the API by the two IPMI hardware types, against a real virtual BMC
(pyghmi's BMC over UDP): real `ipmitool` for pxe_ipmitool, pyghmi's client for pxe_ipminative."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ironsight.lab.bmc import BmcServer

from .helpers import create_node, manage, wait_for

PASSWORD = "pa55-word"


@pytest.fixture
def db_url(tmp_path: Path) -> str:  # the driver path does not depend on the database
    return f"sqlite:///{tmp_path / 'bm.sqlite'}"


@pytest.fixture
def conf_overrides() -> dict[str, dict[str, str]]:
    return {"ipmi": {"command_timeout": "2", "retries": "0"},
            "conductor": {"power_state_change_timeout": "10", "sync_power_state_interval": "0"}}


@pytest.fixture
def bmc() -> Iterator[Any]:
    with BmcServer.in_memory(1, "admin", PASSWORD) as server:
        yield server.bmcs[0]


def closed_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def info(port: int, password: str = PASSWORD) -> dict[str, Any]:
    return {"ipmi_address": "127.0.0.1", "ipmi_port": port, "ipmi_username": "admin",
            "ipmi_password": password}


@pytest.mark.parametrize("driver", ["pxe_ipmitool", "pxe_ipminative"])
async def test_manage_reads_power_state_from_the_bmc(api: httpx.AsyncClient, bmc: Any,
                                                     driver: str) -> None:
    bmc.machine.power_on()
    node = await create_node(api, driver=driver, driver_info=info(bmc.port))
    doc = await manage(api, node["uuid"])
    assert doc["power_state"] == "power on"


@pytest.mark.parametrize("driver", ["pxe_ipmitool", "pxe_ipminative"])
async def test_power_actions_reach_the_machine(api: httpx.AsyncClient, bmc: Any,
                                               driver: str) -> None:
    node = await create_node(api, driver=driver, driver_info=info(bmc.port))
    url = f"/v1/nodes/{node['uuid']}/states/power"
    await api.put(url, json={"target": "power on"})
    await wait_for(api, node["uuid"], power="power on")
    assert bmc.machine.is_powered_on()
    await api.put(url, json={"target": "power off"})
    await wait_for(api, node["uuid"], power="power off")
    assert not bmc.machine.is_powered_on()
    await api.put(url, json={"target": "rebooting"})
    await wait_for(api, node["uuid"], power="power on")
    assert bmc.machine.is_powered_on()


@pytest.mark.parametrize("driver", ["pxe_ipmitool", "pxe_ipminative"])
async def test_boot_device_reaches_the_machine(api: httpx.AsyncClient, bmc: Any,
                                               driver: str) -> None:
    node = await create_node(api, driver=driver, driver_info=info(bmc.port))
    resp = await api.put(f"/v1/nodes/{node['uuid']}/management/boot_device",
                         json={"boot_device": "pxe", "persistent": False})
    assert resp.status_code == 204, resp.text
    assert bmc.machine.get_boot_device().device == "network"  # IPMI's name for PXE


@pytest.mark.parametrize("driver", ["pxe_ipmitool", "pxe_ipminative"])
async def test_silent_bmc_fails_verification_with_clear_error(api: httpx.AsyncClient,
                                                              driver: str) -> None:
    port = closed_udp_port()
    node = await create_node(api, driver=driver, driver_info=info(port))
    started = time.monotonic()
    resp = await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "manage"})
    assert resp.status_code == 202
    assert time.monotonic() - started < 1  # the API never waits for the BMC
    doc = await wait_for(api, node["uuid"], provision="enroll", timeout=30)
    assert "127.0.0.1" in doc["last_error"]
    assert doc["reservation"] is None
    assert PASSWORD not in doc["last_error"]


async def test_silent_bmc_fails_power_action_and_releases_lock(api: httpx.AsyncClient) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info=info(closed_udp_port()))
    await api.put(f"/v1/nodes/{node['uuid']}/states/power", json={"target": "power on"})
    doc = await wait_for(api, node["uuid"], timeout=30)
    assert doc["last_error"].startswith("Failed to change power state to 'power on'")
    assert (doc["reservation"], doc["target_power_state"]) == (None, None)


@pytest.mark.parametrize("driver", ["pxe_ipmitool", "pxe_ipminative"])
async def test_wrong_password_fails_verification(api: httpx.AsyncClient, bmc: Any,
                                                 driver: str) -> None:
    node = await create_node(api, driver=driver, driver_info=info(bmc.port, "wrong-one"))
    await api.put(f"/v1/nodes/{node['uuid']}/states/provision", json={"target": "manage"})
    doc = await wait_for(api, node["uuid"], provision="enroll", timeout=30)
    assert doc["last_error"]
    assert "wrong-one" not in doc["last_error"]


async def test_power_sync_records_a_change_made_outside(api: httpx.AsyncClient, bmc: Any,
                                                        service: Any) -> None:
    node = await create_node(api, driver="pxe_ipmitool", driver_info=info(bmc.port))
    await manage(api, node["uuid"])
    bmc.machine.power_on()  # someone pressed the button
    assert await service.periodic.sync_power_states() == 1
    doc = (await api.get(f"/v1/nodes/{node['uuid']}")).json()
    assert doc["power_state"] == "power on"
    history = (await api.get(f"/v1/nodes/{node['uuid']}/history")).json()["history"]
    assert history[-1]["event"] == "Power state changed outside ironsight: power off -> power on"


async def test_power_sync_skips_fake_nodes(api: httpx.AsyncClient, service: Any) -> None:
    node = await create_node(api)
    await manage(api, node["uuid"])
    assert await service.periodic.sync_power_states() == 0
