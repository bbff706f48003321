"""Unit tests of `ironsight discovery ...`: arguments -> requests (the approval on the
bare-metal API, the records on discoverd), responses -> output."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from ironsight.cli import discovery
from ironsight.cli.options import Runtime

from ..fakes import FakeService, fake_baremetal, inspector_error

A, B = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
NODES = {"nodes": [
    {"uuid": A, "name": None, "discovery": "pending", "provision_state": "enroll",
     "driver": "fake-hardware", "created_at": "2026-12-06T10:00:00", "resource_class": None},
    {"uuid": B, "name": None, "discovery": "pending", "provision_state": "enroll",
     "driver": "fake-hardware", "created_at": "2026-12-06T10:00:01", "resource_class": None}],
    "counts": {"pending": 2}}
RECORDS = {"enabled": True, "outcomes": {}, "nodes": [
    {"node_uuid": A, "serial": "CZ-A1", "source_address": "10.1.0.5", "subnet": "10.1.0.0/24",
     "manifest_serial": None, "seen_count": 0, "bmc_probe": {"protocol": "ipmi",
                                                             "serial_match": None}},
    {"node_uuid": B, "serial": "DL-B2", "source_address": "10.2.0.5", "subnet": "10.2.0.0/24",
     "manifest_serial": None, "seen_count": 1, "bmc_probe": None}]}


@pytest.fixture
def api() -> FakeService:
    found = fake_baremetal()
    found.json("GET", "/v1/discovery/nodes", NODES)
    found.json("GET", "/v1/discovery", RECORDS)
    return found


@pytest.fixture
def run(api: FakeService, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    for name in ("IRONSIGHT_URL", "IRONSIGHT_DISCOVERD_URL"):
        monkeypatch.delenv(name, raising=False)
    group = click.Group("ironsight")
    discovery.register(group)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(group, list(args), obj=Runtime(transport=api.transport))

    return invoke


def test_list_joins_the_approval_with_discoverds_record(run, api):
    result = run("discovery", "list", "-f", "json")
    assert result.exit_code == 0, result.output
    found = {n["uuid"]: n for n in json.loads(result.stdout)}
    assert found[A]["serial"] == "CZ-A1" and found[A]["bmc_check"] == "ipmi"
    assert found[B]["seen_count"] == 1
    hosts = {r.url.host + ":" + str(r.url.port) for r in api.requests}
    assert hosts == {"127.0.0.1:6385", "127.0.0.1:5050"}


def test_approve_a_filtered_set_is_one_request_with_its_nodes(run, api):
    api.json("POST", "/v1/discovery/approve", {"nodes": [{"uuid": A, "discovery": "approved"}]})
    result = run("discovery", "approve", "--subnet", "10.1.0.0/24")
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/discovery/approve") == {"nodes": [A]}


def test_reject_by_serial_glob(run, api):
    api.json("POST", "/v1/discovery/reject", {"nodes": [{"uuid": B, "discovery": "rejected"}]})
    result = run("discovery", "reject", "--serial", "DL-*")
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/discovery/reject") == {"nodes": [B]}


def test_approve_without_nodes_or_a_set_is_a_usage_error(run, api):
    result = run("discovery", "approve")
    assert result.exit_code == 2 and "--subnet" in result.output
    assert not api.sent("POST")


def test_approve_of_a_node_that_was_not_discovered_names_it_and_sends_nothing(run, api):
    result = run("discovery", "approve", "no-such-node")
    assert result.exit_code == 1 and "no-such-node" in result.output
    assert not api.sent("POST")


def test_resolve_posts_the_resolution_and_the_node(run, api):
    api.json("POST", "/v1/discovery/conflicts/7", {"id": 7, "resolution": "same_machine",
                                                   "node": A})
    result = run("discovery", "resolve", "7", "same_machine", "--node", A)
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/discovery/conflicts/7") == {"resolution": "same_machine",
                                                              "node": A}


def test_manifest_import_sends_the_file(run, api, tmp_path: Path):
    path = tmp_path / "delivery.csv"
    path.write_text("serial,name\nCZ-A1,rack1-u1\n")
    api.json("POST", "/v1/discovery/manifest", {"added": 1, "replaced": 0})
    result = run("discovery", "manifest", "import", str(path))
    assert result.exit_code == 0, result.output
    assert api.body("POST", "/v1/discovery/manifest") == {"csv": path.read_text()}


def test_a_refused_manifest_is_an_error_naming_the_row(run, api, tmp_path: Path):
    path = tmp_path / "delivery.csv"
    path.write_text("serial,macs\nCZ-A1,zz\n")
    api.add("POST", "/v1/discovery/manifest",
            inspector_error(400, "row 2, column 'macs': 'zz' is not a MAC address"))
    result = run("discovery", "manifest", "import", str(path))
    assert result.exit_code == 1 and "row 2, column 'macs'" in result.output


def test_manifest_status_table_lists_arrived_missing_and_extras(run, api):
    api.json("GET", "/v1/discovery/manifest", {
        "arrived": [{"serial": "CZ-A1", "name": "rack1-u1", "node_uuid": A,
                     "arrived_at": "2026-12-06T10:00:00"}],
        "missing": [{"serial": "CZ-A2", "name": "rack1-u2", "macs": ["52:54:00:00:00:02"]}],
        "extras": [{"node_uuid": B, "serial": "DL-B2", "source_address": "10.2.0.5",
                    "created_at": "2026-12-06T10:00:01"}]})
    result = run("discovery", "manifest", "status")
    assert result.exit_code == 0, result.output
    for word in ("arrived", "missing", "extra", "CZ-A2", "DL-B2", "10.2.0.5"):
        assert word in result.output
