"""`GET /v1/drivers` with inspection through discoverd enabled: every hardware type loads
and uses DiscoverdInspect; without `[discoverd] service_url` they all refuse to load, the
service still starts and says why (API and log)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .helpers import Service

HARDWARE_TYPES = {"fake-hardware", "pxe_ipmitool", "pxe_ipminative", "pxe_ssh", "redfish"}


def test_drivers_are_listed_with_their_host(client):
    resp = client.get("/v1/drivers")
    assert resp.status_code == 200, resp.text
    drivers = {d["name"]: d for d in resp.json()["drivers"]}
    assert set(drivers) == HARDWARE_TYPES
    for doc in drivers.values():
        assert len(doc["hosts"]) == 1, doc
        assert "load_error" not in doc, doc


def test_every_hardware_type_inspects_through_discoverd(client):
    resp = client.get("/v1/drivers", params={"detail": "true"})
    assert resp.status_code == 200, resp.text
    inspect = {d["name"]: d["default_inspect_interface"] for d in resp.json()["drivers"]}
    assert inspect == dict.fromkeys(HARDWARE_TYPES, "discoverd")


@pytest.fixture(scope="module")
def without_service_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """`[discoverd] enabled = true` and no service_url."""
    svc = Service(tmp_path_factory.mktemp("no-url"), service_url=False).start()
    try:
        yield svc
    finally:
        svc.stop()


def test_without_service_url_every_hardware_type_is_listed_with_its_load_error(
        without_service_url):
    with without_service_url.client() as client:
        resp = client.get("/v1/drivers")
    assert resp.status_code == 200, resp.text
    drivers = {d["name"]: d for d in resp.json()["drivers"]}
    assert set(drivers) == HARDWARE_TYPES
    for doc in drivers.values():
        assert doc["hosts"] == [], doc
        assert "service_url" in doc["load_error"], doc


def test_without_service_url_the_log_says_why_at_start_up(without_service_url):
    log = without_service_url.log.read_text()
    for name in HARDWARE_TYPES:
        lines = [ln for ln in log.splitlines()
                 if f"Hardware type {name} " in ln and "service_url" in ln]
        assert lines, f"nothing about {name} and service_url in:\n{log}"


def test_without_service_url_a_node_is_refused_with_the_reason(without_service_url):
    with without_service_url.client() as client:
        resp = client.post("/v1/nodes", json={"driver": "fake", "name": "no-url"})
    assert resp.status_code == 400, resp.text
    assert "service_url" in resp.text
