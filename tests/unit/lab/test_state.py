"""The lab's VMs and how each is enrolled: behind a virtual BMC (IPMI) or as a libvirt
domain of the lab's own hypervisor (pxe_ssh)."""

from __future__ import annotations

from typing import Any

import pytest

from ironsight.lab.hypervisor import LIBVIRT_URI, SSH_PORT, SSH_USER
from ironsight.lab.nodes import enroll
from ironsight.lab.state import SSH_DRIVER, LabError, default_vms


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


def test_a_libvirt_domain_without_a_hypervisor_is_refused() -> None:
    with pytest.raises(LabError, match="no hypervisor"):
        enroll(Api(), default_vms(1, ssh=1)[0], "admin", "p")  # type: ignore[arg-type]
