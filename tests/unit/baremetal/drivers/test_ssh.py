"""pxe_ssh without a hypervisor: driver_info checks, `virsh domstate` and domain XML."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from ironsight.baremetal import states
from ironsight.baremetal.drivers.base import NodeContext
from ironsight.baremetal.drivers.ssh import (
    SshManagement,
    SshPower,
    boot_device_from_xml,
    parse_domain_state,
    parse_ssh_info,
    set_boot_device_in_xml,
)
from ironsight.common import config
from ironsight.common.exceptions import DriverError, InvalidParameterValue, MissingParameterValue

CONF = config.load()
SECRET = "hypervisor-pass"
BASE = {"ssh_address": "hv1.example.org", "ssh_username": "stack", "ssh_password": SECRET,
        "ssh_virt_type": "virsh", "ssh_vm_name": "node-0"}


def node(**driver_info: Any) -> NodeContext:
    return NodeContext(uuid="node-1", driver="pxe_ssh", driver_info=driver_info)


def without(key: str) -> dict[str, Any]:
    return {k: v for k, v in BASE.items() if k != key}


def test_validate_accepts_password_login() -> None:
    SshPower(CONF).validate(node(**BASE))


@pytest.mark.parametrize("field", ["ssh_address", "ssh_username", "ssh_virt_type",
                                   "ssh_vm_name"])
def test_validate_names_missing_required_field(field: str) -> None:
    with pytest.raises(MissingParameterValue, match=field):
        SshPower(CONF).validate(node(**without(field)))


def test_validate_requires_a_password_or_a_key() -> None:
    with pytest.raises(MissingParameterValue, match=r"ssh_password.*ssh_key_contents"):
        SshManagement(CONF).validate(node(**without("ssh_password")))


def test_validate_names_bad_port() -> None:
    with pytest.raises(InvalidParameterValue, match="ssh_port"):
        SshPower(CONF).validate(node(**BASE, ssh_port="twenty-two"))


def test_validate_refuses_unknown_virt_type() -> None:
    with pytest.raises(InvalidParameterValue, match=r"ssh_virt_type.*unknown"):
        SshPower(CONF).validate(node(**{**BASE, "ssh_virt_type": "hyperv"}))


def test_validate_refuses_known_but_unsupported_virt_type() -> None:
    with pytest.raises(InvalidParameterValue, match=r"ssh_virt_type.*not supported.*virsh"):
        SshPower(CONF).validate(node(**{**BASE, "ssh_virt_type": "vbox"}))


def test_validate_names_unusable_key_without_showing_it() -> None:
    key = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot really\n-----END OPENSSH PRIVATE KEY-----"
    with pytest.raises(InvalidParameterValue, match="ssh_key_contents") as raised:
        SshPower(CONF).validate(node(**{**without("ssh_password"), "ssh_key_contents": key}))
    assert "not really" not in str(raised.value)


def test_validate_accepts_an_openssh_key(tmp_path: Path) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")],
                   check=True)
    key = (tmp_path / "k").read_text()
    info = parse_ssh_info(node(**{**without("ssh_password"), "ssh_key_contents": key}))
    assert info.key is not None


def test_secrets_never_show_in_the_repr_of_the_login() -> None:
    info = parse_ssh_info(node(**BASE))
    assert SECRET not in repr(info) and SECRET not in str(info)


def test_libvirt_uri_defaults_to_the_system_instance() -> None:
    assert parse_ssh_info(node(**BASE)).libvirt_uri == "qemu:///system"


@pytest.mark.parametrize(("output", "state"), [
    ("running\n\n", states.POWER_ON),
    ("paused\n", states.POWER_ON),
    ("in shutdown\n", states.POWER_ON),
    ("shut off\n\n", states.POWER_OFF),
    ("crashed\n", states.POWER_OFF),
])
def test_domain_state_is_mapped_to_a_power_state(output: str, state: str) -> None:
    assert parse_domain_state(output) == state


def test_unknown_domain_state_is_a_driver_error() -> None:
    with pytest.raises(DriverError, match="domstate"):
        parse_domain_state("error: failed to get domain 'x'\n")


DOMAIN = """<domain type='qemu'>
  <name>node-0</name>
  <os>
    <type arch='x86_64' machine='pc'>hvm</type>
    <boot dev='hd'/>
    <boot dev='network'/>
  </os>
  <devices>
    <disk type='file' device='disk'><source file='/x.qcow2'/><boot order='1'/></disk>
    <interface type='network'><source network='default'/></interface>
  </devices>
</domain>
"""


def test_boot_device_is_the_first_os_boot_element() -> None:
    assert boot_device_from_xml(DOMAIN) == {"boot_device": "disk", "persistent": True}


def test_domain_without_os_boot_has_no_boot_device() -> None:
    assert boot_device_from_xml("<domain><os><type>hvm</type></os></domain>") == {
        "boot_device": None, "persistent": None}


def test_setting_pxe_leaves_network_as_the_only_boot_device() -> None:
    updated = set_boot_device_in_xml(DOMAIN, "pxe")
    assert boot_device_from_xml(updated)["boot_device"] == "pxe"
    assert updated.count("<boot ") == 1


def test_setting_boot_device_drops_per_device_boot_order() -> None:
    assert "order=" not in set_boot_device_in_xml(DOMAIN, "disk")


def test_setting_boot_device_keeps_the_rest_of_the_definition() -> None:
    updated = set_boot_device_in_xml(DOMAIN, "disk")
    assert "<name>node-0</name>" in updated and "/x.qcow2" in updated


def test_unreadable_domain_xml_is_a_driver_error() -> None:
    with pytest.raises(DriverError, match="domain XML"):
        boot_device_from_xml("virsh: command not found")
