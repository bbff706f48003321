"""Small helpers for API tests: create things, wait for states, decode Ironic errors."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx


def fault(resp: httpx.Response) -> str:
    """The faultstring inside Ironic's double-encoded error envelope."""
    return str(json.loads(resp.json()["error_message"])["faultstring"])


def framework_error(resp: httpx.Response) -> dict[str, Any]:
    """The web framework's document inside the envelope ({code, title, description}: an
    unknown path or method, a version that cannot be served)."""
    doc = json.loads(resp.json()["error_message"])
    assert set(doc) == {"code", "title", "description"}, doc
    return dict(doc)


async def create_node(api: httpx.AsyncClient, **fields: Any) -> dict[str, Any]:
    body = {"driver": "fake", **fields}
    resp = await api.post("/v1/nodes", json=body)
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


async def wait_for(api: httpx.AsyncClient, node: str, *, provision: str | None = None,
                   power: str | None = None, timeout: float = 10) -> dict[str, Any]:
    """Poll until the node settles in the wanted state (bounded)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        doc = (await api.get(f"/v1/nodes/{node}")).json()
        # `inspect wait` keeps its target (manageable) while it waits: it is settled too.
        settled = (not doc["target_provision_state"] or doc["provision_state"] == "inspect wait"
                   ) and not doc["target_power_state"]
        if settled and (provision is None or doc["provision_state"] == provision) and (
                power is None or doc["power_state"] == power):
            return dict(doc)
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"node {node} did not reach {provision or power}: {doc}")
        await asyncio.sleep(0.02)


async def manage(api: httpx.AsyncClient, node: str) -> dict[str, Any]:
    resp = await api.put(f"/v1/nodes/{node}/states/provision", json={"target": "manage"})
    assert resp.status_code == 202, resp.text
    return await wait_for(api, node, provision="manageable")
