"""Boot mode, Secure Boot and NMI (API 1.76 and 1.29), and a node's children (1.83): what
the management interface can do, Ironic's answer where it cannot."""

from __future__ import annotations

import httpx
import pytest

from .helpers import create_node, fault

pytestmark = pytest.mark.functional


async def node_uuid(api: httpx.AsyncClient, **fields: object) -> str:
    return str((await create_node(api, **fields))["uuid"])


async def events(api: httpx.AsyncClient, node: str) -> list[str]:
    return [e["event"] for e in (await api.get(f"/v1/nodes/{node}/history")).json()["history"]]


async def test_fake_hardware_takes_a_boot_mode_and_records_it(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, driver="fake-hardware")
    resp = await api.put(f"/v1/nodes/{node}/states/boot_mode", json={"target": "uefi"})
    assert resp.status_code == 202, resp.text
    assert "Boot mode set to uefi" in await events(api, node)


async def test_a_boot_mode_other_than_bios_or_uefi_is_refused(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, driver="fake-hardware")
    resp = await api.put(f"/v1/nodes/{node}/states/boot_mode", json={"target": "efi"})
    assert resp.status_code == 400
    assert "Invalid boot mode efi" in fault(resp)


async def test_a_boot_mode_without_target_is_refused(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, driver="fake-hardware")
    resp = await api.put(f"/v1/nodes/{node}/states/boot_mode", json={})
    assert resp.status_code == 400
    assert fault(resp) == "Missing mandatory parameter: target"


async def test_a_type_without_boot_mode_setting_says_so(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, driver="pxe_ipmitool",
                           driver_info={"ipmi_address": "192.0.2.1"})
    resp = await api.put(f"/v1/nodes/{node}/states/boot_mode", json={"target": "uefi"})
    assert resp.status_code == 400
    assert fault(resp) == ("Driver pxe_ipmitool does not support set_boot_mode (disabled or "
                           "not implemented).")
    assert not any("Boot mode" in e for e in await events(api, node))


async def test_secure_boot_takes_a_boolean(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, driver="fake-hardware")
    url = f"/v1/nodes/{node}/states/secure_boot"
    assert (await api.put(url, json={"target": True})).status_code == 202
    assert "Secure Boot enabled" in await events(api, node)
    resp = await api.put(url, json={"target": "yes"})
    assert resp.status_code == 400
    assert "Invalid secure boot state" in fault(resp)


async def test_fake_hardware_cannot_inject_an_nmi(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, driver="fake-hardware")
    resp = await api.put(f"/v1/nodes/{node}/management/inject_nmi", json={})
    assert resp.status_code == 400
    assert fault(resp) == ("Driver fake-hardware does not support inject_nmi (disabled or not "
                           "implemented).")


async def test_inject_nmi_takes_no_arguments(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, driver="fake-hardware")
    resp = await api.put(f"/v1/nodes/{node}/management/inject_nmi", json={"x": 1})
    assert resp.status_code == 400
    assert "takes no arguments" in fault(resp)


async def test_children_are_the_nodes_naming_this_one_their_parent(
        api: httpx.AsyncClient) -> None:
    parent = await node_uuid(api, driver="fake-hardware")
    child = await node_uuid(api, driver="fake-hardware", parent_node=parent)
    await node_uuid(api, driver="fake-hardware")  # an unrelated node
    doc = (await api.get(f"/v1/nodes/{parent}/children")).json()
    assert doc["children"] == [child]
    assert doc["links"]["href"].endswith(f"/v1/nodes/{parent}/children")
    assert (await api.get(f"/v1/nodes/{child}/children")).json()["children"] == []
