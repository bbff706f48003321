"""Interface collector: /sys/class/net plus addresses."""

from __future__ import annotations

from ironsight.agent import nics

IPA_INTERFACE_FIELDS = {"name", "mac_address", "ipv4_address", "ipv6_address", "has_carrier",
                        "lldp", "vendor", "product", "client_id", "biosdevname", "speed_mbps"}


def _by_name(root):
    return {nic["name"]: nic for nic in nics.collect(str(root))}


def test_a_virtio_nic_is_described(qemu_vm):
    assert nics.collect(str(qemu_vm)) == [{
        "name": "eth0", "mac_address": "52:54:00:12:34:56", "ipv4_address": "10.0.0.50",
        "ipv6_address": "fe80::5054:ff:fe12:3456", "has_carrier": True, "lldp": [],
        "vendor": "0x1af4", "product": "0x0001", "client_id": None, "biosdevname": None,
        "speed_mbps": None, "driver": "virtio_net", "pci_address": "0000:00:03.0"}]


def test_every_interface_has_ipas_fields_plus_driver_and_pci_address(server):
    for nic in nics.collect(str(server)):
        assert set(nic) == IPA_INTERFACE_FIELDS | {"driver", "pci_address"}


def test_lo_and_virtual_interfaces_are_skipped(server):
    assert list(_by_name(server)) == ["eno1", "eno2"]


def test_physical_nic_pci_ids_driver_and_speed(server):
    eno1 = _by_name(server)["eno1"]
    assert (eno1["vendor"], eno1["product"], eno1["driver"], eno1["pci_address"],
            eno1["speed_mbps"]) == ("0x8086", "0x1572", "i40e", "0000:19:00.0", 10000)


def test_carrier_is_a_bool(server):
    assert _by_name(server)["eno1"]["has_carrier"] is True
    assert _by_name(server)["eno2"]["has_carrier"] is False


def test_unreadable_speed_is_none(server):
    assert _by_name(server)["eno2"]["speed_mbps"] is None


def test_mac_address_is_lowercase(qemu_vm):
    qemu_vm.write("sys/class/net/eth0/address", "52:54:00:AB:CD:EF\n")
    assert nics.collect(str(qemu_vm))[0]["mac_address"] == "52:54:00:ab:cd:ef"


def test_an_interface_without_mac_is_skipped_with_a_warning(qemu_vm):
    qemu_vm.remove("sys/class/net/eth0/address")
    warnings: list[str] = []
    assert nics.collect(str(qemu_vm), warnings) == []
    assert warnings == ["interface eth0: no readable MAC address, skipped"]


def test_addresses_come_from_the_saved_ip_json(qemu_vm):
    eth0 = nics.collect(str(qemu_vm))[0]
    assert (eth0["ipv4_address"], eth0["ipv6_address"]) == ("10.0.0.50",
                                                            "fe80::5054:ff:fe12:3456")


def test_ipv6_falls_back_to_proc_and_prefers_a_global_address(server):
    assert _by_name(server)["eno1"]["ipv6_address"] == "2001:db8::11"
    assert _by_name(server)["eno2"]["ipv6_address"] == "fe80::3efd:feff:feaa:bb02"


def test_ipv4_is_none_in_a_tree_without_ip_json(server):
    assert _by_name(server)["eno1"]["ipv4_address"] is None


def test_ip_json_prefers_a_global_ipv6_address():
    data = [{"ifname": "eth0", "addr_info": [
        {"family": "inet6", "local": "fe80::1", "scope": "link"},
        {"family": "inet6", "local": "2001:db8::5", "scope": "global"}]}]
    assert nics.from_ip_json(data) == {"eth0": (None, "2001:db8::5")}


def test_malformed_ip_json_is_ignored(qemu_vm):
    qemu_vm.write("ip-addr.json", "{not json")
    assert nics.collect(str(qemu_vm))[0]["ipv4_address"] is None


def test_infiniband_address_gives_ipas_mac_and_client_id():
    address = "a0:00:00:27:fe:80:00:00:00:00:00:00:7c:fe:90:03:00:29:26:52"
    assert nics.mac_and_client_id(address) == (
        "7c:fe:90:29:26:52", "ff:00:00:00:00:00:02:00:00:02:c9:00:7c:fe:90:03:00:29:26:52")


def test_a_machine_without_sys_class_net_has_no_interfaces(tree):
    assert nics.collect(str(tree)) == []
