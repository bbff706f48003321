"""Inspection rules end to end: `ironsight serve` (both services, own state), the real agent
reporting a machine tree, and rules created through discoverd's API. A rule's changes reach
the node through the bare-metal API, and its history says so; a `fail` action ends the
inspection `inspect failed` with the rule in `last_error`; a bad built-in rules file keeps
the service from starting.

The module has its own service (rules apply to every node of a service); each rule tests
the node's name, so that it touches only its own test's node."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import (
    Service,
    accepted_reply,
    enroll,
    history,
    inspect,
    machine,
    node,
    run_agent,
    wait_node,
    wait_ramdisk_booted,
)

RULES = "/v1/inspection_rules"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    svc = Service(tmp_path_factory.mktemp("inspection-rules")).start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def di(service: Service) -> Iterator[httpx.Client]:
    with service.di_client() as client:
        yield client
        client.delete(RULES)


def for_node(name: str, *conditions: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"op": "eq", "args": {"values": ["{node.name}", name]}}, *conditions]


def inspect_with_agent(service: Service, client: httpx.Client, uuid: str, tree: Path) -> None:
    inspect(client, uuid)
    wait_ramdisk_booted(service, client, uuid)
    status, body = accepted_reply(run_agent(tree, f"{service.di_url}/v1/continue"))
    assert status == 200, body


def test_a_rule_sets_resource_class_trait_capability_and_port_attribute(
        service: Service, client: httpx.Client, di: httpx.Client, tmp_path: Path) -> None:
    spec, tree = machine(tmp_path, nics=2, cpus=6, memory_mb=12288)
    resp = di.post(RULES, json={
        "description": "six-core nodes",
        "conditions": for_node(spec.name, {"op": "eq", "args": {
            "values": ["{inventory[cpu][count]}", 6]}}),
        "actions": [
            {"op": "set-attribute", "args": {"path": "/resource_class", "value": "six-core"}},
            {"op": "add-trait", "args": {"name": "CUSTOM_SIX_CORE"}},
            {"op": "set-capability", "args": {"name": "cores", "value": "6"}},
            {"op": "set-port-attribute", "args": {"port_id": spec.pxe_mac,
                                                  "path": "/extra/role", "value": "pxe"}}]})
    assert resp.status_code == 201, resp.text
    uuid = enroll(client, spec)
    inspect_with_agent(service, client, uuid, tree)
    doc = wait_node(client, uuid, provision="manageable", timeout=30)
    assert doc["resource_class"] == "six-core"
    assert "CUSTOM_SIX_CORE" in node(client, uuid)["traits"]
    assert "cores:6" in doc["properties"]["capabilities"].split(",")
    assert doc["properties"]["cpus"] == 6
    resp = client.get("/v1/ports/detail", params={"node": uuid})
    extras = {p["address"]: p["extra"] for p in resp.json()["ports"]}
    assert extras[spec.pxe_mac] == {"role": "pxe"}
    events = [e["event"] for e in history(client, uuid)]
    assert any(e.startswith("Inspection rules matched: 'six-core nodes'")
               and "add trait CUSTOM_SIX_CORE" in e for e in events), events


def test_a_fail_action_ends_the_inspection_failed_naming_the_rule(
        service: Service, client: httpx.Client, di: httpx.Client, tmp_path: Path) -> None:
    spec, tree = machine(tmp_path, memory_mb=4096)
    resp = di.post(RULES, json={
        "description": "at least 8 GiB",
        "conditions": for_node(spec.name, {"op": "lt", "args": {
            "values": ["{inventory[memory][physical_mb]}", 8192]}}),
        "actions": [{"op": "fail", "args": {"msg": "not enough memory"}}]})
    assert resp.status_code == 201, resp.text
    rule = resp.json()
    uuid = enroll(client, spec)
    inspect_with_agent(service, client, uuid, tree)
    doc = wait_node(client, uuid, provision="inspect failed", timeout=30)
    assert "at least 8 GiB" in doc["last_error"] and rule["uuid"] in doc["last_error"]
    assert "not enough memory" in doc["last_error"]
    assert doc["resource_class"] is None and "cpus" not in doc["properties"]


def test_a_bad_built_in_rules_file_keeps_the_service_from_starting(tmp_path: Path) -> None:
    rules = tmp_path / "built-in.yaml"
    rules.write_text("- actions: [{op: no-such-action, args: {}}]\n")
    (tmp_path / "state").mkdir()
    svc = Service(tmp_path / "state", f"[inspection_rules]\nbuilt_in_rules = {rules}\n")
    with pytest.raises(RuntimeError, match=r"\[inspection_rules\] built_in_rules"):
        svc.start(timeout=20)
    svc.stop()
