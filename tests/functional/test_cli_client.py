"""The `ironsight node|port|driver` client CLI against a real `ironsight serve`.

The CLI runs in-process through click's `CliRunner` (the same `cli` group `ironsight` runs,
after `_register()`), with a short `--wait` poll interval; the service is a real process.
One service serves the whole module, so every test works on its own, uniquely named node.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from ironsight.cli.main import _register, cli
from ironsight.cli.options import Runtime

from .conftest import free_tcp_port

_register()

RUNTIME = Runtime(poll_interval=0.05)
MAC = "52:54:00:AB:CD:EF"


def ironsight(url: str, group: str, *args: str) -> Result:
    """`ironsight GROUP --url URL ARGS...`; stdout and stderr are kept apart."""
    return CliRunner().invoke(cli, [group, "--url", url, *args], obj=RUNTIME)


def ok(url: str, group: str, *args: str) -> Result:
    result = ironsight(url, group, *args)
    assert result.exit_code == 0, (
        f"ironsight {group} {' '.join(args)} exited {result.exit_code}:\n{result.stderr}"
        f"{result.exception!r}")
    return result


def ok_json(url: str, group: str, *args: str) -> Any:
    return json.loads(ok(url, group, *args, "-f", "json").stdout)


def table_rows(text: str) -> list[list[str]]:
    """The cells of each line of a rich table: the header (`┃ a ┃ b ┃`), then the body."""
    return [[cell.strip() for cell in line[1:-1].split(line[0])]
            for line in (raw.rstrip() for raw in text.splitlines())
            if line[:1] in ("┃", "│")]


def api_node(url: str, ident: str) -> dict[str, Any]:
    """A node as the API shows it, read without the CLI."""
    response = httpx.get(f"{url}/v1/nodes/{ident}",
                         headers={"X-OpenStack-Ironic-API-Version": "1.115"})
    response.raise_for_status()
    return dict(response.json())


@pytest.fixture
def node(baremetal_url: str) -> Iterator[dict[str, Any]]:
    """A fake node created with the CLI, named after nothing else in the module."""
    name = f"cli-{uuid.uuid4().hex[:8]}"
    created = ok_json(baremetal_url, "node", "create", "--driver", "fake", "--name", name)
    yield dict(created)
    httpx.delete(f"{baremetal_url}/v1/nodes/{created['uuid']}")


@pytest.fixture
def managed_node(baremetal_url: str, node: dict[str, Any]) -> dict[str, Any]:
    ok(baremetal_url, "node", "manage", node["name"], "--wait", "30")
    return node


@pytest.fixture
def port(baremetal_url: str, node: dict[str, Any]) -> dict[str, Any]:
    mac = "52:54:00:" + ":".join(f"{b:02x}" for b in uuid.uuid4().bytes[:3])
    return dict(ok_json(baremetal_url, "port", "create", mac, "--node", node["uuid"]))


# --- nodes ----------------------------------------------------------------------------------


def test_node_create_prints_the_enrolled_node(baremetal_url: str) -> None:
    name = f"cli-{uuid.uuid4().hex[:8]}"
    created = ok_json(baremetal_url, "node", "create", "--driver", "fake", "--name", name,
                      "--property", "cpus=4")
    assert (created["name"], created["driver"], created["provision_state"]) == (
        name, "fake", "enroll")
    assert created["properties"] == {"cpus": 4}
    assert api_node(baremetal_url, name)["uuid"] == created["uuid"]


def test_node_list_table_shows_the_node(baremetal_url: str, node: dict[str, Any]) -> None:
    result = ok(baremetal_url, "node", "list")
    header, *rows = table_rows(result.stdout)
    assert header == ["UUID", "Name", "Power State", "Provisioning State", "Maintenance"]
    assert [node["uuid"], node["name"], "None", "enroll", "False"] in rows


def test_node_list_json_gives_the_api_objects(baremetal_url: str,
                                              node: dict[str, Any]) -> None:
    listed = ok_json(baremetal_url, "node", "list")
    mine = [n for n in listed if n["uuid"] == node["uuid"]]
    assert len(mine) == 1
    assert (mine[0]["name"], mine[0]["provision_state"]) == (node["name"], "enroll")


def test_node_show_table_has_a_row_per_field(baremetal_url: str,
                                             node: dict[str, Any]) -> None:
    result = ok(baremetal_url, "node", "show", node["name"])
    header, *rows = table_rows(result.stdout)
    assert header == ["Field", "Value"]
    fields = {row[0]: row[1] for row in rows if row[0]}  # a folded value continues unnamed
    assert fields["uuid"] == node["uuid"]
    assert fields["name"] == node["name"]
    assert fields["driver"] == "fake"
    assert fields["provision_state"] == "enroll"
    assert "links" not in fields


def test_node_show_json_is_exactly_the_api_object(baremetal_url: str,
                                                  node: dict[str, Any]) -> None:
    shown = ok_json(baremetal_url, "node", "show", node["name"])
    assert shown == api_node(baremetal_url, node["uuid"])


def test_node_set_property_is_stored(baremetal_url: str, node: dict[str, Any]) -> None:
    result = ok(baremetal_url, "node", "set", node["name"], "--property", "cpus=8",
                "--property", "cpu_arch=x86_64")
    assert result.stdout == ""
    assert api_node(baremetal_url, node["uuid"])["properties"] == {
        "cpus": 8, "cpu_arch": "x86_64"}


def test_node_unset_property_removes_it(baremetal_url: str, node: dict[str, Any]) -> None:
    ok(baremetal_url, "node", "set", node["name"], "--property", "cpus=8",
       "--property", "memory_mb=4096")
    ok(baremetal_url, "node", "unset", node["name"], "--property", "cpus")
    assert api_node(baremetal_url, node["uuid"])["properties"] == {"memory_mb": 4096}


def test_manage_wait_ends_in_manageable(baremetal_url: str, node: dict[str, Any]) -> None:
    result = ok(baremetal_url, "node", "manage", node["name"], "--wait", "30")
    assert api_node(baremetal_url, node["uuid"])["provision_state"] == "manageable"
    assert f"node {node['name']}: provision state manageable" in result.stderr
    assert result.stdout == ""


def test_power_on_wait_ends_powered_on(baremetal_url: str,
                                       managed_node: dict[str, Any]) -> None:
    result = ok(baremetal_url, "node", "power", "on", managed_node["name"], "--wait", "30")
    shown = api_node(baremetal_url, managed_node["uuid"])
    assert (shown["power_state"], shown["target_power_state"]) == ("power on", None)
    assert f"node {managed_node['name']}: power state power on" in result.stderr


def test_provide_wait_ends_in_available(baremetal_url: str,
                                        managed_node: dict[str, Any]) -> None:
    ok(baremetal_url, "node", "provide", managed_node["name"], "--wait", "30")
    shown = api_node(baremetal_url, managed_node["uuid"])
    assert (shown["provision_state"], shown["target_provision_state"]) == ("available", None)


def test_node_history_shows_the_state_changes(baremetal_url: str,
                                              managed_node: dict[str, Any]) -> None:
    ok(baremetal_url, "node", "provide", managed_node["name"], "--wait", "30")
    events = [e["event"] for e in ok_json(baremetal_url, "node", "history",
                                          managed_node["name"])]
    changes = [e for e in events if e.startswith("Provision state changed")]
    assert changes == [
        "Provision state changed from enroll to verifying (manage)",
        "Provision state changed from verifying to manageable (done)",
        "Provision state changed from manageable to available (provide)",
    ]
    table = ok(baremetal_url, "node", "history", managed_node["name"]).stdout
    assert "from manageable to available" in table


def test_node_delete_removes_the_node(baremetal_url: str, node: dict[str, Any]) -> None:
    result = ok(baremetal_url, "node", "delete", node["name"])
    assert f"Deleted node {node['name']}" in result.stderr
    assert httpx.get(f"{baremetal_url}/v1/nodes/{node['uuid']}").status_code == 404


# --- ports ----------------------------------------------------------------------------------


def test_port_create_resolves_the_node_name(baremetal_url: str,
                                            node: dict[str, Any]) -> None:
    created = ok_json(baremetal_url, "port", "create", MAC, "--node", node["name"])
    assert (created["address"], created["node_uuid"]) == (MAC.lower(), node["uuid"])


def test_port_list_for_a_node_shows_its_port(baremetal_url: str, node: dict[str, Any],
                                             port: dict[str, Any]) -> None:
    result = ok(baremetal_url, "port", "list", "--node", node["name"])
    assert table_rows(result.stdout) == [["UUID", "Address"],
                                         [port["uuid"], port["address"]]]


def test_port_delete_removes_the_port(baremetal_url: str, node: dict[str, Any],
                                      port: dict[str, Any]) -> None:
    result = ok(baremetal_url, "port", "delete", port["uuid"])
    assert f"Deleted port {port['uuid']}" in result.stderr
    assert ok_json(baremetal_url, "port", "list", "--node", node["uuid"]) == []


# --- drivers --------------------------------------------------------------------------------


def test_driver_list_shows_the_hardware_types(baremetal_url: str) -> None:
    names = {d["name"] for d in ok_json(baremetal_url, "driver", "list")}
    assert names == {"fake-hardware", "pxe_ipmitool", "pxe_ipminative", "pxe_ssh", "redfish"}


# --- failures -------------------------------------------------------------------------------


def test_duplicate_name_exits_1_with_the_server_message(baremetal_url: str,
                                                        node: dict[str, Any]) -> None:
    result = ironsight(baremetal_url, "node", "create", "--driver", "fake",
                       "--name", node["name"])
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"Error: A node with name {node['name']} already exists. (HTTP 409)")
    assert result.stdout == ""


def test_unknown_node_exits_1_with_could_not_be_found(baremetal_url: str) -> None:
    result = ironsight(baremetal_url, "node", "show", "no-such-node")
    assert result.exit_code == 1
    assert "Node no-such-node could not be found" in result.stderr
    assert result.stdout == ""


def test_unreachable_service_exits_1_with_a_clear_message() -> None:
    url = f"http://127.0.0.1:{free_tcp_port()}"  # nothing listens there any more
    result = ironsight(url, "node", "list")
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)  # no traceback
    first_line = result.stderr.splitlines()[0]
    assert first_line.startswith(f"Error: cannot connect to {url}")
    assert "is `ironsight serve` running?" in first_line
    assert result.stdout == ""
