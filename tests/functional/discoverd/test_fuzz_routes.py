"""Every route of both services, fuzzed (hypothesis): whatever the method, path parameters,
query, version headers and body, no answer is 500 or more. The routes are enumerated from the
two Starlette apps, so a new endpoint is fuzzed without touching this file.

Two passes, against the in-process services of this folder's fixtures (real SQLite
databases, the real conductor with the fake driver, discoverd talking to the bare-metal API
over HTTP):
- every route x every hostile class of issue 11 (deep nesting, integers past 64 bits and
  5000-digit ones, non-finite numbers, lone surrogates in values and keys, wrong types for
  each field, an oversized version header, bad UTF-8, an oversized body): explicit, not
  left to chance;
- random requests (derandomized: the same on every run, so a failure reproduces).
The number of requests is printed (`-s` shows it) and asserted to stay in its budget.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("hypothesis", reason="hypothesis is not installed (test extra)")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Route

from ironsight.baremetal.discoverd_proxy import DiscoverdProxy
from ironsight.baremetal.service import BaremetalService
from ironsight.discoverd.service import DiscoverdService

from .helpers import make_node, start

DI_URL = "http://di.test"
SETTINGS = settings(max_examples=400, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

# Field names either service reads from a body, to give wrong types to.
FIELDS = ["target", "timeout", "boot_device", "persistent", "reason", "name", "driver",
          "driver_info", "properties", "extra", "instance_info", "instance_uuid", "uuid",
          "address", "node_uuid", "pxe_enabled", "local_link_connection", "physical_network",
          "inventory", "logs", "error", "root_disk", "boot_interface", "op", "path", "value",
          "cpus", "memory_mb", "local_gb", "cpu_arch", "ipmi_port", "ipmi_address"]
WRONG = [None, True, "True", 0, -1, 2**63, 1.5, "", "x" * 300, [], ["x"], {}, {"a": 1}]

DEEP_LIST = b"[" * 100_000 + b"]" * 100_000
DEEP_OBJECT = b'{"a":' * 40_000 + b"1" + b"}" * 40_000
HUGE = b"9" * 5000


def hostile_bodies() -> dict[str, bytes]:
    bodies = {
        "deep-list": DEEP_LIST, "deep-object": DEEP_OBJECT,
        "huge-int": b'{"name": ' + HUGE + b', "target": ' + HUGE + b"}",
        "huge-int-top": HUGE, "int-past-64-bits": b'{"timeout": 9223372036854775808}',
        "non-finite": b'{"timeout": 1e999, "value": NaN, "x": -Infinity}',
        "lone-surrogate": b'{"name": "\\ud800", "target": "\\udfff", "driver": "fake"}',
        "surrogate-key": b'{"\\ud800": 1}',
        "bad-utf8": b'{"name": "\xed\xa0\x80"}',
        "patch-hostile": b'[{"op": "add", "path": "/extra/a", "value": ' + HUGE + b"}]",
        "patch-surrogate": b'[{"op": "add", "path": "/\\ud800", "value": 1}]',
        "too-big": b'{"extra": "' + b"x" * (17 * 1024 * 1024) + b'"}',
    }
    for field in FIELDS:
        for index, value in enumerate(WRONG):
            bodies[f"{field}={index}"] = json.dumps({field: value}).encode()
    return bodies


VERSION_HEADERS = {
    "bm": ["X-OpenStack-Ironic-API-Version", "baremetal"],
    "di": ["X-OpenStack-Ironic-Inspector-API-Version", "baremetal-introspection"],
}


def version_headers(service: str, value: str) -> Iterator[dict[str, str]]:
    own, service_type = VERSION_HEADERS[service]
    yield {own: value}
    yield {"OpenStack-API-Version": f"{service_type} {value}"}


class Target:
    """The two apps' clients and routes, and identifiers that exist."""

    def __init__(self, bm: httpx.AsyncClient, di: httpx.AsyncClient, bm_app: Any,
                 di_app: Any, node: str, port: str) -> None:
        self.clients = {"bm": bm, "di": di}
        self.routes = [(name, route) for name, app in (("bm", bm_app), ("di", di_app))
                       for route in app.routes if isinstance(route, Route)]
        self.ids = {"node": node, "port": port, "driver": "fake"}
        self.requests = 0
        self.failures: list[str] = []

    def path(self, route: Route, value: str | None = None) -> str:
        path = route.path
        for name in route.param_convertors:
            # a lone surrogate goes out as the bytes it would be (%ED%A0%80: bad UTF-8)
            path = path.replace("{" + name + "}", urllib.parse.quote(
                value if value is not None else self.ids.get(name, "x"), safe="",
                errors="surrogatepass"))
        return path

    async def send(self, service: str, method: str, path: str, *, headers: dict[str, str],
                   body: bytes | None, params: dict[str, str] | None = None) -> None:
        self.requests += 1
        try:
            resp = await self.clients[service].request(
                method, path, headers={"Content-Type": "application/json", **headers},
                content=body, params=params)
        except Exception as exc:  # the app itself raised: as bad as a 500
            self.failures.append(f"{service} {method} {path}: raised {exc!r}")
            return
        if resp.status_code >= 500:
            self.failures.append(f"{service} {method} {path[:120]} {str(headers)[:120]} "
                                 f"{(body or b'')[:120]!r}: {resp.status_code} "
                                 f"{resp.text[:200]}")


