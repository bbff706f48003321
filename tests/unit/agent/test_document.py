"""The whole callback document: IPA's shape, root disk guess, error reporting."""

from __future__ import annotations

import json

import ironsight
from ironsight.agent import __version__, document, nics, system
from ironsight.lab.lldp import Port, frame

from .conftest import smbios_memory_device, smbios_structure

LLDP_ON = {"ipa-collect-lldp": "1"}

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
    # IPA's two keys, and `secure_boot` (ours, documented in docs/agent.md)
    assert set(inventory["boot"]) == {"current_boot_mode", "pxe_interface", "secure_boot"}


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
        "collectors": ["default", "dmi-decode", "numa-topology", "pci-devices", "usb-devices"],
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


def test_lldp_tlvs_go_to_the_interface_and_to_lldp_raw(qemu_vm):
    qemu_vm.write("lldp/eth0", frame(Port("02:00:0a:14:00:01", "tap1")))
    doc = document.build(str(qemu_vm), LLDP_ON)
    port_tlv = [2, "05" + b"tap1".hex()]
    assert port_tlv in doc["inventory"]["interfaces"][0]["lldp"]
    assert port_tlv in doc["lldp_raw"]["eth0"]


def test_lldp_is_not_listened_for_on_an_interface_without_carrier(server):
    server.write("lldp/eno2", frame(Port("02:00:0a:14:00:01", "p2")))
    doc = document.build(str(server), LLDP_ON)
    assert doc["lldp_raw"] == {}
    assert [nic["lldp"] for nic in doc["inventory"]["interfaces"]] == [[], []]


def test_lldp_is_left_out_without_ipa_collect_lldp(qemu_vm):
    qemu_vm.write("lldp/eth0", frame(Port("02:00:0a:14:00:01", "tap1")))
    doc = document.build(str(qemu_vm))
    assert "lldp_raw" not in doc and "lldp" not in doc["configuration"]["collectors"]
    assert doc["inventory"]["interfaces"][0]["lldp"] == []


def test_ipas_optional_collector_keys_are_sent(server):
    server.numa_node(0, 1000, {0: 0})
    server.pci_device("0000:00:00.0", "0x8086", "0x2020", "0x060000")
    doc = document.build(str(server))
    assert doc["numa_topology"]["ram"] == [{"numa_node": 0, "size_kb": 1000}]
    assert [d["product_id"] for d in doc["pci_devices"]] == ["2020"]
    assert doc["usb_devices"] == []
    assert [d["size_mb"] for d in doc["dmi"]["memory"]["devices"]] == [16384] * 12 + [0]


def test_no_numa_nodes_leaves_numa_topology_out(qemu_vm):
    assert "numa_topology" not in document.build(str(qemu_vm))


def test_a_failing_optional_collector_is_a_warning_and_its_key_is_left_out(tree, qemu_vm):
    qemu_vm.mkdir("sys/devices/system/node/node0")  # no meminfo
    doc = document.build(str(qemu_vm))
    assert "numa_topology" not in doc and doc["error"] is None
    assert any(w.startswith("collector numa-topology failed") for w in doc["warnings"])


def test_firmware_comes_from_smbios_when_sysfs_dmi_is_missing(server):
    for name in ("bios_vendor", "bios_version", "bios_date"):
        server.remove(f"sys/class/dmi/id/{name}")
    fields = bytearray(0x12 - 4)
    fields[0], fields[1], fields[4] = 1, 2, 3
    server.smbios_table(smbios_structure(0, bytes(fields), ["AMI", "3.1", "05/06/2022"]),
                        smbios_memory_device(16384, "A1", "B0"))
    firmware = document.build(str(server))["inventory"]["system_vendor"]["firmware"]
    assert firmware == {"vendor": "AMI", "version": "3.1", "build_date": "05/06/2022"}


def test_extra_hardware_is_sent_only_when_asked(server):
    assert "data" not in document.build(str(server))
    doc = document.build(str(server), {"ipa-inspection-collectors": "default,extra-hardware"})
    assert "extra-hardware" in doc["configuration"]["collectors"]
    assert all(len(row) == 4 and all(isinstance(v, str) for v in row) for row in doc["data"])
    assert ["memory", "total", "size", str(12 * 16384 * 1024 * 1024)] in doc["data"]
    assert ["network", "eno1", "serial", "3c:fd:fe:aa:bb:01"] in doc["data"]
    assert ["disk", "sda", "size", str(937703088 * 512 // 1000**3)] in doc["data"]
