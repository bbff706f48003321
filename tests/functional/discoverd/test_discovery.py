"""Auto-discovery with the real services (discovery.py, conductor/discovery.py): reports of
machines under no introspection create quarantined `enroll` nodes, never duplicates; known
machines are seen again; ambiguity is a conflict with resolutions; non-unique MACs identify
nothing; creation is bounded; the delivery manifest names and approves machines."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import uuid as uuidlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from ironsight.discoverd.db.models import claims
from ironsight.lab.bmc import BmcServer, InMemoryMachine, VirtualBmc

from .conftest import BOTH_DBS
from .helpers import Machine, bmc_address, ipa_payload, mac, make_node, node, ports, wait_finished

ON = pytest.mark.discoverd_conf(auto_discovery={"enabled": "true", "probe_bmc": "false"})
_SEQ = itertools.count(5000)


def unknown(*, nics: int = 2, bmc: bool = True, serial: str | None = None,
            system_uuid: str | None = None, macs: list[str] | None = None,
            drivers: dict[int, str] | None = None) -> tuple[Machine, dict[str, Any]]:
    """A machine nobody enrolled, and its ramdisk's report."""
    seq = next(_SEQ)
    m = Machine("", f"m-{seq}", macs or [mac(seq, i) for i in range(nics)],
                bmc_address(seq) if bmc else None)
    payload = ipa_payload(m)
    payload["inventory"]["system_vendor"].update(
        serial_number=serial or f"SER-{seq}",
        uuid=system_uuid or str(uuidlib.uuid5(uuidlib.NAMESPACE_OID, str(seq))))
    for index, driver in (drivers or {}).items():
        payload["inventory"]["interfaces"][index]["driver"] = driver
    return m, payload


async def discovered(bm: httpx.AsyncClient, **params: str) -> list[dict[str, Any]]:
    resp = await bm.get("/v1/discovery/nodes", params=params)
    assert resp.status_code == 200, resp.text
    return list(resp.json()["nodes"])


async def report(di: httpx.AsyncClient, payload: dict[str, Any], status: int = 200
                 ) -> httpx.Response:
    resp = await di.post("/v1/continue", json=payload)
    assert resp.status_code == status, resp.text
    return resp


async def discover(di: httpx.AsyncClient, payload: dict[str, Any]) -> str:
    """Post the report of an unknown machine; its new node, once processed."""
    uuid = str((await report(di, payload)).json()["uuid"])
    await wait_finished(di, uuid)
    return uuid


async def conflicts(di: httpx.AsyncClient, every: bool = False) -> list[dict[str, Any]]:
    resp = await di.get("/v1/discovery/conflicts", params={"all": str(every).lower()})
    assert resp.status_code == 200, resp.text
    return list(resp.json()["conflicts"])


async def history(bm: httpx.AsyncClient, uuid: str) -> list[str]:
    resp = await bm.get(f"/v1/nodes/{uuid}/history")
    assert resp.status_code == 200, resp.text
    return [e["event"] for e in resp.json()["history"]]


async def runs(di: httpx.AsyncClient, uuid: str) -> int:
    resp = await di.get(f"/v1/introspection/{uuid}/data/history")
    assert resp.status_code == 200, resp.text
    return len(resp.json()["history"])


async def bmc_only_conflict(bm: httpx.AsyncClient, di: httpx.AsyncClient
                            ) -> tuple[Machine, dict[str, Any]]:
    """A node enrolled by its BMC only (no ports), whose machine then reports: a conflict."""
    m = await make_node(bm, ports=0)
    await report(di, ipa_payload(m), 404)
    (found,) = await conflicts(di)
    return m, found


async def discovered_then_swapped(di: httpx.AsyncClient
                                  ) -> tuple[str, tuple[Machine, dict[str, Any]]]:
    """A machine discovered, and the report of the same serial and system UUID with new
    MACs (its board replaced)."""
    _, payload = unknown(bmc=False)
    uuid = await discover(di, payload)
    system = payload["inventory"]["system_vendor"]
    return uuid, unknown(bmc=False, serial=system["serial_number"],
                         system_uuid=system["uuid"])


