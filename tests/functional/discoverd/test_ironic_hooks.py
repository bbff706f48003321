"""Ironic's property and capability hooks end to end, as Ironic's own chain names them: the
node's properties read back through the bare-metal API after discoverd processed a report
with PCI devices and extra-hardware data.

The hooks are loaded from this tree's pyproject.toml entry points (see
tests/unit/discoverd/declared_hooks.py: the installed copy may predate them)."""

from __future__ import annotations

import importlib.metadata

import httpx
import pytest

from ironsight.discoverd.plugins import base

from ...unit.discoverd.declared_hooks import with_declared
from .helpers import introspect, ipa_payload, make_node, node, start

IRONIC_CHAIN = ("ramdisk_error,validate_interfaces,root_disk_selection,ports,architecture,"
                "memory,cpus,boot-mode,cpu-capabilities,pci-devices,accelerators,"
                "extra-hardware,raid-device")
pytestmark = pytest.mark.discoverd_conf(processing={
    "processing_hooks": IRONIC_CHAIN, "pci_device_alias": "10de:1eb8:gpu_t4"})
T4 = {"vendor_id": "10de", "product_id": "1eb8", "class": "030200", "bus": "0000:3b:00.0"}


@pytest.fixture(autouse=True)
def _declared_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    """discoverd loads the tree's hooks (before the services start: autouse runs first)."""
    monkeypatch.setattr(base, "entry_points", with_declared(importlib.metadata.entry_points))


async def test_ironics_chain_sets_the_scheduling_properties(bm: httpx.AsyncClient,
                                                           di: httpx.AsyncClient) -> None:
    m = await make_node(bm, properties={"capabilities": "profile:gpu"})
    doc = await introspect(di, m, ipa_payload(m, cpus=32, arch="aarch64", memory_mb=24576,
                                             boot_mode="uefi", flags=("vmx", "aes"),
                                             pci_devices=[T4, T4]))
    assert doc["error"] is None
    props = (await node(bm, m.uuid))["properties"]
    assert (props["cpus"], props["cpu_arch"], props["memory_mb"]) == (32, "aarch64", 24576)
    assert dict(c.split(":") for c in props["capabilities"].split(",")) == {
        "profile": "gpu", "boot_mode": "uefi", "cpu_vt": "true", "cpu_aes": "true",
        "gpu_t4": "2"}
    assert [a["pci_address"] for a in props["accelerators"]] == ["0000:3b:00.0"] * 2


async def test_extra_hardware_is_in_the_processed_data(bm: httpx.AsyncClient,
                                                       di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, data=[["cpu", "logical", "number", "32"]]))
    data = (await di.get(f"/v1/introspection/{m.uuid}/data")).json()
    assert data["extra"] == {"cpu": {"logical": {"number": 32}}}
    assert "data" not in data


async def test_a_new_disk_between_two_inspections_becomes_the_root_device_hint(
        bm: httpx.AsyncClient, di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await introspect(di, m, ipa_payload(m, disks_gib=(500,)))
    doc = await introspect(di, m, ipa_payload(m, disks_gib=(500, 1000)))
    assert doc["error"] is None
    assert (await node(bm, m.uuid))["properties"]["root_device"] == {"serial": "SER0001"}


async def test_a_report_without_an_architecture_is_refused(bm: httpx.AsyncClient,
                                                          di: httpx.AsyncClient) -> None:
    m = await make_node(bm)
    await start(di, m.uuid)
    payload = ipa_payload(m)
    del payload["inventory"]["cpu"]["architecture"]
    resp = await di.post("/v1/continue", json=payload)
    assert resp.status_code == 400
    assert "architecture: The ramdisk data lacks inventory.cpu.architecture" in resp.text
