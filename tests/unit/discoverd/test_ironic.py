"""discoverd's client of the bare-metal API, against a real HTTP server on loopback: it rides
out a restart of the API (connection refused, for a bounded time), retries a locked node, and
treats a port already gone as deleted."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from ironsight.common import config
from ironsight.discoverd.ironic import Ironic, IronicError


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fault(message: str) -> str:
    return json.dumps({"error_message": json.dumps({"faultstring": message})})


class Api:
    """A stand-in bare-metal API: answers from `answers` (status, body) in turn."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.answers: list[tuple[int, str]] = []
        self.requests: list[str] = []
        self.runner: web.AppRunner | None = None

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append(f"{request.method} {request.path}")
        status, body = self.answers.pop(0) if self.answers else (200, '{"uuid": "u1"}')
        return web.Response(status=status, text=body, content_type="application/json")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        await web.TCPSite(self.runner, "127.0.0.1", self.port).start()

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()


@pytest.fixture
async def api() -> AsyncIterator[Api]:
    server = Api(free_port())
    yield server
    await server.stop()


def client(api: Api, **introspection: str) -> Ironic:
    return Ironic(config.load(overrides={"introspection": {
        "ironic_url": f"http://127.0.0.1:{api.port}", "ironic_retry_interval": "0.05",
        **introspection}}))


async def test_a_call_waits_for_an_api_that_comes_back(api: Api) -> None:
    ironic = client(api, ironic_unreachable_timeout="10")
    later = asyncio.get_running_loop().call_later(0.3, lambda: asyncio.ensure_future(
        api.start()))
    try:
        assert (await ironic.get_node("u1"))["uuid"] == "u1"
    finally:
        later.cancel()
        await ironic.close()
    assert api.requests == ["GET /v1/nodes/u1"]


async def test_an_api_gone_for_longer_than_the_bound_fails_the_call(api: Api) -> None:
    ironic = client(api, ironic_unreachable_timeout="0.3")
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(IronicError, match="bare-metal API unreachable") as raised:
        await ironic.get_node("u1")
    await ironic.close()
    assert raised.value.code == 502
    assert 0.3 <= loop.time() - started < 3


async def test_a_locked_node_is_retried(api: Api) -> None:
    await api.start()
    api.answers = [(409, fault("Node u1 is locked by host c:1, please retry")), (200, "{}")]
    ironic = client(api)
    await ironic.set_power("u1", "power off")
    await ironic.close()
    assert api.requests == ["PUT /v1/nodes/u1/states/power"] * 2


async def test_a_conflict_that_is_not_a_lock_is_not_retried(api: Api) -> None:
    await api.start()
    api.answers = [(409, fault("A port with MAC address 52:54:00:00:00:01 already exists."))]
    ironic = client(api)
    with pytest.raises(IronicError, match="already exists") as raised:
        await ironic.create_port("u1", "52:54:00:00:00:01", True)
    await ironic.close()
    assert raised.value.code == 409
    assert len(api.requests) == 1


async def test_deleting_a_port_already_gone_is_done(api: Api) -> None:
    await api.start()
    api.answers = [(404, fault("Port p1 could not be found."))]
    ironic = client(api)
    await ironic.delete_port("p1")
    await ironic.close()
    assert api.requests == ["DELETE /v1/ports/p1"]


async def test_a_trait_is_added_and_removed_alone(api: Api) -> None:
    await api.start()
    api.answers = [(204, ""), (204, "")]
    ironic = client(api)
    await ironic.add_trait("u1", "CUSTOM_GPU")
    await ironic.remove_trait("u1", "CUSTOM_OLD")
    await ironic.close()
    assert api.requests == ["PUT /v1/nodes/u1/traits/CUSTOM_GPU",
                            "DELETE /v1/nodes/u1/traits/CUSTOM_OLD"]


async def test_removing_a_trait_the_node_lacks_is_done(api: Api) -> None:
    await api.start()
    api.answers = [(404, fault("Node u1 does not have trait CUSTOM_X"))]
    ironic = client(api)
    await ironic.remove_trait("u1", "CUSTOM_X")
    await ironic.close()
    assert api.requests == ["DELETE /v1/nodes/u1/traits/CUSTOM_X"]


async def test_a_history_event_is_a_change_of_events_only(api: Api) -> None:
    """`.../changes` takes a member's events; `.../history` would need an admin."""
    await api.start()
    api.answers = [(204, "")]
    ironic = client(api)
    await ironic.add_history("u1", "Inspection rules matched: r1: no change")
    await ironic.close()
    assert api.requests == ["POST /v1/nodes/u1/changes"]


async def test_a_history_event_goes_to_history_where_changes_is_unknown(api: Api) -> None:
    await api.start()
    api.answers = [(404, fault("The resource could not be found.")), (201, "")]
    ironic = client(api)
    await ironic.add_history("u1", "Hardware changed")
    await ironic.close()
    assert api.requests == ["POST /v1/nodes/u1/changes", "POST /v1/nodes/u1/history"]


async def test_node_changes_traits_and_an_event_are_one_request(api: Api) -> None:
    await api.start()
    api.answers = [(204, "")]
    ironic = client(api)
    await ironic.apply_changes("u1", [{"op": "add", "path": "/extra/a", "value": 1}],
                               add_traits=["CUSTOM_GPU"], event="Inspection rules matched")
    await ironic.close()
    assert api.requests == ["POST /v1/nodes/u1/changes"]


