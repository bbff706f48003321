"""`POST /v1/continue` with an ironic-python-agent report: node properties, ports, power."""

from __future__ import annotations

import httpx
import pytest

from .conftest import BOTH_DBS
from .helpers import (
    introspect,
    ipa_payload,
    make_node,
    node,
    ports,
    settled_power,
    start,
    wait_finished,
    when,
)


@BOTH_DBS
async def test_ipa_callback_sets_scheduling_properties_and_finishes(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    await settled_power(bm, m.uuid, "power on")
    resp = await di.post("/v1/continue", json=ipa_payload(
        m, cpus=40, memory_mb=196608, disks_gib=(446, 4000), arch="x86_64"))
    assert resp.status_code == 200
    assert resp.json() == {"uuid": m.uuid}
    doc = await wait_finished(di, m.uuid)
    assert doc["state"] == "finished" and doc["error"] is None
    assert when(doc, "finished_at") >= when(doc, "started_at")
    props = (await node(bm, m.uuid))["properties"]
    assert {k: props[k] for k in ("cpus", "cpu_arch", "memory_mb", "local_gb")} == {
        "cpus": 40, "cpu_arch": "x86_64", "memory_mb": 196608, "local_gb": 445}
    for key in ("cpus", "memory_mb", "local_gb"):
        assert type(props[key]) is int, (key, props[key])
    caps = dict(item.split(":") for item in props["capabilities"].split(","))
    assert caps == {"boot_mode": "uefi", "cpu_vt": "true", "cpu_aes": "true"}
    await settled_power(bm, m.uuid, "power off")
    assert (await node(bm, m.uuid))["provision_state"] == "manageable"


async def test_ipa_memory_from_total_when_physical_mb_missing(bm: httpx.AsyncClient,
                                                              di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    payload = ipa_payload(m)
    payload["inventory"]["memory"] = {"total": 8 * 1024**3}
    assert (await introspect(di, m, payload))["state"] == "finished"
    assert (await node(bm, m.uuid))["properties"]["memory_mb"] == 8192


async def test_ipa_bios_boot_mode_and_other_cpu_flags(bm: httpx.AsyncClient,
                                                      di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, boot_mode="bios", flags=("svm", "pdpe1gb", "smx")))
    caps = (await node(bm, m.uuid))["properties"]["capabilities"].split(",")
    assert sorted(caps) == ["boot_mode:bios", "cpu_hugepages_1g:true", "cpu_txt:true",
                            "cpu_vt:true"]


async def test_ipa_without_disks_gives_local_gb_zero(bm: httpx.AsyncClient,
                                                     di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, disks_gib=()))
    assert (await node(bm, m.uuid))["properties"]["local_gb"] == 0


# NIC 0 boots (PXE, with an IP), NIC 1 has an IP, NIC 2 has none.
ADD_PORTS = {
    "pxe": {0: True},
    "all": {0: True, 1: False, 2: False},
    "active": {0: True, 1: False},
    "disabled": {},
}


@pytest.mark.parametrize("conf_overrides", [{"processing": {"add_ports": mode}}
                                            for mode in ADD_PORTS], ids=list(ADD_PORTS))
async def test_ports_created_per_add_ports(bm: httpx.AsyncClient, di: httpx.AsyncClient,
                                           conf_overrides: dict[str, dict[str, str]]) -> None:
    expected = ADD_PORTS[conf_overrides["processing"]["add_ports"]]
    m = await make_node(bm, nics=3, ports=0)  # found by its BMC address
    doc = await introspect(di, m, ipa_payload(m, pxe=0, ips={0: "10.0.0.5", 1: "10.0.1.5"}))
    assert doc["state"] == "finished", doc
    found = {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()}
    assert found == {m.macs[i]: pxe for i, pxe in expected.items()}
    await settled_power(bm, m.uuid, "power off")


async def test_add_ports_pxe_without_boot_interface_falls_back_to_active(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=3, ports=0)
    payload = ipa_payload(m, pxe=None, ips={2: "10.0.2.9"})
    await introspect(di, m, payload)
    found = {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()}
    assert found == {m.macs[2]: True}


async def test_existing_ports_are_not_duplicated(bm: httpx.AsyncClient,
                                                 di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2)
    before = await ports(bm, m.uuid)
    await introspect(di, m, ipa_payload(m))
    after = await ports(bm, m.uuid)
    assert set(after) == set(before) == set(m.macs)
    assert {a: p["uuid"] for a, p in after.items()} == {a: p["uuid"] for a, p in before.items()}
