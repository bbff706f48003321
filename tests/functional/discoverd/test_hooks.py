"""Each processing hook, end to end: what it does to the node and how it fails."""

from __future__ import annotations

import httpx
import pytest

from ironsight.discoverd.callback_token import HEADER
from ironsight.discoverd.service import DiscoverdService

from .helpers import (
    GIB,
    error_message,
    introspect,
    ipa_payload,
    issued_token,
    mac,
    make_node,
    node,
    ports,
    settled_power,
    start,
    status,
    wait_finished,
)


async def _post(di: httpx.AsyncClient, payload: dict[str, object],
                token: str | None = None) -> httpx.Response:
    """A report; with the node's callback token for those that must end the introspection
    (a tokenless error report never does)."""
    headers = {HEADER: token} if token else None
    return await di.post("/v1/continue", json=payload, headers=headers)


# --- ramdisk_error ------------------------------------------------------------------------


async def test_ramdisk_error_ends_introspection_without_touching_node(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService) -> None:
    m = await make_node(bm, ports=0)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    resp = await _post(di, ipa_payload(m, error="disk on fire"),
                       await issued_token(di_service, m.uuid))
    assert resp.status_code == 400
    assert error_message(resp) == "Ramdisk reported error: disk on fire"
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error"
    assert doc["error"] == "Ramdisk reported error: disk on fire"
    assert (await node(bm, m.uuid))["properties"] == {}
    assert await ports(bm, m.uuid) == {}
    await settled_power(bm, m.uuid, "power off")
    assert (await di.get(f"/v1/introspection/{m.uuid}/data")).status_code == 404


async def test_legacy_ramdisk_error(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                    di_service: DiscoverdService) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    resp = await _post(di, {"error": "no IPMI", "ipmi_address": m.bmc,
                            "interfaces": {"eth0": {"mac": m.macs[0], "ip": "10.0.0.1"}}},
                       await issued_token(di_service, m.uuid))
    assert resp.status_code == 400
    doc = await wait_finished(di, m.uuid)
    assert doc["error"] == "Ramdisk reported error: no IPMI"


# --- validate_interfaces ------------------------------------------------------------------


async def test_no_valid_mac_is_an_error(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                        di_service: DiscoverdService) -> None:
    m = await make_node(bm, ports=0)
    await start(di, m.uuid)
    payload = ipa_payload(m)
    payload["inventory"]["interfaces"] = [
        {"name": "lo", "mac_address": "00:00:00:00:00:00", "ipv4_address": "127.0.0.1"},
        {"name": "eno1", "mac_address": "not-a-mac"},
        {"name": "eno2", "mac_address": "00:00:00:00:00:00"}]
    resp = await _post(di, payload,
                       await issued_token(di_service, m.uuid))  # found by BMC address
    assert resp.status_code == 400
    assert "No valid interfaces" in error_message(resp)
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error" and "No valid interfaces" in doc["error"]
    assert (await node(bm, m.uuid))["properties"] == {}


async def test_loopback_interface_gets_no_port(bm: httpx.AsyncClient,
                                               di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=1, ports=0)
    payload = ipa_payload(m)
    payload["inventory"]["interfaces"].append(
        {"name": "lo", "mac_address": mac(9100, 0), "ipv4_address": "127.0.0.1"})
    await introspect(di, m, payload)
    assert set(await ports(bm, m.uuid)) == {m.macs[0]}


# --- root_disk_selection ------------------------------------------------------------------


@pytest.mark.parametrize("hints", [{"serial": "SER0001"}, {"name": "/dev/sdb"},
                                   {"size": 1000}, {"rotational": "true", "vendor": "acme"}],
                         ids=["serial", "name", "size", "rotational+vendor"])
async def test_root_device_hints_pick_the_disk(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                               hints: dict[str, object]) -> None:
    m = await make_node(bm, properties={"root_device": hints})
    doc = await introspect(di, m, ipa_payload(m, disks_gib=(500, 1000)))
    assert doc["state"] == "finished", doc
    assert (await node(bm, m.uuid))["properties"]["local_gb"] == 999
    processed = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    assert processed["root_disk"]["name"] == "/dev/sdb"


