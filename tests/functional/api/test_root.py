from __future__ import annotations

import httpx

from .helpers import fault, framework_error


async def test_root_document_advertises_version_range(api: httpx.AsyncClient) -> None:
    doc = (await api.get("/")).json()
    assert doc["default_version"]["min_version"] == "1.1"
    assert doc["default_version"]["version"] == "1.115"


async def test_responses_carry_version_headers(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes")
    assert resp.headers["X-OpenStack-Ironic-API-Minimum-Version"] == "1.1"
    assert resp.headers["X-OpenStack-Ironic-API-Maximum-Version"] == "1.115"
    assert resp.headers["X-OpenStack-Ironic-API-Version"] == "1.115"
    assert resp.headers["openstack-request-id"].startswith("req-")


async def test_no_version_header_means_1_1(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes", headers={"X-OpenStack-Ironic-API-Version": "1.1"})
    assert resp.headers["X-OpenStack-Ironic-API-Version"] == "1.1"


async def test_latest_resolves_to_maximum(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes", headers={"X-OpenStack-Ironic-API-Version": "latest"})
    assert resp.headers["X-OpenStack-Ironic-API-Version"] == "1.115"


async def test_unsupported_version_is_406_with_range(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes", headers={"X-OpenStack-Ironic-API-Version": "1.200"})
    assert resp.status_code == 406
    assert "The supported version range is: [1.1, 1.115]" in \
        framework_error(resp)["description"]


async def test_malformed_version_is_406_as_ironic(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nodes", headers={"X-OpenStack-Ironic-API-Version": "one"})
    assert resp.status_code == 406
    assert framework_error(resp)["description"] == \
        "Invalid value for X-OpenStack-Ironic-API-Version header"


async def test_unknown_path_is_the_frameworks_404(api: httpx.AsyncClient) -> None:
    resp = await api.get("/v1/nothing")
    assert resp.status_code == 404
    assert framework_error(resp) == {"code": 404, "title": "Not Found", "description": ""}


async def test_an_unknown_method_is_405_naming_the_methods_of_the_path(
        api: httpx.AsyncClient) -> None:
    resp = await api.put("/v1/nodes", json={})
    assert resp.status_code == 405
    assert resp.headers["Allow"] == "DELETE, GET, PATCH, POST"
    assert framework_error(resp)["title"] == "Method Not Allowed"


async def test_a_write_to_the_node_collection_needs_a_node(api: httpx.AsyncClient) -> None:
    resp = await api.delete("/v1/nodes")
    assert resp.status_code == 400
    assert fault(resp) == "Missing mandatory parameter: node_ident"


async def test_post_to_the_root_answers_as_get(api: httpx.AsyncClient) -> None:
    resp = await api.post("/")
    assert resp.status_code == 200
    assert resp.json()["name"] == "OpenStack Ironic API"


async def test_v1_lists_media_types_as_one_object(api: httpx.AsyncClient) -> None:
    assert (await api.get("/v1")).json()["media_types"] == {
        "base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"}


async def test_drivers_lists_enabled_hardware_types(api: httpx.AsyncClient) -> None:
    names = {d["name"] for d in (await api.get("/v1/drivers")).json()["drivers"]}
    assert {"fake-hardware", "pxe_ipmitool", "pxe_ipminative", "pxe_ssh"} <= names


async def test_driver_properties_describe_driver_info(api: httpx.AsyncClient) -> None:
    props = (await api.get("/v1/drivers/pxe_ipmitool/properties")).json()
    assert "ipmi_address" in props


async def test_unknown_driver_is_404(api: httpx.AsyncClient) -> None:
    assert (await api.get("/v1/drivers/nosuch")).status_code == 404


RAID_PROPERTIES = "/v1/drivers/{}/raid/logical_disk_properties"


async def test_fake_hardware_describes_the_raid_logical_disk_properties(
        api: httpx.AsyncClient) -> None:
    resp = await api.get(RAID_PROPERTIES.format("fake-hardware"))
    assert resp.status_code == 200
    assert set(resp.json()) == {
        "raid_level", "size_gb", "volume_name", "is_root_volume", "share_physical_disks",
        "disk_type", "interface_type", "number_of_physical_disks", "controller",
        "physical_disks"}
    assert "Required" in resp.json()["size_gb"]


async def test_a_type_without_raid_has_no_logical_disk_properties(
        api: httpx.AsyncClient) -> None:
    resp = await api.get(RAID_PROPERTIES.format("pxe_ipmitool"))
    assert resp.status_code == 404
    assert fault(resp) == ("Driver pxe_ipmitool does not support raid (disabled or not "
                           "implemented).")


async def test_raid_logical_disk_properties_before_1_12_are_not_acceptable(
        api: httpx.AsyncClient) -> None:
    resp = await api.get(RAID_PROPERTIES.format("fake-hardware"),
                         headers={"X-OpenStack-Ironic-API-Version": "1.11"})
    assert resp.status_code == 406  # as recorded from Ironic 39
