"""Hostile input (issue 11): each class answers 400 naming the field, and changes nothing.
Bodies go to every bare-metal endpoint that reads one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from .helpers import create_node, fault, framework_error

JSON = {"Content-Type": "application/json"}

DEEP_LIST = b"[" * 100_000 + b"]" * 100_000  # 200 KB, under the 1 MiB body limit
DEEP_OBJECT = b'{"a":' * 40_000 + b"1" + b"}" * 40_000
HUGE_INT_NAME = b'{"driver": "fake", "name": ' + b"9" * 5000 + b"}"
HUGE_INT_CPUS = b'{"driver": "fake", "properties": {"cpus": ' + b"9" * 5000 + b"}}"
SURROGATE_NAME = b'{"driver": "fake", "name": "node-\\ud800"}'


def body_endpoints(node: str) -> list[tuple[str, str]]:
    return [("POST", "/v1/nodes"), ("PATCH", f"/v1/nodes/{node}"),
            ("PUT", f"/v1/nodes/{node}/states/power"),
            ("PUT", f"/v1/nodes/{node}/states/provision"),
            ("PUT", f"/v1/nodes/{node}/management/boot_device"),
            ("PUT", f"/v1/nodes/{node}/maintenance"), ("POST", "/v1/ports"),
            ("POST", "/v1/continue_inspection")]


async def everything(api: httpx.AsyncClient) -> Any:
    nodes = (await api.get("/v1/nodes/detail")).json()["nodes"]
    ports = (await api.get("/v1/ports/detail")).json()["ports"]
    return nodes, ports


async def unchanged(api: httpx.AsyncClient, attempt: Callable[[str], Awaitable[None]]) -> None:
    """Run `attempt` against a fresh node; afterwards, nothing at all may have changed."""
    node = await create_node(api, name="victim", properties={"cpus": 4})
    before = await everything(api)
    await attempt(node["uuid"])
    assert await everything(api) == before


@pytest.mark.parametrize(("body", "message"), [
    (DEEP_LIST, "nested more than 25 levels deep"),
    (DEEP_OBJECT, "nested more than 25 levels deep"),
    (HUGE_INT_NAME, "field 'name': 999999999999... (5000 characters) is not a number"),
    (HUGE_INT_CPUS, "field 'properties.cpus': 999999999999... (5000 characters)"),
    (SURROGATE_NAME, "field 'name': it contains a lone surrogate"),
], ids=["deep-list", "deep-object", "huge-int", "huge-int-nested", "lone-surrogate"])
async def test_hostile_body_is_400_naming_the_field_on_every_body_endpoint(
        api: httpx.AsyncClient, body: bytes, message: str) -> None:
    async def attempt(node: str) -> None:
        for method, path in body_endpoints(node):
            resp = await api.request(method, path, content=body, headers=JSON)
            assert resp.status_code == 400, (method, path, resp.text)
            assert message in fault(resp), (method, path)

    await unchanged(api, attempt)


@pytest.mark.parametrize("header", ["X-OpenStack-Ironic-API-Version", "OpenStack-API-Version"])
async def test_oversized_version_header_is_406_on_every_get(
        api: httpx.AsyncClient, service: Any, header: str) -> None:
    raw = "1." + "9" * 5000
    value = raw if header.startswith("X-") else f"baremetal {raw}"

    async def attempt(node: str) -> None:
        # a client of its own: `api` sends a version header, which would take precedence
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=service.app),
                                     base_url="http://bm.test") as client:
            for path in get_paths(service.api_app, node):
                resp = await client.get(path, headers={header: value})
                assert resp.status_code == 406, (path, resp.text)  # as Ironic
                assert "X-OpenStack-Ironic-API-Version" in \
                    framework_error(resp)["description"], path

    await unchanged(api, attempt)


def get_paths(app: Any, node: str) -> list[str]:
    """Every GET route of the API, with its path parameters filled in (not /metrics, which
    is not versioned)."""
    return [route.path.replace("{node}", node).replace("{port}", node)
            for route in app.routes if "GET" in (getattr(route, "methods", None) or ())
            and route.path != "/metrics"]


@pytest.mark.parametrize("target", [["manage"], {}, {"manage": 1}, None, 5, True],
                         ids=["list", "empty-object", "object", "null", "number", "bool"])
async def test_provision_target_of_the_wrong_type_is_400_naming_target(
        api: httpx.AsyncClient, target: Any) -> None:
    async def attempt(node: str) -> None:
        resp = await api.put(f"/v1/nodes/{node}/states/provision", json={"target": target})
        assert resp.status_code == 400, resp.text
        assert fault(resp).startswith("target: ")

    await unchanged(api, attempt)


async def test_lone_surrogate_in_a_patched_name_is_400(api: httpx.AsyncClient) -> None:
    async def attempt(node: str) -> None:
        body = b'[{"op": "replace", "path": "/name", "value": "\\udfff"}]'
        resp = await api.patch(f"/v1/nodes/{node}", content=body, headers=JSON)
        assert resp.status_code == 400
        assert "field '[0].value'" in fault(resp)

    await unchanged(api, attempt)
