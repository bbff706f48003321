"""The bare-metal API's `/v1/inspection_rules`: version gate, forwarding to discoverd, links and
errors as Ironic's.

discoverd here is a small in-test Starlette app standing in for discoverd's rules API (these
are unit tests of the forwarding; tests/functional/compat and tests/functional/api run the
real discoverd). It records what reached it and answers what each test scripted, with links
under its own base URL, as discoverd builds them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ironsight.baremetal.api import inspection_rules, microversions
from ironsight.baremetal.api.base import VERSIONS
from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.common import config
from ironsight.common.api.app import ApiSpec, create_app
from ironsight.common.api.errors import ironic_envelope

DI = "http://di.example:5050"
BM = "http://bm.example"
UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"
V96 = {"X-OpenStack-Ironic-API-Version": "1.96"}


def rule_doc(base: str = DI) -> dict[str, Any]:
    return {"uuid": UUID, "priority": 0, "phase": "main", "description": "d",
            "links": [{"href": f"{base}/v1/inspection_rules/{UUID}", "rel": "self"},
                      {"href": f"{base}/inspection_rules/{UUID}", "rel": "bookmark"}]}


@dataclass
class FakeDiscoverd:
    """Answers every request with `status`, `body` and `headers`; keeps what it received."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    received: list[dict[str, Any]] = field(default_factory=list)

    async def handle(self, request: Request) -> Response:
        raw = await request.body()
        self.received.append({"method": request.method, "path": request.url.path,
                              "query": dict(request.query_params),
                              "body": json.loads(raw) if raw else None,
                              "auth": request.headers.get("authorization")})
        if self.body is None:
            return Response(status_code=self.status, headers=self.headers)
        return JSONResponse(self.body, status_code=self.status, headers=self.headers)

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self.handle,
                                       methods=["GET", "POST", "PATCH", "PUT", "DELETE"])])


@pytest.fixture
def discoverd() -> FakeDiscoverd:
    return FakeDiscoverd()


def _conf(**discoverd_section: str) -> config.Config:
    return config.load(overrides={"discoverd": discoverd_section})


async def _client(proxy: DiscoverdProxy | None) -> httpx.AsyncClient:
    spec = ApiSpec(versions=VERSIONS, envelope=ironic_envelope, public_endpoint=BM,
                   max_body_size=1 << 20, max_json_depth=20, gate=microversions.check)
    app = create_app(spec, SimpleNamespace(discoverd=proxy), inspection_rules.routes)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BM)


@pytest.fixture
async def api(discoverd: FakeDiscoverd) -> AsyncIterator[httpx.AsyncClient]:
    conf = _conf(service_url=f"{DI}/v1", username="bm-service", password="pw")
    proxy = DiscoverdProxy(conf, transport=httpx.ASGITransport(app=discoverd.app()))
    async with await _client(proxy) as client:
        yield client
    await proxy.close()


def fault(response: httpx.Response) -> str:
    """The faultstring of Ironic's error body (a JSON document inside a JSON string)."""
    return str(json.loads(response.json()["error_message"])["faultstring"])


# --- version gate ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/inspection_rules", f"/v1/inspection_rules/{UUID}"])
async def test_reads_before_1_96_are_404(api: httpx.AsyncClient, discoverd: FakeDiscoverd,
                                         path: str) -> None:
    response = await api.get(path, headers={"X-OpenStack-Ironic-API-Version": "1.95"})
    assert response.status_code == 404
    assert fault(response) == "The API version does not allow inspection rules"
    assert discoverd.received == []


@pytest.mark.parametrize(("method", "path"), [
    ("POST", "/v1/inspection_rules"), ("PATCH", f"/v1/inspection_rules/{UUID}"),
    ("DELETE", f"/v1/inspection_rules/{UUID}"), ("DELETE", "/v1/inspection_rules")])
