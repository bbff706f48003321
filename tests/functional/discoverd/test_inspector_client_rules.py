"""python-ironic-inspector-client 5.4's rules API (`ClientV1(...).rules`, what `openstack
baremetal introspection rule import|list|show|delete|purge` calls), with its default settings
(API 1.0), against a real `ironsight serve`: create, from_json, get, get_all, delete and
delete_all on `/v1/rules`, and a rule created so applied to a real report."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from ironic_inspector_client import ClientV1
from ironic_inspector_client.common.http import ClientError
from keystoneauth1 import session as ks_session
from keystoneauth1.noauth import NoAuth

from ..conftest import ServiceProcess
from .test_inspector_client import Machine, wait_finished

CONDITIONS = [{"op": "ge", "field": "memory_mb", "value": 32768},
              {"op": "eq", "field": "node://driver", "value": "fake", "invert": False}]
ACTIONS = [{"action": "set-attribute", "path": "/extra/memory", "value": "{data[memory_mb]}"},
           {"action": "add-trait", "name": "CUSTOM_BIG_MEMORY"}]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("inspector-client-rules"),
                         extra_conf="[introspection]\nironic_retry_interval = 0.05\n"
                                    "allow_tokenless_reports = true\n")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def client(service: ServiceProcess) -> Iterator[ClientV1]:
    found = ClientV1(inspector_url=service.di_url, session=ks_session.Session(auth=NoAuth()))
    yield found
    found.rules.delete_all()


@pytest.fixture(scope="module")
def bm(service: ServiceProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.url, timeout=30,
                      headers={"X-OpenStack-Ironic-API-Version": "latest"}) as c:
        yield c


def test_create_get_and_get_all(client: ClientV1) -> None:
    created = client.rules.create(CONDITIONS, ACTIONS, description="big memory")
    assert created["description"] == "big memory"
    assert created["actions"] == ACTIONS
    assert [c["field"] for c in created["conditions"]] == ["memory_mb", "node://driver"]
    assert all(c["multiple"] == "any" and c["invert"] is False
               for c in created["conditions"])
    assert client.rules.get(created["uuid"]) == created
    [short] = client.rules.get_all()
    assert short["uuid"] == created["uuid"] and short["description"] == "big memory"
    assert short["links"][0]["rel"] == "self"


def test_from_json_keeps_a_given_uuid(client: ClientV1) -> None:
    uuid = "7a4d5f5e-0d9b-4e4c-9a57-0c1f6f1d2a11"
    created = client.rules.from_json({"uuid": uuid, "conditions": CONDITIONS,
                                      "actions": ACTIONS})
    assert created["uuid"] == uuid
    assert client.rules.get(uuid)["uuid"] == uuid


def test_delete_and_delete_all(client: ClientV1) -> None:
    one = client.rules.create(CONDITIONS, ACTIONS)
    client.rules.create(CONDITIONS, ACTIONS)
    client.rules.delete(one["uuid"])
    with pytest.raises(ClientError) as missing:
        client.rules.get(one["uuid"])
    assert missing.value.response.status_code == 404
    assert len(client.rules.get_all()) == 1
    client.rules.delete_all()
    assert client.rules.get_all() == []


def test_an_invalid_rule_is_refused_with_its_field(client: ClientV1) -> None:
    with pytest.raises(ClientError) as refused:
        client.rules.create([{"op": "bigger", "field": "memory_mb", "value": 1}], ACTIONS)
    assert refused.value.response.status_code == 400
    assert "conditions[0]" in str(refused.value)
    assert client.rules.get_all() == []


def test_a_rule_created_with_the_client_applies_to_a_report(
        client: ClientV1, bm: httpx.Client, service: ServiceProcess) -> None:
    client.rules.create(CONDITIONS, ACTIONS, description="big memory")
    machine = Machine(bm)
    client.introspect(machine.uuid)
    report: dict[str, Any] = machine.report(memory_mb=65536)
    deadline = time.monotonic() + 30
    while client.get_status(machine.uuid)["state"] != "waiting":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    resp = httpx.post(f"{service.di_url}/v1/continue", json=report, timeout=30)
    assert resp.status_code == 200, resp.text
    assert wait_finished(client, machine.uuid)["error"] is None
    node = bm.get(f"/v1/nodes/{machine.uuid}").json()
    assert node["extra"]["memory"] == 65536  # a lone reference keeps its type (docs/rules.md)
    assert node["traits"] == ["CUSTOM_BIG_MEMORY"]
