"""The whole callback document: IPA's shape, root disk guess, error reporting."""

from __future__ import annotations

import json

import ironsight
from ironsight.agent import __version__, document, nics, system

IPA_TOP_LEVEL = {"inventory", "root_disk", "boot_interface", "configuration", "error"}
IPA_INVENTORY = {"cpu", "memory", "disks", "interfaces", "bmc_address", "bmc_v6address",
                 "system_vendor", "boot", "hostname"}


def test_document_has_every_top_level_key_ipa_sends(qemu_vm):
    assert set(document.build(str(qemu_vm))) >= IPA_TOP_LEVEL


def test_inventory_has_every_key_ipa_sends(qemu_vm):
    assert set(document.build(str(qemu_vm))["inventory"]) >= IPA_INVENTORY


def test_inventory_sub_objects_have_ipas_fields(server):
    inventory = document.build(str(server))["inventory"]
    assert set(inventory["cpu"]) == {"model_name", "frequency", "count", "architecture",
                                     "flags", "socket_count"}
    assert set(inventory["memory"]) == {"total", "physical_mb"}
    assert {"product_name", "serial_number", "manufacturer", "firmware"} <= set(
        inventory["system_vendor"])
    assert set(inventory["system_vendor"]["firmware"]) == {"vendor", "version", "build_date"}
    assert set(inventory["boot"]) == {"current_boot_mode", "pxe_interface"}


def test_document_is_json_serialisable(server):
    document_ = document.build(str(server))
    assert json.loads(json.dumps(document_)) == document_


def test_the_qemu_vm_document(qemu_vm):
    doc = document.build(str(qemu_vm))
    inventory = doc["inventory"]
    assert (inventory["cpu"]["count"], inventory["memory"]["physical_mb"],
            inventory["disks"][0]["size"], inventory["interfaces"][0]["mac_address"],
            inventory["system_vendor"]["serial_number"], inventory["boot"]["pxe_interface"],
            doc["boot_interface"], doc["error"]) == (
        2, 2048, 10 * 1024**3, "52:54:00:12:34:56", "SER-1", "52:54:00:12:34:56",
        "01-52-54-00-12-34-56", None)


def test_configuration_names_the_agent_and_its_version(qemu_vm):
    assert document.build(str(qemu_vm))["configuration"] == {
        "collectors": ["default"],
        "managers": [{"name": "ironsight_agent", "version": __version__}]}


def test_agent_version_follows_the_project_version():
    assert __version__ == ironsight.__version__


def test_root_disk_is_the_smallest_disk_of_at_least_4_gib(server):
    doc = document.build(str(server))
    assert doc["root_disk"] == doc["inventory"]["disks"][0]
    assert doc["root_disk"]["name"] == "/dev/sda"


def test_disks_under_4_gib_are_not_root_disk_candidates():
    small = {"name": "/dev/sda", "size": 4 * 1024**3 - 1}
    big = {"name": "/dev/sdb", "size": 8 * 1024**3}
    assert document.guess_root_disk([small, big]) is big


def test_root_disk_ties_are_broken_by_name():
    sdb, sda = {"name": "/dev/sdb", "size": 2**40}, {"name": "/dev/sda", "size": 2**40}
    assert document.guess_root_disk([sdb, sda]) is sda


def test_no_disk_large_enough_gives_no_root_disk():
    assert document.guess_root_disk([{"name": "/dev/sda", "size": 2**30}]) is None


def test_boot_interface_is_none_without_bootif(qemu_vm):
    assert document.build(str(qemu_vm), params={})["boot_interface"] is None


def test_a_healthy_machine_has_no_error_and_no_warnings(server):
    doc = document.build(str(server))
    assert (doc["error"], doc["warnings"]) == (None, [])


def test_no_network_interface_is_an_error(qemu_vm):
    qemu_vm.remove("sys/class/net/eth0")
    doc = document.build(str(qemu_vm))
    assert doc["error"] == "The following errors were encountered:\n* no network interface found"


def test_a_crashing_essential_collector_is_an_error_and_the_rest_is_collected(
        qemu_vm, monkeypatch):
    def crash(*args):
        raise RuntimeError("sysfs exploded")

    monkeypatch.setattr(nics, "collect", crash)
    doc = document.build(str(qemu_vm))
    assert "* collector interfaces failed: RuntimeError: sysfs exploded" in doc["error"]
    assert (doc["inventory"]["interfaces"], doc["inventory"]["cpu"]["count"]) == ([], 2)


def test_a_crashing_optional_collector_is_only_a_warning(qemu_vm, monkeypatch):
    def crash(*args):
        raise PermissionError("denied")

    monkeypatch.setattr(system, "system_vendor", crash)
    doc = document.build(str(qemu_vm))
    assert (doc["error"], doc["warnings"], doc["inventory"]["system_vendor"]) == (
        None, ["collector system_vendor failed: PermissionError: denied"], None)


def test_skipped_devices_are_reported_as_warnings(qemu_vm):
    qemu_vm.disk("vdb", "devices/pci0000:00/0000:00:06.0/virtio3", sectors=None)
    assert document.build(str(qemu_vm))["warnings"] == ["disk vdb: no readable size, skipped"]


def test_an_empty_machine_still_gives_a_document(tree):
    doc = document.build(str(tree))
    assert doc["error"].splitlines()[1:] == [
        "* no network interface found",
        "* collector memory failed: ValueError: no MemTotal in /proc/meminfo"]
    assert (doc["inventory"]["disks"], doc["root_disk"]) == ([], None)