async def test_writes_before_1_96_are_405(api: httpx.AsyncClient, discoverd: FakeDiscoverd,
                                          method: str, path: str) -> None:
    response = await api.request(method, path, json={"actions": []})
    assert response.status_code == 405
    assert fault(response) == "The API version does not allow inspection rules"
    assert discoverd.received == []


async def test_the_gate_comes_before_the_body_is_read(api: httpx.AsyncClient) -> None:
    response = await api.post("/v1/inspection_rules", content=b"{not json",
                              headers={"X-OpenStack-Ironic-API-Version": "1.95"})
    assert response.status_code == 405


# --- forwarding ----------------------------------------------------------------------------------


async def test_a_list_is_forwarded_with_its_query(api: httpx.AsyncClient,
                                                  discoverd: FakeDiscoverd) -> None:
    discoverd.body = {"inspection_rules": [rule_doc()]}
    response = await api.get("/v1/inspection_rules?detail=true&limit=5", headers=V96)
    assert response.status_code == 200
    assert discoverd.received[0]["path"] == "/v1/inspection_rules"
    assert discoverd.received[0]["query"] == {"detail": "true", "limit": "5"}


async def test_the_service_credentials_are_sent_to_discoverd(
        api: httpx.AsyncClient, discoverd: FakeDiscoverd) -> None:
    discoverd.body = {"inspection_rules": []}
    await api.get("/v1/inspection_rules", headers=V96)
    assert discoverd.received[0]["auth"].startswith("Basic ")


async def test_a_create_forwards_the_body_and_rebases_location_and_links(
        api: httpx.AsyncClient, discoverd: FakeDiscoverd) -> None:
    discoverd.status, discoverd.body = 201, rule_doc()
    discoverd.headers = {"Location": f"{DI}/v1/inspection_rules/{UUID}"}
    body = {"actions": [{"op": "add-trait", "args": {"name": "CUSTOM_X"}}]}
    response = await api.post("/v1/inspection_rules", json=body, headers=V96)
    assert response.status_code == 201
    assert discoverd.received[0]["body"] == body
    assert response.headers["location"] == f"{BM}/v1/inspection_rules/{UUID}"
    assert response.json()["links"] == rule_doc(BM)["links"]


async def test_list_links_and_next_point_at_the_baremetal_api(
        api: httpx.AsyncClient, discoverd: FakeDiscoverd) -> None:
    discoverd.body = {"inspection_rules": [rule_doc()],
                      "next": f"{DI}/v1/inspection_rules?limit=1&marker={UUID}"}
    doc = (await api.get("/v1/inspection_rules?limit=1", headers=V96)).json()
    assert doc["inspection_rules"][0]["links"] == rule_doc(BM)["links"]
    assert doc["next"] == f"{BM}/v1/inspection_rules?limit=1&marker={UUID}"


async def test_a_rules_own_urls_are_not_rewritten(api: httpx.AsyncClient,
                                                  discoverd: FakeDiscoverd) -> None:
    action = {"op": "api-call", "args": {"url": f"{DI}/v1/inspection_rules"}}
    discoverd.body = {**rule_doc(), "actions": [action]}
    doc = (await api.get(f"/v1/inspection_rules/{UUID}", headers=V96)).json()
    assert doc["actions"] == [action]


async def test_a_patch_goes_to_the_rule(api: httpx.AsyncClient,
                                        discoverd: FakeDiscoverd) -> None:
    discoverd.body = rule_doc()
    patch = [{"op": "replace", "path": "/priority", "value": 5}]
    response = await api.patch(f"/v1/inspection_rules/{UUID}", json=patch, headers=V96)
    assert response.status_code == 200
    assert discoverd.received[0] == {**discoverd.received[0], "method": "PATCH",
                                     "path": f"/v1/inspection_rules/{UUID}", "body": patch}


