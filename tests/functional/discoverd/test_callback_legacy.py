"""`POST /v1/continue` with the legacy discoverd ramdisk's flat report (ironic-discoverd 1.0's)."""

from __future__ import annotations

import httpx

from .helpers import introspect, legacy_payload, make_node, node, ports, settled_power


async def test_legacy_callback_sets_properties_as_given(bm: httpx.AsyncClient,
                                                        di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, ports=0)  # found by ipmi_address
    doc = await introspect(di, m, legacy_payload(m, cpus=4, arch="i686", memory_mb=8192,
                                                 local_gb=99))
    assert doc["state"] == "finished" and doc["error"] is None
    props = (await node(bm, m.uuid))["properties"]
    assert {k: props[k] for k in ("cpus", "cpu_arch", "memory_mb", "local_gb")} == {
        "cpus": 4, "cpu_arch": "i686", "memory_mb": 8192, "local_gb": 99}
    for key in ("cpus", "memory_mb", "local_gb"):
        assert type(props[key]) is int
    # boot_interface (PXELINUX's 01-aa-bb-...) names the PXE NIC: add_ports=pxe gives one port
    found = {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()}
    assert found == {m.macs[0]: True}
    await settled_power(bm, m.uuid, "power off")


async def test_legacy_callback_found_by_mac(bm: httpx.AsyncClient,
                                            di: httpx.AsyncClient) -> None:
    m = await make_node(bm, nics=2, bmc=False)
    doc = await introspect(di, m, legacy_payload(m, bmc=False, pxe=1))
    assert doc["state"] == "finished"
    found = {a: p["pxe_enabled"] for a, p in (await ports(bm, m.uuid)).items()}
    assert found == {m.macs[0]: False, m.macs[1]: True}  # update_pxe_enabled


async def test_legacy_data_is_stored_as_posted(bm: httpx.AsyncClient,
                                               di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    payload = legacy_payload(m)
    await introspect(di, m, payload)
    raw = (await di.get(f"/v1/introspection/{m.uuid}/data/unprocessed")).json()
    assert raw == payload
    processed = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    assert processed["local_gb"] == payload["local_gb"]
    assert processed["cpus"] == payload["cpus"]
