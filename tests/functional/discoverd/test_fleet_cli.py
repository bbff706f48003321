"""`ironsight node list --where`, `ironsight fleet ...` against a real `ironsight serve`: the
fleet query, one node's document, the change events, drift and the streamed export."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from ironsight.cli.main import _register, cli

from ..conftest import ServiceProcess
from .test_inspector_client import Machine

_register()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("fleet-cli"),
                         extra_conf="[introspection]\nironic_retry_interval = 0.05\n"
                                    "allow_tokenless_reports = true\n")
    svc.start()
    try:
        yield svc
    finally:
        svc.stop()


def inspect(bm: httpx.Client, di: httpx.Client, machine: Machine,
            report: dict[str, Any]) -> None:
    assert di.post(f"/v1/introspection/{machine.uuid}").status_code == 202
    assert di.post("/v1/continue", json=report).status_code == 200
    deadline = time.monotonic() + 30
    while not di.get(f"/v1/introspection/{machine.uuid}").json()["finished"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)


@pytest.fixture(scope="module")
def fleet(service: ServiceProcess) -> dict[str, Machine]:
    """A big node (64 GiB) inspected twice, its second disk replaced in between; a small one
    (16 GiB) inspected once."""
    with httpx.Client(base_url=service.url, timeout=30,
                      headers={"X-OpenStack-Ironic-API-Version": "latest"}) as bm, \
            httpx.Client(base_url=service.di_url, timeout=30) as di:
        big, small = Machine(bm), Machine(bm)
        inspect(bm, di, big, big.report(memory_mb=65536))
        inspect(bm, di, big, big.report(memory_mb=65536, disk_serial="NEW1"))
        inspect(bm, di, small, small.report(memory_mb=16384))
        return {"big": big, "small": small}


def run(service: ServiceProcess, *args: str) -> Result:
    result = CliRunner().invoke(cli, [*args])
    assert result.exit_code == 0, result.output
    return result


def test_node_list_where_prints_the_matching_nodes_as_json(
        service: ServiceProcess, fleet: dict[str, Machine]) -> None:
    result = run(service, "node", "list", "--url", service.url, "--discoverd-url",
                 service.di_url, "--where", "hardware.memory_gib >= 64.0", "-f", "json")
    listed = json.loads(result.stdout)
    assert [n["uuid"] for n in listed] == [fleet["big"].uuid]
    assert set(listed[0]) >= {"uuid", "name"}


def test_node_list_where_with_a_bad_expression_fails_naming_the_position(
        service: ServiceProcess) -> None:
    result = CliRunner().invoke(cli, ["node", "list", "--url", service.url,
                                      "--discoverd-url", service.di_url, "--where", "a &&"])
    assert result.exit_code == 1
    assert "where" in result.output and "column" in result.output


def test_fleet_query_table_names_the_nodes(service: ServiceProcess,
                                           fleet: dict[str, Machine]) -> None:
    result = run(service, "fleet", "--url", service.di_url, "query",
                 "inventory.memory.physical_mb < 65536")
    assert fleet["small"].uuid in result.stdout and fleet["big"].uuid not in result.stdout


def test_fleet_events_shows_the_replaced_disk(service: ServiceProcess,
                                              fleet: dict[str, Machine]) -> None:
    result = run(service, "fleet", "--url", service.di_url, "events", "--component", "disk",
                 "-f", "json")
    found = {(e["node_uuid"], e["change"]) for e in json.loads(result.stdout)}
    assert found == {(fleet["big"].uuid, "removed"), (fleet["big"].uuid, "added")}


def test_fleet_show_prints_one_nodes_document(service: ServiceProcess,
                                              fleet: dict[str, Machine]) -> None:
    doc = json.loads(run(service, "fleet", "--url", service.di_url, "show",
                         fleet["small"].uuid, "-f", "json").stdout)
    assert doc["hardware"]["memory_gib"] == 16.0


def test_fleet_export_csv_has_a_header_and_a_row_per_node(
        service: ServiceProcess, fleet: dict[str, Machine]) -> None:
    result = run(service, "fleet", "--url", service.di_url, "export", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["uuid"] for r in rows} == {m.uuid for m in fleet.values()}
    assert {r["memory_mb"] for r in rows} == {"65536", "16384"}


def test_fleet_export_ndjson_where_streams_only_the_matching_nodes(
        service: ServiceProcess, fleet: dict[str, Machine]) -> None:
    result = run(service, "fleet", "--url", service.di_url, "export", "--where",
                 "hardware.memory_gib < 64.0")
    (row,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert row["uuid"] == fleet["small"].uuid and row["disk_count"] >= 1


def test_fleet_export_components_lists_each_nodes_parts(
        service: ServiceProcess, fleet: dict[str, Machine]) -> None:
    result = run(service, "fleet", "--url", service.di_url, "export", "--format",
                 "components")
    parts = [json.loads(line) for line in result.stdout.splitlines()]
    disks = {p["key"] for p in parts if p["node_uuid"] == fleet["big"].uuid
             and p["component"] == "disk"}
    assert any("NEW1" in key for key in disks)


def test_fleet_export_netbox_is_keyed_by_serial_and_lists_a_repeated_serial_apart(
        service: ServiceProcess, fleet: dict[str, Machine]) -> None:
    result = run(service, "fleet", "--url", service.di_url, "export", "--format", "netbox")
    devices = json.loads(result.stdout)  # both machines report serial S1234
    assert set(devices) == {"S1234", "_no_serial"}
    keyed = devices["S1234"]
    assert keyed["serial"] == "S1234" and keyed["device_type"]["model"] == "AS-1014S"
    assert {keyed["custom_fields"]["ironsight_uuid"], *devices["_no_serial"]} == {
        m.uuid for m in fleet.values()}
    assert keyed["interfaces"][0]["mac_address"] and keyed["inventory_items"]


def test_fleet_export_refuses_an_unknown_format_by_its_name(service: ServiceProcess) -> None:
    resp = httpx.get(f"{service.di_url}/v1/fleet/export", params={"format": "xml"})
    assert resp.status_code == 400 and "format" in resp.json()["error"]["message"]


def test_fleet_drift_runs_on_a_fleet_too_small_to_compare(service: ServiceProcess,
                                                          fleet: dict[str, Machine]) -> None:
    assert json.loads(run(service, "fleet", "--url", service.di_url, "drift",
                          "-f", "json").stdout) == []