async def test_root_device_hints_matching_nothing_is_an_error(bm: httpx.AsyncClient,
                                                              di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"root_device": {"serial": "NOPE"}})
    await start(di, m.uuid)
    resp = await _post(di, ipa_payload(m))
    assert resp.status_code == 200  # accepted; the node's hints are applied afterwards
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error"
    assert "No disks satisfied root device hints" in doc["error"]
    assert (await node(bm, m.uuid))["properties"] == {"root_device": {"serial": "NOPE"}}
    await settled_power(bm, m.uuid, "power off")


async def test_root_device_size_hint_not_a_number_is_an_error(bm: httpx.AsyncClient,
                                                              di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"root_device": {"size": "big"}})
    await start(di, m.uuid)
    resp = await _post(di, ipa_payload(m))
    assert resp.status_code == 200, resp.text
    doc = await wait_finished(di, m.uuid, timeout=5)
    assert doc["state"] == "error" and "size" in doc["error"]


async def test_legacy_local_gb_is_not_recomputed_from_hints(bm: httpx.AsyncClient,
                                                            di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"root_device": {"serial": "NOPE"}})
    from .helpers import legacy_payload
    doc = await introspect(di, m, legacy_payload(m, local_gb=42))
    assert doc["state"] == "finished"
    assert (await node(bm, m.uuid))["properties"]["local_gb"] == 42


# --- scheduler ----------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "edit"), [
    ("inventory.cpu.count", lambda p: p["inventory"]["cpu"].update(count=None)),
    ("inventory.cpu.architecture", lambda p: p["inventory"]["cpu"].pop("architecture")),
    ("inventory.memory.physical_mb",
     lambda p: p["inventory"].update(memory={"physical_mb": None})),
])
async def test_scheduler_missing_field_is_an_error_naming_it(
        bm: httpx.AsyncClient, di: httpx.AsyncClient, di_service: DiscoverdService,
        field: str, edit: object) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    payload = ipa_payload(m)
    edit(payload)  # type: ignore[operator]
    resp = await _post(di, payload,
                       await issued_token(di_service, m.uuid))
    assert resp.status_code == 400
    assert field in error_message(resp)
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "error" and field in doc["error"]
    assert "scheduler" in doc["error"]
    assert (await node(bm, m.uuid))["properties"] == {}
    await settled_power(bm, m.uuid, "power off")


# --- capabilities -------------------------------------------------------------------------


async def test_capabilities_merge_keeps_existing_keys(bm: httpx.AsyncClient,
                                                      di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"capabilities": "profile:compute,boot_mode:bios"})
    await introspect(di, m, ipa_payload(m, boot_mode="uefi", flags=("vmx",)))
    caps = dict(c.split(":") for c in
                (await node(bm, m.uuid))["properties"]["capabilities"].split(","))
    assert caps == {"profile": "compute", "boot_mode": "bios", "cpu_vt": "true"}


@pytest.mark.discoverd_conf(processing={"overwrite_existing": "true"})
async def test_capabilities_overwrite_replaces_discovered_keys_only(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"capabilities": "profile:compute,boot_mode:bios"})
    await introspect(di, m, ipa_payload(m, boot_mode="uefi", flags=()))
    caps = dict(c.split(":") for c in
                (await node(bm, m.uuid))["properties"]["capabilities"].split(","))
    assert caps == {"profile": "compute", "boot_mode": "uefi"}


# --- ports: keep_ports, update_pxe_enabled ------------------------------------------------


async def _add_port(bm: httpx.AsyncClient, node_uuid: str, address: str,
                    pxe: bool = True) -> None:
    resp = await bm.post("/v1/ports", json={"node_uuid": node_uuid, "address": address,
                                             "pxe_enabled": pxe})
    assert resp.status_code == 201, resp.text


async def test_keep_ports_all_keeps_unseen_ports(bm: httpx.AsyncClient,
                                                 di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2)
    await _add_port(bm, m.uuid, mac(9200, 0))  # a NIC the ramdisk will not see
    await introspect(di, m, ipa_payload(m))
    assert set(await ports(bm, m.uuid)) == {*m.macs, mac(9200, 0)}