async def test_without_discovery_an_unknown_machine_is_still_refused(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, payload = unknown()
    await report(di, payload, 404)
    assert await discovered(bm) == []


@ON
@BOTH_DBS
async def test_an_unknown_machine_becomes_a_quarantined_enroll_node_with_its_ports(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, payload = unknown()
    uuid = await discover(di, payload)
    doc = await node(bm, uuid)
    assert doc["provision_state"] == "enroll"
    assert doc["driver"] == "fake-hardware"
    assert doc["properties"]["cpus"] == 8
    assert set(await ports(bm, uuid)) == {m.macs[0]}  # add_ports = pxe
    assert doc["extra"]["discovery"]["serial"] == payload["inventory"]["system_vendor"][
        "serial_number"]
    (listed,) = await discovered(bm)
    assert (listed["uuid"], listed["discovery"]) == (uuid, "pending")


@ON
async def test_a_discovered_node_is_found_by_the_auto_discovered_filter(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    enrolled = await make_node(bm)
    uuid = await discover(di, unknown()[1])
    found = (await bm.get("/v1/nodes", params={"auto_discovered": "true"})).json()["nodes"]
    others = (await bm.get("/v1/nodes", params={"auto_discovered": "false"})).json()["nodes"]
    assert [n["uuid"] for n in found] == [uuid]
    assert [n["uuid"] for n in others] == [enrolled.uuid]


@ON
async def test_a_discovered_nodes_data_carries_the_auto_discovered_mark_and_inventory(
        di: httpx.AsyncClient) -> None:
    _, payload = unknown()
    uuid = await discover(di, payload)
    data = (await di.get(f"/v1/introspection/{uuid}/data")).json()
    assert data["auto_discovered"] is True
    assert data["inventory"]["system_vendor"]["serial_number"] == payload["inventory"][
        "system_vendor"]["serial_number"]


@pytest.mark.discoverd_conf(auto_discovery={"enabled": "true", "probe_bmc": "false",
                                            "driver": "redfish"})
async def test_the_reported_bmc_goes_into_the_drivers_own_field(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, payload = unknown()
    uuid = await discover(di, payload)
    doc = await node(bm, uuid)
    assert doc["driver"] == "redfish"
    assert doc["driver_info"] == {"redfish_address": f"https://{m.bmc}"}


@pytest.mark.discoverd_conf(processing={"node_not_found_hook": "enroll"},
                            auto_discovery={"probe_bmc": "false"})
async def test_inspectors_enroll_hook_turns_discovery_on_and_writes_ipmi_address(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, payload = unknown()
    uuid = await discover(di, payload)
    assert (await node(bm, uuid))["driver_info"] == {"ipmi_address": m.bmc}


@pytest.mark.discoverd_conf(auto_discovery={"enabled": "true", "probe_bmc": "false",
                                            "driver": "pxe_ipmitool"})
async def test_a_discovered_node_without_bmc_credentials_gets_no_power_action(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    uuid = await discover(di, unknown()[1])
    doc = await node(bm, uuid)
    assert doc["power_state"] is None and doc["last_error"] is None
    assert not [e for e in await history(bm, uuid) if "ower" in e]
    attempts = (await di.get(f"/v1/introspection/{uuid}/attempts")).json()["attempts"]
    steps = {s["phase"]: s for s in attempts[0]["phases"]}
    assert "powered_off" not in steps
    assert "auto-discovered" in steps["power_off_skipped"]["reason"]
    assert attempts[0]["result"] == "success"


@ON
async def test_a_quarantined_node_refuses_power_provisioning_and_management_actions(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    uuid = await discover(di, unknown()[1])
    for method, path, body in (
            ("PUT", "states/power", {"target": "power on"}),
            ("PUT", "states/provision", {"target": "manage"}),
            ("PUT", "management/boot_device", {"boot_device": "pxe"})):
        resp = await bm.request(method, f"/v1/nodes/{uuid}/{path}", json=body)
        assert resp.status_code == 409, (path, resp.text)
        assert "quarantined" in resp.text and "approve" in resp.text
    assert (await node(bm, uuid))["provision_state"] == "enroll"


@ON
async def test_an_approved_node_takes_the_normal_path(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    uuid = await discover(di, unknown()[1])
    resp = await bm.post("/v1/discovery/approve", json={"nodes": [uuid]})
    assert resp.status_code == 200, resp.text
    assert resp.json()["nodes"][0]["discovery"] == "approved"
    resp = await bm.put(f"/v1/nodes/{uuid}/states/provision", json={"target": "manage"})
    assert resp.status_code == 202, resp.text
    assert any("approved" in e for e in await history(bm, uuid))


@ON
async def test_approve_and_reject_act_on_several_nodes_in_one_call(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    first, second = [await discover(di, unknown()[1]) for _ in range(2)]
    resp = await bm.post("/v1/discovery/reject", json={"nodes": [first, second]})
    assert resp.status_code == 200, resp.text
    assert {n["discovery"] for n in await discovered(bm)} == {"rejected"}
    resp = await bm.put(f"/v1/nodes/{first}/states/provision", json={"target": "manage"})
    assert resp.status_code == 409 and "rejected" in resp.text


@ON
async def test_approving_a_node_that_was_not_discovered_is_refused_and_changes_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    enrolled = await make_node(bm, managed=False)
    uuid = await discover(di, unknown()[1])
    resp = await bm.post("/v1/discovery/approve", json={"nodes": [uuid, enrolled.uuid]})
    assert resp.status_code == 400 and "was not auto-discovered" in resp.text
    assert (await discovered(bm))[0]["discovery"] == "pending"


@ON
@BOTH_DBS
async def test_a_discovered_machine_booting_again_creates_nothing_and_adds_a_version(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, payload = unknown()
    uuid = await discover(di, payload)
    began = asyncio.get_running_loop().time()
    again = await report(di, payload)
    assert again.json() == {"uuid": uuid}
    assert await runs(di, uuid) == 2
    assert any(e.startswith("Seen again") for e in await history(bm, uuid))
    assert asyncio.get_running_loop().time() - began < 5  # both there when it is answered
    assert len(await discovered(bm)) == 1


@ON
async def test_an_enrolled_machine_booting_the_ramdisk_is_seen_again_in_any_state(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)  # manageable, with ports, never inspected
    before = await snapshot_of(bm, m.uuid)
    resp = await report(di, ipa_payload(m))
    assert resp.json() == {"uuid": m.uuid}
    assert await discovered(bm) == []
    assert await snapshot_of(bm, m.uuid) == before  # nothing of the node changed
    assert any(e.startswith("Seen again") for e in await history(bm, m.uuid))
    assert await runs(di, m.uuid) == 1


async def snapshot_of(bm: httpx.AsyncClient, uuid: str) -> tuple[Any, ...]:
    doc = await node(bm, uuid)
    return (doc["properties"], doc["provision_state"], doc["driver_info"],
            sorted(await ports(bm, uuid)))


@ON
async def test_a_node_enrolled_with_only_its_bmc_is_a_conflict_not_a_duplicate(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, ports=0)
    resp = await report(di, ipa_payload(m), 404)
    assert "discovery conflict" in resp.text
    (found,) = await conflicts(di)
    assert found["matched"] == [m.uuid]
    assert found["signals"] == [{"signal": "bmc", "value": m.bmc, "node": m.uuid}]
    assert await discovered(bm) == []


@ON
async def test_signals_naming_two_nodes_are_one_conflict_counting_repeats(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    a, b = await make_node(bm), await make_node(bm)
    mixed = Machine("", "mixed", [a.macs[0], "02:aa:00:00:00:01"], b.bmc)
    for _ in range(3):
        await report(di, ipa_payload(mixed), 404)
    (found,) = await conflicts(di)
    assert set(found["matched"]) == {a.uuid, b.uuid}
    assert {s["signal"] for s in found["signals"]} == {"mac", "bmc"}
    assert found["repeats"] == 2
    assert await discovered(bm) == []


@ON
async def test_a_known_serial_with_new_macs_is_a_conflict(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    uuid, (_, swapped) = await discovered_then_swapped(di)
    await report(di, swapped, 404)
    (found,) = await conflicts(di)
    assert found["signals"][0]["signal"] == "serial" and found["matched"] == [uuid]


@ON
@BOTH_DBS
async def test_a_conflict_resolved_as_the_same_machine_moves_the_ports(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    uuid, (new, swapped) = await discovered_then_swapped(di)
    await report(di, swapped, 404)
    (found,) = await conflicts(di)
    resp = await di.post(f"/v1/discovery/conflicts/{found['id']}",
                         json={"resolution": "same_machine"})
    assert resp.status_code == 200, resp.text
    assert set(await ports(bm, uuid)) == set(new.macs)
    assert any("replaced board" in e for e in await history(bm, uuid))
    assert await conflicts(di) == []
    assert (await report(di, swapped)).json() == {"uuid": uuid}  # now simply seen again


@ON
async def test_a_conflict_resolved_as_a_new_machine_creates_its_node(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, found = await bmc_only_conflict(bm, di)
    resp = await di.post(f"/v1/discovery/conflicts/{found['id']}",
                         json={"resolution": "new_machine"})
    assert resp.status_code == 200, resp.text
    created = resp.json()["node"]
    await wait_finished(di, created)
    assert [n["uuid"] for n in await discovered(bm)] == [created]
    assert any("resolved as a new machine" in e for e in await history(bm, created))


@ON
async def test_an_ignored_conflict_stays_resolved_and_a_second_resolution_is_refused(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, found = await bmc_only_conflict(bm, di)
    path = f"/v1/discovery/conflicts/{found['id']}"
    assert (await di.post(path, json={"resolution": "ignore"})).status_code == 200
    assert (await di.post(path, json={"resolution": "new_machine"})).status_code == 409
    await report(di, ipa_payload(m), 404)
    assert await conflicts(di) == []
    (ignored,) = await conflicts(di, every=True)
    assert (ignored["resolution"], ignored["repeats"]) == ("ignore", 1)


@ON
async def test_a_resolution_made_for_someone_records_the_caller_and_them(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, found = await bmc_only_conflict(bm, di)
    resp = await di.post(f"/v1/discovery/conflicts/{found['id']}",
                         json={"resolution": "ignore", "on_behalf_of": "alice"})
    assert resp.status_code == 200, resp.text
    (ignored,) = await conflicts(di, every=True)
    assert ignored["resolved_by"] == "anonymous for alice"  # noauth: no caller's name


@ON
async def test_a_bad_resolution_names_the_field_and_changes_nothing(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, found = await bmc_only_conflict(bm, di)
    resp = await di.post(f"/v1/discovery/conflicts/{found['id']}",
                         json={"resolution": "merge"})
    assert resp.status_code == 400 and "resolution" in resp.text
    resp = await di.post(f"/v1/discovery/conflicts/{found['id']}",
                         json={"resolution": "same_machine", "node": str(uuidlib.uuid4())})
    assert resp.status_code == 400 and "node" in resp.text
    for bad in (7, "", "x" * 129, "bob\nroot"):
        resp = await di.post(f"/v1/discovery/conflicts/{found['id']}",
                             json={"resolution": "ignore", "on_behalf_of": bad})
        assert resp.status_code == 400 and "on_behalf_of" in resp.text, bad
    assert (await di.post("/v1/discovery/conflicts/999999",
                          json={"resolution": "ignore"})).status_code == 404
    assert len(await conflicts(di)) == 1


@ON
@BOTH_DBS
async def test_two_machines_sharing_a_mac_are_both_enrolled_and_the_mac_recorded(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    shared = "52:54:00:5e:00:99"
    first, p1 = unknown(bmc=False)
    second, p2 = unknown(bmc=False)
    for m, payload in ((first, p1), (second, p2)):
        m.macs.append(shared)
        payload["inventory"]["interfaces"].append(
            {**payload["inventory"]["interfaces"][1], "name": "eno9", "mac_address": shared})
    one, two = await discover(di, p1), await discover(di, p2)
    assert one != two
    assert {n["uuid"] for n in await discovered(bm)} == {one, two}
    macs = (await di.get("/v1/discovery/non_unique_macs")).json()["macs"]
    assert {"mac": shared, "source": "recorded"}.items() <= next(
        m for m in macs if m["mac"] == shared).items()
    assert (await report(di, p2)).json() == {"uuid": two}  # each is still itself
    assert (await report(di, p1)).json() == {"uuid": one}


@ON
async def test_usb_nics_and_the_shared_bmc_mac_identify_no_machine(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1)
    _, payload = unknown(nics=3, drivers={1: "cdc_ether"})
    interfaces = payload["inventory"]["interfaces"]
    interfaces[1]["mac_address"] = m.macs[0]  # a USB NIC whose MAC a known node has
    interfaces[2]["mac_address"] = "02:00:00:00:00:02"
    uuid = await discover(di, payload)
    assert uuid != m.uuid and await conflicts(di) == []


@pytest.mark.discoverd_conf(auto_discovery={"enabled": "true", "probe_bmc": "false",
                                            "rate_limit": "2"})
async def test_creation_beyond_the_subnets_rate_is_429_and_counted(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    for _ in range(2):
        await discover(di, unknown()[1])
    resp = await report(di, unknown()[1], 429)
    assert "rate_limit" in resp.text and resp.headers["Retry-After"] == "60"
    assert len(await discovered(bm)) == 2
    metrics = (await di.get("/metrics")).text
    assert 'ironsight_discovery_reports_total{outcome="rate_limited"} 1.0' in metrics


@pytest.mark.discoverd_conf(auto_discovery={"enabled": "true", "probe_bmc": "false",
                                            "rate_limit": "3"})
@BOTH_DBS
async def test_concurrent_reports_never_exceed_the_subnets_rate(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    answers = await asyncio.gather(*(di.post("/v1/continue", json=unknown()[1])
                                     for _ in range(12)))
    assert sorted(r.status_code for r in answers) == [200] * 3 + [429] * 9
    assert len(await discovered(bm)) == 3


@pytest.mark.discoverd_conf(auto_discovery={"enabled": "true", "probe_bmc": "false",
                                            "max_pending": "1"})
async def test_creation_beyond_the_pending_cap_is_429(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    await discover(di, unknown()[1])
    resp = await report(di, unknown()[1], 429)
    assert "max_pending" in resp.text
    assert len(await discovered(bm)) == 1
    assert (await di.get("/v1/discovery")).json()["outcomes"]["pending_limit"] == 1


@ON
@BOTH_DBS
async def test_concurrent_reports_of_one_machine_create_one_node(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, payload = unknown()
    answers = await asyncio.gather(*(di.post("/v1/continue", json=payload) for _ in range(5)))
    assert {r.status_code for r in answers} <= {200, 409}
    assert len(await discovered(bm)) == 1


@ON
async def test_a_report_that_names_no_machine_is_refused(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, payload = unknown(nics=1, bmc=False, drivers={0: "rndis_host"})
    system = payload["inventory"]["system_vendor"]
    system.update(serial_number="To be filled by O.E.M.")
    resp = await report(di, payload, 404)
    assert "names no machine" in resp.text
    assert await discovered(bm) == []


# --- the delivery manifest ------------------------------------------------------------------


def manifest_csv(tmp_path: Path, rows: list[dict[str, str]]) -> str:
    secret = tmp_path / "bmc-password"
    secret.write_text("s3cret-pw\n")
    secret.chmod(0o600)
    header = ["serial", "name", "macs", "bmc_address", "driver", "bmc_username",
              "bmc_password_file", "resource_class", "traits"]
    lines = [",".join(header)]
    for row in rows:
        with_secret = {**row, "bmc_password_file": str(secret)} if "bmc_username" in row else row
        lines.append(",".join(with_secret.get(h, "") for h in header))
    return "\n".join(lines) + "\n"


@ON
async def test_a_machine_on_the_manifest_is_named_given_credentials_and_approved(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, tmp_path: Path) -> None:
    _, payload = unknown()
    serial = payload["inventory"]["system_vendor"]["serial_number"]
    text = manifest_csv(tmp_path, [{"serial": serial, "name": "rack1-u7",
                                    "bmc_address": "10.9.0.7", "driver": "pxe_ipmitool",
                                    "bmc_username": "admin", "resource_class": "gpu",
                                    "traits": "CUSTOM_DELIVERY_7"}])
    resp = await di.post("/v1/discovery/manifest", json={"csv": text})
    assert resp.status_code == 200 and resp.json() == {"added": 1, "replaced": 0}
    uuid = await discover(di, payload)
    doc = await node(bm, uuid)
    assert (doc["name"], doc["driver"], doc["resource_class"]) == ("rack1-u7", "pxe_ipmitool",
                                                                   "gpu")
    assert doc["driver_info"]["ipmi_address"] == "10.9.0.7"
    assert doc["driver_info"]["ipmi_password"] == "******"  # stored, never shown
    assert "s3cret" not in str(doc)
    traits = (await bm.get(f"/v1/nodes/{uuid}/traits")).json()["traits"]
    assert traits == ["CUSTOM_DELIVERY_7"]
    assert (await discovered(bm))[0]["discovery"] == "approved"


@ON
async def test_manifest_status_lists_arrived_missing_and_extras(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, tmp_path: Path) -> None:
    _, expected = unknown()
    serial = expected["inventory"]["system_vendor"]["serial_number"]
    text = manifest_csv(tmp_path, [{"serial": serial}, {"serial": "NEVER-CAME"}])
    assert (await di.post("/v1/discovery/manifest", json={"csv": text})).status_code == 200
    arrived = await discover(di, expected)
    extra = await discover(di, unknown()[1])
    status = (await di.get("/v1/discovery/manifest")).json()
    assert [a["node_uuid"] for a in status["arrived"]] == [arrived]
    assert [m["serial"] for m in status["missing"]] == ["NEVER-CAME"]
    assert [e["node_uuid"] for e in status["extras"]] == [extra]
    pending = {n["uuid"]: n["discovery"] for n in await discovered(bm)}
    assert pending == {arrived: "approved", extra: "pending"}


@ON
async def test_a_bad_manifest_row_is_named_by_row_and_column_and_nothing_is_imported(
        di: httpx.AsyncClient, tmp_path: Path) -> None:
    text = manifest_csv(tmp_path, [{"serial": "OK-1"}, {"serial": "BAD-2", "macs": "zz"}])
    resp = await di.post("/v1/discovery/manifest", json={"csv": text})
    assert resp.status_code == 400
    assert "row 3, column 'macs'" in resp.text
    assert (await di.get("/v1/discovery/manifest")).json()["missing"] == []


@ON
async def test_an_inline_password_column_is_refused(di: httpx.AsyncClient) -> None:
    resp = await di.post("/v1/discovery/manifest",
                         json={"csv": "serial,bmc_password\nS1,hunter2\n"})
    assert resp.status_code == 400 and "bmc_password_file" in resp.text
    assert "hunter2" not in resp.text


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body", "named"), [
    ("POST", "/v1/discovery/lookup", {"macs": ["zz"]}, "macs"),
    ("POST", "/v1/discovery/lookup", {"bmc_addresses": ["::/0"]}, "bmc_addresses"),
    ("POST", "/v1/discovery/approve", {"nodes": []}, "nodes"),
    ("POST", "/v1/discovery/nodes", {"node": {"driver": "no-such-driver"}}, "no-such-driver"),
    ("POST", "/v1/discovery/nodes", {"node": {"driver": "fake"}, "status": "rejected"},
     "status"),
    ("GET", "/v1/discovery/nodes?status=maybe", None, "status"),
    ("GET", "/v1/nodes?discovery=maybe", None, "discovery"),
])
async def test_bad_input_to_the_bare_metal_discovery_api_is_a_400_naming_it(
        bm: httpx.AsyncClient, method: str, path: str, body: Any, named: str) -> None:
    resp = await bm.request(method, path, json=body)
    assert resp.status_code == 400, resp.text
    assert named in resp.text
    assert await discovered(bm) == []


@ON
async def test_bad_input_to_discoverds_discovery_api_is_a_400_naming_it(
        di: httpx.AsyncClient) -> None:
    for method, path, body, named in (
            ("POST", "/v1/discovery/manifest", {"file": "x"}, "csv"),
            ("POST", "/v1/discovery/manifest", {"csv": "serial\n"}, "no rows"),
            ("GET", "/v1/discovery/conflicts?all=maybe", None, "all"),
            ("GET", "/v1/discovery/conflicts/abc", None, "conflict id")):
        resp = await di.request(method, path, json=body)
        assert resp.status_code == 400, (path, resp.text)
        assert named in resp.text, (path, resp.text)


@ON
async def test_a_deleted_discovered_node_is_discovered_anew(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, payload = unknown(bmc=False)
    first = await discover(di, payload)
    assert (await bm.delete(f"/v1/nodes/{first}")).status_code == 204
    second = await discover(di, payload)
    assert second != first
    assert [n["uuid"] for n in await discovered(bm)] == [second]


@ON
async def test_a_discovery_rule_runs_on_discovered_nodes_only(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    """Ironic's documented discovery rule: the `auto_discovered` mark in plugin data."""
    rule = {"description": "discovered machines", "sensitive": False,
            "conditions": [{"op": "eq", "args": {"values": ["{plugin_data[auto_discovered]}",
                                                            True]}}],
            "actions": [{"op": "set-attribute", "args": {"path": "/resource_class",
                                                         "value": "discovered"}},
                        {"op": "set-attribute", "args": {
                            "path": "/driver_info/ipmi_address",
                            "value": "{inventory[bmc_address]}"}}]}
    resp = await di.post("/v1/inspection_rules", json=rule)
    assert resp.status_code == 201, resp.text
    m, payload = unknown()
    uuid = await discover(di, payload)
    doc = await node(bm, uuid)
    assert doc["resource_class"] == "discovered"
    assert doc["driver_info"]["ipmi_address"] == m.bmc
    seen = await report(di, payload)  # seen again: no rule runs, nothing changes
    assert seen.json() == {"uuid": uuid}


# --- the BMC check (a real virtual IPMI BMC on 127.0.0.1) -----------------------------------

PROBE = pytest.mark.discoverd_conf(auto_discovery={"enabled": "true", "probe_timeout": "5"})


async def with_bmc_row(di: httpx.AsyncClient, tmp_path: Path, bmc: VirtualBmc,
                       serial: str) -> None:
    secret = tmp_path / "pw"
    secret.write_text("ipmi-s3cret\n")
    text = ("serial,bmc_address,bmc_port,driver,bmc_username,bmc_password_file\n"
            f"{serial},127.0.0.1,{bmc.port},pxe_ipmitool,admin,{secret}\n")
    assert (await di.post("/v1/discovery/manifest", json={"csv": text})).status_code == 200


@PROBE
async def test_the_bmc_check_of_this_machines_bmc_is_recorded_on_its_node(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, tmp_path: Path) -> None:
    _, payload = unknown(bmc=False)
    system = payload["inventory"]["system_vendor"]
    bmc = VirtualBmc(InMemoryMachine(), "admin", "ipmi-s3cret", system_uuid=system["uuid"],
                     serial=system["serial_number"])
    with BmcServer([bmc]):
        await with_bmc_row(di, tmp_path, bmc, system["serial_number"])
        uuid = await discover(di, payload)
    probe = (await node(bm, uuid))["extra"]["discovery"]["bmc_probe"]
    assert (probe["reachable"], probe["protocol"], probe["serial_match"]) == (True, "ipmi", True)
    assert "s3cret" not in str(probe)


@PROBE
async def test_a_bmc_that_says_it_is_another_machine_is_a_conflict(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, tmp_path: Path) -> None:
    _, payload = unknown(bmc=False)
    bmc = VirtualBmc(InMemoryMachine(), "admin", "ipmi-s3cret",
                     system_uuid=str(uuidlib.uuid4()), serial="SOMEONE-ELSE")
    with BmcServer([bmc]):
        await with_bmc_row(di, tmp_path, bmc,
                           payload["inventory"]["system_vendor"]["serial_number"])
        resp = await report(di, payload, 404)
    assert "another machine" in resp.text
    (found,) = await conflicts(di)
    assert found["signals"][0]["signal"] == "bmc_probe"
    assert await discovered(bm) == []


@PROBE
async def test_an_unreachable_bmc_is_recorded_and_does_not_stop_discovery(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    _, payload = unknown()
    payload["inventory"]["bmc_address"] = "127.0.0.2"  # nothing listens: refused at once
    uuid = await discover(di, payload)
    probe = (await node(bm, uuid))["extra"]["discovery"]["bmc_probe"]
    assert (probe["address"], probe["reachable"], probe["protocol"]) == ("127.0.0.2", False,
                                                                         None)


@ON
async def test_claims_left_by_a_creation_that_died_half_way_expire(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: Any) -> None:
    m, payload = unknown(bmc=False)
    store = di_service.processor.discovery.store
    ghost = str(uuidlib.uuid4())
    assert await store.claim(ghost, [("mac", m.macs[0])])
    assert (await report(di, payload, 409)).status_code == 409  # under way, for all it knows
    async with store.db.begin() as conn:
        await conn.execute(update(claims).values(
            created_at=dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(hours=1)))
    uuid = await discover(di, payload)
    assert uuid != ghost and [n["uuid"] for n in await discovered(bm)] == [uuid]


@ON
async def test_a_large_manifest_is_imported_and_imported_again(di: httpx.AsyncClient) -> None:
    """More rows than SQLite takes parameters in one statement (32,766)."""
    text = "serial,name\n" + "".join(f"BULK-{i},bulk-{i}\n" for i in range(33_000))
    first = await di.post("/v1/discovery/manifest", json={"csv": text})
    assert first.status_code == 200 and first.json() == {"added": 33_000, "replaced": 0}
    again = await di.post("/v1/discovery/manifest", json={"csv": text})
    assert again.status_code == 200 and again.json() == {"added": 0, "replaced": 33_000}


@ON
async def test_a_machine_on_the_manifest_by_its_mac_only_is_named(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m, payload = unknown()
    text = f"serial,name,macs\nOTHER-SERIAL,by-mac,{m.macs[1].upper()}\n"
    assert (await di.post("/v1/discovery/manifest", json={"csv": text})).status_code == 200
    uuid = await discover(di, payload)
    assert (await node(bm, uuid))["name"] == "by-mac"
    assert (await discovered(bm))[0]["discovery"] == "approved"


async def test_the_lookup_follows_a_bmc_address_changed_by_patch(
        bm: httpx.AsyncClient) -> None:
    m = await make_node(bm, ports=0)
    patch = [{"op": "replace", "path": "/driver_info/ipmi_address", "value": "fd00:0:0::7"}]
    resp = await bm.patch(f"/v1/nodes/{m.uuid}", json=patch)
    assert resp.status_code == 200, resp.text

    async def matches(address: str) -> list[str]:
        resp = await bm.post("/v1/discovery/lookup", json={"bmc_addresses": [address]})
        assert resp.status_code == 200, resp.text
        return [x["node"] for x in resp.json()["matches"]]

    assert await matches("[fd00::7]") == [m.uuid]
    assert await matches(str(m.bmc)) == []
