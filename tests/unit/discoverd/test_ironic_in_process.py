"""discoverd's client of the bare-metal API called in-process (an `AsgiCall` of the
application instead of HTTP): the same requests, and the same retries and errors as over
HTTP (test_ironic.py), against a stand-in application."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ironsight.common import config
from ironsight.common.asgi_call import AsgiCall
from ironsight.discoverd.ironic import API_VERSION, Ironic, IronicError


def fault(message: str) -> str:
    return json.dumps({"error_message": json.dumps({"faultstring": message})})


class Api:
    """A stand-in bare-metal application: answers from `answers` (status, body) in turn; an
    answer of status 0 raises inside the application."""

    def __init__(self) -> None:
        self.answers: list[tuple[int, str]] = []
        self.requests: list[dict[str, Any]] = []
        self.app = Starlette(routes=[Route("/{tail:path}", self.handle, methods=[
            "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])])

    async def handle(self, request: Request) -> Response:
        self.requests.append({"line": f"{request.method} {request.url.path}",
                              "query": request.scope["query_string"].decode(),
                              "headers": dict(request.headers),
                              "body": (await request.body()).decode(),
                              "client": request.client.host if request.client else None})
        status, body = self.answers.pop(0) if self.answers else (200, '{"uuid": "u1"}')
        if status == 0:
            raise RuntimeError("the application broke")
        return Response(body, status_code=status, media_type="application/json")


class Tokens:
    """A Keystone token source: a new token after each invalidation."""

    def __init__(self) -> None:
        self.issued = 1

    async def headers(self) -> Mapping[str, str]:
        return {"X-Auth-Token": f"token-{self.issued}"}

    def invalidate(self) -> None:
        self.issued += 1


@pytest.fixture
def api() -> Api:
    return Api()


def client(api: Api, **introspection: str) -> Ironic:
    conf = config.load(overrides={"introspection": {
        "ironic_url": "http://127.0.0.1:6385", "ironic_retry_interval": "0.01",
        **introspection}})
    return Ironic(conf, AsgiCall(api.app, server=("127.0.0.1", 6385),
                                 client=("127.0.0.1", 0)))


async def test_the_request_is_the_one_aiohttp_sends(api: Api) -> None:
    ironic = client(api, ironic_username="di-svc", ironic_password="secret")
    await ironic.get_node("u1", fields="uuid,power_state")
    await ironic.set_power("u1", "power off")
    await ironic.close()
    get, put = api.requests
    assert get["line"] == "GET /v1/nodes/u1"
    assert get["query"] == "fields=uuid,power_state"
    assert get["body"] == ""
    assert get["client"] == "127.0.0.1"
    headers = get["headers"]
    assert headers["host"] == "127.0.0.1:6385"
    assert headers["x-openstack-ironic-api-version"] == API_VERSION
    assert headers["content-type"] == "application/json"
    assert headers["authorization"].startswith("Basic ")
    assert headers["accept"] == "*/*"
    assert "content-length" not in headers
    assert put["line"] == "PUT /v1/nodes/u1/states/power"
    assert json.loads(put["body"]) == {"target": "power off"}
    assert put["headers"]["content-length"] == str(len(put["body"]))


async def test_query_values_and_path_segments_are_encoded_as_over_http(api: Api) -> None:
    api.answers = [(200, '{"ports": []}'), (204, "")]
    ironic = client(api)
    await ironic.list_ports("u 1")
    await ironic.add_trait("u1", "CUSTOM_A/B")
    assert api.requests[0]["query"] == "node=u+1&limit=1000"
    assert api.requests[1]["line"] == "PUT /v1/nodes/u1/traits/CUSTOM_A/B"  # unquoted path
    await ironic.close()


async def test_a_locked_node_is_retried(api: Api) -> None:
    api.answers = [(409, fault("Node u1 is locked by host c:1, please retry")), (200, "{}")]
    ironic = client(api)
    await ironic.set_power("u1", "power off")
    assert [r["line"] for r in api.requests] == ["PUT /v1/nodes/u1/states/power"] * 2


async def test_a_busy_conductor_is_retried_a_bounded_number_of_times(api: Api) -> None:
    api.answers = [(503, fault("No free conductor worker"))] * 10
    ironic = client(api, ironic_retries="3")
    with pytest.raises(IronicError, match="No free conductor worker") as raised:
        await ironic.set_power("u1", "power on")
    assert raised.value.code == 503
    assert len(api.requests) == 3


async def test_a_conflict_that_is_not_a_lock_is_not_retried(api: Api) -> None:
    api.answers = [(409, fault("A port with MAC address 52:54:00:00:00:01 already exists."))]
    with pytest.raises(IronicError, match="already exists") as raised:
        await client(api).create_port("u1", "52:54:00:00:00:01", True)
    assert raised.value.code == 409
    assert len(api.requests) == 1


async def test_an_exception_in_the_application_is_a_500_not_a_crash(api: Api) -> None:
    api.answers = [(0, "")]
    with pytest.raises(IronicError) as raised:
        await client(api).get_node("u1")
    assert raised.value.code == 500
    assert len(api.requests) == 1  # 500 is not retried, over HTTP neither


async def test_a_port_already_gone_is_deleted(api: Api) -> None:
    api.answers = [(404, fault("Port p1 could not be found."))]
    await client(api).delete_port("p1")
    assert api.requests[0]["line"] == "DELETE /v1/ports/p1"
    assert api.requests[0]["headers"]["content-length"] == "0"


async def test_a_keystone_token_is_sent_and_renewed_once_on_401(api: Api) -> None:
    api.answers = [(401, fault("The request you have made requires authentication.")),
                   (200, '{"uuid": "u1"}')]
    ironic = client(api, ironic_auth_token="configured")
    ironic.tokens = Tokens()  # type: ignore[assignment]
    assert (await ironic.get_node("u1"))["uuid"] == "u1"
    assert [r["headers"]["x-auth-token"] for r in api.requests] == ["token-1", "token-2"]


async def test_an_answer_never_finished_is_waited_out_as_an_unreachable_api() -> None:
    async def broken(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise RuntimeError("gone mid-answer")

    conf = config.load(overrides={"introspection": {
        "ironic_url": "http://127.0.0.1:6385", "ironic_retry_interval": "0.01",
        "ironic_unreachable_timeout": "0.1"}})
    ironic = Ironic(conf, AsgiCall(broken, server=("127.0.0.1", 6385),
                                   client=("127.0.0.1", 0)))
    with pytest.raises(IronicError, match="bare-metal API unreachable") as raised:
        await ironic.get_node("u1")
    assert raised.value.code == 502
