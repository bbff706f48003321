"""Property tests (hypothesis): whatever arrives at `/v1/continue` or the introspection API,
discoverd answers below 500, leaves no introspection in an active state, and never touches
a node the request has nothing to do with.

Hypothesis runs in a worker thread; each example is run on the test's event loop (where both
services live) with `run_coroutine_threadsafe`. Examples are derandomized (the same ones on
every run, so a failure reproduces) and no example database is written.
"""

from __future__ import annotations

import asyncio
import copy
import json
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

pytest.importorskip("hypothesis", reason="hypothesis is not installed (test extra)")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ironsight.discoverd import states
from ironsight.discoverd.service import DiscoverdService

from .helpers import (
    Machine,
    ipa_payload,
    legacy_payload,
    make_node,
    snapshot,
    start,
    status,
)

SETTINGS = settings(max_examples=200, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# --- strategies ---------------------------------------------------------------------------

scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20)
           | st.sampled_from(["02:00:00:00:00:01", "198.18.0.1", "::/0", "0.0.0.0", "lo",
                              "01-02-00-00-00-00-01", "", "uefi", "bios", "x86_64"]))
json_values = st.recursive(
    scalars, lambda kids: st.lists(kids, max_size=4)
    | st.dictionaries(st.text(max_size=10), kids, max_size=4), max_leaves=12)

# Keys the code reads (top level and inventory), so that mutations reach real code paths.
TOP_KEYS = ["inventory", "root_disk", "boot_interface", "error", "logs", "cpus", "cpu_arch",
            "memory_mb", "local_gb", "interfaces", "ipmi_address", "macs", "boot_mac",
            "legacy_format", "capabilities", "changes", "configuration"]
INVENTORY_KEYS = ["interfaces", "cpu", "memory", "disks", "bmc_address", "bmc_v6address",
                  "boot", "system_vendor", "hostname"]
LEAF_KEYS = ["count", "architecture", "flags", "total", "physical_mb", "name", "size",
             "mac_address", "ipv4_address", "ipv6_address", "has_carrier",
             "current_boot_mode", "pxe_interface", "rotational", "serial", "mac", "ip"]


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON document."""
    found = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += _paths(value, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """A valid report with a few random edits: replace, delete or add a value anywhere."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            key = draw(st.sampled_from(TOP_KEYS + INVENTORY_KEYS + LEAF_KEYS) | st.text(
                max_size=8))
            parent[key] = draw(json_values)
        else:
            parent.append(draw(json_values))
    return doc


def continue_bodies(m: Machine) -> st.SearchStrategy[bytes]:
    reports = (st.just(ipa_payload(m, pxe=0)) | st.just(legacy_payload(m))).flatmap(mutated)
    docs = (reports | json_values
            | st.dictionaries(st.sampled_from(TOP_KEYS) | st.text(max_size=8), json_values,
                              max_size=6))
    raw = st.binary(max_size=64) | st.text(max_size=64).map(str.encode)
    return docs.map(lambda d: json.dumps(d).encode()) | raw


# --- the services, driven from the hypothesis thread -----------------------------------------


class Harness:
    def __init__(self, loop: asyncio.AbstractEventLoop, bm: httpx.AsyncClient,
                 di: httpx.AsyncClient, svc: DiscoverdService, target: Machine,
                 bystanders: list[Machine]) -> None:
        self.loop, self.bm, self.di, self.svc = loop, bm, di, svc
        self.target, self.bystanders = target, bystanders
        self.before: Any = None
        self.statuses: Any = None

    def run(self, make: Callable[[], Awaitable[Any]]) -> Any:
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(timeout=60)

    async def remember(self) -> None:
        self.before = await snapshot(self.bm, *self.bystanders)
        self.statuses = [await status(self.di, b.uuid) for b in self.bystanders
                         if (await self.di.get(f"/v1/introspection/{b.uuid}")).status_code
                         == 200]

    async def check(self, resp: httpx.Response, what: str) -> None:
        assert resp.status_code < 500, f"{what}: {resp.status_code} {resp.text}"
        await self.svc.workers.drain(timeout=10)
        for doc in (await self.di.get("/v1/introspection")).json()["introspection"]:
            assert doc["state"] not in states.ACTIVE, (what, doc)
        assert await snapshot(self.bm, *self.bystanders) == self.before, what
        assert [await status(self.di, s["uuid"]) for s in self.statuses] == self.statuses, what
        if (await status(self.di, self.target.uuid))["state"] != "waiting":
            # the report matched the target and ended its introspection: start it again
            resp = await self.di.post(f"/v1/introspection/{self.target.uuid}",
                                      params={"manage_boot": "false"})
            assert resp.status_code == 202, resp.text
            await self.svc.workers.drain(timeout=10)
            assert (await status(self.di, self.target.uuid))["state"] == "waiting"


