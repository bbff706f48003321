"""Unit tests of `ironsight port ...`: arguments -> requests, responses -> output."""

from __future__ import annotations

import json
from typing import Any

import httpx

from ..fakes import ironic_error
from .conftest import NODE_UUID, PORT_UUID, node_obj


def port_obj(**fields: Any) -> dict[str, Any]:
    return {"uuid": PORT_UUID, "address": "52:54:00:00:00:01", "node_uuid": NODE_UUID,
            "pxe_enabled": True, "local_link_connection": {}, "extra": {}, **fields}


def test_port_create_resolves_a_node_name_to_its_uuid(run, api):
    api.json("GET", "/v1/nodes/demo-0", node_obj())
    api.json("POST", "/v1/ports", port_obj(), status=201)
    result = run("port", "create", "52:54:00:00:00:01", "--node", "demo-0")
    assert result.exit_code == 0
    assert api.body("POST", "/v1/ports") == {"address": "52:54:00:00:00:01",
                                             "node_uuid": NODE_UUID}


def test_port_create_with_a_node_uuid_does_not_look_the_node_up(run, api):
    api.json("POST", "/v1/ports", port_obj(), status=201)
    run("port", "create", "52:54:00:00:00:01", "--node", NODE_UUID)
    assert api.sent("GET") == []


def test_port_create_sends_pxe_flag_extra_and_local_link_connection(run, api):
    api.json("POST", "/v1/ports", port_obj(), status=201)
    run("port", "create", "52:54:00:00:00:01", "--node", NODE_UUID, "--no-pxe-enabled",
        "--extra", "slot=2", "--local-link-connection", "switch_id=0a:1b:2c:3d:4e:5f",
        "--local-link-connection", "port_id=Eth1/7")
    assert api.body("POST", "/v1/ports") == {
        "address": "52:54:00:00:00:01", "node_uuid": NODE_UUID, "pxe_enabled": False,
        "extra": {"slot": 2},
        "local_link_connection": {"switch_id": "0a:1b:2c:3d:4e:5f", "port_id": "Eth1/7"},
    }


def test_port_create_with_an_unknown_node_name_fails_without_posting(run, api):
    api.add("GET", "/v1/nodes/ghost", ironic_error(404, "Node ghost could not be found."))
    result = run("port", "create", "52:54:00:00:00:01", "--node", "ghost")
    assert result.exit_code == 1
    assert "Node ghost could not be found. (HTTP 404)" in result.stderr
    assert api.sent("POST") == []


def test_port_list_filters_by_node_and_address(run, api):
    api.json("GET", "/v1/ports", {"ports": []})
    run("port", "list", "--node", "demo-0", "--address", "52:54:00:00:00:01")
    assert dict(api.requests[0].url.params) == {"node": "demo-0",
                                                "address": "52:54:00:00:00:01"}


def test_port_list_long_json_is_the_detail_list(run, api):
    api.json("GET", "/v1/ports/detail", {"ports": [port_obj()]})
    result = run("port", "list", "--long", "-f", "json")
    assert json.loads(result.stdout) == [port_obj()]


def test_port_show_by_uuid(run, api):
    api.json("GET", f"/v1/ports/{PORT_UUID}", port_obj())
    result = run("port", "show", PORT_UUID, "-f", "json")
    assert json.loads(result.stdout) == port_obj()


def test_port_show_by_address_queries_the_port_list(run, api):
    api.json("GET", "/v1/ports/detail", {"ports": [port_obj()]})
    result = run("port", "show", "--address", "52:54:00:00:00:01", "-f", "json")
    assert json.loads(result.stdout) == port_obj()
    assert api.requests[0].url.params["address"] == "52:54:00:00:00:01"


def test_port_show_by_unknown_address_exits_1(run, api):
    api.json("GET", "/v1/ports/detail", {"ports": []})
    result = run("port", "show", "--address", "52:54:00:00:00:09")
    assert result.exit_code == 1
    assert "Port with address 52:54:00:00:00:09 could not be found." in result.stderr


def test_port_delete_deletes_every_port_given(run, api):
    api.add("DELETE", f"/v1/ports/{PORT_UUID}", httpx.Response(204))
    result = run("port", "delete", PORT_UUID)
    assert result.exit_code == 0
    assert len(api.sent("DELETE", f"/v1/ports/{PORT_UUID}")) == 1
