"""PCI devices from /sys/bus/pci/devices, in IPA's `pci_devices` shape plus ours."""

from __future__ import annotations

from ironsight.agent import pci


def test_a_device_has_ipa_fields_and_ours(tree):
    tree.pci_device("0000:3b:00.0", "0x10DE", "0x1eb8", "0x030200", revision="0xa1",
                    numa="1", driver="nvidia")
    assert pci.collect(str(tree)) == [{
        "vendor_id": "10de", "product_id": "1eb8", "class": "030200", "revision": "a1",
        "bus": "0000:3b:00.0", "numa_node_id": "1", "address": "0000:3b:00.0",
        "numa_node": 1, "driver": "nvidia"}]


def test_no_affinity_is_no_numa_node(tree):
    tree.pci_device("0000:00:03.0", "0x1af4", "0x1000", "0x020000", numa="-1")
    (device,) = pci.collect(str(tree))
    assert (device["numa_node_id"], device["numa_node"]) == ("-1", None)


def test_an_unbound_device_has_no_driver_and_a_missing_revision_is_none(tree):
    tree.pci_device("0000:00:1f.3", "0x8086", "0xa348", "0x040300", revision=None, numa=None)
    (device,) = pci.collect(str(tree))
    assert (device["driver"], device["revision"], device["numa_node"]) == (None, None, None)


def test_a_device_without_readable_ids_is_skipped(tree):
    tree.pci_device("0000:00:00.0", "garbage", "0x1237", "0x060000")
    tree.pci_device("0000:00:01.0", "0x8086", "0x7000", "0x060100")
    assert [d["address"] for d in pci.collect(str(tree))] == ["0000:00:01.0"]


def test_no_pci_bus_gives_no_devices(tree):
    assert pci.collect(str(tree)) == []
