"""`GET /v1/lookup` and `POST /v1/heartbeat/{node}` answer as Ironic 39 does (texts and
statuses measured on it), and hand an agent token only once, only to a node being inspected."""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

import httpx
import pytest

from .helpers import Service, enroll, inspect, machine, node, wait_ramdisk_booted

pytestmark = pytest.mark.functional

V = {"X-OpenStack-Ironic-API-Version": "1.62"}
NOT_FOUND = "Resource could not be found."


def _lookup(svc: Service, headers: dict[str, str] | None = None, **params: str
            ) -> httpx.Response:
    return httpx.get(f"{svc.url}/v1/lookup", params=params, headers=V if headers is None
                     else headers, timeout=10)


def _heartbeat(svc: Service, ident: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{svc.url}/v1/heartbeat/{ident}", json=body, headers=V, timeout=10)


def _fault(resp: httpx.Response) -> str:
    return str(resp.json()["error_message"])


@pytest.fixture
def waiting(service: Service, client: httpx.Client, tmp_path) -> tuple[Any, str]:
    """A node waiting for its ramdisk (nobody has looked it up)."""
    spec, _ = machine(tmp_path)
    uuid = enroll(client, spec)
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    return spec, uuid


def test_lookup_below_1_22_is_not_found(service: Service, waiting):
    resp = _lookup(service, headers={}, node_uuid=waiting[1])
    assert resp.status_code == 404
    assert NOT_FOUND in _fault(resp)


def test_lookup_needs_addresses_or_a_node_uuid(service: Service):
    resp = _lookup(service, addresses="not-a-mac")
    assert resp.status_code == 400
    assert "At least one of 'addresses' and 'node_uuid' parameters is required" in _fault(resp)


def test_lookup_refuses_a_node_uuid_that_is_not_a_uuid(service: Service):
    resp = _lookup(service, node_uuid="nope")
    assert resp.status_code == 400
    assert "Expected UUID for node_uuid: nope" in _fault(resp)


def test_lookup_of_an_unknown_node_is_a_generic_404(service: Service):
    resp = _lookup(service, node_uuid=str(uuidlib.uuid4()))
    assert resp.status_code == 404
    assert NOT_FOUND in _fault(resp)


def test_lookup_of_a_node_not_being_inspected_is_a_generic_404(service: Service,
                                                               client: httpx.Client, tmp_path):
    spec, _ = machine(tmp_path)
    uuid = enroll(client, spec)  # manageable, never inspected
    resp = _lookup(service, node_uuid=uuid)
    assert resp.status_code == 404
    assert NOT_FOUND in _fault(resp)


def test_lookup_by_mac_gives_the_node_and_its_token_once(service: Service, waiting):
    spec, uuid = waiting
    first = _lookup(service, addresses=f"{spec.pxe_mac},zz")
    assert first.status_code == 200, first.text
    doc = first.json()
    assert doc["node"]["uuid"] == uuid
    assert set(doc["node"]) == {"uuid", "properties", "instance_info", "driver_internal_info",
                                "links"}
    assert len(doc["config"]["agent_token"]) >= 32
    assert doc["config"]["agent_token_required"] is True
    assert doc["config"]["heartbeat_timeout"] == 300
    second = _lookup(service, node_uuid=uuid)
    assert second.json()["config"]["agent_token"] == "******"


def test_a_heartbeat_with_the_token_is_recorded(service: Service, client: httpx.Client,
                                                waiting):
    _, uuid = waiting
    token = _lookup(service, node_uuid=uuid).json()["config"]["agent_token"]
    resp = _heartbeat(service, uuid, {"callback_url": "http://10.0.0.7:9999",
                                      "agent_token": token, "agent_version": "13.0.0"})
    assert resp.status_code == 202, resp.text
    info = node(client, uuid)["driver_internal_info"]
    assert info["agent_url"] == "http://10.0.0.7:9999"
    assert info["agent_secret_token"] == "******"
    assert token not in client.get(f"/v1/nodes/{uuid}").text


@pytest.mark.parametrize(("body", "text"), [
    ({"agent_token": "x", "agent_version": "1"}, "Missing mandatory parameter: callback_url"),
    ({"callback_url": "http://h:1", "agent_version": "1"},
     "Agent token is required for heartbeat processing."),
    ({"callback_url": "http://h:1", "agent_token": "x"},
     "Agent did not transmit a version, and a version is required."),
    ({"callback_url": "http://h:1", "agent_token": "x", "agent_version": "1"},
     "Invalid or missing agent token received."),
])
def test_a_bad_heartbeat_is_a_400_naming_what_is_wrong(service: Service, waiting, body, text):
    resp = _heartbeat(service, waiting[1], body)
    assert resp.status_code == 400
    assert text in _fault(resp)


def test_a_heartbeat_of_an_unknown_node_is_a_404(service: Service):
    ident = str(uuidlib.uuid4())
    resp = _heartbeat(service, ident, {"callback_url": "http://h:1", "agent_token": "x",
                                       "agent_version": "1"})
    assert resp.status_code == 404
    assert f"Node {ident} could not be found." in _fault(resp)
