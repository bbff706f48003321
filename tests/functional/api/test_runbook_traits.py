"""Runbook traits and plain runbook names (API 1.112), as Ironic 39 serves them."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .helpers import fault

pytestmark = pytest.mark.functional

STEP = {"interface": "bios", "step": "apply_configuration", "args": {}, "order": 1}
V111 = {"X-OpenStack-Ironic-API-Version": "1.111"}
V112 = {"X-OpenStack-Ironic-API-Version": "1.112"}


async def _runbook(api: httpx.AsyncClient, name: str = "CUSTOM_RB") -> Any:
    resp = await api.post("/v1/runbooks", json={"name": name, "steps": [STEP]})
    assert resp.status_code == 201, resp.text
    return resp.json()


async def _traits(api: httpx.AsyncClient, ident: str) -> Any:
    resp = await api.get(f"/v1/runbooks/{ident}/traits")
    assert resp.status_code == 200, resp.text
    return resp.json()["traits"]


async def test_a_new_runbook_shows_no_traits(api: httpx.AsyncClient) -> None:
    made = await _runbook(api)
    assert made["traits"] == []
    assert (await api.get(f"/v1/runbooks/{made['uuid']}")).json()["traits"] == []


async def test_put_traits_replaces_the_list(api: httpx.AsyncClient) -> None:
    made = await _runbook(api)
    url = f"/v1/runbooks/{made['uuid']}/traits"
    assert (await api.put(url, json={"traits": ["CUSTOM_A", "CUSTOM_B"]})).status_code == 204
    assert (await api.put(url, json={"traits": ["CUSTOM_C"]})).status_code == 204
    assert await _traits(api, made["uuid"]) == ["CUSTOM_C"]
    assert (await api.get(f"/v1/runbooks/{made['uuid']}")).json()["traits"] == ["CUSTOM_C"]


async def test_put_one_trait_adds_it_once_with_its_location(api: httpx.AsyncClient) -> None:
    await _runbook(api)
    resp = await api.put("/v1/runbooks/CUSTOM_RB/traits/CUSTOM_X")
    assert resp.status_code == 204
    assert resp.headers["Location"].endswith("/v1/runbooks/CUSTOM_RB/traits/CUSTOM_X")
    await api.put("/v1/runbooks/CUSTOM_RB/traits/CUSTOM_X")
    assert await _traits(api, "CUSTOM_RB") == ["CUSTOM_X"]


async def test_delete_one_trait_removes_it_and_a_missing_one_is_a_no_op(
        api: httpx.AsyncClient) -> None:
    await _runbook(api)
    await api.put("/v1/runbooks/CUSTOM_RB/traits", json={"traits": ["CUSTOM_A", "CUSTOM_B"]})
    assert (await api.delete("/v1/runbooks/CUSTOM_RB/traits/CUSTOM_A")).status_code == 204
    assert (await api.delete("/v1/runbooks/CUSTOM_RB/traits/CUSTOM_A")).status_code == 204
    assert await _traits(api, "CUSTOM_RB") == ["CUSTOM_B"]


async def test_delete_traits_removes_them_all(api: httpx.AsyncClient) -> None:
    await _runbook(api)
    await api.put("/v1/runbooks/CUSTOM_RB/traits", json={"traits": ["CUSTOM_A", "CUSTOM_B"]})
    assert (await api.delete("/v1/runbooks/CUSTOM_RB/traits")).status_code == 204
    assert await _traits(api, "CUSTOM_RB") == []


async def test_an_invalid_trait_is_400_and_changes_nothing(api: httpx.AsyncClient) -> None:
    await _runbook(api)
    await api.put("/v1/runbooks/CUSTOM_RB/traits", json={"traits": ["CUSTOM_A"]})
    resp = await api.put("/v1/runbooks/CUSTOM_RB/traits", json={"traits": ["CUSTOM_B", "bad"]})
    assert resp.status_code == 400
    assert "bad" in fault(resp)
    assert (await api.put("/v1/runbooks/CUSTOM_RB/traits/lower")).status_code == 400
    assert await _traits(api, "CUSTOM_RB") == ["CUSTOM_A"]


async def test_put_traits_without_a_traits_list_is_400(api: httpx.AsyncClient) -> None:
    await _runbook(api)
    resp = await api.put("/v1/runbooks/CUSTOM_RB/traits", json={"trait": "CUSTOM_A"})
    assert resp.status_code == 400
    assert "list of traits" in fault(resp)


async def test_traits_of_a_missing_runbook_are_404(api: httpx.AsyncClient) -> None:
    assert (await api.get("/v1/runbooks/CUSTOM_NONE/traits")).status_code == 404
    assert (await api.put("/v1/runbooks/CUSTOM_NONE/traits/CUSTOM_A")).status_code == 404


async def test_traits_can_not_be_set_by_create_or_patch(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/runbooks", json={"name": "CUSTOM_RB", "steps": [STEP],
                                                "traits": ["CUSTOM_A"]})
    assert resp.status_code == 400
    assert "traits" in fault(resp)
    await _runbook(api)
    resp = await api.patch("/v1/runbooks/CUSTOM_RB",
                           json=[{"op": "add", "path": "/traits", "value": ["CUSTOM_A"]}])
    assert resp.status_code == 400
    assert await _traits(api, "CUSTOM_RB") == []


async def test_runbook_traits_are_404_below_1_112(api: httpx.AsyncClient) -> None:
    await _runbook(api)
    resp = await api.get("/v1/runbooks/CUSTOM_RB/traits", headers=V111)
    assert resp.status_code == 404
    assert fault(resp) == "The API version does not allow runbook traits"
    resp = await api.put("/v1/runbooks/CUSTOM_RB/traits/CUSTOM_A", headers=V111)
    assert resp.status_code == 404
    assert "traits" not in (await api.get("/v1/runbooks/CUSTOM_RB", headers=V111)).json()


async def test_a_plain_name_is_taken_at_1_112(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/runbooks", headers=V112,
                          json={"name": "enable-hyperthreading", "steps": [STEP]})
    assert resp.status_code == 201, resp.text
    shown = await api.get("/v1/runbooks/enable-hyperthreading", headers=V112)
    assert shown.json()["name"] == "enable-hyperthreading"


async def test_a_plain_name_is_refused_below_1_112(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/runbooks", headers=V111,
                          json={"name": "enable-hyperthreading", "steps": [STEP]})
    assert resp.status_code == 400
    assert "name" in fault(resp)
    await _runbook(api)
    resp = await api.patch("/v1/runbooks/CUSTOM_RB", headers=V111,
                           json=[{"op": "replace", "path": "/name", "value": "plain"}])
    assert resp.status_code == 400
    assert (await api.get("/v1/runbooks/CUSTOM_RB")).status_code == 200


async def test_a_name_unusable_in_a_url_is_refused_at_1_112(api: httpx.AsyncClient) -> None:
    resp = await api.post("/v1/runbooks", headers=V112,
                          json={"name": "has space/slash", "steps": [STEP]})
    assert resp.status_code == 400
    assert "name" in fault(resp)
