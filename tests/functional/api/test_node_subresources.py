"""Node traits, VIFs and virtual media with Ironic's codes and texts, and Ironic's answers
for the node sub-resources ironsight does not do (never a bare 404)."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from tests.functional.api.helpers import create_node, fault

pytestmark = pytest.mark.functional

VIF = "200712fc-fdfb-47da-89a6-2d19f76c7618"
MISSING = "5c9dcd04-2073-49bc-9618-99ae634d8971"


async def node_uuid(api: httpx.AsyncClient, driver: str = "fake-hardware") -> str:
    return str((await create_node(api, driver=driver))["uuid"])


async def traits(api: httpx.AsyncClient, node: str) -> list[str]:
    return list((await api.get(f"/v1/nodes/{node}/traits")).json()["traits"])


async def test_a_trait_is_added_and_shown_in_the_node(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.put(f"/v1/nodes/{node}/traits/CUSTOM_FAKE")
    assert resp.status_code == 204
    assert resp.headers["Location"].endswith(f"/v1/nodes/{node}/traits/CUSTOM_FAKE")
    assert await traits(api, node) == ["CUSTOM_FAKE"]
    assert (await api.get(f"/v1/nodes/{node}")).json()["traits"] == ["CUSTOM_FAKE"]


async def test_traits_are_replaced_as_a_whole(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    await api.put(f"/v1/nodes/{node}/traits", json={"traits": ["CUSTOM_A", "CUSTOM_B"]})
    assert await traits(api, node) == ["CUSTOM_A", "CUSTOM_B"]
    assert (await api.put(f"/v1/nodes/{node}/traits",
                          json={"traits": ["CUSTOM_C"]})).status_code == 204
    assert await traits(api, node) == ["CUSTOM_C"]


async def test_concurrent_trait_additions_lose_none(api: httpx.AsyncClient) -> None:
    """Each change is computed on the traits it read and written only if no other change
    came in between (the node's lock epoch): every addition answered 204 is there; one that
    kept losing the race is a 409 to retry, as Ironic's busy node."""
    node = await node_uuid(api)
    wanted = [f"CUSTOM_T{i}" for i in range(12)]
    answers = await asyncio.gather(*(api.put(f"/v1/nodes/{node}/traits/{t}") for t in wanted))
    assert {a.status_code for a in answers} <= {204, 409}
    added = sorted(t for t, a in zip(wanted, answers, strict=True) if a.status_code == 204)
    assert added and await traits(api, node) == added


async def test_a_trait_is_removed(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    await api.put(f"/v1/nodes/{node}/traits", json={"traits": ["CUSTOM_A", "CUSTOM_B"]})
    assert (await api.delete(f"/v1/nodes/{node}/traits/CUSTOM_A")).status_code == 204
    assert await traits(api, node) == ["CUSTOM_B"]


async def test_removing_a_trait_the_node_lacks_is_404_naming_it(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.delete(f"/v1/nodes/{node}/traits/CUSTOM_NONE")
    assert resp.status_code == 404
    assert "doesn't have a trait 'CUSTOM_NONE'" in fault(resp)


async def test_an_invalid_trait_is_refused(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.put(f"/v1/nodes/{node}/traits/lower_case")
    assert resp.status_code == 400
    assert "lower_case" in fault(resp)


async def test_more_than_50_traits_are_refused(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.put(f"/v1/nodes/{node}/traits",
                         json={"traits": [f"CUSTOM_T{i}" for i in range(51)]})
    assert resp.status_code == 400
    assert "maximum number of traits" in fault(resp)


async def test_traits_read_before_1_37_are_not_acceptable(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.get(f"/v1/nodes/{node}/traits",
                         headers={"X-OpenStack-Ironic-API-Version": "1.36"})
    assert resp.status_code == 406  # as Ironic 39
    assert fault(resp) == "Request not acceptable."


async def test_a_vif_is_attached_listed_and_detached(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    assert (await api.post(f"/v1/nodes/{node}/vifs", json={"id": VIF})).status_code == 204
    assert (await api.get(f"/v1/nodes/{node}/vifs")).json() == {"vifs": [{"id": VIF}]}
    assert (await api.delete(f"/v1/nodes/{node}/vifs/{VIF}")).status_code == 204
    assert (await api.get(f"/v1/nodes/{node}/vifs")).json() == {"vifs": []}


async def test_a_vif_attached_twice_is_a_conflict(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    await api.post(f"/v1/nodes/{node}/vifs", json={"id": VIF})
    resp = await api.post(f"/v1/nodes/{node}/vifs", json={"id": VIF})
    assert resp.status_code == 409
    assert "already attached" in fault(resp)


async def test_detaching_a_vif_not_attached_is_400(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.delete(f"/v1/nodes/{node}/vifs/{VIF}")
    assert resp.status_code == 400
    assert "not attached" in fault(resp)


async def test_vifs_of_a_missing_node_are_404(api: httpx.AsyncClient) -> None:
    assert (await api.get(f"/v1/nodes/{MISSING}/vifs")).status_code == 404
    assert (await api.post(f"/v1/nodes/{MISSING}/vifs", json={"id": VIF})).status_code == 404


async def test_virtual_media_is_attached_and_detached(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.post(f"/v1/nodes/{node}/vmedia",
                          json={"device_type": "cdrom", "image_url": "http://image"})
    assert resp.status_code == 204, resp.text
    media = (await api.get(f"/v1/nodes/{node}")).json()["driver_internal_info"]["vmedia"]
    assert [m["device_type"] for m in media] == ["cdrom"]
    assert (await api.delete(f"/v1/nodes/{node}/vmedia")).status_code == 204
    internal = (await api.get(f"/v1/nodes/{node}")).json()["driver_internal_info"]
    assert not internal.get("vmedia")


async def test_fake_hardware_cannot_read_its_virtual_media(api: httpx.AsyncClient) -> None:
    resp = await api.get(f"/v1/nodes/{await node_uuid(api)}/vmedia")
    assert resp.status_code == 400
    assert fault(resp) == ("Driver fake-hardware does not support get_virtual_media "
                           "(disabled or not implemented).")


async def test_virtual_media_with_an_unknown_scheme_is_refused(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.post(f"/v1/nodes/{node}/vmedia",
                          json={"device_type": "cdrom", "image_url": "ftp://image"})
    assert resp.status_code == 400
    assert "URL scheme: ftp" in fault(resp)


async def test_virtual_media_of_a_missing_node_is_404(api: httpx.AsyncClient) -> None:
    resp = await api.post(f"/v1/nodes/{MISSING}/vmedia",
                          json={"device_type": "cdrom", "image_url": "http://image"})
    assert resp.status_code == 404


async def test_a_pxe_type_has_no_virtual_media(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api, "pxe_ssh")
    resp = await api.post(f"/v1/nodes/{node}/vmedia",
                          json={"device_type": "cdrom", "image_url": "http://image"})
    assert resp.status_code == 400
    assert "does not support virtual media" in fault(resp)


async def test_firmware_components_are_an_empty_list(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    assert (await api.get(f"/v1/nodes/{node}/firmware")).json() == {"firmware": []}


async def test_bios_settings_are_an_empty_list(api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    assert (await api.get(f"/v1/nodes/{node}/bios")).json() == {"bios": []}


async def test_what_ironsight_does_not_do_answers_400_saying_so(
        api: httpx.AsyncClient) -> None:
    node = await node_uuid(api)
    resp = await api.put(f"/v1/nodes/{node}/firmware/cache")
    assert resp.status_code == 400
    assert fault(resp) == "Driver fake-hardware does not support firmware (disabled or not " \
                          "implemented)."


async def test_an_unknown_sub_path_read_is_an_invalid_field(api: httpx.AsyncClient) -> None:
    resp = await api.get(f"/v1/nodes/{await node_uuid(api)}/nosuch")
    assert resp.status_code == 400
    assert fault(resp) == "Field nosuch is not a valid field."


async def test_another_method_of_a_sub_resource_is_405_naming_its_methods(
        api: httpx.AsyncClient) -> None:
    resp = await api.post(f"/v1/nodes/{await node_uuid(api)}/states")
    assert resp.status_code == 405
    assert resp.headers["Allow"] == "GET"


async def test_an_unsupported_sub_resource_of_a_missing_node_is_404(
        api: httpx.AsyncClient) -> None:
    resp = await api.get(f"/v1/nodes/{MISSING}/states/console")
    assert resp.status_code == 404
    assert MISSING in fault(resp)