async def test_a_delete_answers_204_without_a_body(api: httpx.AsyncClient,
                                                   discoverd: FakeDiscoverd) -> None:
    discoverd.status = 204
    response = await api.delete("/v1/inspection_rules", headers=V96)
    assert (response.status_code, response.content) == (204, b"")
    assert discoverd.received[0]["method"] == "DELETE"


async def test_the_dry_run_is_forwarded_too(api: httpx.AsyncClient,
                                            discoverd: FakeDiscoverd) -> None:
    discoverd.body = {"node": UUID, "rule": None, "matched": True, "conditions": [],
                      "actions": [], "failure": None, "warnings": []}
    response = await api.post("/v1/inspection_rules/dry_run", headers=V96,
                              json={"node": "n1", "rule": {"actions": []}})
    assert response.status_code == 200
    assert discoverd.received[0]["path"] == "/v1/inspection_rules/dry_run"


async def test_a_body_that_is_not_json_is_refused_before_forwarding(
        api: httpx.AsyncClient, discoverd: FakeDiscoverd) -> None:
    response = await api.post("/v1/inspection_rules", content=b"{not json", headers=V96)
    assert response.status_code == 400
    assert discoverd.received == []


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 404, 409])
async def test_discoverd_errors_become_ironic_errors_with_the_same_status(
        api: httpx.AsyncClient, discoverd: FakeDiscoverd, status: int) -> None:
    discoverd.status = status
    discoverd.body = {"error": {"message": "Invalid input for field 'actions.0.op'"}}
    response = await api.post("/v1/inspection_rules", json={"actions": []}, headers=V96)
    assert response.status_code == status
    assert fault(response) == "Invalid input for field 'actions.0.op'"


@pytest.mark.parametrize("status", [401, 403])
async def test_discoverd_refusing_the_service_is_503_naming_the_credentials(
        api: httpx.AsyncClient, discoverd: FakeDiscoverd, status: int) -> None:
    discoverd.status, discoverd.body = status, {"error": {"message": "Unauthorized"}}
    response = await api.get("/v1/inspection_rules", headers=V96)
    assert response.status_code == 503
    assert "[discoverd] username" in fault(response)


async def test_unreachable_discoverd_is_503_saying_so(unused_tcp_port: int) -> None:
    proxy = DiscoverdProxy(_conf(service_url=f"http://127.0.0.1:{unused_tcp_port}/v1"))
    async with await _client(proxy) as client:
        response = await client.get("/v1/inspection_rules", headers=V96)
    await proxy.close()
    assert response.status_code == 503
    assert "cannot be reached" in fault(response)


async def test_unconfigured_discoverd_is_503_naming_the_option() -> None:
    proxy = DiscoverdProxy(_conf())
    async with await _client(proxy) as client:
        response = await client.get("/v1/inspection_rules", headers=V96)
    assert response.status_code == 503
    assert "[discoverd] service_url" in fault(response)


def test_rebase_keeps_what_follows_discoverds_root() -> None:
    assert inspection_rules.rebase(f"{DI}/prefix/v1/inspection_rules/{UUID}", BM) == \
        f"{BM}/v1/inspection_rules/{UUID}"
    assert inspection_rules.rebase("http://elsewhere/x", BM) == "http://elsewhere/x"


async def test_the_clients_delete_all_deletes_the_collection(api: httpx.AsyncClient,
                                                             discoverd: FakeDiscoverd) -> None:
    discoverd.status = 204
    response = await api.delete("/v1/inspection_rules/all", headers=V96)
    assert response.status_code == 204
    assert discoverd.received[0]["path"] == "/v1/inspection_rules"


async def test_a_create_from_the_client_reaches_discoverd_typed(
        api: httpx.AsyncClient, discoverd: FakeDiscoverd) -> None:
    discoverd.status, discoverd.body = 201, rule_doc()
    await api.post("/v1/inspection_rules", headers=V96,
                   json={"actions": [], "priority": "7", "conditions": None})
    assert discoverd.received[0]["body"] == {"actions": [], "priority": 7}