# The bare-metal API forwards /v1/inspection_rules to discoverd: to this folder's in-process
# one (reached through an ASGI transport, see `target`), so that those routes are fuzzed
# through to discoverd's, not answered 503 "not configured".
pytestmark = pytest.mark.discoverd_conf(discoverd={"service_url": f"{DI_URL}/v1"})


@pytest.fixture
async def target(bm: httpx.AsyncClient, di: httpx.AsyncClient, bm_service: BaremetalService,
                 di_service: DiscoverdService) -> AsyncIterator[Target]:
    proxy = DiscoverdProxy(bm_service.conf, transport=httpx.ASGITransport(app=di_service.app))
    bm_service.api_app.state.deps = dataclasses.replace(bm_service.api_app.state.deps,
                                                    discoverd=proxy)
    m = await make_node(bm, nics=1)
    await start(di, m.uuid)
    port = (await bm.get("/v1/ports", params={"node": m.uuid})).json()["ports"][0]["uuid"]
    yield Target(bm, di, bm_service.api_app, di_service.app, m.uuid, port)
    await proxy.close()


async def test_every_route_survives_every_hostile_class(target: Target) -> None:
    bodies = hostile_bodies()
    for service, route in target.routes:
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            path = target.path(route)
            if method in ("POST", "PUT", "PATCH"):
                for body in bodies.values():
                    await target.send(service, method, path, headers={}, body=body)
            for headers in version_headers(service, "1." + "9" * 5000):
                await target.send(service, method, path, headers=headers, body=None)
            if route.param_convertors:
                for value in ("\ud800", "x" * 5000, "..", "9" * 5000, "%"):
                    await target.send(service, method, target.path(route, value), headers={},
                                      body=None)
            await target.send(service, method, f"{path}?limit={'9' * 5000}&marker=%ED%A0%80"
                              "&fields=%00&detail=maybe", headers={}, body=None)
    print(f"\nhostile pass: {target.requests} requests over {len(target.routes)} routes")
    assert not target.failures, "\n".join(target.failures[:20])
    assert target.requests < 37_000  # the budget: 34,244 over 177 routes, ~20-40 s


# --- random pass -----------------------------------------------------------------------------

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
           | st.sampled_from(["True", "false", "manage", "power on", "pxe", "fake",
                              "52:54:00:00:00:01", "198.18.0.1", "x86_64", "\ud800"]))
json_values = st.recursive(
    scalars, lambda kids: st.lists(kids, max_size=4)
    | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), kids, max_size=4),
    max_leaves=12)


def _encodable(text: str) -> bool:
    return not any("\ud800" <= c <= "\udfff" for c in text)


def _dump(value: Any) -> bytes:
    return json.dumps(value).encode()  # ensure_ascii: a lone surrogate goes out as \\udXXX


@st.composite
def requests(draw: st.DrawFn, t: Target) -> tuple[str, str, str, dict[str, str],
                                                   dict[str, str], bytes | None]:
    service, route = draw(st.sampled_from(t.routes))
    method = draw(st.sampled_from(sorted(route.methods or {"GET"})) | st.sampled_from(
        ["GET", "POST", "PUT", "PATCH", "DELETE"]))
    value = draw(st.none() | st.text(min_size=1, max_size=20))
    path = t.path(route, value)
    params = draw(st.dictionaries(
        st.sampled_from(["limit", "marker", "fields", "detail", "node", "node_uuid",
                         "sort_key", "sort_dir", "maintenance", "manage_boot", "state"])
        | st.text(min_size=1, max_size=6), st.text(max_size=12), max_size=3).filter(
            lambda d: all(_encodable(k) and _encodable(v) for k, v in d.items())))
    headers: dict[str, str] = {}
    version = draw(st.none() | st.sampled_from(["1.1", "1.6", "1.115", "1.18", "latest",
                                                "2.0", "1.", "x", "1." + "9" * 100]))
    if version is not None:
        headers = draw(st.sampled_from(list(version_headers(service, version))))
    body = draw(st.none() | json_values.map(_dump) | st.binary(max_size=32)
                | st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=4).map(_dump)
                | st.just(ipa_payload_for(t)).map(_dump))
    return service, method, path, params, headers, body


def ipa_payload_for(t: Target) -> dict[str, Any]:
    return {"inventory": {"interfaces": [{"mac_address": "02:00:00:00:00:01"}]},
            "node": t.ids["node"]}


async def test_random_requests_to_every_route_never_5xx(target: Target) -> None:
    loop = asyncio.get_running_loop()

    @SETTINGS
    @given(request=requests(target))
    def check(request: tuple[str, str, str, dict[str, str], dict[str, str], bytes | None]
              ) -> None:
        service, method, path, params, headers, body = request
        asyncio.run_coroutine_threadsafe(
            target.send(service, method, path, headers=headers, body=body, params=params),
            loop).result(timeout=60)

    await asyncio.to_thread(check)
    print(f"\nrandom pass: {target.requests} requests")
    assert not target.failures, "\n".join(target.failures[:20])