@pytest.fixture
async def harness(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                  di_service: DiscoverdService) -> Harness:
    target = await make_node(bm, nics=2)  # the one reports may match (no boot management)
    resp = await di.post(f"/v1/introspection/{target.uuid}", params={"manage_boot": "false"})
    assert resp.status_code == 202
    waiting = await make_node(bm)  # under introspection, never named by a request
    await start(di, waiting.uuid)
    idle = await make_node(bm)  # not under introspection
    h = Harness(asyncio.get_running_loop(), bm, di, di_service, target, [waiting, idle])
    await di_service.workers.drain(timeout=10)
    await h.remember()
    return h


async def test_fuzz_continue_never_5xx_nor_stuck(harness: Harness) -> None:
    h = harness

    @SETTINGS
    @given(body=continue_bodies(h.target))
    def check(body: bytes) -> None:
        async def one() -> None:
            resp = await h.di.post("/v1/continue", content=body,
                                   headers={"Content-Type": "application/json"})
            await h.check(resp, f"POST /v1/continue {body[:300]!r}")

        h.run(one)

    await asyncio.to_thread(check)


SUFFIXES = ["", "/", "/abort", "/data", "/data/unprocessed", "/data/unprocessed/x", "/x"]
VERSIONS = st.none() | st.sampled_from(["1.0", "1.3", "1.13", "1.15", "1.17", "1.18",
                                        "latest", "1.19", "2.0", "x", ""]) | st.text(max_size=6)


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, str, dict[str, str], dict[str, str], bytes]:
    kind = draw(st.sampled_from(["node", "fixed"]))
    if kind == "fixed":
        path = draw(st.sampled_from(["/", "/v1", "/v1/", "/v1/continue", "/v1/introspection",
                                     "/v1/introspection/", "/v2", "/v1/rules"]))
    else:
        ident = draw(st.text(min_size=1, max_size=40) | st.uuids().map(str))
        path = ("/v1/introspection/" + urllib.parse.quote(ident, safe="")
                + draw(st.sampled_from(SUFFIXES)))
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]))
    params = draw(st.dictionaries(
        st.sampled_from(["manage_boot", "limit", "marker", "state", "uuid", "fields"])
        | st.text(min_size=1, max_size=6), st.text(max_size=12), max_size=3))
    headers = {}
    version = draw(VERSIONS)
    if version is not None:
        name = draw(st.sampled_from(["X-OpenStack-Ironic-Inspector-API-Version",
                                     "OpenStack-API-Version"]))
        value = version if name.startswith("X-") else f"baremetal-introspection {version}"
        if all(32 <= ord(c) < 127 for c in value):
            headers[name] = value
    body = draw(st.just(b"") | json_values.map(lambda v: json.dumps(v).encode())
                | st.binary(max_size=32))
    return method, path, params, headers, body


async def test_fuzz_api_never_5xx_nor_touches_other_nodes(harness: Harness) -> None:
    h = harness

    @SETTINGS
    @given(request=requests())
    def check(request: tuple[str, str, dict[str, str], dict[str, str], bytes]) -> None:
        method, path, params, headers, body = request

        async def one() -> None:
            resp = await h.di.request(method, path, params=params, headers=headers,
                                      content=body or None)
            await h.check(resp, f"{method} {path} {params} {headers} {body[:100]!r}")

        h.run(one)

    await asyncio.to_thread(check)
