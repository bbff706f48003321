"""python-ironicclient's `baremetal` CLI, unmodified, against a running `ironsight serve`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

BAREMETAL = shutil.which("baremetal") or str(Path(os.sys.executable).parent / "baremetal")


def bm(url: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([BAREMETAL, "--os-endpoint", url, "--os-auth-type", "none", *args],
                          capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"baremetal {' '.join(args)} failed: {proc.stderr}")
    return proc


def bm_json(url: str, *args: str) -> Any:
    return json.loads(bm(url, *args, "-f", "json").stdout)


@pytest.fixture
def node(baremetal_url: str) -> Iterator[dict[str, Any]]:
    created = bm_json(baremetal_url, "node", "create", "--driver", "fake", "--name",
                      f"bm-{uuid.uuid4().hex[:8]}")
    yield dict(created)
    httpx.delete(f"{baremetal_url}/v1/nodes/{created['uuid']}")


def test_node_create_show_list(baremetal_url: str, node: dict[str, Any]) -> None:
    assert node["provision_state"] == "enroll"
    shown = bm_json(baremetal_url, "node", "show", node["name"])
    assert shown["uuid"] == node["uuid"]
    listed = bm_json(baremetal_url, "node", "list")
    assert node["uuid"] in [n["uuid"] for n in listed]


def test_node_set_and_unset(baremetal_url: str, node: dict[str, Any]) -> None:
    bm(baremetal_url, "node", "set", node["name"], "--property", "cpus=4",
       "--driver-info", "ipmi_password=secret", "--extra", "rack=r1")
    shown = bm_json(baremetal_url, "node", "show", node["name"])
    assert shown["properties"] == {"cpus": 4}
    assert shown["driver_info"] == {"ipmi_password": "******"}
    bm(baremetal_url, "node", "unset", node["name"], "--property", "cpus", "--extra", "rack")
    shown = bm_json(baremetal_url, "node", "show", node["name"])
    assert (shown["properties"], shown["extra"]) == ({}, {})


def test_manage_provide_and_power(baremetal_url: str, node: dict[str, Any]) -> None:
    bm(baremetal_url, "node", "manage", node["name"], "--wait", "30")
    assert bm_json(baremetal_url, "node", "show", node["name"])["provision_state"] == "manageable"
    bm(baremetal_url, "node", "power", "on", node["name"], "--power-timeout", "30")
    assert bm_json(baremetal_url, "node", "show", node["name"])["power_state"] == "power on"
    bm(baremetal_url, "node", "power", "off", node["name"], "--power-timeout", "30")
    assert bm_json(baremetal_url, "node", "show", node["name"])["power_state"] == "power off"
    bm(baremetal_url, "node", "provide", node["name"], "--wait", "30")
    assert bm_json(baremetal_url, "node", "show", node["name"])["provision_state"] == "available"


def test_validate_and_boot_device(baremetal_url: str, node: dict[str, Any]) -> None:
    rows = bm_json(baremetal_url, "node", "validate", node["name"])
    results = {r["Interface"]: r["Result"] for r in rows}
    assert results["power"] is True and results["management"] is True
    bm(baremetal_url, "node", "boot", "device", "set", node["name"], "pxe", "--persistent")
    assert bm_json(baremetal_url, "node", "boot", "device", "show", node["name"]) == {
        "boot_device": "pxe", "persistent": True}


def test_port_create_list_show_delete(baremetal_url: str, node: dict[str, Any]) -> None:
    port = bm_json(baremetal_url, "port", "create", "52:54:00:AB:CD:EF",
                   "--node", node["uuid"])
    assert port["address"] == "52:54:00:ab:cd:ef"
    listed = bm_json(baremetal_url, "port", "list", "--address", "52:54:00:ab:cd:ef")
    assert [p["uuid"] for p in listed] == [port["uuid"]]
    assert bm_json(baremetal_url, "port", "show", port["uuid"])["node_uuid"] == node["uuid"]
    bm(baremetal_url, "port", "delete", port["uuid"])
    assert bm_json(baremetal_url, "port", "list", "--node", node["uuid"]) == []


def test_illegal_transition_message_reaches_the_cli(baremetal_url: str,
                                                    node: dict[str, Any]) -> None:
    proc = bm(baremetal_url, "node", "provide", node["name"], check=False)
    assert proc.returncode != 0
    assert 'can not be performed on node' in proc.stderr
    assert "(HTTP 400)" in proc.stderr


def test_node_delete(baremetal_url: str, node: dict[str, Any]) -> None:
    bm(baremetal_url, "node", "delete", node["name"])
    proc = bm(baremetal_url, "node", "show", node["name"], check=False)
    assert "could not be found" in proc.stderr


def test_a_redfish_node_is_created_and_validated(baremetal_url: str) -> None:
    name = f"bm-rf-{uuid.uuid4().hex[:8]}"
    created = bm_json(baremetal_url, "node", "create", "--driver", "redfish", "--name", name,
                      "--driver-info", "redfish_address=https://10.0.0.5",
                      "--driver-info", "redfish_system_id=/redfish/v1/Systems/1",
                      "--driver-info", "redfish_username=admin",
                      "--driver-info", "redfish_password=rf-secret-1")
    try:
        assert created["driver_info"]["redfish_password"] == "******"
        assert (created["power_interface"], created["management_interface"],
                created["boot_interface"]) == ("redfish", "redfish", "ipxe")
        rows = bm_json(baremetal_url, "node", "validate", name)
        results = {r["Interface"]: r["Result"] for r in rows}
        assert results["power"] is True and results["management"] is True
    finally:
        httpx.delete(f"{baremetal_url}/v1/nodes/{created['uuid']}")


def test_a_redfish_node_without_address_fails_validation_naming_it(baremetal_url: str) -> None:
    name = f"bm-rf-{uuid.uuid4().hex[:8]}"
    created = bm_json(baremetal_url, "node", "create", "--driver", "redfish", "--name", name)
    try:
        rows = bm_json(baremetal_url, "node", "validate", name)
        power = next(r for r in rows if r["Interface"] == "power")
        assert power["Result"] is False and "redfish_address" in power["Reason"]
    finally:
        httpx.delete(f"{baremetal_url}/v1/nodes/{created['uuid']}")
