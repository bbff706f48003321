"""The lab's VMs and how each is enrolled: behind a virtual BMC (IPMI), as a libvirt domain
of the lab's own hypervisor (pxe_ssh), or behind the lab's Redfish BMC (redfish); their
firmware."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ironsight.lab.hypervisor import LIBVIRT_URI, SSH_PORT, SSH_USER
from ironsight.lab.network import LabNetwork
from ironsight.lab.nodes import RedfishAccess, enroll
from ironsight.lab.state import (
    REDFISH_DRIVER,
    REDFISH_MIN_MB,
    SSH_DRIVER,
    UEFI_MIN_MB,
    LabError,
    LabOptions,
    LabVm,
    default_vms,
)


class Api:
    """Records what the lab posts, as the bare-metal API would take it."""

    def __init__(self) -> None:
        self.posted: list[tuple[str, dict[str, Any]]] = []

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.posted.append((path, body))
        return {"uuid": "u1", **body}


def test_the_last_vms_are_libvirt_domains_when_asked() -> None:
    vms = default_vms(4, ssh=1)
    assert [vm.driver for vm in vms] == ["pxe_ipmitool", "pxe_ipminative", "pxe_ipmitool",
                                         SSH_DRIVER]
    assert [vm.under_libvirt for vm in vms] == [False, False, False, True]


def test_without_ssh_vms_every_vm_is_behind_a_bmc() -> None:
    assert not any(vm.under_libvirt for vm in default_vms(3))


def test_a_libvirt_domain_is_enrolled_with_its_hypervisors_ssh_login() -> None:
    api = Api()
    vm = default_vms(1, ssh=1)[0]
    enroll(api, vm, "admin", "bmc-pass", "KEY TEXT")  # type: ignore[arg-type]
    (_, node), (_, port) = api.posted
    assert node["driver"] == "pxe_ssh"
    assert node["driver_info"] == {
        "ssh_address": "127.0.0.1", "ssh_port": SSH_PORT, "ssh_username": SSH_USER,
        "ssh_key_contents": "KEY TEXT", "ssh_virt_type": "virsh", "ssh_vm_name": vm.spec.name,
        "ssh_libvirt_uri": LIBVIRT_URI}
    assert port == {"address": vm.spec.mac, "node_uuid": "u1"}


def test_a_vm_behind_a_bmc_is_enrolled_with_its_ipmi_login() -> None:
    api = Api()
    vm = default_vms(1)[0]
    enroll(api, vm, "admin", "bmc-pass")  # type: ignore[arg-type]
    assert api.posted[0][1]["driver_info"] == {
        "ipmi_address": "127.0.0.1", "ipmi_port": vm.bmc_port, "ipmi_username": "admin",
        "ipmi_password": "bmc-pass"}


def test_the_very_last_vms_are_redfish_after_the_pxe_ssh_ones() -> None:
    vms = default_vms(5, ssh=1, redfish=2)
    assert [vm.driver for vm in vms] == ["pxe_ipmitool", "pxe_ipminative", SSH_DRIVER,
                                         REDFISH_DRIVER, REDFISH_DRIVER]
    assert [vm.under_libvirt for vm in vms] == [False, False, True, True, True]


def test_a_redfish_vm_has_memory_the_emulator_reports() -> None:
    assert default_vms(1, redfish=1)[0].spec.memory_mb >= REDFISH_MIN_MB


def test_a_redfish_vm_is_enrolled_with_the_lab_bmcs_url_system_and_ca() -> None:
    api = Api()
    vm = default_vms(1, redfish=1)[0]
    access = RedfishAccess(url="https://127.0.0.1:8000", ca_file=Path("/lab/redfish/ca.pem"))
    enroll(api, vm, "admin", "bmc-pass", redfish=access)  # type: ignore[arg-type]
    (_, node), (_, port) = api.posted
    assert node["driver"] == "redfish"
    assert node["driver_info"] == {
        "redfish_address": "https://127.0.0.1:8000",
        "redfish_system_id": f"/redfish/v1/Systems/{vm.spec.system_uuid}",
        "redfish_username": "admin", "redfish_password": "bmc-pass",
        "redfish_verify_ca": "/lab/redfish/ca.pem"}
    assert port == {"address": vm.spec.mac, "node_uuid": "u1"}


def test_a_redfish_vm_without_the_redfish_bmc_is_refused() -> None:
    with pytest.raises(LabError, match="no Redfish BMC"):
        enroll(Api(), default_vms(1, redfish=1)[0], "admin", "p")  # type: ignore[arg-type]


def test_a_libvirt_domain_without_a_hypervisor_is_refused() -> None:
    with pytest.raises(LabError, match="no hypervisor"):
        enroll(Api(), default_vms(1, ssh=1)[0], "admin", "p")  # type: ignore[arg-type]


# --- firmware --------------------------------------------------------------------------------

def firmware_of(vms: list[LabVm]) -> list[tuple[str, bool]]:
    return [(vm.spec.firmware, vm.spec.ipv6_only) for vm in vms]


def test_the_vms_boot_bios_unless_asked() -> None:
    assert firmware_of(default_vms(3)) == [("bios", False)] * 3


def test_the_firmware_kinds_cycle_over_the_vms() -> None:
    assert [kind for kind, _ in firmware_of(default_vms(5, firmware=["uefi", "bios"]))] == [
        "uefi", "bios", "uefi", "bios", "uefi"]


def test_the_last_uefi_vms_are_ipv6_only() -> None:
    vms = default_vms(5, firmware=["uefi-secureboot", "uefi", "bios"], ipv6_only=2)
    assert firmware_of(vms) == [("uefi-secureboot", False), ("uefi", False), ("bios", False),
                                ("uefi-secureboot", True), ("uefi", True)]


def test_more_ipv6_only_vms_than_uefi_ones_is_refused() -> None:
    with pytest.raises(LabError, match="2 IPv6-only VMs asked for, but only 1 of the 3 VMs "
                                       "boot UEFI"):
        default_vms(3, firmware=["bios", "uefi"], ipv6_only=2)


def test_an_unknown_firmware_names_the_choices() -> None:
    with pytest.raises(ValueError, match="choose from bios, uefi, uefi-secureboot, uefi-httpboot"):
        default_vms(2, firmware=["uefi", "efi"])


def test_uefi_vms_get_at_least_the_memory_their_efi_stub_needs() -> None:
    def sizes(vms: list[LabVm]) -> list[tuple[int, int, int]]:
        return [(vm.spec.cpus, vm.spec.memory_mb, vm.spec.disk_gb) for vm in vms]

    assert sizes(default_vms(3)) == [(1, 256, 4), (2, 320, 5), (1, 288, 6)]
    assert sizes(default_vms(3, firmware=["uefi-secureboot"])) == [
        (1, UEFI_MIN_MB, 4), (2, 320, 5), (1, UEFI_MIN_MB, 6)]


def test_the_ipv6_only_vms_taps_are_the_networks_ipv6_only_ports(tmp_path: Path) -> None:
    vms = default_vms(4, firmware=["uefi"], ipv6_only=2)
    options = LabOptions(state_dir=tmp_path, vms=vms)
    assert options.network.ipv6_only_taps == ("tap3", "tap4")


def test_a_network_without_ipv6_only_vms_has_no_ipv6_only_port(tmp_path: Path) -> None:
    options = LabOptions(state_dir=tmp_path, vms=default_vms(2, firmware=["uefi"]))
    assert options.network == LabNetwork()


def test_the_ipv6_only_ports_survive_lab_json() -> None:
    net = LabNetwork(ipv6_only_taps=("tap3",))
    assert LabNetwork(**json.loads(json.dumps(net.__dict__))) == net
