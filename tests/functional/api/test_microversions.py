"""Every versioned route of the bare-metal API, at the version just below its introduction
(refused the way Ironic 39 refuses it: 404, 405 or 406) and at it (not refused); the list
filters and the documents whose fields depend on the version."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from ironsight.baremetal.api import microversions
from ironsight.common.exceptions import RoutingError

from .helpers import create_node

pytestmark = pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)

_CASES = [(g, m) for g in microversions.GATES for m in sorted(g.methods - {"HEAD"})]


def _at(minor: int) -> dict[str, str]:
    return {"X-OpenStack-Ironic-API-Version": f"1.{minor}"}


def _concrete(template: str, node: str) -> str:
    path = template.replace("/v1/nodes/{}", f"/v1/nodes/{node}", 1)
    return path.replace("{}", "x").replace("{rest}", "")


async def _send(api: httpx.AsyncClient, method: str, path: str, minor: int) -> httpx.Response:
    body = {} if method in ("POST", "PUT", "PATCH") else None
    return await api.request(method, path, headers=_at(minor),
                             content=None if body is None else json.dumps(body))


def _said(resp: httpx.Response) -> str:
    """The API's faultstring, or the web framework's description."""
    doc = json.loads(resp.json()["error_message"])
    return str(doc["faultstring"] if "faultstring" in doc else doc["description"])


def _expected(entry: microversions.Gate) -> str:
    refusal = entry.refuse()
    return refusal.description if isinstance(refusal, RoutingError) else refusal.message


async def test_every_route_below_its_version_is_refused_as_ironic_refuses_it(
        api: httpx.AsyncClient) -> None:
    node = (await create_node(api))["uuid"]
    wrong = []
    for entry, method in _CASES:
        resp = await _send(api, method, _concrete(entry.template, node), entry.minor - 1)
        if resp.status_code != entry.refusal or _said(resp) != _expected(entry):
            wrong.append(f"{method} {entry.template} at 1.{entry.minor - 1}: "
                         f"{resp.status_code} {resp.text[:120]}")
    assert not wrong, "\n".join(wrong)


async def test_every_route_at_its_version_is_not_refused_for_its_version(
        api: httpx.AsyncClient) -> None:
    node = (await create_node(api))["uuid"]
    wrong = []
    for entry, method in _CASES:
        path = _concrete(entry.template, node)
        # the version from which no gate of this route refuses (a sub-route may have its own)
        minor = max(g.minor for g in microversions.GATES
                    if method in g.methods and g.path.fullmatch(path))
        resp = await _send(api, method, path, minor)
        if resp.status_code == 405 and method not in resp.headers.get("Allow", ""):
            continue  # no route takes this method at any version (Ironic: the same 405)
        if resp.status_code == entry.refusal and resp.status_code >= 400 and \
                _said(resp) == _expected(entry):
            wrong.append(f"{method} {entry.template} at 1.{minor}: {resp.status_code}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize(("param", "minor"), [
    ("resource_class", 21), ("driver", 16), ("provision_state", 9), ("owner", 50),
    ("shard", 82), ("conductor_group", 46), ("fields", 8)])
async def test_a_node_list_filter_older_than_the_request_is_406(
        api: httpx.AsyncClient, param: str, minor: int) -> None:
    value = {"fields": "uuid", "provision_state": "enroll"}.get(param, "x")
    below = await api.get("/v1/nodes", params={param: value}, headers=_at(minor - 1))
    assert below.status_code == 406, below.text
    at = await api.get("/v1/nodes", params={param: value}, headers=_at(minor))
    assert at.status_code == 200, at.text


async def test_asking_for_a_field_newer_than_the_request_is_406(
        api: httpx.AsyncClient) -> None:
    node = (await create_node(api))["uuid"]
    assert (await api.get("/v1/nodes", params={"fields": "uuid,traits"},
                          headers=_at(36))).status_code == 406
    assert (await api.get(f"/v1/nodes/{node}", params={"fields": "traits"},
                          headers=_at(36))).status_code == 406
    shown = await api.get(f"/v1/nodes/{node}", params={"fields": "traits"}, headers=_at(37))
    assert shown.json()["traits"] == []


@pytest.mark.parametrize(("param", "minor"), [("portgroup", 24), ("shard", 82)])
async def test_a_port_list_filter_older_than_the_request_is_406(
        api: httpx.AsyncClient, param: str, minor: int) -> None:
    below = await api.get("/v1/ports", params={param: "x"}, headers=_at(minor - 1))
    assert below.status_code == 406, below.text


async def test_node_states_show_the_fields_of_the_requested_version(
        api: httpx.AsyncClient) -> None:
    node = (await create_node(api))["uuid"]
    base = {"console_enabled", "last_error", "power_state", "provision_state",
            "target_power_state", "target_provision_state", "provision_updated_at"}
    raid = {"raid_config", "target_raid_config"}
    for minor, keys in ((11, base), (12, base | raid), (74, base | raid),
                        (75, base | raid | {"boot_mode", "secure_boot"})):
        doc = (await api.get(f"/v1/nodes/{node}/states", headers=_at(minor))).json()
        assert set(doc) == keys, minor


def _links_of(doc: dict[str, Any]) -> set[str]:
    return {k for k, v in doc.items()
            if isinstance(v, list) and k not in ("links", "media_types")}


async def test_v1_links_each_resource_from_its_version(api: httpx.AsyncClient) -> None:
    assert _links_of((await api.get("/v1", headers=_at(1))).json()) == {
        "chassis", "nodes", "ports", "drivers"}
    at_23 = _links_of((await api.get("/v1", headers=_at(23))).json())
    assert "portgroups" in at_23 and "volume" not in at_23
    latest = _links_of((await api.get("/v1")).json())
    assert latest == {"chassis", "nodes", "ports", "drivers", *microversions.RESOURCES}


async def test_shards_count_the_nodes_of_each_shard(api: httpx.AsyncClient) -> None:
    for shard in ("a", "a", "b", None):
        await create_node(api, **({"shard": shard} if shard else {}))
    doc = (await api.get("/v1/shards")).json()
    assert doc == {"shards": [{"name": "a", "count": 2}, {"name": "None", "count": 1},
                              {"name": "b", "count": 1}]}


async def test_shard_filter_takes_a_list(api: httpx.AsyncClient) -> None:
    wanted = {(await create_node(api, shard=s))["uuid"] for s in ("a", "b")}
    await create_node(api, shard="c")
    found = (await api.get("/v1/nodes", params={"shard": "a,b"})).json()["nodes"]
    assert {n["uuid"] for n in found} == wanted
