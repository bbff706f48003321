"""What processing adds around the engine: the facts rules see, the history summary, and the
`api-call` transport (against a real HTTP server on loopback)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from ironsight.discoverd.rule_runner import HttpApiCall, patched, summary, with_properties
from ironsight.discoverd.rules.model import ActionTrace, Outcome, RuleTrace


def test_rules_see_the_node_with_the_hooks_property_changes() -> None:
    node = {"uuid": "u", "properties": {"cpus": 2, "memory_mb": 1}}
    merged = with_properties(node, {"cpus": 8, "local_gb": 10})
    assert merged["properties"] == {"cpus": 8, "memory_mb": 1, "local_gb": 10}
    assert node["properties"] == {"cpus": 2, "memory_mb": 1}


def test_rules_see_ports_with_the_hooks_port_patches() -> None:
    port = {"uuid": "p", "pxe_enabled": False, "extra": {"a": 1}}
    assert patched(port, [{"op": "replace", "path": "/pxe_enabled", "value": True},
                          {"op": "remove", "path": "/extra/a"},
                          {"op": "add", "path": "/missing/x", "value": 1}]) == {
        "uuid": "p", "pxe_enabled": True, "extra": {}}


def _outcome(*traces: RuleTrace, failure: str | None = None) -> Outcome:
    return Outcome(node={}, plugin_data={}, ports=[], traces=list(traces), failure=failure)


def test_the_history_names_matched_rules_and_the_paths_and_traits_they_changed() -> None:
    text = summary(_outcome(
        RuleTrace("u1", "gpu", True, actions=[ActionTrace("set-attribute", {}, [
            {"op": "replace", "path": "/node/resource_class", "value": "gpu-large"}]),
            ActionTrace("add-trait", {}, [{"op": "add", "path": "/traits/-",
                                          "value": "CUSTOM_GPU"}])]),
        RuleTrace("u2", None, False),
        RuleTrace("u3", None, True)))
    assert text == ("Inspection rules matched: 'gpu' (u1): replace /node/resource_class, "
                    "add trait CUSTOM_GPU; u3: no change")
    assert "gpu-large" not in text  # values are not shown, only paths


def test_no_matched_rule_means_no_history_event() -> None:
    assert summary(_outcome(RuleTrace("u2", None, False))) is None


# --- the api-call transport, against a real HTTP server on loopback -------------------------


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, list[web.Request]]]:
    seen: list[web.Request] = []

    async def handle(request: web.Request) -> web.Response:
        seen.append(request)
        return web.Response(status=204 if request.path == "/empty" else 200, text="ok")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    await web.SockSite(runner, sock).start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", seen
    await runner.cleanup()


async def test_api_call_gets_the_url_with_its_headers(
        server: tuple[str, list[web.Request]]) -> None:
    base, seen = server
    call = HttpApiCall()
    try:
        answer = await call(f"{base}/hook?node=n1", {"X-Token": "t"}, {}, 5)
    finally:
        await call.close()
    assert (answer.status, answer.body) == (200, b"ok")
    [request] = seen
    assert (request.method, request.path_qs, request.headers["X-Token"]) == (
        "GET", "/hook?node=n1", "t")


async def test_api_call_to_a_closed_port_is_an_os_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    call = HttpApiCall()
    try:
        with pytest.raises(OSError, match="api-call"):
            await call(f"http://127.0.0.1:{port}/", {}, {}, 2)
    finally:
        await call.close()


async def test_api_call_refuses_other_schemes() -> None:
    with pytest.raises(OSError, match="scheme"):
        await HttpApiCall()("file:///etc/passwd", {}, {}, 1)
