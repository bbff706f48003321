"""Known `properties` and `driver_info` fields are typed at create and PATCH (400 naming the
field, nothing changed); Ironic's string booleans are taken where Ironic takes them."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from .helpers import create_node, fault

BAD_PROPERTIES = [
    ("cpus", "9" * 401),
    ("cpus", -1),
    ("cpus", "four"),
    ("cpus", 4.5),
    ("cpus", True),
    ("memory_mb", 2**31),
    ("local_gb", [10]),
    ("cpu_arch", 64),
    ("cpu_arch", "x86 64\n"),
]
BAD_DRIVER_INFO = [
    ("ipmi_port", "abc"),
    ("ipmi_port", 0),
    ("ipmi_port", 65536),
    ("ipmi_port", "623 ; reboot"),
    ("ssh_port", {"port": 22}),
    ("ipmi_address", "198.18.0.1 -P secret"),
    ("ipmi_address", "bmc\x00.example"),
    ("ssh_address", ["host"]),
    ("ipmi_username", 5),
]


async def nodes(api: httpx.AsyncClient) -> Any:
    return (await api.get("/v1/nodes/detail")).json()["nodes"]


@pytest.mark.parametrize(("key", "value"), BAD_PROPERTIES)
async def test_bad_known_property_at_create_is_400_naming_it(
        api: httpx.AsyncClient, key: str, value: Any) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake", "properties": {key: value}})
    assert resp.status_code == 400, resp.text
    assert f"properties field '{key}'" in fault(resp)
    assert await nodes(api) == []


@pytest.mark.parametrize(("key", "value"), BAD_PROPERTIES)
async def test_bad_known_property_in_patch_is_400_and_changes_nothing(
        api: httpx.AsyncClient, key: str, value: Any) -> None:
    node = await create_node(api, properties={"cpus": 4})
    before = await nodes(api)
    resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                           json=[{"op": "add", "path": f"/properties/{key}", "value": value}])
    assert resp.status_code == 400, resp.text
    assert f"properties field '{key}'" in fault(resp)
    assert await nodes(api) == before


@pytest.mark.parametrize(("key", "value"), BAD_DRIVER_INFO)
async def test_bad_known_driver_info_field_in_patch_is_400_and_changes_nothing(
        api: httpx.AsyncClient, key: str, value: Any) -> None:
    node = await create_node(api, driver_info={"ipmi_address": "198.18.0.1"})
    before = await nodes(api)
    resp = await api.patch(f"/v1/nodes/{node['uuid']}",
                           json=[{"op": "add", "path": f"/driver_info/{key}", "value": value}])
    assert resp.status_code == 400, resp.text
    assert f"driver_info field '{key}'" in fault(resp)
    assert await nodes(api) == before


async def test_bad_driver_info_at_create_is_400(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake",
                                             "driver_info": {"ipmi_port": "abc"}})
    assert resp.status_code == 400
    assert "driver_info field 'ipmi_port'" in fault(resp)
    assert await nodes(api) == []


async def test_a_non_string_password_is_400_without_its_value(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/nodes", json={"driver": "fake",
                                             "driver_info": {"ipmi_password": 12345678}})
    assert resp.status_code == 400
    assert "driver_info field 'ipmi_password' must be a string" in fault(resp)
    assert "12345678" not in resp.text


@pytest.mark.parametrize(("properties", "driver_info"), [
    ({"cpus": 4, "memory_mb": 8192, "local_gb": 100, "cpu_arch": "aarch64"},
     {"ipmi_port": 623, "ipmi_address": "bmc-1.example.org"}),
    ({"cpus": "4", "memory_mb": "8192", "local_gb": 0}, {"ipmi_port": "623",
                                                         "ipmi_address": "[2001:db8::1]"}),
    ({"cpus": 2**31 - 1}, {"ssh_port": 65535, "ssh_address": "2001:db8::1"}),
])
async def test_good_known_fields_are_stored_as_given(
        api: httpx.AsyncClient, properties: dict[str, Any], driver_info: dict[str, Any]) -> None:
    node = await create_node(api, properties=properties, driver_info=driver_info)
    assert node["properties"] == properties
    assert node["driver_info"] == driver_info


async def test_unknown_architecture_is_stored_with_a_warning(
        api: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="ironsight.baremetal.fields"):
        node = await create_node(api, properties={"cpu_arch": "sparc64"})
    assert node["properties"]["cpu_arch"] == "sparc64"
    assert "'cpu_arch' is 'sparc64', not a known architecture" in caplog.text


@pytest.mark.parametrize(("value", "stored"), [("True", True), ("true", True), ("1", True),
                                               ("on", True), ("False", False), ("no", False),
                                               (0, False)])
async def test_port_pxe_enabled_takes_ironics_string_booleans(
        api: httpx.AsyncClient, value: Any, stored: bool) -> None:
    node = await create_node(api)
    resp = await api.post("/v1/ports", json={"address": "52:54:00:00:00:01",
                                             "node_uuid": node["uuid"], "pxe_enabled": value})
    assert resp.status_code == 201, resp.text
    assert resp.json()["pxe_enabled"] is stored


@pytest.mark.parametrize("value", ["maybe", 2, "", None])
async def test_port_pxe_enabled_that_is_no_boolean_is_400(api: httpx.AsyncClient,
                                                          value: Any) -> None:
    node = await create_node(api)
    resp = await api.post("/v1/ports", json={"address": "52:54:00:00:00:01",
                                             "node_uuid": node["uuid"], "pxe_enabled": value})
    assert resp.status_code == 400
    assert "pxe_enabled" in fault(resp)
    assert (await api.get("/v1/ports")).json()["ports"] == []


async def test_boot_device_persistent_takes_a_string_boolean(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.put(f"/v1/nodes/{node['uuid']}/management/boot_device",
                         json={"boot_device": "pxe", "persistent": "True"})
    assert resp.status_code == 204, resp.text
    doc = (await api.get(f"/v1/nodes/{node['uuid']}/management/boot_device")).json()
    assert doc == {"boot_device": "pxe", "persistent": True}
