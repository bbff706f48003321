"""A node's target RAID configuration (`PUT /v1/nodes/{node}/states/raid`, 1.12)."""

from __future__ import annotations

import httpx

from .helpers import create_node, fault

CONFIG = {"logical_disks": [{"size_gb": "MAX", "raid_level": "1", "is_root_volume": True}]}


def at(version: str) -> dict[str, str]:
    return {"X-OpenStack-Ironic-API-Version": version}


async def set_raid(api: httpx.AsyncClient, node: str, config: object,
                   version: str = "1.12") -> httpx.Response:
    return await api.put(f"/v1/nodes/{node}/states/raid", json=config, headers=at(version))


async def test_fake_hardware_takes_a_target_raid_config(api: httpx.AsyncClient) -> None:
    node = await create_node(api, name="n1")
    assert node["raid_interface"] == "fake"
    resp = await set_raid(api, "n1", CONFIG)
    assert resp.status_code == 204, resp.text
    assert (await api.get("/v1/nodes/n1")).json()["target_raid_config"] == CONFIG
    assert (await api.get("/v1/nodes/n1/states")).json()["target_raid_config"] == CONFIG
    events = [e["event"] for e in (await api.get("/v1/nodes/n1/history")).json()["history"]]
    assert "Node updated: target_raid_config" in events


async def test_an_empty_config_unsets_it(api: httpx.AsyncClient) -> None:
    await create_node(api, name="n1")
    await set_raid(api, "n1", CONFIG)
    assert (await set_raid(api, "n1", {})).status_code == 204
    assert (await api.get("/v1/nodes/n1")).json()["target_raid_config"] == {}


async def test_a_new_node_has_an_empty_target_raid_config(api: httpx.AsyncClient) -> None:
    await create_node(api, name="n1")
    assert (await api.get("/v1/nodes/n1")).json()["target_raid_config"] == {}


async def test_a_bad_config_is_400_naming_the_field_and_keeps_the_old_one(
        api: httpx.AsyncClient) -> None:
    await create_node(api, name="n1")
    await set_raid(api, "n1", CONFIG)
    resp = await set_raid(api, "n1", {"logical_disks": [{"size_gb": 0, "raid_level": "1"}]})
    assert resp.status_code == 400
    assert fault(resp).startswith("RAID config validation error: logical_disks[0].size_gb")
    assert (await api.get("/v1/nodes/n1")).json()["target_raid_config"] == CONFIG


async def test_no_raid_interface_is_404_as_in_ironic(api: httpx.AsyncClient) -> None:
    await create_node(api, name="n1", raid_interface="no-raid")
    resp = await set_raid(api, "n1", CONFIG)
    assert resp.status_code == 404
    assert "does not support raid" in fault(resp)
    assert (await set_raid(api, "n1", {})).status_code == 204  # unsetting is always allowed


async def test_before_1_12_the_endpoint_is_not_acceptable(api: httpx.AsyncClient) -> None:
    await create_node(api, name="n1")  # Ironic 39 answers 406 here, not 404
    assert (await set_raid(api, "n1", CONFIG, version="1.11")).status_code == 406


async def test_a_missing_node_is_404(api: httpx.AsyncClient) -> None:
    resp = await set_raid(api, "no-such-node", CONFIG)
    assert resp.status_code == 404
    assert "no-such-node" in fault(resp)