async def test_node_changes_without_traits_or_event_are_a_plain_patch(api: Api) -> None:
    await api.start()
    ironic = client(api)
    await ironic.apply_changes("u1", [{"op": "add", "path": "/extra/a", "value": 1}])
    await ironic.close()
    assert api.requests == ["PATCH /v1/nodes/u1"]


async def test_an_api_without_the_changes_call_gets_one_call_each(api: Api) -> None:
    """A replica of an older release during a rolling upgrade; its refusal to record
    the event (the changes are made) is only logged."""
    await api.start()
    api.answers = [(404, fault("The resource could not be found.")), (200, '{"uuid": "u1"}'),
                   (204, ""), (204, ""), (404, fault("The resource could not be found."))]
    ironic = client(api)
    await ironic.apply_changes("u1", [{"op": "add", "path": "/extra/a", "value": 1}],
                               add_traits=["CUSTOM_GPU"], remove_traits=["CUSTOM_OLD"],
                               event="Inspection rules matched")
    await ironic.close()
    assert api.requests == ["POST /v1/nodes/u1/changes", "PATCH /v1/nodes/u1",
                            "PUT /v1/nodes/u1/traits/CUSTOM_GPU",
                            "DELETE /v1/nodes/u1/traits/CUSTOM_OLD", "POST /v1/nodes/u1/history"]


async def test_refused_node_changes_raise(api: Api) -> None:
    await api.start()
    api.answers = [(400, fault("Invalid trait 'x'"))]
    ironic = client(api)
    with pytest.raises(IronicError, match="Invalid trait") as raised:
        await ironic.apply_changes("u1", [], add_traits=["x"])
    await ironic.close()
    assert raised.value.code == 400
    assert api.requests == ["POST /v1/nodes/u1/changes"]


# --- the node with its ports, and port patches with the node's changes ----------------------

SNAPSHOT = json.dumps({"node": {"uuid": "u1"}, "ports": [{"uuid": "p1"}]})
PXE_OFF = [{"op": "replace", "path": "/pxe_enabled", "value": False}]


async def test_a_node_and_its_ports_are_one_request(api: Api) -> None:
    await api.start()
    api.answers = [(200, SNAPSHOT)]
    ironic = client(api)
    assert await ironic.node_with_ports("u1", "uuid") == ({"uuid": "u1"}, [{"uuid": "p1"}])
    await ironic.close()
    assert api.requests == ["GET /v1/nodes/u1/snapshot"]


async def test_an_api_without_snapshots_is_asked_twice_and_not_again(api: Api) -> None:
    await api.start()
    missing = (404, fault("The resource could not be found."))
    api.answers = [missing, (200, '{"uuid": "u1"}'), (200, '{"ports": []}'),
                   (200, '{"uuid": "u1"}'), (200, '{"ports": []}')]
    ironic = client(api)
    for _ in range(2):
        assert await ironic.node_with_ports("u1") == ({"uuid": "u1"}, [])
    await ironic.close()
    assert api.requests == ["GET /v1/nodes/u1/snapshot", "GET /v1/nodes/u1",
                            "GET /v1/ports/detail", "GET /v1/nodes/u1", "GET /v1/ports/detail"]


async def test_a_missing_node_is_its_own_404(api: Api) -> None:
    await api.start()
    api.answers = [(404, fault("Node u1 could not be found.")),
                   (404, fault("Node u1 could not be found."))]
    ironic = client(api)
    with pytest.raises(IronicError, match="Node u1 could not be found") as raised:
        await ironic.node_with_ports("u1")
    await ironic.close()
    assert raised.value.code == 404
    assert ironic.snapshots is None  # still unknown: the node was missing, not the call


async def test_port_patches_go_with_the_nodes_changes_once_snapshots_are_seen(
        api: Api) -> None:
    await api.start()
    api.answers = [(200, SNAPSHOT), (204, "")]
    ironic = client(api)
    await ironic.node_with_ports("u1")
    await ironic.apply_changes("u1", [], port_patches={"p1": PXE_OFF})
    await ironic.close()
    assert api.requests == ["GET /v1/nodes/u1/snapshot", "POST /v1/nodes/u1/changes"]


async def test_a_port_patch_that_moves_the_port_is_a_patch_of_its_own(api: Api) -> None:
    await api.start()
    api.answers = [(200, SNAPSHOT), (200, "{}"), (204, "")]
    ironic = client(api)
    await ironic.node_with_ports("u1")
    await ironic.apply_changes("u1", [], port_patches={
        "p1": [{"op": "replace", "path": "/portgroup_uuid", "value": "g1"}], "p2": PXE_OFF})
    await ironic.close()
    assert api.requests == ["GET /v1/nodes/u1/snapshot", "PATCH /v1/ports/p1",
                            "POST /v1/nodes/u1/changes"]


async def test_port_patches_to_an_api_not_known_to_take_them_are_patches(api: Api) -> None:
    await api.start()
    api.answers = [(200, "{}"), (200, '{"uuid": "u1"}')]
    ironic = client(api)
    await ironic.apply_changes("u1", [{"op": "add", "path": "/extra/a", "value": 1}],
                               port_patches={"p1": PXE_OFF})
    await ironic.close()
    assert api.requests == ["PATCH /v1/ports/p1", "PATCH /v1/nodes/u1"]
