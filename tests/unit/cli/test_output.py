"""Unit tests of what the client commands print (`cli/output.py`): tables that lose no data
and show names verbatim, secrets as the API masked them."""

from __future__ import annotations

from .conftest import NODE_UUID, node_obj


def test_node_list_table_shows_whole_uuids_and_names_verbatim(run, api):
    api.json("GET", "/v1/nodes", {"nodes": [node_obj(name="rack[1]-node")]})
    result = run("node", "list")
    assert NODE_UUID in result.stdout
    assert "rack[1]-node" in result.stdout


def test_node_show_table_prints_masked_secrets_as_the_api_sent_them(run, api):
    api.json("GET", "/v1/nodes/demo-0", node_obj())
    result = run("node", "show", "demo-0")
    assert '{"ipmi_password": "******"}' in result.stdout
    assert "links" not in result.stdout
