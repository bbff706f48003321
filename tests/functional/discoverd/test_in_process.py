"""discoverd beside the bare-metal service in one process, as `ironsight serve` runs them:
its calls go to the bare-metal application in-process (`baremetal_in_process`, no HTTP), and
everything behaves as over HTTP. The bare-metal API is also served over HTTP here (the
conftest's uvicorn listener), so that each answer can be compared with the HTTP one."""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from ironsight.baremetal.service import BaremetalService
from ironsight.cli.server import baremetal_in_process
from ironsight.common import config
from ironsight.discoverd.ironic import Ironic
from ironsight.discoverd.service import DiscoverdService

from .helpers import introspect, ipa_payload, make_node, node, ports


@pytest.fixture
def conf(conf: config.Config, bm_socket: socket.socket) -> config.Config:
    """The conftest's, with `[api] port` the bare-metal listener's: `ironic_url` names this
    process's own listener, as in `ironsight serve`'s defaults."""
    return dataclasses.replace(conf, api=dataclasses.replace(
        conf.api, port=bm_socket.getsockname()[1]))


@pytest.fixture
async def di_service(conf: config.Config, bm_service: BaremetalService,
                     caplog: pytest.LogCaptureFixture) -> AsyncIterator[DiscoverdService]:
    """discoverd wired as `ironsight serve` wires it (cli/server.py)."""
    with caplog.at_level(logging.INFO, logger="ironsight.cli.server"):
        svc = DiscoverdService(conf, baremetal_in_process(conf, bm_service))
    await svc.start()
    try:
        yield svc
    finally:
        await svc.stop()


@pytest.fixture
async def over_http(conf: config.Config) -> AsyncIterator[Ironic]:
    """discoverd's client of the same bare-metal API, over HTTP (the listener)."""
    ironic = Ironic(conf)
    try:
        yield ironic
    finally:
        await ironic.close()


async def test_discoverd_calls_the_application_in_process(
        di_service: DiscoverdService, caplog: pytest.LogCaptureFixture) -> None:
    assert di_service.ironic.local is not None
    said = [r.getMessage() for r in caplog.get_records("setup")]
    assert any("discoverd calls the bare-metal API in-process" in line for line in said)


async def test_an_inspection_end_to_end_in_process(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                                   di_service: DiscoverdService) -> None:
    m = await make_node(bm, nics=3, ports=1)
    done = await introspect(di, m, ipa_payload(m, cpus=12, memory_mb=32768))
    assert done["state"] == "finished" and done["error"] is None
    doc = await node(bm, m.uuid)
    assert doc["provision_state"] == "manageable"
    assert doc["power_state"] == "power off"
    assert doc["properties"]["cpus"] == 12
    assert doc["properties"]["memory_mb"] == 32768
    assert set(await ports(bm, m.uuid)) >= {m.macs[0]}
    resp = await bm.get(f"/v1/nodes/{m.uuid}/history")
    assert resp.status_code == 200
    # discoverd's calls, each recorded by the bare-metal service as over HTTP
    events = [e["event"] for e in resp.json()["history"]]
    for made in ("Boot device set to pxe (persistent=False)",
                 "Power action requested: rebooting", "Node updated: properties",
                 "Power action requested: power off"):
        assert made in events, events
    # and not one of discoverd's calls went over HTTP (its HTTP session is made on first use)
    assert di_service.ironic._session is None


async def raw(ironic: Ironic, method: str, path: str, body: Any = None,
              params: dict[str, str] | None = None,
              headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """One request as `Ironic.call` sends it, without its retries: (status, JSON body)."""
    data = None if body is None else body if isinstance(body, str) else json.dumps(body)
    if ironic.local is not None:
        status, payload = await ironic._in_process(method, path, data, params, headers)
    else:
        async with ironic._http().request(method, ironic.base + path, data=data,
                                          params=params, headers=headers) as resp:
            status, payload = resp.status, await resp.read()
    return status, json.loads(payload) if payload else None


@pytest.mark.discoverd_conf(api={"max_body_size": "4096"})
async def test_every_answer_is_the_one_over_http(bm: httpx.AsyncClient,
                                                 di_service: DiscoverdService,
                                                 over_http: Ironic) -> None:
    """The same requests in-process and over HTTP get the same status and body: reads,
    writes refused, the body limit, no such node or route, Ironic's paths without /v1,
    an older microversion, a version this API does not have."""
    m = await make_node(bm)
    local = di_service.ironic
    requests: list[tuple[Any, ...]] = [
        ("GET", f"/v1/nodes/{m.uuid}"),
        ("GET", f"/v1/nodes/{m.uuid}", None, {"fields": "uuid,power_state,last_error"}),
        ("GET", "/v1/ports/detail", None, {"node": m.uuid, "limit": "1000"}),
        ("GET", "/v1/ports", None, {"fields": "address", "limit": "1"}),  # a `next` link
        ("GET", "/v1/nodes/no-such-node"),
        ("GET", "/v1/no-such-thing"),
        ("DELETE", "/v1"),  # 405
        ("PATCH", f"/v1/nodes/{m.uuid}", [{"op": "replace", "path": "/uuid", "value": "x"}]),
        ("PATCH", f"/v1/nodes/{m.uuid}", "{not json"),
        ("POST", "/v1/ports", {"node_uuid": m.uuid, "address": "x" * 5000}),  # over 4096
        ("PUT", f"/v1/nodes/{m.uuid}/management/boot_device", {"boot_device": "floppy"}),
        ("GET", f"/nodes/{m.uuid}"),  # Ironic's path without /v1 (legacy_paths.py)
        ("GET", f"/v1/nodes/{m.uuid}", None, None,
         {"X-OpenStack-Ironic-API-Version": "1.1"}),
        ("GET", f"/v1/nodes/{m.uuid}", None, None,
         {"X-OpenStack-Ironic-API-Version": "1.999"}),
        ("GET", "/v1/nodes", None, {"fields": "uuid,name", "provision_state": "manageable"}),
    ]
    statuses = []
    for request in requests:
        there = await raw(over_http, *request)
        here = await raw(local, *request)
        assert here == there, request
        statuses.append(here[0])
    assert statuses[4:11] == [404, 404, 405, 400, 400, 413, 400]
    assert statuses[-2] == 406
    # the metrics' page too (its counters move between two reads), which counts in-process
    # requests as any others (the endpoint wrapper times them)
    status, page = await local._in_process("GET", "/metrics", None, None, None)
    assert status == 200
    assert b"ironsight_api_request_seconds" in page


async def test_retries_and_errors_are_those_over_http(bm: httpx.AsyncClient,
                                                      di_service: DiscoverdService,
                                                      over_http: Ironic) -> None:
    """A refusal raises the same IronicError (code and message) either way."""
    m = await make_node(bm)
    for ironic in (di_service.ironic, over_http):
        await ironic.set_power(m.uuid, "power on")
    outcomes = []
    for ironic in (di_service.ironic, over_http):
        try:
            await ironic.create_port(m.uuid, m.macs[0], True)  # a port has this MAC already
        except Exception as exc:
            outcomes.append((type(exc).__name__, getattr(exc, "code", None), str(exc)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] == 409
