"""DMI vendor data, boot mode, hostname and BMC address."""

from __future__ import annotations

from ironsight.agent import system

LAN_PRINT = """Set in Progress         : Set Complete
IP Address Source       : Static Address
IP Address              : 10.20.0.15
Subnet Mask             : 255.255.255.0
MAC Address             : 3C:FD:FE:AA:BB:FF
Default Gateway IP      : 10.20.0.1
"""


def test_system_vendor_maps_dmi_fields_to_ipas_names(qemu_vm):
    assert system.system_vendor(str(qemu_vm)) == {
        "product_name": "Standard PC (i440FX + PIIX, 1996)", "serial_number": "SER-1",
        "manufacturer": "QEMU", "uuid": "4e2c1a3b-7d1e-4a5f-9c1b-0d2e3f4a5b6c",
        "firmware": {"vendor": "SeaBIOS", "version": "1.16.2-debian-1.16.2-1",
                     "build_date": "04/01/2014"}}


def test_unreadable_dmi_fields_are_none(server):
    server.remove("sys/class/dmi/id/product_serial")  # root-only on a real system
    assert system.system_vendor(str(server))["serial_number"] is None


def test_boot_mode_is_uefi_when_efi_firmware_is_present(server):
    assert system.boot(str(server), {})["current_boot_mode"] == "uefi"


def test_boot_mode_is_bios_otherwise(qemu_vm):
    assert system.boot(str(qemu_vm), {})["current_boot_mode"] == "bios"


def test_secure_boot_is_the_uefi_global_variable():
    # EFI_GLOBAL_VARIABLE's GUID (UEFI spec): 11d2, as efivarfs names the file
    assert system.SECURE_BOOT_VAR == "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


def _secure_boot_var(tree, value: bytes) -> None:
    tree.write("sys/firmware/efi/efivars/" + system.SECURE_BOOT_VAR, value)


def test_secure_boot_on_is_a_1_after_the_attributes(server):
    _secure_boot_var(server, b"\x06\x00\x00\x00\x01")
    assert system.boot(str(server), {})["secure_boot"] is True


def test_secure_boot_off_is_any_other_byte(server):
    _secure_boot_var(server, b"\x06\x00\x00\x00\x00")
    assert system.boot(str(server), {})["secure_boot"] is False


def test_secure_boot_is_unknown_when_uefi_has_no_readable_variable(server):
    assert system.boot(str(server), {})["secure_boot"] is None  # efivarfs not mounted
    _secure_boot_var(server, b"\x06\x00\x00\x00")  # attributes only: malformed
    assert system.boot(str(server), {})["secure_boot"] is None


def test_secure_boot_is_off_when_booted_in_bios_mode(qemu_vm):
    assert system.boot(str(qemu_vm), {}) == {"current_boot_mode": "bios",
                                             "pxe_interface": None, "secure_boot": False}


def test_pxe_interface_is_the_bootif_mac(server):
    params = {"BOOTIF": "01-3C-FD-FE-AA-BB-01"}
    assert system.boot(str(server), params)["pxe_interface"] == "3c:fd:fe:aa:bb:01"


def test_pxe_interface_is_none_without_bootif(qemu_vm):
    assert system.boot(str(qemu_vm), {})["pxe_interface"] is None


def test_hostname_is_the_kernels(qemu_vm):
    assert system.hostname(str(qemu_vm)) == "node-1"


def test_an_unset_hostname_is_none(server):
    assert system.hostname(str(server)) is None


def test_lan_print_gives_the_bmc_ip_and_mac():
    assert system.parse_lan_print(LAN_PRINT) == {
        "bmc_address": "10.20.0.15", "bmc_v6address": None, "bmc_mac": "3c:fd:fe:aa:bb:ff"}


def test_an_unconfigured_bmc_has_no_address():
    text = LAN_PRINT.replace("10.20.0.15", "0.0.0.0")
    assert system.parse_lan_print(text)["bmc_address"] is None


def test_bmc_is_not_queried_in_a_fixture_tree(server, monkeypatch):
    monkeypatch.setattr(system, "run", lambda *a, **k: LAN_PRINT)
    assert system.bmc(str(server))["bmc_address"] is None


LAN6_PRINT = """\
IPv6/IPv4 Support:        IPv6 and IPv4 supported
IPv6/IPv4 Addressing Enables: both
IPv6 Static Address 0:
    Enabled:        yes
    Address:        2001:db8::10/64
    Status:         active
IPv6 Static Address 1:
    Enabled:        no
    Address:        ::/0
    Status:         disabled
IPv6 Dynamic Address 0:
    Source/Type:    SLAAC
    Address:        fe80::1/64
    Status:         active
IPv6 Dynamic Address 1:
    Source/Type:    DHCPv6
    Address:        2001:db8::55/64
    Status:         active
"""


def test_bmc_v6address_prefers_an_active_dynamic_address():
    assert system.parse_lan6_print(LAN6_PRINT) == "2001:db8::55"


def test_bmc_v6address_falls_back_to_an_enabled_static_address():
    static_only = LAN6_PRINT.split("IPv6 Dynamic Address 1:")[0]
    assert system.parse_lan6_print(static_only) == "2001:db8::10"


def test_bmc_v6address_is_none_without_a_usable_address():
    text = ("IPv6 Static Address 0:\n    Enabled:        yes\n    Address:        ::/0\n"
            "    Status:         active\nIPv6 Dynamic Address 0:\n"
            "    Source/Type:    DHCPv6\n    Address:        2001:db8::1/64\n"
            "    Status:         disabled\n")
    assert system.parse_lan6_print(text) is None


def test_a_fixture_tree_runs_no_ipmitool_and_has_no_bmc(qemu_vm):
    assert system.bmc(str(qemu_vm)) == {"bmc_address": None, "bmc_v6address": None,
                                        "bmc_mac": None}
