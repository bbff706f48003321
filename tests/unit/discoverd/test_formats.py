"""The two ramdisk report formats: validation (errors name the field) and the one shape
processing works on."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.common.exceptions import Invalid
from ironsight.discoverd.formats import is_legacy, mac_from_boot_interface, normalize

from .helpers import MAC1, MAC2, agent_report, legacy_report

# --- agent (ironic-python-agent) reports ------------------------------------------------------


def test_agent_report_is_returned_as_given() -> None:
    report = agent_report()
    assert normalize(report) == report


def test_agent_report_keeps_unknown_fields() -> None:
    report = agent_report(extra_collector={"any": ["thing", 1]})
    report["inventory"]["system_vendor"] = {"manufacturer": "ACME"}
    data = normalize(report)
    assert data["extra_collector"] == {"any": ["thing", 1]}
    assert data["inventory"]["system_vendor"] == {"manufacturer": "ACME"}


def test_normalized_report_is_a_copy() -> None:
    report = agent_report()
    normalize(report)["inventory"]["interfaces"].clear()
    assert len(report["inventory"]["interfaces"]) == 1


def test_report_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(Invalid, match="must be a JSON object"):
        normalize([agent_report()])


def test_empty_object_is_an_agent_report_without_its_inventory() -> None:
    with pytest.raises(Invalid, match="field 'inventory': Field required"):
        normalize({})


def test_agent_report_without_interfaces_is_refused_naming_the_field() -> None:
    report = agent_report()
    report["inventory"]["interfaces"] = []
    with pytest.raises(Invalid, match=r"'inventory\.interfaces'"):
        normalize(report)


def test_interface_without_mac_address_is_refused_naming_it() -> None:
    report = agent_report()
    del report["inventory"]["interfaces"][0]["mac_address"]
    with pytest.raises(Invalid, match=r"'inventory\.interfaces\.0\.mac_address'"):
        normalize(report)


@pytest.mark.parametrize(("where", "value", "field"), [
    ("cpu", {"count": -1}, "inventory.cpu.count"),
    ("memory", {"physical_mb": -5}, "inventory.memory.physical_mb"),
    ("disks", [{"name": "/dev/sda", "size": -1}], "inventory.disks.0.size"),
    ("disks", [{"size": 10}], "inventory.disks.0.name"),
])
def test_negative_or_missing_hardware_values_are_refused_naming_the_field(
        where: str, value: Any, field: str) -> None:
    report = agent_report()
    report["inventory"][where] = value
    with pytest.raises(Invalid, match=f"'{field}'"):
        normalize(report)


def test_has_carrier_must_be_a_real_boolean() -> None:
    report = agent_report()
    report["inventory"]["interfaces"][0]["has_carrier"] = "yes"
    with pytest.raises(Invalid, match=r"'inventory\.interfaces\.0\.has_carrier'"):
        normalize(report)


def test_every_problem_is_reported_at_once() -> None:
    report = agent_report()
    report["inventory"]["cpu"]["count"] = -1
    report["inventory"]["memory"]["physical_mb"] = -1
    with pytest.raises(Invalid) as raised:
        normalize(report)
    assert "inventory.cpu.count" in str(raised.value)
    assert "inventory.memory.physical_mb" in str(raised.value)


def test_agent_report_with_an_error_is_still_an_agent_report() -> None:
    report = agent_report(error="disk on fire")
    assert not is_legacy(report)
    assert normalize(report)["error"] == "disk on fire"


# --- legacy (discoverd ramdisk) reports -------------------------------------------------------


@pytest.mark.parametrize("report", [
    {"cpus": 2},
    {"interfaces": {"eth0": {"mac": MAC1}}},
    {"error": "no IPMI"},
], ids=["cpus", "interfaces-object", "error-only"])
def test_flat_report_is_recognised_as_legacy(report: dict[str, Any]) -> None:
    assert is_legacy(report)


def test_legacy_report_becomes_an_inventory() -> None:
    data = normalize(legacy_report((MAC1, MAC2), cpus=8, cpu_arch="aarch64", memory_mb=2048))
    inventory = data["inventory"]
    assert inventory["interfaces"] == [
        {"name": "eth0", "mac_address": MAC1, "ipv4_address": "10.1.0.1"},
        {"name": "eth1", "mac_address": MAC2, "ipv4_address": "10.1.0.2"}]
    assert inventory["cpu"] == {"count": 8, "architecture": "aarch64", "flags": []}
    assert inventory["memory"] == {"physical_mb": 2048}
    assert inventory["disks"] == []


def test_legacy_ipmi_address_becomes_the_bmc_address() -> None:
    assert normalize(legacy_report(bmc="192.0.2.9"))["inventory"]["bmc_address"] == "192.0.2.9"


def test_legacy_flat_fields_are_not_kept_beside_the_inventory() -> None:
    data = normalize(legacy_report())
    assert not {"cpus", "cpu_arch", "memory_mb", "interfaces", "ipmi_address"} & set(data)


def test_legacy_report_is_marked_and_keeps_its_local_gb() -> None:
    data = normalize(legacy_report(local_gb=99))
    assert data["legacy_format"] is True
    assert data["local_gb"] == 99


def test_legacy_report_keeps_boot_interface_error_and_unknown_fields() -> None:
    data = normalize(legacy_report(boot_interface="01-52-54-00-00-00-01", error="boom",
                                   vendor_blob={"a": 1}))
    assert (data["boot_interface"], data["error"], data["vendor_blob"]) == (
        "01-52-54-00-00-00-01", "boom", {"a": 1})


def test_legacy_interface_without_mac_is_refused_naming_it() -> None:
    with pytest.raises(Invalid, match=r"'interfaces\.eth0\.mac'"):
        normalize({"cpus": 2, "interfaces": {"eth0": {"ip": "10.0.0.1"}}})


def test_legacy_negative_cpus_are_refused() -> None:
    with pytest.raises(Invalid, match="'cpus'"):
        normalize(legacy_report(cpus=-2))


# --- the PXE NIC's MAC ------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "mac"), [
    ("01-52-54-00-AA-BB-01", "52:54:00:aa:bb:01"),  # PXELINUX's BOOTIF
    ("52:54:00:AA:BB:01", "52:54:00:aa:bb:01"),
    ("52-54-00-aa-bb-01", "52:54:00:aa:bb:01"),
    (" 52:54:00:aa:bb:01 ", "52:54:00:aa:bb:01"),
])
def test_boot_interface_is_read_as_a_lowercase_mac(value: str, mac: str) -> None:
    assert mac_from_boot_interface(value) == mac


@pytest.mark.parametrize("value", [None, ""])
def test_no_boot_interface_is_no_mac(value: str | None) -> None:
    assert mac_from_boot_interface(value) is None


# --- IPA's optional collector keys: accepted with their shapes, bounded --------------------------

IRONSIGHT_AGENT_EXTRAS: dict[str, Any] = {
    "lldp_raw": {"eth0": [[1, "0402000a140001"], [2, "0574617031"], [5, "fffe80"]]},
    "numa_topology": {"ram": [{"numa_node": 0, "size_kb": 24683792}],
                      "cpus": [{"cpu": 0, "numa_node": 0, "thread_siblings": [0, 2]}],
                      "nics": [{"name": "eth0", "numa_node": -1}]},
    "pci_devices": [{"vendor_id": "8086", "product_id": "1572", "class": "020000",
                     "revision": "01", "bus": "0000:19:00.0", "numa_node_id": "0",
                     "address": "0000:19:00.0", "numa_node": 0, "driver": "i40e"}],
    "usb_devices": [{"product": "USB Keyboard", "vendor": "Logitech", "handle": "USB:1:3",
                     "vendor_id": "046d", "product_id": "c31c"}],
    "dmi": {"bios": {"Vendor": "SeaBIOS"}, "system": {}, "cpu": [],
            "memory": {"devices": [{"Size": "16 GB", "size_mb": 16384, "Locator": "A1"}]}},
    "data": [["memory", "total", "size", "25769803776"], ["cpu", "logical", "number", 4]],
}


def test_the_agents_optional_collector_keys_are_accepted_and_kept() -> None:
    report = agent_report(**IRONSIGHT_AGENT_EXTRAS)
    report["inventory"]["interfaces"][0]["lldp"] = [[1, "0402000a140001"]]
    report["inventory"]["bmc_mac"] = "52:54:00:aa:bb:cc"
    assert normalize(report) == report


def test_a_tlv_value_of_511_octets_is_accepted() -> None:
    report = agent_report(lldp_raw={"eth0": [[127, "ab" * 511]]})
    assert normalize(report)["lldp_raw"]["eth0"][0][1] == "ab" * 511


@pytest.mark.parametrize(("lldp_raw", "field"), [
    ({"eth0": [[1, "ab" * 512]]}, "lldp_raw.eth0.0.1"),       # 512 octets
    ({"eth0": [[1, "zz"]]}, "lldp_raw.eth0.0.1"),             # not hex
    ({"eth0": [[128, "ab"]]}, "lldp_raw.eth0.0.0"),           # 7-bit type
    ({"eth0": [["1", "ab"]]}, "lldp_raw.eth0.0.0"),           # type as text
    ({"eth0": [[1, "ab", "cd"]]}, "lldp_raw.eth0.0"),         # not a pair
    ({"eth0": [[1, "ab"]] * 513}, "lldp_raw.eth0"),           # too many TLVs
    ({f"eth{i}": [] for i in range(1025)}, "lldp_raw"),       # too many interfaces
], ids=["long-value", "not-hex", "type-range", "type-text", "triple", "tlvs", "interfaces"])
def test_hostile_lldp_raw_is_refused_naming_the_field(lldp_raw: Any, field: str) -> None:
    with pytest.raises(Invalid, match=f"'{field}'"):
        normalize(agent_report(lldp_raw=lldp_raw))


def test_a_hostile_interface_lldp_is_refused_naming_it() -> None:
    report = agent_report()
    report["inventory"]["interfaces"][0]["lldp"] = [[1, "ab" * 600]]
    with pytest.raises(Invalid, match=r"'inventory\.interfaces\.0\.lldp\.0\.1'"):
        normalize(report)


@pytest.mark.parametrize(("extras", "field"), [
    ({"numa_topology": {"ram": [{"numa_node": 0, "size_kb": -1}]}}, "numa_topology.ram.0.size_kb"),
    ({"numa_topology": {"cpus": [{"cpu": 0, "numa_node": 0,
                                  "thread_siblings": list(range(257))}]}},
     "numa_topology.cpus.0.thread_siblings"),
    ({"numa_topology": {"ram": [{"numa_node": 0, "size_kb": 1}] * 1025}}, "numa_topology.ram"),
    ({"pci_devices": [{"vendor_id": "8086"}]}, "pci_devices.0.product_id"),
    ({"pci_devices": [{"vendor_id": "8086", "product_id": "x" * 9}]},
     "pci_devices.0.product_id"),
    ({"pci_devices": [{"vendor_id": "8086", "product_id": "1572"}] * 4097}, "pci_devices"),
    ({"usb_devices": [{"product": "p" * 4097}]}, "usb_devices.0.product"),
    ({"dmi": {"memory": {"devices": [{"Size": "1 GB"}] * 4097}}}, "dmi.memory.devices"),
    ({"data": [["memory", "total", "size"]]}, "data.0"),
    ({"data": [["a", "b", "c", {"nested": 1}]]}, "data.0.3.str"),  # each scalar type tried
], ids=["ram-negative", "siblings", "numa-nodes", "pci-no-product", "pci-long-id",
        "pci-count", "usb-long", "dimm-count", "extra-triple", "extra-object"])
def test_hostile_collector_data_is_refused_naming_the_field(extras: dict[str, Any],
                                                            field: str) -> None:
    with pytest.raises(Invalid, match=f"'{field}'"):
        normalize(agent_report(**extras))


def test_null_optional_collector_keys_are_accepted() -> None:
    report = agent_report(numa_topology=None, pci_devices=None, lldp_raw=None, data=None)
    assert normalize(report) == report
