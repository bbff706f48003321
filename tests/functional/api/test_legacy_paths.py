"""The URL forms Ironic serves besides `/v1/...`: no version prefix (a cloud whose endpoint is
the service's root URL), and a trailing `.json` below 1.91."""

from __future__ import annotations

import httpx
import pytest

from .helpers import create_node

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)


def _at(minor: int) -> dict[str, str]:
    return {"X-OpenStack-Ironic-API-Version": f"1.{minor}"}


async def test_a_node_is_served_without_the_version_prefix(api: httpx.AsyncClient) -> None:
    node = await create_node(api, name="plain")
    resp = await api.get(f"/nodes/{node['uuid']}")
    assert resp.status_code == 200
    assert resp.json()["name"] == "plain"


async def test_node_detail_is_served_without_the_version_prefix(
        api: httpx.AsyncClient) -> None:
    await create_node(api)
    assert len((await api.get("/nodes/detail")).json()["nodes"]) == 1


async def test_writes_are_served_without_the_version_prefix(api: httpx.AsyncClient) -> None:
    resp = await api.post("/nodes", json={"driver": "fake-hardware", "name": "rootless"})
    assert resp.status_code == 201
    assert (await api.delete("/nodes/rootless")).status_code == 204


async def test_driver_properties_are_served_without_the_version_prefix(
        api: httpx.AsyncClient) -> None:
    resp = await api.get("/drivers/fake-hardware/raid/logical_disk_properties")
    assert resp.status_code == 200
    assert "size_gb" in resp.json()


async def test_an_unknown_top_level_path_is_still_404(api: httpx.AsyncClient) -> None:
    assert (await api.get("/nothing")).status_code == 404


async def test_the_root_document_keeps_its_path(api: httpx.AsyncClient) -> None:
    assert (await api.get("/")).json()["name"] == "OpenStack Ironic API"


async def test_a_json_suffix_is_stripped_below_1_91(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.get(f"/v1/nodes/{node['uuid']}.json", headers=_at(90))
    assert resp.status_code == 200
    assert resp.json()["uuid"] == node["uuid"]


async def test_a_json_suffix_is_a_404_from_1_91(api: httpx.AsyncClient) -> None:
    node = await create_node(api)
    resp = await api.get(f"/v1/nodes/{node['uuid']}.json", headers=_at(91))
    assert resp.status_code == 404


async def test_a_name_ending_in_json_is_still_found_below_1_91(
        api: httpx.AsyncClient) -> None:
    await create_node(api, name="web.json")
    resp = await api.get("/v1/nodes/web.json", headers=_at(90))
    assert resp.status_code == 200
    assert resp.json()["name"] == "web.json"


@pytest.mark.parametrize("collection", ["ports", "portgroups"])
async def test_a_json_suffix_is_stripped_on_other_resources(
        api: httpx.AsyncClient, collection: str) -> None:
    node = await create_node(api)
    body = {"node_uuid": node["uuid"], "address": "52:54:00:12:34:56"}
    created = await api.post(f"/v1/{collection}", json=body)
    assert created.status_code == 201, created.text
    resp = await api.get(f"/v1/{collection}/{created.json()['uuid']}.json", headers=_at(90))
    assert resp.status_code == 200