@pytest.mark.discoverd_conf(processing={"keep_ports": "present"})
async def test_keep_ports_present_deletes_ports_not_seen(bm: httpx.AsyncClient,
                                                         di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2)
    await _add_port(bm, m.uuid, mac(9201, 0))
    await introspect(di, m, ipa_payload(m))
    assert set(await ports(bm, m.uuid)) == set(m.macs)


@pytest.mark.discoverd_conf(processing={"keep_ports": "added"})
async def test_keep_ports_added_keeps_only_chosen_nics(bm: httpx.AsyncClient,
                                                       di: httpx.AsyncClient) -> None:
    # add_ports=pxe: only NIC 0 is chosen; NIC 1's port (seen, already pxe_enabled=false,
    # so nothing to fix on it) and an unseen port go
    m = await make_node(bm, nics=3, ports=1)
    await _add_port(bm, m.uuid, m.macs[1], pxe=False)
    await _add_port(bm, m.uuid, mac(9202, 0))
    await introspect(di, m, ipa_payload(m, pxe=0))
    assert {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()} == {
        m.macs[0]: True}


@pytest.mark.discoverd_conf(processing={"keep_ports": "added"})
async def test_keep_ports_added_deletes_a_non_pxe_port_that_claims_pxe(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, ports=2)  # both ports pxe_enabled=true (the default)
    await start(di, m.uuid)
    resp = await _post(di, ipa_payload(m, pxe=0))
    assert resp.status_code == 200, resp.text
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "finished", doc
    assert {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()} == {
        m.macs[0]: True}


async def test_update_pxe_enabled_fixes_existing_ports(bm: httpx.AsyncClient,
                                                       di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=3, ports=0)
    await _add_port(bm, m.uuid, m.macs[0], pxe=True)
    await _add_port(bm, m.uuid, m.macs[1], pxe=False)  # the one that really boots
    await _add_port(bm, m.uuid, mac(9203, 0), pxe=True)  # unseen: left alone
    await introspect(di, m, ipa_payload(m, pxe=1))
    found = {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()}
    assert found == {m.macs[0]: False, m.macs[1]: True, mac(9203, 0): True}


@pytest.mark.discoverd_conf(processing={"update_pxe_enabled": "false"})
async def test_update_pxe_enabled_off_leaves_ports_alone(bm: httpx.AsyncClient,
                                                         di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, ports=0)
    await _add_port(bm, m.uuid, m.macs[0], pxe=True)
    await _add_port(bm, m.uuid, m.macs[1], pxe=False)
    await introspect(di, m, ipa_payload(m, pxe=1))
    found = {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()}
    assert found == {m.macs[0]: True, m.macs[1]: False}


async def test_port_taken_by_another_node_is_a_warning(bm: httpx.AsyncClient,
                                                       di: httpx.AsyncClient) -> None:
    other = await make_node(bm, nics=1, managed=False)
    m = await make_node(bm, nics=2, ports=0)
    # the ramdisk reports, as its PXE NIC, a MAC the bare-metal service has on another node
    doc = await introspect(di, m, ipa_payload(m, macs=[other.macs[0], m.macs[1]], pxe=0))
    assert doc["state"] == "finished", doc
    assert await ports(bm, m.uuid) == {}
    processed = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    assert any(other.macs[0] in w for w in processed["changes"]["warnings"])
    assert (await status(di, m.uuid))["error"] is None


async def test_disk_size_in_gib_minus_one(bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    payload = ipa_payload(m)
    payload["root_disk"] = {"name": "/dev/vda", "size": 20 * GIB}
    await introspect(di, m, payload)
    assert (await node(bm, m.uuid))["properties"]["local_gb"] == 19


@pytest.mark.discoverd_conf(processing={"disk_partitioning_spacing": "false"})
async def test_disk_partitioning_spacing_off(bm: httpx.AsyncClient,
                                             di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, disks_gib=(20,)))
    assert (await node(bm, m.uuid))["properties"]["local_gb"] == 20
