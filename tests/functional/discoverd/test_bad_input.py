"""Bad ramdisk reports and bad requests: a clear 4xx naming the problem, and nothing else
happens: unrelated nodes are unchanged and no introspection is left stuck."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from ironsight.common.api import errors
from ironsight.discoverd import states

from .helpers import (
    Machine,
    error_message,
    ipa_payload,
    make_node,
    snapshot,
    start,
    status,
    wait_finished,
)

SMALL_LIMITS = pytest.mark.discoverd_conf(
    introspection={"max_callback_size": "3072", "max_logs_size": "2048"})


@pytest.fixture
async def bystanders(bm: httpx.AsyncClient, di: httpx.AsyncClient
                     ) -> AsyncIterator[tuple[Machine, Machine]]:
    """A node under introspection and an idle one; after the test both must be as before,
    and the waiting one must still finish normally."""
    waiting = await make_node(bm)
    idle = await make_node(bm)
    await start(di, waiting.uuid)
    before = await snapshot(bm, waiting, idle)
    yield waiting, idle
    assert await snapshot(bm, waiting, idle) == before
    assert (await status(di, waiting.uuid))["state"] == "waiting"
    for doc in (await di.get("/v1/introspection")).json()["introspection"]:
        assert doc["state"] not in states.ACTIVE, doc
    resp = await di.post("/v1/continue", json=_minimal(waiting))  # fits the small limits
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, waiting.uuid))["state"] == "finished"


async def _post_raw(di: httpx.AsyncClient, body: bytes) -> httpx.Response:
    return await di.post("/v1/continue", content=body,
                         headers={"Content-Type": "application/json"})


def _minimal(m: Machine, **extra: Any) -> dict[str, Any]:
    """A small valid report for `m` (fits in 1 KiB)."""
    return {"inventory": {"interfaces": [{"mac_address": m.macs[0]}],
                          "cpu": {"count": 2, "architecture": "x86_64"},
                          "memory": {"physical_mb": 2048}}, **extra}


async def test_deeply_nested_report_is_400_and_ends_no_introspection(
        bm: httpx.AsyncClient, di: httpx.AsyncClient,
        bystanders: tuple[Machine, Machine]) -> None:
    waiting, _ = bystanders
    payload = ipa_payload(waiting)
    payload["extra"] = {"nested": []}
    text = json.dumps(payload).replace('"nested": []', '"nested": ' + "[" * 40 + "]" * 40)
    resp = await di.post("/v1/continue", content=text,
                         headers={"Content-Type": "application/json"})
    assert resp.status_code == 400
    assert "nested more than 25 levels deep" in error_message(resp)
    assert (await status(di, waiting.uuid))["state"] == "waiting"


@SMALL_LIMITS
async def test_body_over_the_limit_is_413(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                          bystanders: tuple[Machine, Machine]) -> None:
    waiting, _ = bystanders
    big = ipa_payload(waiting, padding="x" * 5000)
    resp = await di.post("/v1/continue", json=big)
    assert resp.status_code == 413
    assert "limit" in error_message(resp)


@SMALL_LIMITS
async def test_body_over_the_limit_without_content_length_is_413(
        bm: httpx.AsyncClient, di: httpx.AsyncClient,
        bystanders: tuple[Machine, Machine]) -> None:
    waiting, _ = bystanders

    async def chunks() -> AsyncIterator[bytes]:
        body = json.dumps(ipa_payload(waiting, padding="x" * 5000)).encode()
        for i in range(0, len(body), 512):
            yield body[i:i + 512]

    resp = await di.post("/v1/continue", content=chunks())
    assert resp.status_code == 413


@SMALL_LIMITS
async def test_logs_over_their_limit_is_413_naming_logs(
        bm: httpx.AsyncClient, di: httpx.AsyncClient,
        bystanders: tuple[Machine, Machine]) -> None:
    waiting, _ = bystanders
    resp = await di.post("/v1/continue", json=_minimal(waiting, logs="A" * 2100))
    assert resp.status_code == 413
    assert "'logs'" in error_message(resp)


@SMALL_LIMITS
async def test_logs_within_their_limit_are_accepted(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1)
    await start(di, m.uuid)
    resp = await di.post("/v1/continue", json=_minimal(m, logs="QUFB" * 500))  # 2000 bytes
    assert resp.status_code == 200, resp.text
    assert (await wait_finished(di, m.uuid))["state"] == "finished"


NOT_JSON = {"empty": b"", "text": b"not json", "truncated": b'{"inventory": ',
            "binary": b"\xff\xfe\x00", "garbage": b"NaN-ish {}"}
NOT_OBJECTS = {"empty-array": [], "array": [{"inventory": {}}], "string": "string",
               "number": 42, "null": None, "bool": True}


async def test_not_json_is_400(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                               bystanders: tuple[Machine, Machine],
                               subtests: pytest.Subtests) -> None:
    for name, body in NOT_JSON.items():
        with subtests.test(name):
            resp = await _post_raw(di, body)
            assert resp.status_code == 400
            assert "not valid JSON" in error_message(resp)


async def test_json_that_is_not_an_object_is_400(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                                 bystanders: tuple[Machine, Machine],
                                                 subtests: pytest.Subtests) -> None:
    for name, body in NOT_OBJECTS.items():
        with subtests.test(name):
            resp = await _post_raw(di, json.dumps(body).encode())
            assert resp.status_code == 400
            assert "JSON object" in error_message(resp)


def _edit(path: str, value: Any) -> Any:
    def edit(payload: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = payload
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return edit


WRONG_TYPES = [
    ("inventory.interfaces", []),
    ("inventory.interfaces", "eth0"),
    ("inventory.interfaces.0.mac_address", None),
    ("inventory.interfaces.0.mac_address", 12),
    ("inventory.cpu.count", "many"),
    ("inventory.cpu.count", -1),
    ("inventory.cpu.count", 1.5),
    ("inventory.cpu.flags", "vmx"),
    ("inventory.memory.physical_mb", "lots"),
    ("inventory.disks.0.size", "1TB"),
    ("inventory.disks.0.name", None),
    ("inventory.boot", "uefi"),
    ("inventory.bmc_address", ["198.18.0.1"]),
    ("inventory", None),
    ("inventory", []),
    ("root_disk.size", None),
    ("error", {"code": 1}),
]


async def test_wrong_types_are_400_naming_the_field(bm: httpx.AsyncClient,
                                                    di: httpx.AsyncClient,
                                                    bystanders: tuple[Machine, Machine],
                                                    subtests: pytest.Subtests) -> None:
    waiting, _ = bystanders
    for field, value in WRONG_TYPES:
        with subtests.test(f"{field}={value!r}"):
            payload = ipa_payload(waiting)  # it would match the waiting node
            _edit(field, value)(payload)
            resp = await di.post("/v1/continue", json=payload)
            assert resp.status_code == 400, resp.text
            assert f"'{field}'" in error_message(resp)


LEGACY_WRONG_TYPES = [
    ("cpus", {"cpus": "four", "interfaces": {}}),
    ("interfaces.eth0.mac", {"cpus": 1, "interfaces": {"eth0": {"ip": "10.0.0.1"}}}),
    ("interfaces", {"cpus": 1, "interfaces": {"eth0": "02:00:00:00:00:01"}}),
    ("local_gb", {"cpus": 1, "local_gb": -5}),
]


async def test_legacy_wrong_types_are_400_naming_the_field(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, bystanders: tuple[Machine, Machine],
        subtests: pytest.Subtests) -> None:
    for field, body in LEGACY_WRONG_TYPES:
        with subtests.test(field):
            resp = await di.post("/v1/continue", json=body)
            assert resp.status_code == 400, resp.text
            assert f"'{field}" in error_message(resp)


async def test_report_without_inventory_is_400(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                               bystanders: tuple[Machine, Machine]) -> None:
    resp = await di.post("/v1/continue", json={"hello": "world"})
    assert resp.status_code == 400
    assert "'inventory'" in error_message(resp)


async def test_unknown_query_parameters_are_400(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                                bystanders: tuple[Machine, Machine]) -> None:
    waiting, _ = bystanders
    resp = await di.post(f"/v1/introspection/{waiting.uuid}", params={"foo": "bar"})
    assert resp.status_code == 400
    assert "foo" in error_message(resp)
    resp = await di.get("/v1/introspection", params={"limit": "many"})
    assert resp.status_code == 400
    resp = await di.get("/v1/introspection", params={"limit": "1001"})
    assert resp.status_code == 400
    resp = await di.get("/v1/introspection", params={"state": "bogus"})
    assert resp.status_code == 400
    resp = await di.get("/v1/introspection", params={"marker": "nope"})
    assert resp.status_code == 400


async def test_client_supplied_all_interfaces_is_400_not_500(
        bm: httpx.AsyncClient, di: httpx.AsyncClient,
        bystanders: tuple[Machine, Machine]) -> None:
    waiting, _ = bystanders
    failed = []
    for value in ({"eth0": 5}, [1, 2], {"eth0": {"ip": "x"}}, "text"):
        payload = ipa_payload(waiting, bmc=None, all_interfaces=value)
        payload["inventory"]["bmc_v6address"] = None
        payload["inventory"]["interfaces"] = [{"name": "eno1", "mac_address": "bad"}]
        resp = await di.post("/v1/continue", json=payload)
        if resp.status_code not in (400, 404):
            failed.append((value, resp.status_code))
    assert not failed


# Node identifiers in paths are forwarded to the bare-metal API without quoting
# (ironic.py `get_node`: f"/v1/nodes/{ident}"), so a path segment of dots or with '?'/'#'
# becomes another bare-metal URL: `..` reaches `/v1/`, whose document has no `uuid`.
async def test_odd_node_identifiers_are_404_not_500(di: httpx.AsyncClient) -> None:
    failed = []
    for ident in ("%2E", "%2E%2E", "%3F", "%23"):
        for method, suffix in (("GET", ""), ("POST", ""), ("POST", "/abort"),
                               ("GET", "/data")):
            resp = await di.request(method, f"/v1/introspection/{ident}{suffix}")
            if resp.status_code not in (400, 404):
                failed.append((method, ident, suffix, resp.status_code))
    assert not failed, failed


async def test_question_mark_in_node_name_is_not_a_query(di: httpx.AsyncClient) -> None:
    resp = await di.get("/v1/introspection/a%3Fb")
    assert resp.status_code == 404, resp.text
    assert "a?b" in error_message(resp)


# --- hostile input (issue 11): 400 naming the field, on every endpoint that reads a body -----

def _hostile(m: Machine) -> dict[str, tuple[bytes, str]]:
    """Each class inside an otherwise valid report for `m`, with the message it must get."""
    report = json.dumps(ipa_payload(m))

    def inject(value: bytes) -> bytes:
        return report.replace('"inventory": {', '"inventory": {"hostile": VALUE, ', 1
                              ).encode().replace(b"VALUE", value)

    return {
        "deep-list": (b"[" * 100_000 + b"]" * 100_000, "nested more than 25 levels deep"),
        "deep-object": (inject(b'{"a":' * 40_000 + b"1" + b"}" * 40_000),
                        "nested more than 25 levels deep"),
        "huge-int": (inject(b"9" * 5000),
                     "field 'inventory.hostile': 999999999999... (5000 characters)"),
        "lone-surrogate": (inject(b'"\\ud800"'),
                           "field 'inventory.hostile': it contains a lone surrogate"),
    }


@pytest.mark.parametrize("kind", ["deep-list", "deep-object", "huge-int", "lone-surrogate"])
async def test_hostile_report_is_400_naming_the_field_and_ends_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, bystanders: tuple[Machine, Machine],
        kind: str) -> None:
    waiting, _ = bystanders
    body, message = _hostile(waiting)[kind]
    for path in ("/v1/continue", f"/v1/introspection/{waiting.uuid}/data/unprocessed"):
        resp = await _post_raw_to(di, path, body)
        assert resp.status_code == 400, (path, resp.text)
        assert message in error_message(resp), path
    resp = await bm.post("/v1/continue_inspection", content=body,
                         headers={"Content-Type": "application/json"})
    assert resp.status_code == 400, resp.text
    assert message in errors.error_message(resp.content, "")


async def _post_raw_to(di: httpx.AsyncClient, path: str, body: bytes) -> httpx.Response:
    return await di.post(path, content=body, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("header", ["X-OpenStack-Ironic-Inspector-API-Version",
                                    "OpenStack-API-Version"])
async def test_oversized_version_header_is_400_on_every_get(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, bystanders: tuple[Machine, Machine],
        di_service: Any, header: str) -> None:
    waiting, _ = bystanders
    raw = "1." + "9" * 5000
    value = raw if header.startswith("X-") else f"baremetal-introspection {raw}"
    paths = [route.path.replace("{node}", waiting.uuid) for route in di_service.app.routes
             if "GET" in (getattr(route, "methods", None) or ()) and route.path != "/metrics"]
    assert len(paths) >= 5
    for path in paths:
        resp = await di.get(path, headers={header: value})
        assert resp.status_code == 400, (path, resp.text)
        assert "Malformed API version" in error_message(resp), path
        assert len(error_message(resp)) < 400, path
