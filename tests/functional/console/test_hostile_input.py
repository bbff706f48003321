"""Hostile input to every console route: whatever a query or a form holds (too long, not a
number, not UTF-8, NUL, markup, path tricks, repeated), the answer is a page with a status
under 500, markup comes back escaped, and no node changes."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from .lab import Lab, csrf_of, logged_in

HOSTILE = ["x" * 20_000, "9" * 5000, "-1", "0", "1e309", "NaN", "\x00", "../../etc/passwd",
           "<script>alert(1)</script>", "' OR 1=1 --", "%", "{{7*7}}", "日本", " "]
SCRIPT = "<script>alert(1)</script>"
# bytes a form or query cannot decode as UTF-8 (a lone surrogate, a cut sequence)
RAW = ["%ED%A0%80", "%C3", "%FF%FE"]

QUERY_ROUTES = {
    "/nodes": ("state", "driver", "maintenance", "trait", "owner", "vendor", "min_memory_gib",
               "min_cpus", "min_gpus", "where", "sort", "desc", "page", "per_page",
               "columns"),
    "/nodes/gpu-1": ("tab", "old", "new"),
    "/nodes/gpu-1/log": ("attempt",),
    "/compare": ("node",),
    "/board": ("part", "limit"),
    "/discovery": ("status", "done"),
    "/login": ("next",),
    "/help": ("x",),
}
FORM_ROUTES = {
    "/nodes/bulk": ("action", "scope", "node", "trait", "reason", "f_where", "f_min_cpus",
                    "f_state"),
    "/nodes/bulk/run": ("action", "scope", "node", "trait", "reason", "expected",
                        "f_where", "f_owner"),
    "/discovery/approve": ("node",),
    "/discovery/reject": ("node",),
    "/discovery/conflicts/1": ("resolution", "node"),
}
# the rest of each form is valid: once as over the selection (of no node), once as over all
# that match a filter no node matches, so that a field read only with the other scope is read
BASES = ({"action": "maintenance_on", "scope": "selected", "expected": "1",
          "resolution": "ignore"},
         {"action": "maintenance_on", "scope": "matching", "expected": "0",
          "f_owner": "nobody-owns-this", "resolution": "ignore"})


def fleet(lab: Lab) -> list[Any]:
    with lab.api() as api:
        nodes = api.get("/v1/nodes/detail", params={"limit": "1000"}).json()["nodes"]
    return sorted((n["uuid"], n["provision_state"], n["maintenance"], n["traits"],
                   n["owner"], n["extra"]) for n in nodes)


def sound(resp: httpx.Response) -> None:
    assert resp.status_code < 500, (resp.request.url, resp.status_code, resp.text[:300])
    assert SCRIPT not in resp.text, resp.request.url


@pytest.mark.parametrize("path", sorted(QUERY_ROUTES))
def test_a_hostile_query_parameter_is_never_a_server_error(lab: Lab, path: str) -> None:
    with logged_in(lab, "admin") as client:
        for name in QUERY_ROUTES[path]:
            for value in HOSTILE:
                sound(client.get(path, params={name: value}))
            for raw in RAW:
                sound(client.get(f"{path}?{name}={raw}"))
            sound(client.get(path, params=[(name, "a"), (name, "b")]))


@pytest.mark.parametrize("path", sorted(FORM_ROUTES))
def test_a_hostile_form_field_is_never_a_server_error_and_changes_nothing(
        lab: Lab, path: str) -> None:
    before = fleet(lab)
    with logged_in(lab, "admin") as client:
        token = csrf_of(client)
        for name in FORM_ROUTES[path]:
            for base in BASES:
                for value in HOSTILE:
                    sound(client.post(path, data={**base, "csrf": token, name: value}))
            for raw in RAW:
                sound(client.post(path, content=f"csrf={token}&{name}={raw}",
                                  headers={"Content-Type":
                                           "application/x-www-form-urlencoded"}))
    assert fleet(lab) == before


def test_a_form_that_is_not_a_form_is_refused(lab: Lab) -> None:
    with logged_in(lab, "admin") as client:
        for body, kind in ((b"\x00" * 1000, "application/x-www-form-urlencoded"),
                           (b"--x\r\n", "multipart/form-data; boundary=x"),
                           (b'{"action": "inspect"}', "application/json")):
            resp = client.post("/nodes/bulk", content=body, headers={"Content-Type": kind})
            sound(resp)
            assert resp.status_code in (400, 403), (kind, resp.text[:300])
